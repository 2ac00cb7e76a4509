// Spare vessels (SPARE_VESSELS in lib/sandbox/guest/engine.ts): made ahead one step at a time, each serving exactly
// one run with a fresh context, freed when the engine is dropped; through the pool of sandbox processes, back-to-back runs
// and a change of memory limit (another module) never share a context.
import assert from "node:assert/strict";
import { QuickJSEngine, SPARE_VESSELS } from "../../lib/sandbox/guest/engine.ts";
import { type HostCall, SandboxPool, type SandboxResult } from "../../lib/sandbox/mod.ts";
import { loadSandboxModule, type SandboxModule } from "../../lib/sandbox/guest/wasm_module.ts";
import { installAhead, installKey, PreparedContext } from "../../lib/sandbox/guest/_prepared_context.ts";
import { failureOf, runInEngine, testEngine, testLimits, valueOf } from "../_fakes_sandbox.ts";

const MIB = 1024 * 1024;
const echoHost: HostCall = (req) => Promise.resolve(req.args);
const LEAK = "globalThis.leaked = 1; Object.prototype.polluted = 2; return 1";
const PROBE = "return [typeof leaked, ({}).polluted]";

/** Fails when a runtime of `module` was freed with objects still alive (QuickJS aborts on its gc_obj_list). */
function assertNoAbort(module: SandboxModule): void {
  assert.equal(module.aborts(), 0, "a QuickJS runtime was freed while objects of it were alive");
}

/** A pool whose guests' stderr is kept, to check no runtime of theirs aborted. */
function poolWithStderr(): { pool: SandboxPool; stderr: () => string } {
  let text = "";
  const pool = new SandboxPool({ size: 1, onGuestStderr: (t) => text += t });
  return { pool, stderr: () => text };
}

function assertNoGuestAbort(stderr: string): void {
  assert.doesNotMatch(stderr, /\[quickjs\]/, "a sandbox process printed QuickJS's own error");
}

function poolValue(result: SandboxResult): unknown {
  if (!result.ok) throw new Error(`expected success, got ${JSON.stringify(result.failure)}`);
  return JSON.parse(result.valueJson);
}

Deno.test("QuickJSEngine.refillStep() makes one vessel per step, up to SPARE_VESSELS, each serving one run", async () => {
  const { engine } = await testEngine();
  engine.prepareNext();
  for (let i = 0; i < SPARE_VESSELS; i++) valueOf(await runInEngine("return 0"));
  assert.equal(engine.spareCount, 0);
  for (let i = 1; i < SPARE_VESSELS; i++) {
    assert.equal(engine.refillStep(), true);
    assert.equal(engine.spareCount, i);
  }
  assert.equal(engine.refillStep(), false, "full: no step has work left");
  assert.equal(engine.spareCount, SPARE_VESSELS);
  valueOf(await runInEngine(LEAK));
  assert.equal(engine.spareCount, SPARE_VESSELS - 1, "the run took a ready vessel");
  // The next run takes the other ready vessel, made before the last script ran: still a context of its own.
  assert.deepEqual(valueOf(await runInEngine(PROBE)), ["undefined", null]);
  assert.equal(engine.spareCount, SPARE_VESSELS - 2);
  valueOf(await runInEngine(LEAK)); // none ready: the run makes its own
  assert.deepEqual(valueOf(await runInEngine(PROBE)), ["undefined", null]);
  assertNoAbort((await testEngine()).module);
});

Deno.test("QuickJSEngine preloads the parts the last run used into vessels made after it, one part per step", async () => {
  const { engine } = await testEngine();
  engine.prepareNext();
  for (let i = 0; i < SPARE_VESSELS; i++) valueOf(await runInEngine("return 0"));
  valueOf(await runInEngine("return await srv.x(1)")); // compiles part 0 (calls)
  assert.equal(engine.refillStep(), true, "a new core, part 0 still to preload");
  assert.equal(engine.refillStep(), true, "part 0 preloaded, a second vessel to make");
  engine.prepareNext();
  assert.equal(engine.spareCount, SPARE_VESSELS);
  const run = await runInEngine("globalThis.leaked = 1; return [typeof leaked, await srv.y(2)]");
  assert.deepEqual(valueOf(run), ["number", { ns: "srv", key: "y", args: 2 }]);
  assert.deepEqual(valueOf(await runInEngine(PROBE)), ["undefined", null]);
  assertNoAbort((await testEngine()).module);
});

Deno.test("QuickJSEngine.dispose() frees its spare vessels and stops making them", async () => {
  // 400 vessels left alive would take far more than this module's 32 MiB heap: making them would then fail.
  const module = await loadSandboxModule(32 * MIB);
  for (let i = 0; i < 200; i++) {
    const engine = new QuickJSEngine(module);
    engine.prepareNext();
    assert.equal(engine.spareCount, SPARE_VESSELS, `round ${i}: the spares were made`);
    engine.dispose();
    assert.equal(engine.spareCount, 0);
    assert.equal(engine.refillStep(), false);
  }
  const engine = new QuickJSEngine(module);
  engine.dispose();
  const outcome = await engine.run(
    { script: "return 7", namespaces: [], limits: testLimits({ memoryLimitBytes: 32 * MIB }) },
    {
      hostCall: () => Promise.resolve({ ok: true, json: undefined }),
      onConsole: () => {},
      onConsoleDropped: () => {},
    },
  );
  assert.equal(valueOf({ outcome }), 7, "a disposed engine's run makes its own vessel");
  assert.equal(outcome.poisoned, false);
  assertNoAbort(module);
});

