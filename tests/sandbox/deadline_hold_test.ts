// HostCallControl.holdDeadline(): the time a host call holds the deadline (a person answering a
// confirmation) does not count toward the script's deadline; the clock runs again afterwards.
import assert from "node:assert/strict";
import type { HostCall } from "../../lib/sandbox/mod.ts";
import { testLimits, withPool } from "../_fakes_sandbox.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `slow` waits 1.5 s, holding the deadline when the key is `held`. */
const host: HostCall = holdingHost(1_500);

/** Answers after `holdMs`, holding the deadline meanwhile when the key is `held` (a person slow to answer). */
function holdingHost(holdMs: number): HostCall {
  return async (req, _signal, control) => {
    const release = req.key === "held" ? control.holdDeadline() : undefined;
    try {
      await sleep(holdMs);
      return "answered";
    } finally {
      release?.();
    }
  };
}

Deno.test("SandboxPool.run() does not count a held host call toward the deadline", async () => {
  await withPool({ size: 1 }, async (pool) => {
    const limits = testLimits({ timeoutMs: 1_000 });
    const held = await pool.run({
      script: "return await srv.held()",
      namespaces: ["srv"],
      limits,
      hostCall: host,
    });
    assert.ok(held.ok, JSON.stringify(held));
    assert.equal(JSON.parse(held.valueJson), "answered");
    const unheld = await pool.run({
      script: "return await srv.slow()",
      namespaces: ["srv"],
      limits,
      hostCall: host,
    });
    assert.deepEqual(unheld.ok ? "ok" : unheld.failure, { error: "script_timeout", limit_secs: 1 });
  });
});

Deno.test("SandboxPool.run() runs the deadline clock again, with the time left, after the hold", async () => {
  await withPool({ size: 1 }, async (pool) => {
    const result = await pool.run({
      script: "await srv.held(); while (true) {}",
      namespaces: ["srv"],
      limits: testLimits({ timeoutMs: 1_000 }),
      hostCall: host,
    });
    assert.deepEqual(result.ok ? "ok" : result.failure, { error: "script_timeout", limit_secs: 1 });
    assert.ok(result.durationMs >= 1_500, `ran ${result.durationMs} ms`);
  });
});

Deno.test("SandboxPool.run() spends what a script computes while the clock is held", async () => {
  await withPool({ size: 1 }, async (pool) => {
    // The script keeps busy while a person is asked for 8 s: it had 1 s left, which its computing spends.
    const result = await pool.run({
      script: "srv.held(); let i = 0; while (true) i++",
      namespaces: ["srv"],
      limits: testLimits({ timeoutMs: 1_000 }),
      hostCall: holdingHost(8_000),
    });
    assert.deepEqual(result.ok ? "ok" : result.failure, { error: "script_timeout", limit_secs: 1 });
    assert.ok(
      result.durationMs < 4_000,
      `ran ${result.durationMs.toFixed(0)} ms while the question was open`,
    );
  });
});

Deno.test("SandboxPool.run() kills a script stuck in a native built-in while the clock is held", async () => {
  await withPool({ size: 1, hardKillGraceMs: 200 }, async (pool) => {
    // The built-in never polls the interrupt handler: the host counts the busy time and kills the process.
    const result = await pool.run({
      script:
        'srv.held(); await 0; const h = "a".repeat(1 << 24); return h.indexOf("a".repeat(1 << 23) + "b")',
      namespaces: ["srv"],
      limits: testLimits({ timeoutMs: 1_000 }),
      hostCall: holdingHost(8_000),
    });
    assert.deepEqual(result.ok ? "ok" : result.failure, { error: "script_timeout", limit_secs: 1 });
    assert.ok(
      result.durationMs < 4_000,
      `ran ${result.durationMs.toFixed(0)} ms while the question was open`,
    );
    const next = await pool.run({ script: "return 5", namespaces: [], limits: testLimits(), hostCall: host });
    assert.equal(next.ok && next.valueJson, "5");
  });
});

Deno.test("SandboxPool.run() keeps a script that only waits while the clock is held", async () => {
  await withPool({ size: 1 }, async (pool) => {
    // Waiting 3 s on the question (and on a timer meanwhile) spends nothing of the 1 s it has.
    const result = await pool.run({
      script: "const [a] = await Promise.all([srv.held(), new Promise((r) => setTimeout(r, 500))]); return a",
      namespaces: ["srv"],
      limits: testLimits({ timeoutMs: 1_000 }),
      hostCall: holdingHost(3_000),
    });
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(JSON.parse(result.valueJson), "answered");
  });
});
