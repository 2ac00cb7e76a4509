// The reply channel with real Workers (lib/sandbox/_reply_channel.ts via SandboxPool): replies too large for
// the ring or arriving when it is full, order under Promise.all, stops, deadlines and timers while the Worker
// blocks in Atomics.wait, terminate() of a blocked Worker, a Worker that cannot block, and a Worker that
// scribbles over its channel.
import assert from "node:assert/strict";
import { type HostCall, SandboxPool } from "../../lib/sandbox/mod.ts";
import { REPLY_RING_BYTES } from "../../lib/sandbox/_reply_channel.ts";
import { resultValue as valueOf, testLimits, withPool } from "../_fakes_sandbox.ts";

const noWaitWorker = new URL("../../testdata/sandbox/no_wait_worker.ts", import.meta.url);

/**
 * 60 calls in flight, answered all at once in reverse order, some too large for the ring, some filling it:
 * each call gets its own result, and the script sees them settle in the order the host answered.
 */
async function burst(pool: SandboxPool): Promise<void> {
  const pending: Array<{ index: number; resolve: (value: unknown) => void }> = [];
  const sizeOf = (index: number) =>
    index % 10 === 0 ? REPLY_RING_BYTES + 1000 : index % 3 === 0 ? 30_000 : 10;
  const hostCall: HostCall = (req) =>
    new Promise((resolve) => {
      pending.push({ index: (req.args as { i: number }).i, resolve });
      // Answered a macrotask after the last call arrived, so every call's reply takes the same path.
      if (pending.length === 60) {
        setTimeout(() => {
          for (const { index, resolve } of pending.splice(0).reverse()) {
            resolve({ index, pad: "p".repeat(sizeOf(index)) });
          }
        }, 0);
      }
    });
  const result = await pool.run({
    script: "const order = [];\n" +
      "const results = await Promise.all(Array.from({ length: 60 }, (_, i) =>\n" +
      "  srv.get({ i }).then((r) => { order.push(i); return [r.index, r.pad.length] })));\n" +
      "return { order, results }",
    namespaces: ["srv"],
    limits: testLimits({ timeoutMs: 20_000 }),
    hostCall,
  });
  const { order, results } = valueOf(result) as { order: number[]; results: Array<[number, number]> };
  const indices = Array.from({ length: 60 }, (_, i) => i);
  assert.deepEqual(order, [...indices].reverse());
  assert.deepEqual(results, indices.map((i) => [i, sizeOf(i)]));
}

Deno.test("reply channel: replies larger than the ring or past a full ring arrive, in order, with their ids", async () => {
  await withPool({ size: 1 }, async (pool) => {
    await burst(pool);
    // Sequential calls after the burst, alternating small and too large for the ring.
    const hostCall: HostCall = (req) =>
      Promise.resolve("z".repeat((req.args as number) % 2 ? REPLY_RING_BYTES : 5));
    const result = await pool.run({
      script: "const lengths = []; for (let i = 0; i < 20; i++) lengths.push((await srv.get(i)).length);\n" +
        "return lengths",
      namespaces: ["srv"],
      limits: testLimits(),
      hostCall,
    });
    assert.deepEqual(valueOf(result), Array.from({ length: 20 }, (_, i) => i % 2 ? REPLY_RING_BYTES : 5));
  });
});

Deno.test("reply channel: a Worker where Atomics.wait throws takes every reply by message", async () => {
  await withPool({ size: 1, workerUrl: noWaitWorker }, async (pool) => {
    await burst(pool);
    const held: HostCall = async (_req, _signal, control) => {
      const release = control.holdDeadline();
      await new Promise((resolve) => setTimeout(resolve, 400));
      release();
      return "late";
    };
    const result = await pool.run({
      script: "return [await srv.slow(), await new Promise((r) => setTimeout(() => r('timer'), 10))]",
      namespaces: ["srv"],
      limits: testLimits({ timeoutMs: 300 }),
      hostCall: held,
    });
    assert.deepEqual(valueOf(result), ["late", "timer"]);
  });
});

