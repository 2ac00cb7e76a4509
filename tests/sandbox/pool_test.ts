// SandboxPool with real sandbox processes: the hostile set, the three deadline layers, cancellation, queueing,
// crashed and poisoned sandbox processes, and the host event loop staying responsive throughout.
import assert from "node:assert/strict";
import { type HostCall, SandboxPool } from "../../lib/sandbox/mod.ts";
import { resultValue as valueOf, standInGuest, testLimits, withPool } from "../_fakes_sandbox.ts";

const MIB = 1024 * 1024;

/** Echoes `{key, args}`; `never` waits until its signal aborts, then rejects. */
const echoHost: HostCall = (req, signal) => {
  if (req.key === "never") {
    return new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
  }
  return Promise.resolve({ key: req.key, args: req.args });
};

/** Measures the longest time the host event loop went without running a 10 ms interval, milliseconds. */
function eventLoopProbe(): { stop(): number } {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 10);
    last = now;
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      return worst;
    },
  };
}

/** Runs a trivial script so the pool's sandbox process is started before a test measures durations. */
async function warm(pool: SandboxPool): Promise<void> {
  valueOf(await pool.run({ script: "return 0", namespaces: [], limits: testLimits(), hostCall: echoHost }));
}

Deno.test("SandboxPool.run() returns the value, console lines and counts", async () => {
  await withPool({ size: 1 }, async (pool) => {
    const result = await pool.run({
      script: "console.log('hi'); const r = await srv.echo({ a: 1 }); return r",
      namespaces: ["srv"],
      limits: testLimits(),
      hostCall: echoHost,
    });
    assert.deepEqual(valueOf(result), { key: "echo", args: { a: 1 } });
    assert.deepEqual(result.console, ["hi"]);
    assert.equal(result.toolCalls, 1);
    assert.ok(result.durationMs > 0);
  });
});

Deno.test("SandboxPool.run() strips TypeScript in its sandbox process (Node's process global removed there)", async () => {
  await withPool({ size: 1 }, async (pool) => {
    const result = await pool.run({
      // The stripper (sucrase, CommonJS) loads on this first TypeScript script, after the global is gone.
      script: "interface Hit { n: number }\nconst hit: Hit = { n: 41 };\nreturn (hit.n as number) + 1",
      namespaces: [],
      limits: testLimits(),
      hostCall: echoHost,
    });
    assert.equal(valueOf(result), 42);
  });
});

Deno.test("SandboxPool.run() passes deep-result, toJSON and console-budget outcomes through its sandbox process", async () => {
  await withPool({ size: 1 }, async (pool) => {
    const deep = JSON.parse("[".repeat(100_000) + "]".repeat(100_000));
    const hostCall: HostCall = (req) => Promise.resolve(req.key === "deep" ? deep : { key: req.key });
    const result = await pool.run({
      script: "console.log('a'.repeat(20)); console.log('b');\n" +
        "const e = await srv.deep().then(() => 'resolved', (e) => e.message);\n" +
        "return { e, toJSON() { let i = 0; while (i < 3e6) i++; return [this.e, i] } }",
      namespaces: ["srv"],
      limits: testLimits({ maxConsoleBytes: 11, timeoutMs: 10_000 }),
      hostCall,
    });
    const [message, count] = valueOf(result) as [string, number];
    assert.match(message, /^The result of srv\.deep is nested too deeply \(100000 levels\)/);
    assert.equal(count, 3e6);
    assert.deepEqual(result.console, ["a".repeat(8)]);
    assert.equal(result.consoleDropped, true);
    assert.deepEqual(result.ok && result.consoleDroppedAmount, { lines: 2, bytes: 12 + 4 });
    // The deep result never reached QuickJS: the pool still serves runs.
    assert.equal(valueOf(await pool.run({ script: "1", namespaces: [], limits: testLimits(), hostCall })), 1);
  });
});

