// An agent that closed its end of mcp-serve's stdout (EPIPE on every answer), then stdin: mcp-serve ends
// without waiting out DRAIN_AFTER_EOF_MS for answers that can no longer be delivered.
import assert from "node:assert/strict";
import { denoServerToml, makeRawWorld, rawInitialize, spawnRawServe } from "../../bench/_raw_serve.ts";
import { DRAIN_AFTER_EOF_MS } from "../../lib/jsonrpc/stdio_server_transport.ts";

Deno.test("mcp-serve with a closed stdout ends soon after stdin closes, not after the drain wait", async () => {
  const world = await makeRawWorld(denoServerToml("fx", "fixture.ts"));
  try {
    const child = spawnRawServe(world);
    const writer = child.stdin.getWriter();
    const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
    await send(rawInitialize("gone"));
    const reader = child.stdout.getReader();
    assert.ok(((await reader.read()).value?.length ?? 0) > 0, "initialize was answered");
    await reader.cancel(); // the agent's read end closes: every later answer meets EPIPE
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    for (let id = 2; id < 6; id++) {
      await send({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "execute", arguments: { script: "return await fx.echo({ message: 'x' })" } },
      });
    }
    // Long enough for the answers to be written (and fail): a first execute starts the sandbox and fx.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const closedAt = performance.now();
    await writer.close();
    const status = await child.status;
    const tookMs = performance.now() - closedAt;
    assert.equal(status.code, 0);
    assert.ok(
      tookMs < DRAIN_AFTER_EOF_MS / 2,
      `mcp-serve took ${Math.round(tookMs)} ms to end after stdin closed`,
    );
  } finally {
    await world.remove();
  }
});
