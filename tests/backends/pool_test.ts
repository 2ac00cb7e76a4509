import assert from "node:assert/strict";
import { BackendError } from "../../lib/backends/connection.ts";
import type { ConnectFn } from "../../lib/backends/pool.ts";
import { ServerPool } from "../../lib/backends/pool.ts";
import { spawnKey } from "../../lib/plugins/server_spec.ts";
import { FakeConnection, fixtureSpec, ManualClock } from "../_fakes_backends.ts";

const SPEC = fixtureSpec("alpha");
const OTHER = fixtureSpec("beta");

/** A connector that fails `failFirst` times, then hands out fake connections. */
function fakeConnector(clock: ManualClock, failFirst = 0) {
  const made: FakeConnection[] = [];
  let attempts = 0;
  const connect: ConnectFn = (spec) => {
    attempts++;
    if (attempts <= failFirst) {
      return Promise.reject(
        new BackendError("START_FAILED", spec.name, `${spec.name} failed to start: boom ${attempts}`),
      );
    }
    const conn = new FakeConnection(spec.name, clock.now());
    made.push(conn);
    return Promise.resolve(conn);
  };
  return { connect, made, attempts: () => attempts };
}

Deno.test("acquire() starts a server on first use only and reuses it", async () => {
  const clock = new ManualClock();
  const fake = fakeConnector(clock);
  const pool = new ServerPool({ connect: fake.connect, clock });
  assert.equal(pool.state(SPEC).status, "idle");
  assert.equal(fake.attempts(), 0);
  const [a, b] = await Promise.all([pool.acquire(SPEC), pool.acquire(SPEC)]);
  const c = await pool.acquire(SPEC);
  assert.equal(a, b);
  assert.equal(a, c);
  assert.equal(fake.attempts(), 1);
  assert.equal(pool.state(SPEC).status, "running");
  await pool.close();
});

Deno.test("acquire() waits out a backoff of 1 s doubling after failed starts", async () => {
  const clock = new ManualClock();
  const fake = fakeConnector(clock, 3);
  const pool = new ServerPool({ connect: fake.connect, clock });
  for (let i = 1; i <= 3; i++) {
    await assert.rejects(pool.acquire(SPEC), { code: "START_FAILED", message: new RegExp(`boom ${i}`) });
  }
  const conn = await pool.acquire(SPEC);
  assert.ok(conn instanceof FakeConnection);
  assert.deepEqual(clock.sleeps, [1_000, 2_000, 4_000]);
  await pool.close();
});

