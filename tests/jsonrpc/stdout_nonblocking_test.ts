// An agent whose end of mcp-serve's stdout is non-blocking (O_NONBLOCK set on the shared pipe, as an
// agent does that made its own end non-blocking) and that reads slowly: every answer still arrives whole
// and in order once it reads. Deno's asynchronous write fails with WouldBlock on such a pipe when full
// instead of waiting, so the transport must wait for room itself.
import assert from "node:assert/strict";
import { denoServerToml, makeRawWorld, rawInitialize, spawnRawServe } from "../../bench/_raw_serve.ts";
import { REPO_ROOT } from "../_fakes_foundation.ts";

Deno.test("a full non-blocking stdout: large and small answers arrive whole once the agent reads", async () => {
  const world = await makeRawWorld(denoServerToml("fx", "fixture.ts"), "max-result-bytes = 1000000");
  try {
    const child = spawnRawServe(world, {
      prefix: ["run", "-A", `${REPO_ROOT}/testdata/jsonrpc/nonblocking_stdout.ts`],
    });
    const sizes = [300_000, 20_000, 20_000, 20_000, 20_000, 100_000, 20_000, 20_000, 20_000, 50];
    const lines: unknown[] = [
      rawInitialize("slow"),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      ...sizes.map((n, i) => ({
        jsonrpc: "2.0",
        id: 10 + i,
        method: "tools/call",
        params: { name: "execute", arguments: { script: `return "${i}".repeat(${n})` } },
      })),
      { jsonrpc: "2.0", id: 99, method: "ping" },
    ];
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(lines.map((l) => JSON.stringify(l)).join("\n") + "\n"));
    // The agent reads nothing for a while: the pipe fills (64 KiB) and mcp-serve meets WouldBlock.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const ids: unknown[] = [];
    const decoder = new TextDecoder();
    let buffered = "";
    const reader = child.stdout.getReader();
    const timer = setTimeout(() => reader.cancel(), 30_000);
    while (ids.length < sizes.length + 2) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const reply = JSON.parse(line); // a line cut by a failed write would not parse
        if (reply.error) throw new Error(`answer ${reply.id}: ${JSON.stringify(reply.error)}`);
        ids.push(reply.id);
        const i = (reply.id as number) - 10;
        if (i >= 0 && i < sizes.length) {
          assert.equal(
            reply.result.structuredContent.result,
            String(i).repeat(sizes[i]!),
            `answer ${reply.id}`,
          );
        }
      }
    }
    clearTimeout(timer);
    assert.deepEqual(ids.toSorted((a, b) => (a as number) - (b as number)), [
      1,
      ...sizes.map((_, i) => 10 + i),
      99,
    ]);
    await writer.close();
    reader.releaseLock();
    await child.stdout.cancel();
    await child.status;
  } finally {
    await world.remove();
  }
});