Deno.test("SandboxPool.run() dispatches 100 pending host calls at once across the process boundary", async () => {
  await withPool({ size: 1 }, async (pool) => {
    const waiting: Array<() => void> = [];
    let maxPending = 0;
    const hostCall: HostCall = (req) =>
      new Promise((resolve) => {
        waiting.push(() => resolve(req.args));
        maxPending = Math.max(maxPending, waiting.length);
        if (waiting.length === 100) { for (const release of waiting.splice(0)) release(); }
      });
    const result = await pool.run({
      script:
        "const r = await Promise.all(Array.from({ length: 100 }, (_, i) => srv.get(i))); return r.at(-1)",
      namespaces: ["srv"],
      limits: testLimits(),
      hostCall,
    });
    assert.equal(valueOf(result), 99);
    assert.equal(maxPending, 100);
    assert.equal(result.toolCalls, 100);
  });
});

Deno.test("SandboxPool.run() ends every hostile script correctly without blocking the host", async () => {
  const hostile: Array<[string, string, string]> = [
    ["busy loop", "while (true) {}", "script_timeout"],
    ["busy loop in try/catch", "try { while (true) {} } catch { return 'caught' }", "script_timeout"],
    [
      "typed arrays pushed forever",
      "const a = []; while (true) a.push(new Uint8Array(1e6))",
      "memory_exhausted",
    ],
    ["unbounded recursion", "function f() { return f() + 1 } f()", "script_error"],
    ["native string repeat loop", "for (;;) 'x'.repeat(1e6)", "script_timeout"],
    ["promise that never settles", "await new Promise(() => {})", "script_error"],
    ["constructor escape", "this.constructor.constructor('return process')()", "script_error"],
    ["import escape", "await import('node:child_process')", "script_error"],
    ["busy loop after an await", "await 0; while (true) {}", "script_timeout"],
    [
      "filling typed arrays",
      "const a = []; for (;;) a.push(new Float64Array(1e5).fill(Math.random()))",
      "memory_exhausted",
    ],
    [
      "growing an ordinary heap",
      "const a = []; for (let i = 0;; i++) a.push({ i, s: 'k' + i })",
      // Small objects fill 64 MB in ~2 s on an idle 2-core machine, so under load the deadline may come
      // first: either ending is correct, a crash or a success is not.
      "memory_exhausted|script_timeout",
    ],
    [
      "allocating after an await",
      "await srv.x(1); const a = []; while (true) a.push(new Array(1e3).fill('y'))",
      // As above: under load the 2 s deadline may come first (engine_test checks memory_exhausted alone).
      "memory_exhausted|script_timeout",
    ],
    ["deeply nested source", "(".repeat(1e5), "script_error"],
    ["deeply nested JSON.parse", "JSON.parse('['.repeat(1e5))", "script_error"],
    [
      "native sort loop",
      "const a = []; for (let i = 0; i < 3e5; i++) a.push(String(Math.random())); for (;;) a.sort()",
      "script_timeout",
    ],
    ["tool call that never answers", "await srv.never()", "script_timeout"],
  ];
  await withPool({ size: 2, hardKillGraceMs: 500 }, async (pool) => {
    const limits = testLimits({ timeoutMs: 2000, memoryLimitBytes: 64 * MIB });
    await Promise.all([warm(pool), warm(pool)]);
    const probe = eventLoopProbe();
    // Two at a time, one per process: a run's wait for a free process counts toward its deadline.
    const results = [];
    for (let i = 0; i < hostile.length; i += 2) {
      results.push(
        ...await Promise.all(
          hostile.slice(i, i + 2).map(([, script]) =>
            pool.run({ script, namespaces: ["srv"], limits, hostCall: echoHost })
          ),
        ),
      );
    }
    const after = await pool.run({
      script: "return [1, 2, 3].map((x) => x * 2)",
      namespaces: [],
      limits,
      hostCall: echoHost,
    });
    const worstStallMs = probe.stop();
    const outcomes = results.map((r, i) => [hostile[i]![0], r.ok ? "ok" : r.failure.error]);
    assert.deepEqual(
      outcomes.map(([name, got]) => {
        const expected = hostile.find(([n]) => n === name)![2];
        return [name, expected.split("|").includes(got!) ? expected : got];
      }),
      hostile.map(([name, , expected]) => [name, expected]),
    );
    assert.deepEqual(valueOf(after), [2, 4, 6]);
    // A script running on the host thread would stall it for the whole 2 s deadline. The 50 ms target
    // itself is measured by bench/sandbox_bench.ts ("host stall"): on a shared 2-core machine the OS
    // alone can pause this process for tens of ms, so the test only asserts the host was never held
    // for anything like a script's run time.
    assert.ok(worstStallMs <= 500, `host event loop stalled for ${worstStallMs.toFixed(1)} ms`);
  });
});

