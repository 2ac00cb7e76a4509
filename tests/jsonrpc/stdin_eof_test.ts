// An agent that writes its requests and closes stdin at once (`echo … | mcp-serve`) still gets every
// answer: the stdin reader waits for the answers to the requests it read before the session ends.
import assert from "node:assert/strict";
import { denoServerToml, makeRawWorld, rawInitialize, spawnRawServe } from "../../bench/_raw_serve.ts";

Deno.test("mcp-serve answers the requests it read before stdin closed", async () => {
  const world = await makeRawWorld(denoServerToml("fx", "fixture.ts"));
  try {
    const child = spawnRawServe(world);
    const lines = [
      rawInitialize("pipe"),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "execute",
          arguments: { script: "return 6 * 7" },
        },
      },
    ];
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(lines.map((l) => JSON.stringify(l)).join("\n") + "\n"));
    await writer.close();
    const output = await child.output();
    const replies = new TextDecoder().decode(output.stdout).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(replies.map((r) => r.id), [1, 2]);
    assert.equal(replies[0].result.serverInfo.name, "symposium");
    assert.deepEqual(replies[1].result.structuredContent, { result: 42 });
    assert.equal(output.code, 0);
  } finally {
    await world.remove();
  }
});
