// Isolation between back-to-back runs in one sandbox process: replies to calls a run left behind (never
// awaited, or cut off by a cancel), of many sizes and in multi-byte UTF-8, answered while the next run waits
// on its own calls, never reach the next run.
import assert from "node:assert/strict";
import type { HostCall } from "../../lib/sandbox/mod.ts";
/** The size around which the old reply ring split records; still a good spread of reply sizes. */
const REPLY_RING_BYTES = 256 * 1024;
import { resultValue, testLimits, withPool } from "../_fakes_sandbox.ts";

const sizes = [0, 7, 1000, 30_000, REPLY_RING_BYTES / 2, REPLY_RING_BYTES - 24, REPLY_RING_BYTES + 8];

Deno.test("reply channel: late replies of a finished or cancelled run never reach the next run", async () => {
  await withPool({ size: 1, hardKillGraceMs: 20_000 }, async (pool) => {
    for (let round = 0; round < 3; round++) {
      const late: Array<() => void> = [];
      // Run A calls and returns without awaiting; its replies are held, then answered during run B.
      const leaving: HostCall = (req) =>
        new Promise((resolve) => {
          const i = req.args as number;
          late.push(() => resolve(`A${i}:` + "é".repeat(sizes[i % sizes.length]! / 2)));
        });
      const a = await pool.run({
        script: `for (let i = 0; i < ${sizes.length * 2}; i++) srv.get(i); return "a"`,
        namespaces: ["srv"],
        limits: testLimits(),
        hostCall: leaving,
      });
      assert.equal(resultValue(a), "a");
      // Run C is cancelled while its calls are pending; they are answered during run B as well.
      const controller = new AbortController();
      const c = pool.run({
        script: `await Promise.all(Array.from({ length: ${sizes.length} }, (_, i) => srv.get(i)))`,
        namespaces: ["srv"],
        limits: testLimits({ timeoutMs: 30_000 }),
        hostCall: (req, signal) => {
          const i = req.args as number;
          if (i === sizes.length - 1) setTimeout(() => controller.abort(), 5);
          // The call ignores its signal: the host answers it late regardless.
          late.push(() => void signal);
          return new Promise((resolve) => late.push(() => resolve(`C${i}:` + "x".repeat(sizes[i]!))));
        },
        signal: controller.signal,
      });
      const cancelled = await c;
      assert.deepEqual(!cancelled.ok && cancelled.failure, { error: "cancelled" });
      // Run B: every call answers with its own text after the late answers of A and C were let go.
      const b = await pool.run({
        script: `const out = [];\n` +
          `for (let i = 0; i < ${sizes.length}; i++) { const r = await srv.get(i); out.push([r.slice(0, 4), r.length]); }\n` +
          `const all = await Promise.all(Array.from({ length: ${sizes.length} }, (_, i) => srv.get(i)));\n` +
          `return { out, all: all.map((r) => [r.slice(0, 4), r.length]) }`,
        namespaces: ["srv"],
        limits: testLimits({ timeoutMs: 30_000 }),
        hostCall: (req) => {
          const i = req.args as number;
          for (const answer of late.splice(0)) answer();
          return new Promise((resolve) => setTimeout(() => resolve(`B${i}:` + "b".repeat(sizes[i]!)), i % 2));
        },
      });
      const expected = sizes.map((n, i) =>
        [`B${i}:` + "b".repeat(n)].map((r) => [r.slice(0, 4), r.length])[0]
      );
      assert.deepEqual(resultValue(b), { out: expected, all: expected });
      assert.equal(pool.processCount, 1, "no sandbox process was replaced (its channel stayed sound)");
    }
  });
});
