// How many `tools/list` requests reach a real stdio fixture server (counted by the server itself in
// its --lists-file): concurrent listings of one server share one request, a `tools/list_changed`
// during a listing costs at most one re-list, a failed listing reaches every waiter.
import assert from "node:assert/strict";
import { Catalog } from "../../lib/catalog/mod.ts";
import { fixtureServerToml, makeDirs, type TestDirs, writePlugin } from "../_fakes_meta.ts";

async function open(dirs: TestDirs): Promise<Catalog> {
  return await Catalog.open({ cwd: dirs.ws, env: { SYMPOSIUM_HOME: dirs.home }, homeDir: dirs.root });
}

/** `tools/list` requests the fixture received so far. */
async function listsSeen(file: string): Promise<number> {
  try {
    return (await Deno.readTextFile(file)).split("\n").filter((line) => line === "tools/list").length;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return 0;
    throw error;
  }
}

/** What a cold `execute` of `fx.<tool>(…)` does: the early start, the execute's start, then the call. */
function coldExecute(catalog: Catalog, tool: string): Promise<unknown[]> {
  const spec = catalog.servers[0]!;
  return Promise.all([
    catalog.listServerTools(spec, { live: true }),
    catalog.listServerTools(spec, { live: true }),
    catalog.call("fx", tool, { message: "x" }),
  ]);
}

/**
 * Runs `fn` with a catalog of one fixture server `fx` started with `flags` plus `--lists-file` (whose
 * `tools/list` count `lists()` reads), and removes everything after.
 */
async function withFixture(
  flags: string[],
  fn: (catalog: Catalog, lists: () => Promise<number>, dirs: TestDirs) => Promise<void>,
): Promise<void> {
  const dirs = await makeDirs();
  const lists = `${dirs.root}/lists.txt`;
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx", [`--lists-file=${lists}`, ...flags]));
  const catalog = await open(dirs);
  try {
    await fn(catalog, () => listsSeen(lists), dirs);
  } finally {
    await catalog.close();
    await dirs.remove();
  }
}

function textOf(result: unknown): string {
  return (result as { content: { text?: string }[] }).content.map((c) => c.text ?? "").join("");
}

Deno.test("a cold start's listings of one server share one tools/list request", () =>
  withFixture([], async (catalog, lists) => {
    const [, , outcome] = await coldExecute(catalog, "echo");
    assert.equal(textOf((outcome as { result: unknown }).result), "x");
    assert.equal(await lists(), 1);
    await catalog.call("fx", "echo", { message: "again" });
    assert.equal(await lists(), 1, "a held listing is reused");
  }));

Deno.test("a tools/list_changed during a listing costs one re-list, and a later one still refreshes", () =>
  withFixture(["--change-during-list"], async (catalog, lists, dirs) => {
    // The first answer lacks `b`, though the server announced `b` before answering.
    await coldExecute(catalog, "echo");
    assert.equal(await lists(), 1);
    assert.equal(textOf((await catalog.call("fx", "b", {})).result), "B-OK");
    assert.equal(await lists(), 2, "one re-list for the change seen during the listing");
    await Promise.all([catalog.call("fx", "b", {}), catalog.call("fx", "echo", { message: "y" })]);
    assert.equal(await lists(), 2, "the re-listed tools are kept");
    await catalog.call("fx", "enable_b", {}); // a real tools/list_changed, after every listing ended
    await catalog.call("fx", "b", {});
    assert.equal(await lists(), 3, "a later tools/list_changed re-lists once");
    // The tool cache holds the listing taken after the change, not the stale one.
    const again = await open(dirs);
    try {
      const cached = await again.listServerTools(again.servers[0]!, { allowStart: false });
      assert.equal(cached.source, "cache");
      assert.ok(cached.tools.some((t) => t.name === "b"));
    } finally {
      await again.close();
    }
  }));

Deno.test("a failed shared listing reaches every waiter with its message and is not kept", () =>
  withFixture(["--fail-lists=db is down"], async (catalog, lists) => {
    const spec = catalog.servers[0]!;
    const settled = await Promise.allSettled([
      catalog.listServerTools(spec, { live: true }),
      catalog.listServerTools(spec, { live: true }),
      catalog.call("fx", "echo", { message: "x" }),
    ]);
    const messages = settled.map((s) => s.status === "rejected" ? String(s.reason?.message) : "fulfilled");
    assert.match(messages[0]!, /fx tools\/list failed: .*db is down/);
    assert.deepEqual(messages, [messages[0], messages[0], messages[0]]);
    assert.equal(await lists(), 1);
    await assert.rejects(catalog.listServerTools(spec), { message: messages[0] });
    assert.equal(await lists(), 2, "the next listing asks again");
  }));

Deno.test("a waiter that gives up leaves a shared listing running for the others", () =>
  withFixture(["--change-during-list"], async (catalog, lists) => {
    const spec = catalog.servers[0]!;
    await catalog.listServerTools(spec, { live: true }); // running; its listing is stale, so not held
    const gaveUp = new AbortController();
    gaveUp.abort(new Error("agent cancelled"));
    const [kept, left] = await Promise.allSettled([
      catalog.listServerTools(spec),
      catalog.listServerTools(spec, { signal: gaveUp.signal }),
    ]);
    assert.equal(kept.status, "fulfilled");
    assert.ok(kept.value.tools.some((t) => t.name === "b"));
    assert.equal(left.status, "rejected");
    assert.equal(left.reason.code, "CANCELLED");
    assert.equal(left.reason.message, "fx tools/list was cancelled");
    assert.equal(await lists(), 2);
  }));