Deno.test("SandboxPool.run() aborts a pending host call's signal at the deadline", async () => {
  await withPool({ size: 1 }, async (pool) => {
    await warm(pool);
    let aborted: unknown;
    const hostCall: HostCall = (_req, signal) =>
      new Promise((_, reject) =>
        signal.addEventListener("abort", () => {
          aborted = signal.reason;
          reject(new Error("cancelled by host"));
        })
      );
    const result = await pool.run({
      script: "await srv.slow()",
      namespaces: ["srv"],
      limits: testLimits({ timeoutMs: 400 }),
      hostCall,
    });
    assert.equal(result.ok, false);
    assert.deepEqual(!result.ok && result.failure, { error: "script_timeout", limit_secs: 0.4 });
    // The host's deadline timer ("timeout") or, when a loaded machine delays that timer, the guest's own
    // deadline ending the run first ("finished"): either way the pending call's signal was aborted.
    assert.ok(aborted === "timeout" || aborted === "finished", `aborted with ${String(aborted)}`);
    assert.ok(result.durationMs < 2000, `took ${result.durationMs} ms`);
  });
});

Deno.test("SandboxPool.run() kills a sandbox process stuck in a native built-in and keeps its console output", async () => {
  await withPool({ size: 1, hardKillGraceMs: 200 }, async (pool) => {
    await warm(pool);
    const limits = testLimits({ timeoutMs: 400 });
    const result = await pool.run({
      script: "console.log('before'); for (;;) 'x'.repeat(1e6)",
      namespaces: [],
      limits,
      hostCall: echoHost,
    });
    assert.equal(result.ok, false);
    assert.deepEqual(!result.ok && result.failure, { error: "script_timeout", limit_secs: 0.4 });
    assert.deepEqual(result.console, ["before"]);
    assert.ok(result.durationMs < 3000, `took ${result.durationMs} ms`);
    // The next run gets a generous deadline: it must succeed in a fresh sandbox process even on a loaded machine.
    const next = await pool.run({
      script: "return 'next'",
      namespaces: [],
      limits: testLimits({ timeoutMs: 20_000 }),
      hostCall: echoHost,
    });
    assert.equal(valueOf(next), "next");
  });
});

Deno.test("SandboxPool.run() cancels a busy run when its signal aborts", async () => {
  await withPool({ size: 1, hardKillGraceMs: 300 }, async (pool) => {
    await warm(pool);
    const controller = new AbortController();
    const running = pool.run({
      script: "while (true) {}",
      namespaces: [],
      limits: testLimits({ timeoutMs: 30_000 }),
      hostCall: echoHost,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 100);
    const result = await running;
    assert.deepEqual(!result.ok && result.failure, { error: "cancelled" });
    assert.ok(result.durationMs < 5000, `took ${result.durationMs} ms`);
  });
});

Deno.test("SandboxPool.run() cancels a run waiting on a host call and aborts the call", async () => {
  await withPool({ size: 1 }, async (pool) => {
    const controller = new AbortController();
    let callSignal: AbortSignal | undefined;
    const hostCall: HostCall = (_req, signal) => {
      callSignal = signal;
      setTimeout(() => controller.abort(), 20);
      return new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("stop"))));
    };
    const result = await pool.run({
      script: "console.log('calling'); await srv.wait()",
      namespaces: ["srv"],
      limits: testLimits({ timeoutMs: 30_000 }),
      hostCall,
      signal: controller.signal,
    });
    assert.deepEqual(!result.ok && result.failure, { error: "cancelled" });
    assert.deepEqual(result.console, ["calling"]);
    assert.equal(callSignal?.aborted, true);
  });
});

