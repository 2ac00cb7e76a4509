import assert from "node:assert/strict";
import {
  DescendantTracker,
  parsePsTable,
  type ProcessEntry,
  type ProcessTable,
  PsProcessTable,
} from "../../lib/backends/process_tree.ts";

/** A process table the test edits between looks. */
class FakeTable implements ProcessTable {
  readonly isSupported = true;
  rows = new Map<number, ProcessEntry>();
  set(pid: number, ppid: number, start = "t0", isZombie = false): void {
    this.rows.set(pid, { ppid, start, isZombie });
  }
  snapshot(): Promise<Map<number, ProcessEntry>> {
    return Promise.resolve(new Map(this.rows));
  }
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
  assert.deepEqual(tracker.recorded(), [101, 102, 103]);
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

Deno.test("PsProcessTable reads the real process table, this process included", async () => {
  const table = new PsProcessTable();
  if (!table.isSupported) return; // Windows.
  const snapshot = await table.snapshot({ fresh: true });
  assert.ok(snapshot, "ps is available where the tests run");
  assert.equal(snapshot.get(Deno.pid)?.ppid, Deno.ppid);
});
