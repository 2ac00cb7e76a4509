import assert from "node:assert/strict";
import {
  DESCENDANT_SCAN_INTERVAL_MS,
  DescendantScanSchedule,
  DescendantTracker,
  MAX_DESCENDANT_SCAN_INTERVAL_MS,
  MAX_TRACKED_DESCENDANTS,
  parsePsTable,
  type ProcessEntry,
  type ProcessTable,
  PsProcessTable,
  SCAN_ON_ACTIVITY_MS,
  STDERR_QUIET_RESET_MS,
} from "../../lib/backends/process_tree.ts";
import { ManualScanTimers } from "../_fakes_backends.ts";

/** A process table the test edits between looks; `reads` records each snapshot's `fresh` option. */
class FakeTable implements ProcessTable {
  readonly isSupported = true;
  rows = new Map<number, ProcessEntry>();
  reads: boolean[] = [];
  set(pid: number, ppid: number, start = "t0", isZombie = false): void {
    this.rows.set(pid, { ppid, start, isZombie });
  }
  snapshot(options: { fresh?: boolean } = {}): Promise<Map<number, ProcessEntry>> {
    this.reads.push(options.fresh ?? false);
    return Promise.resolve(new Map(this.rows));
  }
}

/** A schedule over a fake table and manual timers, with one tracker of root 100 joined. */
function scheduleWithOneServer() {
  const table = new FakeTable();
  table.set(100, 1);
  const timers = new ManualScanTimers();
  const schedule = new DescendantScanSchedule({ table, timers });
  const tracker = new DescendantTracker(100, table);
  const leave = schedule.join(tracker);
  /** Runs the next look; returns how long after the previous one it came, in ms. */
  const look = async () => {
    const waitedMs = timers.fireNext();
    await schedule.settled();
    return waitedMs;
  };
  return { table, timers, schedule, tracker, leave, look };
}

Deno.test("parsePsTable() reads pid, parent, state and start time", () => {
  const table = parsePsTable(
    "    1     0 Ss   Mon Dec  1 10:41:02 2025\n  42     1 Z    Tue Dec  2 09:00:00 2025\n\n",
  );
  assert.deepEqual(table.get(1), { ppid: 0, isZombie: false, start: "Mon Dec 1 10:41:02 2025" });
  assert.deepEqual(table.get(42), { ppid: 1, isZombie: true, start: "Tue Dec 2 09:00:00 2025" });
  assert.equal(table.size, 2);
});

Deno.test("DescendantTracker.refresh() keeps descendants that were reparented after being recorded", async () => {
  const table = new FakeTable();
  table.set(100, 1); // the server
  table.set(101, 100); // npx-like child
  table.set(102, 101); // setsid'd grandchild
  const tracker = new DescendantTracker(100, table);
  await tracker.refresh();
  assert.deepEqual(tracker.recorded(), [101, 102]);
  table.rows.delete(101); // the middle exits: the grandchild is reparented to init
  table.set(102, 1);
  table.set(103, 102); // and starts a child of its own
  await tracker.refresh();
  assert.deepEqual(tracker.recorded(), [102, 103]); // 101 is gone: nothing of it is left to signal
});

Deno.test("DescendantTracker forgets ended descendants, so a helper per call never fills its cap", async () => {
  const table = new FakeTable();
  table.set(100, 1);
  const tracker = new DescendantTracker(100, table);
  for (let pid = 1_000; pid < 1_000 + MAX_TRACKED_DESCENDANTS + 10; pid++) {
    table.set(pid, 100); // one short-lived helper, seen once, then gone
    await tracker.refresh();
    table.rows.delete(pid);
  }
  table.set(9_000, 100); // a setsid'd daemon after all those calls
  table.set(9_001, 9_000);
  await tracker.refresh();
  assert.deepEqual(tracker.recorded(), [9_000, 9_001]);
});

Deno.test("DescendantTracker.signal() never signals a recycled pid or a zombie", async () => {
  const table = new FakeTable();
  table.set(100, 1);
  table.set(201, 100, "t0");
  table.set(202, 100, "t0");
  const tracker = new DescendantTracker(100, table);
  await tracker.refresh();
  table.set(201, 1, "t9"); // pid 201 now belongs to an unrelated process
  table.set(202, 1, "t0", true); // 202 ended and waits to be reaped
  assert.equal(await tracker.signal("SIGTERM"), 0);
  assert.deepEqual(tracker.recorded(), []);
});

