/**
 * Entry point of one sandbox Worker (`deno compile --include lib/sandbox/worker.ts`). It owns a QuickJS
 * module and runs one script at a time for `SandboxPool`, forwarding tool calls and console lines to the
 * host. The host may `terminate()` it at any moment; it keeps no state worth saving.
 *
 * @module
 */
import { type EngineIo, type HostReply, QuickJSEngine } from "./engine.ts";
import { createTypeStripper } from "./normalize.ts";
import {
  decodeStopReason,
  type FromWorker,
  STOP_REASON,
  STOP_RUN_ID,
  type ToWorker,
} from "./_protocol.ts";
import { loadSandboxModule } from "./wasm_module.ts";

/** The parts of the Worker global scope used here (typed locally so this file checks with the window lib). */
interface WorkerScope {
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
  postMessage(message: FromWorker): void;
  close(): void;
}

/** Serves `SandboxPool` over `scope`'s messages until the Worker is terminated or its module is poisoned. */
function serve(scope: WorkerScope): void {
  const stripper = createTypeStripper();
  let stopFlags: Int32Array<ArrayBufferLike> = new Int32Array(2);
  let engine: { heapLimitBytes: number; engine: Promise<QuickJSEngine> } | undefined;
  let active: { runId: number; replies: Map<number, (reply: HostReply) => void>; stop: AbortController } | undefined;
  let nextCallId = 1;

  const engineFor = (heapLimitBytes: number): Promise<QuickJSEngine> => {
    if (engine?.heapLimitBytes !== heapLimitBytes) {
      engine = {
        heapLimitBytes,
        engine: loadSandboxModule(heapLimitBytes).then((m) => new QuickJSEngine(m, { stripTypes: stripper.strip })),
      };
    }
    return engine.engine;
  };

  const run = async (message: Extract<ToWorker, { type: "run" }>) => {
    const { runId } = message;
    const replies = new Map<number, (reply: HostReply) => void>();
    const stop = new AbortController();
    active = { runId, replies, stop };
    const io: EngineIo = {
      hostCall: (namespace, key, argsJson) =>
        new Promise<HostReply>((resolve) => {
          const callId = nextCallId++;
          replies.set(callId, resolve);
          scope.postMessage({ type: "call", runId, callId, namespace, key, argsJson });
        }),
      onConsole: (line) => scope.postMessage({ type: "console", runId, line }),
      onConsoleDropped: () => scope.postMessage({ type: "consoleDropped", runId }),
      signal: stop.signal,
      pollStop: () =>
        Atomics.load(stopFlags, STOP_RUN_ID) === runId ? decodeStopReason(Atomics.load(stopFlags, STOP_REASON)) : undefined,
    };
    const outcome = await (await engineFor(message.limits.memoryLimitBytes)).run(message, io);
    active = undefined;
    scope.postMessage({ type: "done", runId, outcome });
    // A poisoned module must not run again; the host replaces this Worker.
    if (outcome.poisoned) scope.close();
  };

  scope.onmessage = (event) => {
    const message = event.data;
    switch (message.type) {
      case "init":
        stopFlags = new Int32Array(message.stopFlags);
        engineFor(message.heapLimitBytes).then(
          () => {
            scope.postMessage({ type: "ready" });
            stripper.preload();
          },
          (error: unknown) => scope.postMessage({ type: "fatal", message: String(error) }),
        );
        break;
      case "run":
        run(message).catch((error: unknown) => scope.postMessage({ type: "fatal", message: String(error) }));
        break;
      case "reply":
        if (active?.runId === message.runId) {
          const resolve = active.replies.get(message.callId);
          active.replies.delete(message.callId);
          resolve?.(message.reply);
        }
        break;
      case "stop":
        if (active?.runId === message.runId) active.stop.abort(message.reason);
        break;
    }
  };
}

// Anything written to stdout would corrupt the MCP stdio channel of `mcp-serve`; the Worker has nothing to say
// there, so its console goes to stderr.
console.log = console.info = console.debug = console.error;
serve(globalThis as unknown as WorkerScope);
