// The sandbox Worker with a hostile neighbour: before each message it posts, random words are written over
// its reply channel (header and ring), as code that took over the Worker could. The host must not care.
import "../../lib/sandbox/worker.ts";

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: unknown): void;
};
let words: Int32Array | undefined;
const post = scope.postMessage.bind(scope);
scope.postMessage = (message: unknown) => {
  if (words) for (let i = 0; i < 64; i++) words[Math.floor(Math.random() * words.length)] = Math.random() * 2 ** 32 | 0;
  post(message);
};
const onmessage = scope.onmessage!;
scope.onmessage = (event: MessageEvent) => {
  const data = event.data as { type: string; replyChannel?: SharedArrayBuffer };
  if (data.type === "init" && data.replyChannel) words = new Int32Array(data.replyChannel);
  onmessage(event);
};
