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

function textOf(result: unknown): string {
  return (result as { content: { text?: string }[] }).content.map((c) => c.text ?? "").join("");
}

Deno.test("a cold start's listings of one server share one tools/list request", async () => {
  const dirs = await makeDirs();
  const lists = `${dirs.root}/lists.txt`;
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx", [`--lists-file=${lists}`]));
  const catalog = await open(dirs);
  try {
    const [, , outcome] = await coldExecute(catalog, "echo");
    assert.equal(textOf((outcome as { result: unknown }).result), "x");
    assert.equal(await listsSeen(lists), 1);
    await catalog.call("fx", "echo", { message: "again" });
    assert.equal(await listsSeen(lists), 1, "a held listing is reused");
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("a tools/list_changed during a listing costs one re-list, and a later one still refreshes", async () => {
  const dirs = await makeDirs();
  const lists = `${dirs.root}/lists.txt`;
  await writePlugin(
    dirs.home,
    "fx",
    fixtureServerToml("fx", [`--lists-file=${lists}`, "--change-during-list"]),
  );
  const catalog = await open(dirs);
  try {
    // The first answer lacks `b`, though the server announced `b` before answering.
    await coldExecute(catalog, "echo");
    assert.equal(await listsSeen(lists), 1);
    assert.equal(textOf((await catalog.call("fx", "b", {})).result), "B-OK");
    assert.equal(await listsSeen(lists), 2, "one re-list for the change seen during the listing");
    await Promise.all([catalog.call("fx", "b", {}), catalog.call("fx", "echo", { message: "y" })]);
    assert.equal(await listsSeen(lists), 2, "the re-listed tools are kept");
    await catalog.call("fx", "enable_b", {}); // a real tools/list_changed, after every listing ended
    await catalog.call("fx", "b", {});
    assert.equal(await listsSeen(lists), 3, "a later tools/list_changed re-lists once");
    // The tool cache holds the listing taken after the change, not the stale one.
    const again = await open(dirs);
    try {
      const cached = await again.listServerTools(again.servers[0]!, { allowStart: false });
      assert.equal(cached.source, "cache");
      assert.ok(cached.tools.some((t) => t.name === "b"));
    } finally {
      await again.close();
    }
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("a failed shared listing reaches every waiter with its message and is not kept", async () => {
  const dirs = await makeDirs();
  const lists = `${dirs.root}/lists.txt`;
  await writePlugin(
    dirs.home,
    "fx",
    fixtureServerToml("fx", [`--lists-file=${lists}`, "--fail-lists=db is down"]),
  );
  const catalog = await open(dirs);
  try {
    const spec = catalog.servers[0]!;
    const settled = await Promise.allSettled([
      catalog.listServerTools(spec, { live: true }),
      catalog.listServerTools(spec, { live: true }),
      catalog.call("fx", "echo", { message: "x" }),
    ]);
    const messages = settled.map((s) => s.status === "rejected" ? String(s.reason?.message) : "fulfilled");
    assert.match(messages[0]!, /fx tools\/list failed: .*db is down/);
    assert.deepEqual(messages, [messages[0], messages[0], messages[0]]);
    assert.equal(await listsSeen(lists), 1);
    await assert.rejects(catalog.listServerTools(spec), { message: messages[0] });
    assert.equal(await listsSeen(lists), 2, "the next listing asks again");
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("a waiter that gives up leaves a shared listing running for the others", async () => {
  const dirs = await makeDirs();
  const lists = `${dirs.root}/lists.txt`;
  await writePlugin(
    dirs.home,
    "fx",
    fixtureServerToml("fx", [`--lists-file=${lists}`, "--change-during-list"]),
  );
  const catalog = await open(dirs);
  try {
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
    assert.equal(await listsSeen(lists), 2);
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});
