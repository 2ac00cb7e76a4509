// HeapTrim (lib/sandbox/guest/_heap_trim.ts): a sandbox process collects its V8 heap when idle once the used heap
// grew a set amount past what the last collection left, compacts it once idle if its pages grew, and never
// where V8 does not expose `gc`.
import assert from "node:assert/strict";
import {
  DEFAULT_COMPACT_GROWTH_BYTES,
  DEFAULT_TRIM_GROWTH_BYTES,
  HeapTrim,
  IDLE_COMPACT_MS,
} from "../../lib/sandbox/guest/_heap_trim.ts";

const MIB = 1024 * 1024;

/** A fake heap: `used` grows as the test says; a collection drops it to `live`. */
function fakeHeap(live: number) {
  const heap = { used: live, live, collections: 0 };
  const gc = () => {
    heap.collections++;
    heap.used = heap.live;
  };
  return { heap, gc, heapUsed: () => heap.used };
}

Deno.test("HeapTrim.step() collects once the used heap grew by the growth bytes, then measures from what is left", () => {
  const { heap, gc, heapUsed } = fakeHeap(6 * MIB);
  const trim = new HeapTrim({ growthBytes: 4 * MIB, gc, heapUsed });
  assert.equal(trim.step(), false, "the first call only takes the baseline");
  heap.used += 3 * MIB;
  assert.equal(trim.step(), false, "3 MiB of growth is under the 4 MiB");
  assert.equal(heap.collections, 0);
  heap.used += 1 * MIB;
  assert.equal(trim.step(), true, "4 MiB of growth collects");
  assert.equal(heap.collections, 1);
  assert.equal(heap.used, 6 * MIB);
  heap.used += 3.5 * MIB;
  assert.equal(trim.step(), false, "growth is counted from the collection's result again");
  heap.used += 0.5 * MIB;
  assert.equal(trim.step(), true);
  assert.equal(heap.collections, 2);
});

Deno.test("HeapTrim.step() takes a lower reading as the new baseline (V8 collected by itself meanwhile)", () => {
  const { heap, gc, heapUsed } = fakeHeap(10 * MIB);
  const trim = new HeapTrim({ growthBytes: 4 * MIB, gc, heapUsed });
  trim.step();
  heap.used = 7 * MIB;
  assert.equal(trim.step(), false);
  heap.used = 10.5 * MIB;
  assert.equal(trim.step(), false, "3.5 MiB above the lower baseline of 7 MiB");
  heap.used = 11 * MIB;
  assert.equal(trim.step(), true);
});

Deno.test("HeapTrim.step() never collects, nor reads the heap, where gc is not exposed", () => {
  let reads = 0;
  const trim = new HeapTrim({ gc: undefined, heapUsed: () => ++reads * 100 * MIB });
  for (let i = 0; i < 5; i++) assert.equal(trim.step(), false);
  assert.equal(reads, 0);
});

Deno.test("HeapTrim defaults: 4 MiB of growth, and globalThis.gc (absent under deno test's flags)", () => {
  assert.equal(DEFAULT_TRIM_GROWTH_BYTES, 4 * MIB);
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, "undefined");
  assert.equal(new HeapTrim().step(), false);
});

/** A fake heap whose committed size the test sets; `gc` records the options it was called with. */
function fakeCommittedHeap(total: number) {
  const heap = { total, used: total / 2, calls: [] as unknown[] };
  const gc = (options?: unknown) => {
    heap.calls.push(options);
    heap.total = 6 * MIB;
    heap.used = 5 * MIB;
  };
  return { heap, gc, heapUsed: () => heap.used, heapTotal: () => heap.total };
}

Deno.test("HeapTrim.compact() runs V8's memory-reducing collection, then again only after the committed heap grew", () => {
  const { heap, gc, heapUsed, heapTotal } = fakeCommittedHeap(12 * MIB);
  const trim = new HeapTrim({ compactGrowthBytes: 1 * MIB, gc, heapUsed, heapTotal });
  assert.equal(trim.compact(), true, "the first idle time compacts");
  assert.deepEqual(heap.calls, [{ type: "major", execution: "sync", flavor: "last-resort" }]);
  heap.total += 0.5 * MIB;
  assert.equal(trim.compact(), false, "0.5 MiB of growth past the 6 MiB it left is under the 1 MiB");
  heap.total += 0.5 * MIB;
  assert.equal(trim.compact(), true);
  assert.equal(heap.calls.length, 2);
});

Deno.test("HeapTrim.compact() resets step()'s baseline to what it left", () => {
  const { heap, gc, heapUsed, heapTotal } = fakeCommittedHeap(12 * MIB);
  const trim = new HeapTrim({ growthBytes: 4 * MIB, gc, heapUsed, heapTotal });
  heap.used = 9 * MIB;
  trim.step();
  trim.compact();
  heap.used = 5 * MIB + 3 * MIB;
  assert.equal(trim.step(), false, "3 MiB above the 5 MiB the compaction left");
  heap.used = 9 * MIB;
  assert.equal(trim.step(), true);
});

Deno.test("HeapTrim.compact() never compacts, nor reads the heap, where gc is not exposed", () => {
  let reads = 0;
  const read = () => ++reads * 100 * MIB;
  const trim = new HeapTrim({ gc: undefined, heapUsed: read, heapTotal: read });
  assert.equal(trim.compact(), false);
  assert.equal(reads, 0);
});

Deno.test("HeapTrim's idle compaction defaults: after 1 s idle, once the committed heap grew 1 MiB", () => {
  assert.equal(IDLE_COMPACT_MS, 1_000);
  assert.equal(DEFAULT_COMPACT_GROWTH_BYTES, 1 * MIB);
  assert.equal(new HeapTrim().compact(), false, "no gc under deno test's flags");
});
