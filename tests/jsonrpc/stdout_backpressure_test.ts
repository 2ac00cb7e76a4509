// An agent that keeps sending requests and does not read the answers: once QUEUED_WRITE_MAX_BYTES of
// answers wait, mcp-serve stops reading stdin (the agent's writes stall) instead of queueing answers in
// memory without end; once the agent reads, every answer arrives and reading goes on.
import assert from "node:assert/strict";
import { denoServerToml, makeRawWorld, rawInitialize, spawnRawServe } from "../../bench/_raw_serve.ts";
import { QUEUED_WRITE_MAX_BYTES } from "../../lib/jsonrpc/stdio_server_transport.ts";

// Each answer carries the value twice (text and structuredContent): ~10 answers fill the budget.
const ANSWER_BYTES = 400_000;
const REQUESTS = Math.ceil(QUEUED_WRITE_MAX_BYTES / ANSWER_BYTES) + 40;

Deno.test("answers the agent does not read past QUEUED_WRITE_MAX_BYTES stop mcp-serve reading stdin", async () => {
  const world = await makeRawWorld(denoServerToml("fx", "fixture.ts"), "max-result-bytes = 1000000");
  try {
    const child = spawnRawServe(world);
    const writer = child.stdin.getWriter();
    const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
    await send(rawInitialize("deaf"));
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    // Each request is ~8 KiB (a comment pads the script), so the stdin pipe holds only a few of them.
    const script = `return "x".repeat(${ANSWER_BYTES}) // ${"p".repeat(8000)}`;
    const reader = child.stdout.getReader();
    // One execute read first: its time sets the pace, so that on a loaded machine answers are still
    // written (and wait) while the agent sends, as they are on a quiet one.
    const call = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "execute", arguments: { script } },
    });
    await send(call(2)); // the first one also starts the sandbox: not timed
    await readReplies(reader, 2);
    const startedMs = performance.now();
    await send(call(3));
    await readReplies(reader, 3);
    const gapMs = Math.max(100, 2 * (performance.now() - startedMs));
    let sent = 0;
    const sending = (async () => {
      for (let i = 0; i < REQUESTS; i++) {
        await send(call(10 + i));
        sent++;
        // One at a time, so that answers are written (and wait) while the agent still sends.
        await new Promise((resolve) => setTimeout(resolve, gapMs));
      }
    })();
    // The agent does not read until its sending stalls (no request out for 10 gaps) or every one went.
    let lastSent = -1, sameSinceMs = performance.now();
    while (sent < REQUESTS && performance.now() - sameSinceMs < 10 * gapMs) {
      if (sent !== lastSent) [lastSent, sameSinceMs] = [sent, performance.now()];
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    const sentWhileDeaf = sent;
    // Then the agent reads: every answer arrives whole, and the rest of the requests are read.
    const ids = new Set<number>();
    const decoder = new TextDecoder();
    let buffered = "";
    const timer = setTimeout(() => reader.cancel(), 120_000);
    for (const early of [1, 2, 3]) ids.add(early);
    while (ids.size < REQUESTS + 3) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
        const reply = JSON.parse(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        if (reply.id >= 10) assert.equal(reply.result.structuredContent.result.length, ANSWER_BYTES);
        ids.add(reply.id);
      }
    }
    clearTimeout(timer);
    await sending;
    assert.equal(ids.size, REQUESTS + 3, "every request was answered once the agent read");
    assert.ok(
      sentWhileDeaf < REQUESTS - 10,
      `the agent sent ${sentWhileDeaf} of ${REQUESTS} requests while not reading`,
    );
    await writer.close();
    reader.releaseLock();
    await child.stdout.cancel();
    await child.status;
  } finally {
    await world.remove();
  }
});

/** Reads `reader` until the answer with `id` arrived (the initialize answer and others before it dropped). */
async function readReplies(reader: ReadableStreamDefaultReader<Uint8Array>, id: number): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`mcp-serve ended before answering request ${id}`);
    buffered += decoder.decode(value, { stream: true });
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      const reply = JSON.parse(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
      if (reply.id === id) {
        if (buffered !== "") throw new Error("an answer arrived after the one awaited");
        return;
      }
    }
  }
}
