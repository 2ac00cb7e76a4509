// How a fresh `mcp-serve` starts (`docs/architecture.md`, "The walk of one `execute`"; `docs/performance.md`): an `execute` sent right behind `initialize` (what an agent does
// on its first turn) is answered, the servers its script names start as soon as the catalog is resolved,
// and no server starts before an `execute` names it. The cold-start figure is in bench/cold_start.ts and
// bench/perf.ts, not here.
import assert from "node:assert/strict";
import { makeRawWorld, RawServe, type RawWorld, toolText } from "../../bench/_raw_serve.ts";
import { fixtureServerToml } from "../_fakes_meta.ts";

async function startsOf(world: RawWorld): Promise<string[]> {
  try {
    const text = await Deno.readTextFile(`${world.root}/starts.txt`);
    return text.trim().split("\n").map((line) => line.split(" ")[0]!);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

async function twoServerWorld(): Promise<RawWorld> {
  const world = await makeRawWorld("");
  const starts = `--starts-file=${world.root}/starts.txt`;
  await Deno.writeTextFile(
    `${world.home}/plugins/hostile/SYMPOSIUM.toml`,
    `name = "hostile"\ndepends-on = "*"\n\n${fixtureServerToml("alpha", [starts])}\n${
      fixtureServerToml("beta", [starts])
    }`,
  );
  return world;
}

const line = (message: unknown) => JSON.stringify({ jsonrpc: "2.0", ...message as object });

Deno.test("mcp-serve answers an execute sent with initialize, starting only the server it names", async () => {
  const world = await twoServerWorld();
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    const initialized = serve.waitReply(1);
    const executed = serve.waitReply(2, 120_000);
    // All at once, before anything is answered: the execute reaches the shell before the catalog exists.
    await serve.sendLine(line({
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }));
    await serve.sendLine(line({ method: "notifications/initialized" }));
    await serve.sendLine(line({
      id: 2,
      method: "tools/call",
      params: { name: "execute", arguments: { script: "return await alpha.echo({ message: 'hi' })" } },
    }));
    assert.equal(
      ((await initialized).result as { serverInfo: { name: string } }).serverInfo.name,
      "symposium",
    );
    const answer = toolText(await executed);
    assert.equal(answer.isError, false, answer.text);
    assert.match(answer.text, /hi/);
    assert.deepEqual(await startsOf(world), ["alpha"], "beta was started though no script names it");
  } finally {
    await serve.close();
    await world.remove();
  }
});

Deno.test("mcp-serve starts no server before an execute names one", async () => {
  const world = await twoServerWorld();
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    await serve.initialize();
    const listed = await serve.request("tools/list");
    assert.deepEqual((listed.result as { tools: { name: string }[] }).tools.map((t) => t.name), [
      "list_tools",
      "execute",
    ]);
    // The session is loaded (the sandbox ran a script) and still nothing started.
    assert.deepEqual(await serve.execute("return 1 + 1"), { text: '{"result":2}', isError: false });
    assert.deepEqual(await startsOf(world), []);
    const answer = await serve.execute("return await beta.echo({ message: 'b' })");
    assert.equal(answer.isError, false, answer.text);
    assert.deepEqual(await startsOf(world), ["beta"]);
  } finally {
    await serve.close();
    await world.remove();
  }
});