Deno.test("reply channel: a cancel or deadline wakes a Worker blocked on its channel at once", async () => {
  // A generous kill grace: a Worker that did not wake would be killed only after it, not within the test's
  // bounds; and the wait's own bound (MAX_BLOCK_MS, 500 ms) is beyond them too.
  await withPool({ size: 1, hardKillGraceMs: 20_000 }, async (pool) => {
    // Three cancels, each 20 ms into a wait: a Worker left asleep would take ~480 ms for each.
    let totalMs = 0;
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      let abortedAt = 0;
      const cancelled = await pool.run({
        script: "console.log('waiting'); await srv.never()",
        namespaces: ["srv"],
        limits: testLimits({ timeoutMs: 30_000 }),
        // The call ignores its signal: only the stop itself can wake the Worker.
        hostCall: () => {
          setTimeout(() => {
            abortedAt = performance.now();
            controller.abort();
          }, 20);
          return new Promise(() => {});
        },
        signal: controller.signal,
      });
      totalMs += performance.now() - abortedAt;
      assert.deepEqual(!cancelled.ok && cancelled.failure, { error: "cancelled" });
      assert.deepEqual(cancelled.console, ["waiting"]);
    }
    assert.ok(totalMs < 1_000, `three cancelled runs ended ${totalMs} ms after their aborts in all`);

    const timedOut = await pool.run({
      script: "await srv.never()",
      namespaces: ["srv"],
      limits: testLimits({ timeoutMs: 200 }),
      hostCall: () => new Promise(() => {}),
    });
    assert.deepEqual(!timedOut.ok && timedOut.failure, { error: "script_timeout", limit_secs: 0.2 });
    assert.ok(timedOut.durationMs < 700, `the timed-out run took ${timedOut.durationMs} ms`);
    // Neither Worker was killed: the one Worker serves the next run.
    assert.equal(pool.workerCount, 1);
    assert.equal(
      valueOf(
        await pool.run({
          script: "return 2",
          namespaces: [],
          limits: testLimits(),
          hostCall: () => Promise.resolve(null),
        }),
      ),
      2,
    );
  });
});

Deno.test("reply channel: a script's timers fire on time while the Worker blocks on a call", async () => {
  await withPool({ size: 1 }, async (pool) => {
    let answer: ((value: unknown) => void) | undefined;
    const result = await pool.run({
      script: "const t0 = Date.now(); const call = srv.slow();\n" +
        "for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 20));\n" +
        "const fired = Date.now() - t0; console.log('fired'); await srv.release(); return [fired, await call]",
      namespaces: ["srv"],
      limits: testLimits({ timeoutMs: 10_000 }),
      hostCall: (req) =>
        new Promise((resolve) => {
          if (req.key === "slow") answer = resolve;
          else {
            answer?.("answered");
            resolve(null);
          }
        }),
    });
    const [fired, answered] = valueOf(result) as [number, string];
    assert.equal(answered, "answered");
    // Five 20 ms timers in a row; without the timer bounding each wait, the Worker would sleep MAX_BLOCK_MS
    // (500 ms) before each: 2.5 s.
    assert.ok(fired >= 95 && fired < 1_500, `five 20 ms timers took ${fired} ms`);
    assert.deepEqual(result.console, ["fired"]);
  });
});

Deno.test("reply channel: Worker.terminate() ends a sandbox Worker blocked on its channel", async () => {
  // Deno ends a terminated Worker only when it returns to its event loop: the bounded wait (MAX_BLOCK_MS)
  // and the pass through the event loop after it must bring the blocked Worker there. In a process of its
  // own, so that no other test's Worker threads are counted.
  const root = new URL("../..", import.meta.url).pathname;
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "-P",
      "--config",
      `${root}deno.json`,
      `${root}testdata/sandbox/terminate_probe.ts`,
    ],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout).trim();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  assert.match(stdout, /^ended after \d+ ms$/);
});

Deno.test("reply channel: a Worker scribbling over its channel neither breaks nor hangs the host", async () => {
  const workerUrl = new URL("../../testdata/sandbox/scribbling_worker.ts", import.meta.url);
  await withPool({ size: 1, workerUrl, hardKillGraceMs: 200 }, async (pool) => {
    for (let round = 0; round < 5; round++) {
      let calls = 0;
      const result = await pool.run({
        script: "let n = 0; for (let i = 0; i < 50; i++) { await srv.echo({ i }); n++ } return n",
        namespaces: ["srv"],
        limits: testLimits({ timeoutMs: 1_500 }),
        hostCall: (req) => {
          calls++;
          return Promise.resolve(req.args);
        },
      });
      // Whatever the scribbles hit: a result, a failure of the run, or its deadline; never a hang or a throw.
      if (!result.ok) {
        assert.ok(["internal", "script_timeout", "script_error"].includes(result.failure.error));
      } else assert.equal(valueOf(result), 50);
      assert.ok(calls <= 50);
    }
  });
});
