// What a real `mcp-serve` does with odd but valid members on stdin: extra top-level members are served
// (a `__proto__` one pollutes nothing), a non-object `params` and bad `logging/setLevel` params get
// one-line errors saying what is wrong.
import assert from "node:assert/strict";
import { denoServerToml, makeRawWorld, RawServe, toolText } from "../../bench/_raw_serve.ts";

Deno.test("mcp-serve serves a request with extra members, and says what is wrong with bad params", async () => {
  const world = await makeRawWorld(denoServerToml("fx", "fixture.ts"));
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    await serve.initialize();
    const call = (id: number, extra: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"list_tools","arguments":{"servers":["fx"],"tools":["echo"]}}${extra}}`;
    await serve.sendLine(call(1, ',"__proto__":{"polluted":true}'));
    const served = toolText(await serve.waitReply(1));
    assert.equal(served.isError, false);
    assert.match(served.text, /declare const fx: \{/);
    await serve.sendLine(call(2, ',"x-trace":"abc"'));
    assert.match(toolText(await serve.waitReply(2)).text, /declare const fx: \{/);

    await serve.sendLine('{"jsonrpc":"2.0","id":3,"method":"ping","params":"notanobject"}');
    const params = (await serve.waitReply(3)).error as { code: number; message: string };
    assert.equal(params.code, -32600);
    assert.equal(
      params.message,
      'Invalid Request: "params" must be an object or an array (JSON-RPC 2.0 §4.2), not a string ("notanobject"); omit it or send an object',
    );

    await serve.sendLine('{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"bogus"}}');
    const level = (await serve.waitReply(4)).error as { code: number; message: string };
    assert.equal(level.code, -32602);
    assert.equal(
      level.message,
      'Invalid params for logging/setLevel: params.level: expected one of "debug", "info", "notice", "warning", ' +
        '"error", "critical", "alert", "emergency" (the RFC 5424 severities, as in the MCP spec); got a string ("bogus")',
    );
    await serve.sendLine('{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"debug"}}');
    assert.deepEqual((await serve.waitReply(5)).result, {});
    assert.ok((await serve.pingMs()) >= 0);
  } finally {
    if (serve.isRunning) await serve.close();
    else await serve.kill();
    await world.remove();
  }
});