Deno.test("DescendantTracker.signal() also ends what a recorded descendant started since the last look, never a child of the root's recycled pid", async () => {
  if (Deno.build.os === "windows") return;
  const sleeps = [1, 2, 3].map(() => new Deno.Command("sleep", { args: ["1000"], stdout: "null" }).spawn());
  const [helper, late, stranger] = sleeps.map((child) => child.pid);
  const table = new FakeTable();
  table.set(100, 1);
  table.set(helper!, 100); // a setsid'd helper of the server, recorded
  const tracker = new DescendantTracker(100, table);
  await tracker.refresh();
  table.set(late!, helper!); // its child, started after the last look
  tracker.rootExited(); // the server died first and was reaped
  table.set(100, 1, "t9"); // its pid went to an unrelated process, which has a child of its own
  table.set(stranger!, 100, "t9");
  try {
    assert.equal(await tracker.signal("SIGTERM"), 2);
    const statuses = await Promise.all(sleeps.slice(0, 2).map((child) => child.status));
    assert.deepEqual(statuses.map((s) => s.signal), ["SIGTERM", "SIGTERM"]);
    assert.deepEqual(tracker.recorded(), [helper, late]);
  } finally {
    for (const child of sleeps) {
      try {
        child.kill("SIGKILL");
      } catch { /* already ended */ }
      await child.status;
    }
  }
});

Deno.test("PsProcessTable resolves reads in the order they started, so a tracker never forgets a descendant an older read missed", async () => {
  const outputs: PromiseWithResolvers<Uint8Array>[] = [];
  const table = new PsProcessTable({
    runPs: () => {
      outputs.push(Promise.withResolvers<Uint8Array>());
      return outputs.at(-1)!.promise;
    },
  });
  const row = (pid: number, ppid: number) => `${pid} ${ppid} S Mon Dec  1 10:41:02 2025\n`;
  const tracker = new DescendantTracker(100, table);
  const older = tracker.refresh({ fresh: true }); // e.g. the shared look
  const newer = tracker.refresh({ fresh: true }); // e.g. a shutdown's fresh read, a daemon started between
  outputs[1]!.resolve(new TextEncoder().encode(row(100, 1) + row(200, 100))); // the newer ps finishes first
  outputs[0]!.resolve(new TextEncoder().encode(row(100, 1)));
  await Promise.all([older, newer]);
  assert.deepEqual(tracker.recorded(), [200]);
});

Deno.test("PsProcessTable reads the real process table, this process included", async () => {
  const table = new PsProcessTable();
  if (!table.isSupported) return; // Windows.
  const snapshot = await table.snapshot({ fresh: true });
  assert.ok(snapshot, "ps is available where the tests run");
  assert.equal(snapshot.get(Deno.pid)?.ppid, Deno.ppid);
});

Deno.test("DescendantScanSchedule reads the table once per look for all the servers that joined it", async () => {
  const table = new FakeTable();
  const timers = new ManualScanTimers();
  const schedule = new DescendantScanSchedule({ table, timers });
  const trackers = [100, 200, 300].map((root) => {
    table.set(root, 1);
    table.set(root + 1, root);
    return new DescendantTracker(root, table);
  });
  const leaves = trackers.map((tracker) => schedule.join(tracker));
  assert.equal(timers.pending.size, 1, "one timer for every server");
  timers.fireNext();
  await schedule.settled();
  assert.equal(table.reads.length, 1);
  assert.deepEqual(trackers.map((t) => t.recorded()), [[101], [201], [301]]);
  await Promise.all(leaves.map((leave) => leave()));
});

