import assert from "node:assert/strict";
import { Catalog } from "../../lib/catalog/mod.ts";
import { readToolCacheState, TOOL_CACHE_TTL_MS, toolCachePath } from "../../lib/catalog/tool_cache.ts";
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
  });
  assert.equal((await state(clock.nowMs + TOOL_CACHE_TTL_MS + 1)).state, "stale");
  assert.deepEqual(await readToolCacheState(catalog.configDir, cold!), { state: "none" });
  await Deno.writeTextFile(await toolCachePath(catalog.configDir, cold!), "{not json");
  assert.deepEqual(await readToolCacheState(catalog.configDir, cold!), { state: "none" });
  await dirs.remove();
});
