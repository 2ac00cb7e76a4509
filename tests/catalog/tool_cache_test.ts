import assert from "node:assert/strict";
import { Catalog } from "../../lib/catalog/mod.ts";
import {
  readCachedEra,
  readFreshToolCache,
  readToolCacheState,
  TOOL_CACHE_TTL_MS,
  toolCachePath,
  writeToolCache,
} from "../../lib/catalog/tool_cache.ts";
import type { HttpServerSpec } from "../../lib/plugins/server_spec.ts";
import { PrivateDirError } from "../../lib/secrets/private_dir.ts";
import { ManualClock } from "../_fakes_backends.ts";
import { fixtureServerToml, makeDirs, writePlugin } from "../_fakes_meta.ts";

Deno.test("readToolCacheState() says fresh with the age, stale past the TTL, or none", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  await writePlugin(dirs.home, "cold", fixtureServerToml("cold"));
  const clock = new ManualClock();
  const catalog = await Catalog.open({
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: dirs.home },
    homeDir: dirs.root,
    clock,
  });
  const [cold, fx] = catalog.servers;
  const listed = await catalog.listServerTools(fx!);
  await catalog.close();
  const state = (nowMs: number) => readToolCacheState(catalog.configDir, fx!, { nowMs });
  assert.deepEqual(await state(clock.nowMs + 5_000), {
    state: "fresh",
    ageMs: 5_000,
    toolCount: listed.tools.length,
    learnableCount: listed.tools.filter((tool) => tool.outputSchema === undefined).length,
    shapeCount: 0,
    era: "legacy",
  });
  assert.equal((await state(clock.nowMs + TOOL_CACHE_TTL_MS + 1)).state, "stale");
  assert.deepEqual(await readToolCacheState(catalog.configDir, cold!), { state: "none" });
  await Deno.writeTextFile(await toolCachePath(catalog.configDir, cold!), "{not json");
  assert.deepEqual(await readToolCacheState(catalog.configDir, cold!), { state: "none" });
  await dirs.remove();
});

const CLOCK = { now: () => Date.now(), sleep: () => Promise.resolve() };

/** A remote spec with a secret in a header and in the URL (`urlTemplate` holds the `${VAR}` form). */
function remoteSpec(token: string): HttpServerSpec {
  return {
    transport: "http",
    name: "gh",
    plugin: "p",
    location: { file: "/p/SYMPOSIUM.toml", line: 1, column: 1 },
    startupTimeoutMs: 1_000,
    toolCallTimeoutMs: 1_000,
    url: `https://mcp.example.com/mcp?api_key=url-${token}`,
    urlTemplate: "https://mcp.example.com/mcp?api_key=${KEY}",
    headers: { Authorization: `Bearer hdr-${token}` },
  };
}

async function filesUnder(dir: string): Promise<{ path: string; text: string; mode: number }[]> {
  const out: { path: string; text: string; mode: number }[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    const info = await Deno.lstat(path);
    if (info.isDirectory) out.push(...await filesUnder(path));
    else out.push({ path, text: await Deno.readTextFile(path), mode: info.mode! & 0o777 });
  }
  return out;
}

Deno.test("writeToolCache() stores no header or URL value: the key on disk is a hash, files 0600 in 0700 folders", async () => {
  const dir = await Deno.makeTempDir();
  const previous = Deno.umask(0o000);
  try {
    const token = "tok-3f9a1c7e55";
    await writeToolCache(dir, remoteSpec(token), [{ name: "t", inputSchema: { type: "object" } }], CLOCK);
    assert.deepEqual(await readFreshToolCache(dir, remoteSpec(token), CLOCK), [{
      name: "t",
      inputSchema: { type: "object" },
    }]);
    assert.equal(await readFreshToolCache(dir, remoteSpec("other-token-1"), CLOCK), undefined);
    const files = await filesUnder(`${dir}/cache`);
    assert.equal(files.length, 1);
    for (const file of files) {
      assert.ok(!file.text.includes(token) && !file.path.includes(token), file.text);
      if (Deno.build.os !== "windows") assert.equal(file.mode, 0o600);
    }
    if (Deno.build.os !== "windows") {
      assert.equal((await Deno.stat(`${dir}/cache`)).mode! & 0o777, 0o700);
      assert.equal((await Deno.stat(`${dir}/cache/tools`)).mode! & 0o777, 0o700);
    }
  } finally {
    Deno.umask(previous);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeToolCache() removes the server's stale entries and first-format files, keeping other servers'", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const other: HttpServerSpec = { ...remoteSpec("x1"), name: "other" };
    await writeToolCache(dir, other, [], CLOCK);
    await writeToolCache(dir, remoteSpec("rotated-1"), [], CLOCK);
    await Deno.writeTextFile(
      `${dir}/cache/tools/${"a".repeat(32)}.json`,
      '{"spawnKey":"http:[\\"secret\\"]"}',
    );
    await Deno.writeTextFile(`${dir}/cache/tools/notes.json`, "{}");
    await writeToolCache(dir, remoteSpec("rotated-2"), [], CLOCK);
    const names = [...Deno.readDirSync(`${dir}/cache/tools`)].map((e) => e.name).sort();
    assert.deepEqual(
      names,
      [
        (await toolCachePath(dir, other)).split("/").pop(),
        (await toolCachePath(dir, remoteSpec("rotated-2"))).split("/").pop(),
        "notes.json",
      ].sort(),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeToolCache() refuses a cache/ that is a symbolic link; reading through one is a miss", async () => {
  if (Deno.build.os === "windows") return;
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/elsewhere/tools`, { recursive: true });
    await Deno.symlink(`${dir}/elsewhere`, `${dir}/cache`);
    await assert.rejects(
      () => writeToolCache(dir, remoteSpec("t-123456"), [], CLOCK),
      (e: unknown) =>
        e instanceof PrivateDirError && e.code === "PRIVATE_DIR_SYMLINK" && e.path === `${dir}/cache`,
    );
    assert.deepEqual([...Deno.readDirSync(`${dir}/elsewhere/tools`)], []);
    assert.equal(await readFreshToolCache(dir, remoteSpec("t-123456"), CLOCK), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeToolCache() keeps a modern server's era and ttlMs: the list is fresh for ttlMs, the era for the TTL", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const clock = new ManualClock();
    const spec = remoteSpec("t-1");
    const tools = [{ name: "t", inputSchema: { type: "object" as const } }];
    const hints = { ttlMs: 10_000, cacheScope: "public" };
    await writeToolCache(dir, spec, tools, clock, { era: "modern", hints });
    assert.deepEqual(await readFreshToolCache(dir, spec, clock), tools);
    assert.equal(await readCachedEra(dir, spec, clock), "modern");
    clock.nowMs += 10_001;
    assert.equal(await readFreshToolCache(dir, spec, clock), undefined, "stale past the server's ttlMs");
    assert.equal((await readToolCacheState(dir, spec, { nowMs: clock.nowMs })).state, "stale");
    assert.equal(await readCachedEra(dir, spec, clock), "modern", "the era outlives the list");
    clock.nowMs += TOOL_CACHE_TTL_MS;
    assert.equal(await readCachedEra(dir, spec, clock), undefined);
    await writeToolCache(dir, spec, tools, clock, { era: "modern", hints: { ttlMs: 0 } });
    clock.nowMs += 1;
    assert.equal(await readFreshToolCache(dir, spec, clock), undefined, "ttlMs 0: stale at once");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
