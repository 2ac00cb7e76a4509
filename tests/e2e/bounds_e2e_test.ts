/**
 * End to end, issue 25: a hostile backing server (`testdata/servers/hostile_peer.ts`) behind a real
 * `mcp-serve`, spoken to as a raw JSON-RPC agent that may declare sampling and elicitation and never
 * answers unless told to. Each attack ends bounded: a clear message, nothing kept, the session answering.
 */
import assert from "node:assert/strict";
import { denoServerToml, makeRawWorld, RawServe, type RawWorld } from "../../bench/_raw_serve.ts";

/** What the raw agent declares at `initialize`. */
const CAPABLE = { sampling: {}, elicitation: { form: {}, url: {} } };

async function withPeer(
  options: { flags?: string[]; config?: string; capabilities?: Record<string, unknown>; extraToml?: string },
  body: (serve: RawServe, world: RawWorld) => Promise<void>,
): Promise<void> {
  const world = await makeRawWorld(
    denoServerToml("peer", "hostile_peer.ts", options.flags ?? []) + (options.extraToml ?? ""),
    options.config ?? "",
  );
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    await serve.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: options.capabilities ?? {},
      clientInfo: { name: "raw-agent", version: "1.0.0" },
    });
    await serve.sendLine(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    await body(serve, world);
  } finally {
    if (serve.isRunning) await serve.close();
    else await serve.kill();
    await world.remove();
  }
}

/** The value of a successful `execute`. */
function valueOf(answer: { text: string; isError: boolean }): unknown {
  assert.equal(answer.isError, false, answer.text);
  return (JSON.parse(answer.text) as { result?: unknown }).result;
}

async function cacheFiles(world: RawWorld): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(`${world.home}/cache/tools`)) names.push(e.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return names;
}

Deno.test("mcp-serve refuses a tools/list whose pages together pass MAX_LISTING_BYTES and caches none of it", async () => {
  // 20 pages of 1,000 tools of 1 KB: 20 MB in all, each page 1 MB (within every per-page bound).
  const flags = ["--list-pages=20", "--list-tools=1000", "--tool-bytes=1000"];
  await withPeer({ flags }, async (serve, world) => {
    const { text } = await serve.listTools({ servers: ["peer"] });
    assert.match(
      text,
      /`peer`: peer tools\/list failed: tools\/list listed more than the 8 MiB one whole listing may be \(MAX_LISTING_BYTES, all pages together; passed on page \d+/,
    );
    assert.deepEqual(await cacheFiles(world), []);
    const failed = await serve.execute("return await peer.write({ path: 'x' })");
    assert.equal(failed.isError, true);
    assert.match(failed.text, /MAX_LISTING_BYTES/);
    assert.ok((await serve.pingMs()) < 5_000);
  });
});

Deno.test("mcp-serve refuses a resources/list whose pages together pass MAX_LISTING_BYTES", async () => {
  const flags = ["--resource-pages=20", "--resources=1000", "--resource-bytes=1000"];
  await withPeer({ flags }, async (serve) => {
    const { text } = await serve.execute(
      "try { await peer.$resources.list(); return 'listed' } catch (e) { return e.message }",
    );
    assert.match(text, /resources\/list listed more than the 8 MiB one whole listing may be/);
  });
});

Deno.test("mcp-serve answers a tools/list with a cursor it never gave -32602", async () => {
  await withPeer({}, async (serve) => {
    const first = await serve.request("tools/list", {});
    assert.equal((first.result as { nextCursor?: string }).nextCursor, undefined);
    const bogus = await serve.request("tools/list", { cursor: "no-such-page" });
    assert.equal((bogus.error as { code: number }).code, -32602);
    assert.match((bogus.error as { message: string }).message, /cursor/);
  });
});