Deno.test("SandboxPool.run() returns cancelled without running when the signal is already aborted", async () => {
  await withPool({ size: 1 }, async (pool) => {
    let called = false;
    const result = await pool.run({
      script: "await srv.x()",
      namespaces: ["srv"],
      limits: testLimits(),
      hostCall: () => {
        called = true;
        return Promise.resolve(null);
      },
      signal: AbortSignal.abort(),
    });
    assert.deepEqual(!result.ok && result.failure, { error: "cancelled" });
    assert.equal(called, false);
  });
});

Deno.test("SandboxPool.run() queues runs beyond its size and cancels a queued run", async () => {
  await withPool({ size: 1 }, async (pool) => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => release = resolve);
    let started!: () => void;
    const firstCalled = new Promise<void>((resolve) => started = resolve);
    const hostCall: HostCall = async () => {
      started();
      await gate;
      return "first";
    };
    const first = pool.run({
      script: "return await srv.wait()",
      namespaces: ["srv"],
      limits: testLimits(),
      hostCall,
    });
    await firstCalled;
    const controller = new AbortController();
    const queued = pool.run({
      script: "return 'never ran'",
      namespaces: [],
      limits: testLimits(),
      hostCall,
      signal: controller.signal,
    });
    const third = pool.run({ script: "return 'third'", namespaces: [], limits: testLimits(), hostCall });
    controller.abort();
    assert.deepEqual((await queued).ok ? "ran" : (await queued as { failure: unknown }).failure, {
      error: "cancelled",
    });
    release();
    assert.equal(valueOf(await first), "first");
    assert.equal(valueOf(await third), "third");
  });
});

Deno.test("SandboxPool.run() runs scripts in parallel up to its size", async () => {
  await withPool({ size: 2 }, async (pool) => {
    const waiting: Array<() => void> = [];
    const hostCall: HostCall = (req) =>
      new Promise((resolve) => {
        waiting.push(() => resolve(req.args));
        if (waiting.length === 2) { for (const go of waiting.splice(0)) go(); }
      });
    const limits = testLimits({ timeoutMs: 10_000 });
    const [a, b] = await Promise.all([
      pool.run({ script: "return await srv.meet('a')", namespaces: ["srv"], limits, hostCall }),
      pool.run({ script: "return await srv.meet('b')", namespaces: ["srv"], limits, hostCall }),
    ]);
    assert.deepEqual([valueOf(a!), valueOf(b!)], ["a", "b"]);
  });
});

Deno.test("SandboxPool keeps one sandbox process until two runs overlap, and none after idleRetireMs", async () => {
  await withPool({ size: 2, idleRetireMs: 300 }, async (pool) => {
    assert.equal(pool.processCount, 1);
    await warm(pool);
    assert.equal(pool.processCount, 1);
    await Promise.all([warm(pool), warm(pool)]);
    assert.equal(pool.processCount, 2);
    await new Promise((resolve) => setTimeout(resolve, 800));
    assert.equal(pool.processCount, 0);
    await warm(pool); // a new sandbox process serves the next run
    assert.equal(pool.processCount, 1);
  });
});

