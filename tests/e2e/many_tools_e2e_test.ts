/**
 * End to end: a server of 50,000 tools (`testdata/servers/many_tools.ts`) behind a real
 * `mcp-serve`. Its first listing is long work (10 pages read and checked, the tool cache written, the
 * declarations that fit rendered); pings sent meanwhile must be answered meanwhile, in order. How fast
 * is for `bench/many_tools.ts`; this checks that the work yields at all.
 */
import assert from "node:assert/strict";
import { denoServerToml, makeRawWorld, type RawMessage, RawServe, toolText } from "../../bench/_raw_serve.ts";

/** Pings sent every 50 ms whatever came back, until `stop()`; what came back, in order of arrival. */
function pingEvery50Ms(serve: RawServe): { sent: string[]; answered: string[]; stop(): Promise<void> } {
  const sent: string[] = [];
  const answered: string[] = [];
  const waits: Promise<void>[] = [];
  const timer = setInterval(() => {
    const id = `ping-${sent.length}`;
    sent.push(id);
    waits.push(serve.waitReply(id, 120_000).then(() => void answered.push(id)));
    void serve.sendLine(JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }));
  }, 50);
  return {
    sent,
    answered,
    async stop() {
      clearInterval(timer);
      await Promise.all(waits);
    },
  };
}

Deno.test("mcp-serve answers pings, in order, while it builds the first listing of a 50,000-tool server", async () => {
  const world = await makeRawWorld(denoServerToml("many", "many_tools.ts"));
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    await serve.initialize();
    const pings = pingEvery50Ms(serve);
    let reply: RawMessage;
    let unansweredAtReply: number;
    try {
      const listing = serve.waitReply("list", 120_000);
      await serve.sendLine(JSON.stringify({
        jsonrpc: "2.0",
        id: "list",
        method: "tools/call",
        params: { name: "list_tools", arguments: { servers: ["many"] } },
      }));
      reply = await listing;
      unansweredAtReply = pings.sent.length - pings.answered.length;
    } finally {
      await pings.stop();
    }
    const { text, isError } = toolText(reply);
    assert.equal(isError, false, text);
    assert.match(text, /^declare const many: \{/);
    assert.match(text, /more tools of many left out \(answer cap 32\.0 KB\)/);
    // Held for a second and more, the thread would leave 20 and more pings waiting behind the listing.
    assert.ok(pings.sent.length >= 10, `only ${pings.sent.length} pings went out during the listing`);
    assert.ok(unansweredAtReply < 20, `${unansweredAtReply} pings were unanswered when the listing answered`);
    assert.deepEqual(pings.answered, pings.sent);
    const called = await serve.execute("return await many.note_7_get({ id: 3 })");
    assert.deepEqual(JSON.parse(called.text), { result: { tool: "note_7_get", args: { id: 3 } } });
  } finally {
    await serve.close();
    await world.remove();
  }
});