Deno.test("acquire() caps the backoff at 60 s", async () => {
  const clock = new ManualClock();
  const fake = fakeConnector(clock, 8);
  const pool = new ServerPool({ connect: fake.connect, clock, maxRestarts: 10 });
  for (let i = 1; i <= 8; i++) await assert.rejects(pool.acquire(SPEC));
  await pool.acquire(SPEC);
  assert.deepEqual(clock.sleeps, [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
  await pool.close();
});

Deno.test("acquire() gives up after max-server-restarts failures", async () => {
  const clock = new ManualClock();
  const fake = fakeConnector(clock, 100);
  const pool = new ServerPool({ connect: fake.connect, clock, maxRestarts: 2 });
  for (let i = 0; i < 3; i++) await assert.rejects(pool.acquire(SPEC), { code: "START_FAILED" });
  await assert.rejects(pool.acquire(SPEC), {
    code: "SERVER_FAILED",
    message: /^alpha failed 3 times and is not restarted in this session: alpha failed to start: boom 3$/,
  });
  assert.equal(fake.attempts(), 3);
  assert.equal(pool.state(SPEC).status, "failed");
  await pool.close();
});

Deno.test("acquire() fails with RESTART_PENDING instead of waiting when asked not to wait", async () => {
  const clock = new ManualClock();
  const fake = fakeConnector(clock, 1);
  const pool = new ServerPool({ connect: fake.connect, clock });
  await assert.rejects(pool.acquire(SPEC));
  await assert.rejects(pool.acquire(SPEC, { waitForRestart: false }), {
    code: "RESTART_PENDING",
    message: /^alpha restarts in 1s after: alpha failed to start: boom 1$/,
  });
  assert.equal(pool.state(SPEC).status, "backoff");
  assert.deepEqual(clock.sleeps, []);
  await pool.close();
});

Deno.test("acquire() restarts a crashed server on next use, after the backoff", async () => {
  const clock = new ManualClock();
  const fake = fakeConnector(clock);
  const pool = new ServerPool({ connect: fake.connect, clock });
  const first = await pool.acquire(SPEC) as FakeConnection;
  first.crash();
  await Promise.resolve();
  assert.equal(pool.state(SPEC).status, "backoff");
  const second = await pool.acquire(SPEC);
  assert.notEqual(second, first);
  assert.deepEqual(clock.sleeps, [1_000]);
  assert.equal(pool.state(SPEC).starts, 2);
  await pool.close();
});

Deno.test("acquire() resets the failure count when a connection lived past restart-stable-reset-secs", async () => {
  const clock = new ManualClock();
  const fake = fakeConnector(clock);
  const pool = new ServerPool({ connect: fake.connect, clock, maxRestarts: 1, restartStableResetMs: 10_000 });
  const first = await pool.acquire(SPEC) as FakeConnection;
  clock.nowMs += 10_000;
  first.crash();
  await Promise.resolve();
  const second = await pool.acquire(SPEC) as FakeConnection;
  clock.nowMs += 10_000;
  second.crash();
  await Promise.resolve();
  await pool.acquire(SPEC); // without the reset this would be the third failure, over the limit of 1
  assert.equal(pool.state(SPEC).failures, 1);
  await pool.close();
});

Deno.test("retain() keeps carried-over servers running and shuts the others down", async () => {
  const clock = new ManualClock();
  const fake = fakeConnector(clock);
  const pool = new ServerPool({ connect: fake.connect, clock });
  const a = await pool.acquire(SPEC) as FakeConnection;
  const b = await pool.acquire(OTHER) as FakeConnection;
  await pool.retain(new Set([spawnKey(SPEC)]));
  assert.equal(a.closeCalls, 0);
  assert.equal(b.closeCalls, 1);
  assert.deepEqual(pool.runningNames(), ["alpha"]);
  assert.equal(await pool.acquire(SPEC), a);
  await pool.close();
  assert.equal(a.closeCalls, 1);
});

Deno.test("close() shuts every server down and refuses new starts", async () => {
  const clock = new ManualClock();
  const fake = fakeConnector(clock);
  const pool = new ServerPool({ connect: fake.connect, clock });
  await pool.acquire(SPEC);
  await pool.acquire(OTHER);
  await pool.close();
  assert.ok(fake.made.every((c) => c.closeCalls === 1));
  await assert.rejects(pool.acquire(SPEC), { code: "CANCELLED" });
});

Deno.test("acquire() starts a real server that failed its first two starts", async () => {
  const dir = await Deno.makeTempDir();
  const clock = new ManualClock();
  // Each start that dies during the `server/discover` probe is tried once more without it (a legacy
  // server may exit on the probe): two processes per start.
  const spec = fixtureSpec("flaky", ["--fail-starts=4", `--counter-file=${dir}/count`]);
  const pool = new ServerPool({ clock, shutdownGraceMs: 1_000 });
  await assert.rejects(pool.acquire(spec), { code: "START_FAILED", message: /database is locked/ });
  await assert.rejects(pool.acquire(spec), { code: "START_FAILED" });
  const conn = await pool.acquire(spec);
  const result = await conn.callTool("echo", { message: "third time" }, { timeoutMs: 5_000 });
  assert.deepEqual(result.content, [{ type: "text", text: "third time" }]);
  assert.deepEqual(clock.sleeps, [1_000, 2_000]);
  await pool.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("withCallSlot() runs at most maxCallsInFlight calls per server and starts the others in order", async () => {
  const pool = new ServerPool({ connect: fakeConnector(new ManualClock()).connect, maxCallsInFlight: 2 });
  const started: number[] = [];
  const finish = new Map<number, () => void>();
  const calls = [0, 1, 2, 3, 4].map((i) =>
    pool.withCallSlot(SPEC, () => {
      started.push(i);
      return new Promise<number>((resolve) => finish.set(i, () => resolve(i)));
    })
  );
  const other = pool.withCallSlot(OTHER, () => Promise.resolve("other"));
  assert.equal(await other, "other"); // another server's slots are its own
  await Promise.resolve();
  assert.deepEqual(started, [0, 1]);
  assert.deepEqual(pool.callLoad(SPEC), { inFlight: 2, queued: 3 });
  finish.get(1)!();
  await calls[1];
  await Promise.resolve();
  assert.deepEqual(started, [0, 1, 2]);
  finish.get(0)!();
  finish.get(2)!();
  await Promise.all([calls[0], calls[2]]);
  await Promise.resolve();
  assert.deepEqual(started, [0, 1, 2, 3, 4]);
  finish.get(3)!();
  finish.get(4)!();
  assert.deepEqual(await Promise.all(calls), [0, 1, 2, 3, 4]);
  assert.deepEqual(pool.callLoad(SPEC), { inFlight: 0, queued: 0 });
  await pool.close();
});

Deno.test("withCallSlot() starts a call at once when a slot is free, without a turn of the event loop", async () => {
  const pool = new ServerPool({ connect: fakeConnector(new ManualClock()).connect, maxCallsInFlight: 1 });
  const started: string[] = [];
  const first = pool.withCallSlot(SPEC, () => Promise.resolve(started.push("first")));
  assert.deepEqual(started, ["first"]); // synchronously
  const second = pool.withCallSlot(SPEC, () => Promise.resolve(started.push("second")));
  assert.deepEqual(started, ["first"]); // the only slot is taken: it waits its turn
  await Promise.all([first, second]);
  assert.deepEqual(started, ["first", "second"]);
  await pool.close();
});

Deno.test("configure() with a raised call bound starts waiting calls at once; a lowered one lets calls drain", async () => {
  const pool = new ServerPool({ connect: fakeConnector(new ManualClock()).connect, maxCallsInFlight: 1 });
  const started: number[] = [];
  const finish = new Map<number, () => void>();
  const calls = [0, 1, 2, 3].map((i) =>
    pool.withCallSlot(SPEC, () => {
      started.push(i);
      return new Promise<number>((resolve) => finish.set(i, () => resolve(i)));
    })
  );
  await Promise.resolve();
  assert.deepEqual(started, [0]);
  pool.configure({ maxCallsInFlight: 3 });
  await Promise.resolve();
  assert.deepEqual(started, [0, 1, 2]);
  assert.deepEqual(pool.callLoad(SPEC), { inFlight: 3, queued: 1 });
  pool.configure({ maxCallsInFlight: 1 });
  finish.get(0)!();
  finish.get(1)!();
  await Promise.all([calls[0], calls[1]]);
  await Promise.resolve();
  assert.deepEqual(started, [0, 1, 2]); // 1 still in flight: the bound of 1 is full
  finish.get(2)!();
  await calls[2];
  await Promise.resolve();
  assert.deepEqual(started, [0, 1, 2, 3]);
  finish.get(3)!();
  assert.deepEqual(await Promise.all(calls), [0, 1, 2, 3]);
  assert.deepEqual(pool.callLoad(SPEC), { inFlight: 0, queued: 0 });
  await pool.close();
});

Deno.test("withCallSlot() drops a waiting call whose signal aborts and frees the slot of a failed call", async () => {
  const pool = new ServerPool({ connect: fakeConnector(new ManualClock()).connect, maxCallsInFlight: 1 });
  let release!: () => void;
  const first = pool.withCallSlot(SPEC, () => new Promise<void>((resolve) => (release = resolve)));
  const abort = new AbortController();
  let ranCancelled = false;
  const cancelled = pool.withCallSlot(SPEC, () => Promise.resolve(ranCancelled = true), {
    signal: abort.signal,
  });
  const failing = pool.withCallSlot(SPEC, () => Promise.reject(new Error("tool broke")));
  abort.abort();
  await assert.rejects(cancelled, { code: "CANCELLED", message: /^alpha: call cancelled$/ });
  release();
  await first;
  await assert.rejects(failing, /tool broke/);
  assert.equal(await pool.withCallSlot(SPEC, () => Promise.resolve("next")), "next");
  assert.equal(ranCancelled, false);
  assert.deepEqual(pool.callLoad(SPEC), { inFlight: 0, queued: 0 });
  await pool.close();
});

Deno.test("close() aborts a start in progress instead of waiting out its startup timeout", async () => {
  const clock = new ManualClock();
  let sawAbort = false;
  // A server that never answers `initialize`: its start only ends when its signal aborts.
  const connect: ConnectFn = (spec, ctx) =>
    new Promise((_, reject) => {
      ctx.signal?.addEventListener("abort", () => {
        sawAbort = true;
        reject(new BackendError("CANCELLED", spec.name, `${spec.name}: start cancelled`));
      }, { once: true });
    });
  const pool = new ServerPool({ connect, clock });
  const start = pool.acquire(SPEC);
  const started = assert.rejects(start, { code: "CANCELLED" });
  await pool.close();
  await started;
  assert.equal(sawAbort, true);
});
