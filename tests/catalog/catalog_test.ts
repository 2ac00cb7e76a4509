import assert from "node:assert/strict";
import { Catalog, TOOL_CACHE_TTL_MS } from "../../lib/catalog/mod.ts";
import { isAlive } from "../_fakes_backends.ts";
import { ManualClock } from "../_fakes_backends.ts";
import {
  cargoLock,
  cargoToml,
  fixtureServerToml,
  makeDirs,
  type TestDirs,
  writePlugin,
} from "../_fakes_meta.ts";

async function open(dirs: TestDirs, clock?: ManualClock): Promise<Catalog> {
  return await Catalog.open({ cwd: dirs.ws, env: { SYMPOSIUM_HOME: dirs.home }, homeDir: dirs.root, clock });
}

Deno.test("Catalog.open() resolves the servers in scope and starts nothing", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx", [], 'depends-on = ["serde>=1"]'));
  await writePlugin(dirs.home, "tok", fixtureServerToml("tok", [], 'depends-on = ["tokio"]'));
  const catalog = await open(dirs);
  assert.deepEqual(catalog.servers.map((s) => s.name), ["fx"]);
  assert.equal(catalog.serverByNamespace("fx")?.name, "fx");
  assert.deepEqual(catalog.runningServers(), []);
  await catalog.close();
  await dirs.remove();
});

Deno.test("listServerTools() applies disabled-tools and counts what it hid", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx", [], 'disabled-tools = ["hang", "big"]'));
  const catalog = await open(dirs);
  const listed = await catalog.listServerTools(catalog.servers[0]!);
  assert.equal(listed.source, "live");
  assert.equal(listed.hiddenCount, 2);
  assert.ok(!listed.tools.some((t) => t.name === "hang" || t.name === "big"));
  await assert.rejects(catalog.call("fx", "hang", {}), {
    code: "TOOL_HIDDEN",
    message: /`fx.hang` is hidden by `disabled-tools`/,
  });
  await catalog.close();
  await dirs.remove();
});

Deno.test("listServerTools() answers from a fresh cache and asks the server once it is stale", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  const clock = new ManualClock();
  const first = await open(dirs, clock);
  assert.equal((await first.listServerTools(first.servers[0]!)).source, "live");
  await first.close();
  const second = await open(dirs, clock);
  assert.equal((await second.listServerTools(second.servers[0]!)).source, "cache");
  assert.deepEqual(second.runningServers(), []);
  clock.nowMs += TOOL_CACHE_TTL_MS + 1;
  assert.equal((await second.listServerTools(second.servers[0]!)).source, "live");
  assert.deepEqual(second.runningServers(), ["fx"]);
  await second.close();
  await dirs.remove();
});

Deno.test("listServerTools() never reuses the cache of a server whose command changed", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  const first = await open(dirs);
  await first.listServerTools(first.servers[0]!);
  await first.close();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx", ["--page-size=3"]));
  const second = await open(dirs);
  assert.equal((await second.listServerTools(second.servers[0]!)).source, "live");
  await second.close();
  await dirs.remove();
});

Deno.test("call() checks the key against the live tool list and reaches hyphenated tools by camelCase", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "you", fixtureServerToml("you", ["--page-size=4"]));
  const catalog = await open(dirs);
  const outcome = await catalog.call("you", "youSearch", { query: "q" });
  assert.equal(outcome.tool, "you-search");
  assert.deepEqual(outcome.result.structuredContent, { results: { web: [{ title: "r1" }] } });
  await catalog.close();
  await dirs.remove();
});

