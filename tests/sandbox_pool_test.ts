import assert from "node:assert/strict";
import { SandboxPool } from "../lib/sandbox/mod.ts";
import type { SandboxLimits } from "../lib/sandbox/mod.ts";

const LIMITS: SandboxLimits = { timeoutMs: 2000, memoryLimitBytes: 64 * 2 ** 20, stackLimitBytes: 384 * 1024, maxConsoleBytes: 8192, maxResultBytes: 32768, maxToolCalls: 100 };

Deno.test("SandboxPool.run() returns the value", async () => {
  const pool = new SandboxPool({ size: 1 });
  try {
    const r = await pool.run({ script: "return 1 + 1", namespaces: [], limits: LIMITS, hostCall: () => Promise.resolve(null) });
    assert.ok(r.ok);
    assert.equal(r.valueJson, "2");
  } finally {
    await pool.close();
  }
});
