// After stdin ends, the stdin reader waits only for answers that will come: not for a request the agent
// cancelled (it gets none) nor for a `subscriptions/listen` (answered when the connection ends).
import assert from "node:assert/strict";
import { LineStdioServerTransport } from "../../lib/jsonrpc/mod.ts";
import type { Logger } from "../../lib/log.ts";

function recordingLogger(lines: string[]): Logger {
  const log = (m: string) => void lines.push(m);
  return { debug: log, info: log, warn: log, error: log, child: () => recordingLogger(lines) };
}

Deno.test("after EOF the reader does not wait for a cancelled request nor for subscriptions/listen", async () => {
  const lines: string[] = [];
  const messages = [
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "execute" } },
    { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
    {
      jsonrpc: "2.0",
      id: 2,
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true } },
    },
  ];
  const input = new Blob([messages.map((m) => JSON.stringify(m)).join("\n") + "\n"]).stream();
  const transport = new LineStdioServerTransport({
    input,
    output: new WritableStream(),
    logger: recordingLogger(lines),
  });
  const read: unknown[] = [];
  transport.onmessage = (message) => void read.push(message);
  const closed = new Promise<void>((resolve) => transport.onclose = resolve);
  await transport.start();
  await closed;
  assert.equal(read.length, 3);
  assert.deepEqual(
    lines.filter((l) => l.includes("unanswered")),
    [],
    "it waited for answers that never come",
  );
});