Deno.test("refreshIfChanged() shuts down a server that no longer applies and keeps the others running", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "keep", fixtureServerToml("keep"));
  await writePlugin(dirs.home, "gone", fixtureServerToml("gone", [], 'depends-on = ["serde"]'));
  const catalog = await open(dirs);
  let changes = 0;
  catalog.onChange(() => changes++);
  const keepPid = ((await catalog.call("keep", "pid", {})).result.structuredContent as { pid: number }).pid;
  const gonePid = ((await catalog.call("gone", "pid", {})).result.structuredContent as { pid: number }).pid;
  assert.equal(await catalog.refreshIfChanged(), false);
  await Deno.writeTextFile(`${dirs.ws}/Cargo.toml`, cargoToml({ anyhow: "1" }));
  await Deno.writeTextFile(`${dirs.ws}/Cargo.lock`, cargoLock({ anyhow: "1.0.86" }));
  assert.equal(await catalog.refreshIfChanged(), true);
  assert.equal(changes, 1);
  assert.deepEqual(catalog.servers.map((s) => s.name), ["keep"]);
  assert.deepEqual(catalog.runningServers(), ["keep"]);
  assert.equal(await isAlive(gonePid), false);
  const again = ((await catalog.call("keep", "pid", {})).result.structuredContent as { pid: number }).pid;
  assert.equal(again, keepPid);
  await catalog.close();
  assert.equal(await isAlive(keepPid), false);
  await dirs.remove();
});

Deno.test("refreshIfChanged() restarts only the server whose manifest entry changed when a plugin is edited", async () => {
  const dirs = await makeDirs();
  const body = (flags: string[]) => fixtureServerToml("same") + "\n" + fixtureServerToml("edited", flags);
  await writePlugin(dirs.home, "pair", body([]));
  const catalog = await open(dirs);
  const pid = async (ns: string) =>
    ((await catalog.call(ns, "pid", {})).result.structuredContent as { pid: number }).pid;
  const [samePid, editedPid] = [await pid("same"), await pid("edited")];
  await writePlugin(dirs.home, "pair", body(["--page-size=5"]));
  assert.equal(await catalog.refreshIfChanged(), true);
  assert.equal(await pid("same"), samePid);
  assert.notEqual(await pid("edited"), editedPid);
  assert.equal(await isAlive(editedPid), false);
  assert.equal(await catalog.refreshIfChanged(), false);
  await catalog.close();
  await dirs.remove();
});

Deno.test("refreshIfChanged() notices a plugin added in a nested folder and a removed config.toml", async () => {
  const dirs = await makeDirs();
  await Deno.writeTextFile(`${dirs.home}/config.toml`, "[mcp]\nmax-tool-calls = 7\n");
  const catalog = await open(dirs);
  assert.equal(catalog.config.maxToolCalls, 7);
  await Deno.mkdir(`${dirs.home}/plugins/team/deep/x`, { recursive: true });
  assert.equal(await catalog.refreshIfChanged(), false); // a folder without a manifest changes nothing
  await Deno.writeTextFile(
    `${dirs.home}/plugins/team/deep/x/SYMPOSIUM.toml`,
    `name = "deep"\ndepends-on = "*"\n\n${fixtureServerToml("deep")}`,
  );
  assert.equal(await catalog.refreshIfChanged(), true);
  assert.deepEqual(catalog.servers.map((s) => s.name), ["deep"]);
  await Deno.remove(`${dirs.home}/config.toml`);
  assert.equal(await catalog.refreshIfChanged(), true);
  assert.equal(catalog.config.maxToolCalls, 100);
  assert.deepEqual(catalog.runningServers(), []);
  await catalog.close();
  await dirs.remove();
});

Deno.test("listServerTools({ live }) starts the server even with a fresh cache; two at once share the start", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  const catalog = await open(dirs);
  try {
    const spec = catalog.servers[0]!;
    await catalog.listServerTools(spec); // fills the cache
    await catalog.close();
    const again = await open(dirs);
    try {
      assert.equal((await again.listServerTools(spec)).source, "cache");
      assert.deepEqual(again.runningServers(), []);
      const [a, b] = await Promise.all([
        again.listServerTools(spec, { live: true }),
        again.listServerTools(spec, { live: true }),
      ]);
      assert.deepEqual([a.source, b.source], ["live", "live"]);
      assert.deepEqual(again.runningServers(), ["fx"]);
      assert.equal(again.serverState(spec).starts, 1);
    } finally {
      await again.close();
    }
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("onToolsListed() tells each live listing once it is cached, and stops when unsubscribed", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  const catalog = await open(dirs);
  let listed = 0;
  const stop = catalog.onToolsListed(() => listed++);
  await catalog.listServerTools(catalog.servers[0]!);
  assert.equal(listed, 1);
  await catalog.listServerTools(catalog.servers[0]!); // the current listing: no new one
  assert.equal(listed, 1);
  stop();
  await catalog.close();
  await dirs.remove();
});