Deno.test("DescendantScanSchedule doubles its interval while nothing happens, up to the cap", async () => {
  const { look, leave } = scheduleWithOneServer();
  const waits: number[] = [];
  for (let i = 0; i < 7; i++) waits.push(await look());
  // The start counts as activity: two looks 2 s apart, then 4, 8, 16 s and the 30 s cap.
  assert.deepEqual(waits, [2_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  assert.equal(MAX_DESCENDANT_SCAN_INTERVAL_MS, 30_000);
  await leave();
});

Deno.test("DescendantScanSchedule looks again within 2 s of a message to or from a server", async () => {
  const { look, leave, schedule, timers } = scheduleWithOneServer();
  for (let i = 0; i < 6; i++) await look();
  assert.equal(schedule.intervalMs, MAX_DESCENDANT_SCAN_INTERVAL_MS);
  timers.nowMs += 10_000; // idle for a while, then a request
  schedule.noteActivity();
  assert.equal(await look(), DESCENDANT_SCAN_INTERVAL_MS, "the 30 s look is pulled in");
  assert.equal(await look(), DESCENDANT_SCAN_INTERVAL_MS, "and the one after stays at 2 s");
  assert.equal(await look(), 2 * DESCENDANT_SCAN_INTERVAL_MS, "then it backs off again");
  await leave();
});

Deno.test("DescendantScanSchedule looks again within 2 s after a descendant appeared or ended", async () => {
  const { look, leave, schedule, table, tracker } = scheduleWithOneServer();
  for (let i = 0; i < 6; i++) await look();
  table.set(101, 100); // a helper starts while nobody talks to the server
  assert.equal(await look(), MAX_DESCENDANT_SCAN_INTERVAL_MS);
  assert.deepEqual(tracker.recorded(), [101]);
  assert.equal(await look(), DESCENDANT_SCAN_INTERVAL_MS);
  for (let i = 0; i < 5; i++) await look();
  table.set(101, 100, "t0", true); // it ends (a zombie until reaped)
  assert.equal(await look(), MAX_DESCENDANT_SCAN_INTERVAL_MS);
  assert.equal(schedule.intervalMs, DESCENDANT_SCAN_INTERVAL_MS);
  assert.equal(await look(), DESCENDANT_SCAN_INTERVAL_MS);
  await leave();
});

Deno.test("DescendantScanSchedule reads the table fresh soon after stderr output, at most once per 250 ms", async () => {
  const { look, leave, schedule, table, timers } = scheduleWithOneServer();
  for (let i = 0; i < 6; i++) await look();
  table.reads.length = 0;
  timers.nowMs += 1_000;
  schedule.scanSoon();
  schedule.scanSoon();
  assert.equal(timers.pending.size, 1);
  assert.equal(await look(), 0, "at once: the last look is long past");
  schedule.scanSoon();
  assert.equal(await look(), 2 * SCAN_ON_ACTIVITY_MS, "the first look found nothing new: twice the spacing");
  assert.deepEqual(table.reads, [true, true]);
  assert.equal(await look(), DESCENDANT_SCAN_INTERVAL_MS);
  assert.deepEqual(table.reads, [true, true, false]);
  await leave();
});

Deno.test("DescendantScanSchedule spaces stderr-prompted looks up to 2 s while they find nothing new", async () => {
  const { look, leave, schedule, table, timers } = scheduleWithOneServer();
  for (let i = 0; i < 6; i++) await look(); // idle: the next regular look is 30 s away
  timers.nowMs += 1_000;
  const spacings: number[] = [];
  for (let i = 0; i < 6; i++) {
    schedule.scanSoon(); // a server that writes to stderr all the time
    spacings.push(await look());
  }
  assert.deepEqual(spacings, [0, 500, 1_000, 2_000, 2_000, 2_000]);
  table.set(101, 100); // it starts a helper: the next stderr look finds it, and the spacing is back to 250
  schedule.scanSoon();
  assert.equal(await look(), 2_000);
  schedule.scanSoon();
  assert.equal(await look(), SCAN_ON_ACTIVITY_MS);
  schedule.scanSoon();
  assert.equal(await look(), 2 * SCAN_ON_ACTIVITY_MS);
  // No stderr for 6 s (two regular looks, 2 s and 4 s apart): its next line is looked at within 250 ms again.
  assert.equal((await look()) + (await look()), 6_000);
  assert.ok(6_000 >= STDERR_QUIET_RESET_MS);
  schedule.scanSoon();
  schedule.scanSoon();
  const reads = table.reads.length;
  assert.equal(await look(), SCAN_ON_ACTIVITY_MS);
  assert.deepEqual(table.reads.slice(reads), [true]);
  await leave();
});

Deno.test("DescendantScanSchedule keeps no timer once its last server left, even with a look under way", async () => {
  const table = new FakeTable();
  let release = () => {};
  const slow: ProcessTable = {
    isSupported: true,
    snapshot: () => new Promise((resolve) => (release = () => resolve(table.rows))),
  };
  const timers = new ManualScanTimers();
  const schedule = new DescendantScanSchedule({ table: slow, timers });
  const leaveA = schedule.join(new DescendantTracker(100, slow));
  const leaveB = schedule.join(new DescendantTracker(200, slow));
  timers.fireNext(); // a look starts and waits for `ps`
  const leftA = leaveA();
  assert.equal(schedule.isScheduled, false, "the look under way arms the next one");
  let isLeft = false;
  const leftB = leaveB().then(() => (isLeft = true));
  await Promise.resolve();
  assert.equal(isLeft, false, "the last server waits for the look under way");
  release();
  await Promise.all([leftA, leftB]);
  assert.equal(timers.pending.size, 0);
  assert.equal(schedule.isScheduled, false);
});