Deno.test("a runtime freed while an object of it is alive fails these tests (the module counts QuickJS's abort)", async () => {
  const module = await loadSandboxModule(16 * MIB);
  const vessel = new PreparedContext(module);
  vessel.ctx.newObject(); // never disposed: it outlives the runtime
  const printed: string[] = [];
  const error = console.error;
  console.error = (...args: unknown[]) => printed.push(args.join(" "));
  try {
    assert.throws(() => vessel.dispose());
  } finally {
    console.error = error;
  }
  assert.equal(module.aborts(), 1);
  assert.match(printed.join("\n"), /\[quickjs\] Aborted\(Assertion failed: list_empty\(&rt->gc_obj_list\)/);
  assert.throws(() => assertNoAbort(module), /freed while objects of it were alive/);
});

Deno.test("SandboxPool: back-to-back runs and runs after a pause each get a fresh context", async () => {
  const { pool, stderr } = poolWithStderr();
  try {
    const run = (script: string) =>
      pool.run({ script, namespaces: [], limits: testLimits(), hostCall: echoHost });
    poolValue(await run("return 0"));
    for (let i = 0; i < 6; i++) {
      poolValue(await run(LEAK));
      assert.deepEqual(poolValue(await run(PROBE)), ["undefined", null], `back to back, round ${i}`);
      await new Promise((resolve) => setTimeout(resolve, 5)); // the sandbox process makes its spares meanwhile
      assert.deepEqual(poolValue(await run(PROBE)), ["undefined", null], `after a pause, round ${i}`);
    }
  } finally {
    await pool.close(); // the test's resource sanitizer checks the sandbox process (and its spares) went away
  }
  assertNoGuestAbort(stderr());
});

Deno.test("SandboxPool: a change of memory limit never runs in the old module's spare vessels", async () => {
  const { pool, stderr } = poolWithStderr();
  try {
    const run = (script: string, memoryLimitBytes: number) =>
      pool.run({ script, namespaces: [], limits: testLimits({ memoryLimitBytes }), hostCall: echoHost });
    const GROW =
      "const a = []; for (let i = 0; i < 480; i++) a.push(new Uint8Array(64 * 1024)); return a.length";
    for (const limit of [64 * MIB, 8 * MIB, 64 * MIB, 8 * MIB]) {
      await new Promise((resolve) => setTimeout(resolve, 5)); // spares of the previous limit are ready
      poolValue(await run(LEAK, limit));
      assert.deepEqual(poolValue(await run(PROBE, limit)), ["undefined", null]);
      const grown = await run(GROW, limit);
      // 30 MiB of arrays fit 64 MiB but not 8 MiB (nor the 16 MiB a module starts with): the run got the module made for its own limit.
      if (limit === 8 * MIB) assert.equal(grown.ok ? "ok" : grown.failure.error, "memory_exhausted");
      else assert.equal(poolValue(grown), 480);
    }
  } finally {
    await pool.close();
  }
  assertNoGuestAbort(stderr());
});

Deno.test("a run right after a memory_exhausted one still finds a working engine", async () => {
  failureOf(
    await runInEngine("const a = []; for (;;) a.push(new Array(1000).fill(1))", {
      limits: { memoryLimitBytes: 2 * MIB },
    }),
  );
  const { engine } = await testEngine();
  engine.prepareNext();
  assert.deepEqual(valueOf(await runInEngine(PROBE)), ["undefined", null]);
});

Deno.test("vessels made after a run have its namespace globals installed ahead; a run with other servers gets a fresh context", async () => {
  const module = await loadSandboxModule(16 * MIB);
  installAhead(module, ["alpha", "beta"], 16 * MIB);
  const vessel = new PreparedContext(module);
  assert.equal(vessel.installedFor, installKey(["alpha", "beta"], 16 * MIB));
  const probe = vessel.ctx.evalCode("[typeof alpha, typeof beta, String(alpha)].join()");
  assert.equal(vessel.ctx.dump(vessel.ctx.unwrapResult(probe)), "object,object,[server alpha]");
  vessel.dispose();
  const bare = new PreparedContext(module, { installAhead: false });
  assert.equal(bare.installedFor, undefined);
  bare.dispose();
  // A namespace the prelude cannot define (a fixed global): the vessel says so, and serves no run.
  installAhead(module, ["fine", "NaN"], 16 * MIB);
  const failed = new PreparedContext(module);
  assert.equal(failed.installedFor, "failed");
  failed.dispose();
  assertNoAbort(module);

  const engine = new QuickJSEngine(module);
  const run = async (script: string, namespaces: string[]) => {
    const outcome = await engine.run({
      script,
      namespaces,
      limits: testLimits({ memoryLimitBytes: 16 * MIB }),
    }, {
      hostCall: (_ns, key) => Promise.resolve({ ok: true, json: JSON.stringify(key) }),
      onConsole: () => {},
      onConsoleDropped: () => {},
    });
    if (!outcome.ok) throw new Error(JSON.stringify(outcome.failure));
    return JSON.parse(outcome.valueJson);
  };
  assert.deepEqual(await run("return [typeof one, typeof two]", ["one"]), ["object", "undefined"]);
  engine.prepareNext(); // spares with `one` installed ahead
  assert.deepEqual(await run("return [typeof one, await one.tool()]", ["one"]), ["object", "tool"]);
  // The servers changed: the spare (with `one`) is not used.
  assert.deepEqual(await run("return [typeof one, typeof two]", ["two"]), ["undefined", "object"]);
  assert.deepEqual(await run("return [typeof one, typeof two]", ["one"]), ["object", "undefined"]);
  engine.dispose();
  assertNoAbort(module);
});
