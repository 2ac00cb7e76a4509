// The sandbox items of ../shared/cases/failure_cases.json (faults seen in other QuickJS sandboxes), each
// run through a real SandboxPool with the case's own scripts.
import assert from "node:assert/strict";
import { type HostCall, SandboxPool, type SandboxResult } from "../../lib/sandbox/mod.ts";
import { resultValue as valueOf, testLimits } from "../_fakes_sandbox.ts";

async function withPool(
  fn: (run: (script: string, hostCall?: HostCall) => Promise<SandboxResult>) => Promise<void>,
) {
  const pool = new SandboxPool({ size: 1 });
  try {
    await fn((script, hostCall = () => Promise.resolve(null)) =>
      pool.run({ script, namespaces: ["kv", "memory"], limits: testLimits(), hostCall })
    );
  } finally {
    await pool.close();
  }
}

// quickjs-emscripten#258: with the asyncify build, a second sequential await on a host function corrupted
// the runtime ("Lifetime not alive", then a gc_obj_list assertion).
Deno.test("SandboxPool.run() survives sequential and nested concurrent awaits on host calls", async () => {
  const kv: HostCall = async (req) => {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 50));
    return (req.args as { p: string }).p;
  };
  await withPool(async (run) => {
    assert.deepEqual(
      valueOf(
        await run("const a = await kv.get({p: '/a'}); const b = await kv.get({p: '/b'}); return [a, b]", kv),
      ),
      ["/a", "/b"],
    );
    const pairs = valueOf(
      await run(
        "return await Promise.all(Array.from({length: 50}, (_, i) => " +
          "Promise.all([kv.get({p: 'x' + i}), kv.get({p: 'y' + i})])))",
        kv,
      ),
    );
    assert.deepEqual(pairs, Array.from({ length: 50 }, (_, i) => [`x${i}`, `y${i}`]));
    assert.equal(valueOf(await run("return (await kv.get({p: 'third'})) + ' run'", kv)), "third run");
  });
});

// quickjs-emscripten#46: an exception thrown inside an async function never surfaced; executePendingJobs
// reported success and the rejection was lost.
Deno.test("SandboxPool.run() surfaces an exception thrown after an await and reports a floating rejection", async () => {
  await withPool(async (run) => {
    const late = await run("await Promise.resolve(); throw new Error('late boom')");
    assert.equal(late.ok, false);
    assert.match(!late.ok && "message" in late.failure ? late.failure.message : "", /late boom/);
    const floating = await run("Promise.reject(new Error('floating')); return 'done'");
    assert.equal(valueOf(floating), "done");
    assert.deepEqual(floating.console, ["[error] Unhandled promise rejection: Error: floating"]);
  });
});

// deepagentsjs#558: a QuickJS interpreter crashed with "Do not know how to serialize a BigInt" when a
// result, log line or tool argument contained a BigInt.
Deno.test("SandboxPool.run() turns BigInt into decimal strings in results, logs and tool arguments", async () => {
  await withPool(async (run) => {
    assert.deepEqual(valueOf(await run("return { count: 12345678901234567890n, nested: [2n, 3n] }")), {
      count: "12345678901234567890",
      nested: ["2", "3"],
    });
    const logged = await run("console.log(10n); return 1");
    assert.equal(valueOf(logged), 1);
    assert.deepEqual(logged.console, ["10"]);
    let sent: unknown;
    const memory: HostCall = (req) => {
      sent = req.args;
      return Promise.resolve({ nodes: [] });
    };
    assert.deepEqual(
      valueOf(await run("return await memory.search_nodes({query: String(2n ** 70n)})", memory)),
      {
        nodes: [],
      },
    );
    assert.deepEqual(sent, { query: "1180591620717411303424" });
  });
});

// sebastianwessel/quickjs#59: setTimeout(f) without a delay threw an internal TypeError (and earlier never
// fired, so the script never finished).
Deno.test("SandboxPool.run() fires setTimeout without a delay and drops pending timers at the end", async () => {
  await withPool(async (run) => {
    assert.equal(valueOf(await run("await new Promise(r => setTimeout(r)); return 1")), 1); // also warms the pool
    const early = await run("setTimeout(() => { globalThis.late = 1 }, 60000); return 'early'");
    assert.equal(valueOf(early), "early");
    assert.ok(early.durationMs < 1000, `took ${early.durationMs} ms`);
    assert.equal(valueOf(await run("return typeof globalThis.late")), "undefined");
    assert.equal(valueOf(await run("return typeof setTimeout")), "function");
  });
});