Deno.test("SandboxPool.run() replaces a sandbox process whose module overflowed the native stack", async () => {
  await withPool({ size: 1 }, async (pool) => {
    const limits = testLimits();
    const result = await pool.run({
      script: "(".repeat(100_000),
      namespaces: [],
      limits,
      hostCall: echoHost,
    });
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.failure.error, "script_error");
    assert.match(!result.ok && "message" in result.failure ? result.failure.message : "", /stack overflow/);
    const again = await pool.run({
      script: "return JSON.parse('[[1]]')",
      namespaces: [],
      limits,
      hostCall: echoHost,
    });
    assert.deepEqual(valueOf(again), [[1]]);
  });
});

Deno.test("SandboxPool.run() replaces a sandbox process whose WASM memory grew past recycleWasmBytes", async () => {
  await withPool({ size: 1, recycleWasmBytes: 0 }, async (pool) => {
    const limits = testLimits();
    for (const n of [1, 2]) {
      const result = await pool.run({ script: `return ${n}`, namespaces: [], limits, hostCall: echoHost });
      assert.equal(valueOf(result), n);
    }
  });
});

Deno.test("SandboxPool.close() ends a running script as cancelled and refuses later runs", async () => {
  const pool = new SandboxPool({ size: 1 });
  let started!: () => void;
  const running = pool.run({
    script: "await srv.started(); while (true) {}",
    namespaces: ["srv"],
    limits: testLimits({ timeoutMs: 30_000 }),
    hostCall: () => {
      started();
      return Promise.resolve(null);
    },
  });
  await new Promise<void>((resolve) => started = resolve);
  await pool.close();
  const result = await running;
  assert.deepEqual(!result.ok && result.failure, { error: "cancelled" });
  const later = await pool.run({ script: "1", namespaces: [], limits: testLimits(), hostCall: echoHost });
  assert.deepEqual(!later.ok && later.failure, { error: "internal", message: "The sandbox pool is closed" });
});

Deno.test("SandboxPool.run() reports an internal failure when its sandbox process never starts", async () => {
  await withPool({ size: 1, launch: standInGuest("silent_guest.ts"), spawnTimeoutMs: 300 }, async (pool) => {
    const result = await pool.run({ script: "1", namespaces: [], limits: testLimits(), hostCall: echoHost });
    assert.deepEqual(!result.ok && result.failure, {
      error: "internal",
      message: "Cannot start a sandbox process: no answer within 300 ms",
    });
  });
});

Deno.test("SandboxPool.run() delivers tool results to a script that yields with setTimeout(…, 0) in a loop", async () => {
  await withPool({ size: 1 }, async (pool) => {
    const hostCall: HostCall = (req) => new Promise((resolve) => setTimeout(() => resolve(req.args), 50));
    const result = await pool.run({
      script: "let done = false; srv.echo(7).then(() => done = true);" +
        " let spins = 0; while (!done) { spins++; await new Promise((r) => setTimeout(r, 0)) } return spins > 0",
      namespaces: ["srv"],
      limits: testLimits({ timeoutMs: 5_000 }),
      hostCall,
    });
    assert.equal(valueOf(result), true);
  });
});

Deno.test("SandboxPool.run() refuses a tool name past MAX_TOOL_KEY_CHARS before it reaches the host call", async () => {
  await withPool({ size: 1 }, async (pool) => {
    let calls = 0;
    const started = performance.now();
    const result = await pool.run({
      script: "const k = 'k'.repeat(1 << 20);" +
        " return await Promise.all(Array.from({ length: 40 }, () => srv[k]({}).catch((e) => e.message.slice(0, 200))))",
      namespaces: ["srv"],
      limits: testLimits({ timeoutMs: 10_000 }),
      hostCall: () => {
        calls++;
        return Promise.resolve(null);
      },
    });
    const messages = valueOf(result) as string[];
    assert.equal(messages.length, 40);
    assert.match(messages[0]!, /^The tool name "srv\.k+"… is 1048580 characters long/);
    assert.equal(calls, 0);
    assert.ok(performance.now() - started < 5_000, `took ${(performance.now() - started).toFixed(0)} ms`);
  });
});
