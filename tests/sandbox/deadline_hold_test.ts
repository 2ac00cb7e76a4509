// HostCallControl.holdDeadline(): the time a host call holds the deadline (a person answering a
// confirmation) does not count toward the script's deadline; the clock runs again afterwards.
import assert from "node:assert/strict";
import { type HostCall, SandboxPool } from "../../lib/sandbox/mod.ts";
import { testLimits } from "../_fakes_sandbox.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `slow` waits 1.5 s, holding the deadline when the key is `held`. */
const host: HostCall = async (req, _signal, control) => {
  const release = req.key === "held" ? control.holdDeadline() : undefined;
  try {
    await sleep(1_500);
    return "answered";
  } finally {
    release?.();
  }
};

Deno.test("SandboxPool.run() does not count a held host call toward the deadline", async () => {
  const pool = new SandboxPool({ size: 1 });
  try {
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
  } finally {
    await pool.close();
  }
});

Deno.test("SandboxPool.run() runs the deadline clock again, with the time left, after the hold", async () => {
  const pool = new SandboxPool({ size: 1 });
  try {
    const result = await pool.run({
      script: "await srv.held(); while (true) {}",
      namespaces: ["srv"],
      limits: testLimits({ timeoutMs: 1_000 }),
      hostCall: host,
    });
    assert.deepEqual(result.ok ? "ok" : result.failure, { error: "script_timeout", limit_secs: 1 });
    assert.ok(result.durationMs >= 1_500, `ran ${result.durationMs} ms`);
  } finally {
    await pool.close();
  }
});
