// The budgets of result-shape observation: answers 60 MB wide, with 10,000 keys, 1,000 levels deep, or of
// a new shape on every call cost at most 5 ms of the host thread per call and leave at most 4 KB of shape
// per tool. The cost of a call is the least of its timed repeats (after warm-up): under the parallel suite
// on a shared 2-core machine a wall-clock median also counts the time spent waiting for a core.
import assert from "node:assert/strict";
import { ObservedResults } from "../../lib/catalog/_observed_store.ts";
import { SHAPE_MAX_BYTES } from "../../lib/catalog/result_shape.ts";

const TOOL = { name: "t", inputSchema: { type: "object" as const } };
const MAX_MS_PER_CALL = 5;

function store(): ObservedResults {
  return new ObservedResults({ read: () => Promise.resolve([]), write: () => Promise.resolve() }, (e) => {
    throw e;
  });
}

/** Least ms of `observe` over `values` (after 2 warm-up calls), and the stored shape's JSON length. */
async function timeObserve(
  values: () => unknown,
  calls = 9,
): Promise<{ leastMs: number; maxMs: number; chars: number }> {
  const s = store();
  const times: number[] = [];
  for (let i = 0; i < calls + 2; i++) {
    const value = values();
    const t0 = performance.now();
    s.observe("k", { tool: TOOL, value });
    if (i >= 2) times.push(performance.now() - t0);
  }
  const rows = await s.rows("k");
  await s.close();
  times.sort((a, b) => a - b);
  return {
    leastMs: times[0]!,
    maxMs: times.at(-1)!,
    chars: JSON.stringify(rows[0]![3]).length,
  };
}

Deno.test("observing an answer 60 MB wide stays within 5 ms and 4 KB", async () => {
  const wide = Array.from(
    { length: 400_000 },
    (_, i) => ({ id: i, name: "n".repeat(120), tags: ["a", "b"] }),
  );
  const long = "x".repeat(60 * 1024 * 1024);
  for (const value of [wide, long, { data: long }]) {
    const r = await timeObserve(() => value);
    assert.ok(r.leastMs <= MAX_MS_PER_CALL, `${r.leastMs} ms`);
    assert.ok(r.chars <= SHAPE_MAX_BYTES);
  }
});

Deno.test("observing an object of 10,000 keys makes a map within 5 ms", async () => {
  const keys = Object.fromEntries(
    Array.from({ length: 10_000 }, (_, i) => [`user${i}@example.com`, { n: i }]),
  );
  const r = await timeObserve(() => keys);
  assert.ok(r.leastMs <= MAX_MS_PER_CALL, `${r.leastMs} ms`);
  assert.ok(r.chars < 100);
});

Deno.test("observing an answer 1,000 levels deep stops at depth 6 within 5 ms", async () => {
  let deep: unknown = { leaf: 1 };
  for (let i = 0; i < 1_000; i++) deep = { next: deep, list: [deep] };
  const r = await timeObserve(() => deep);
  assert.ok(r.leastMs <= MAX_MS_PER_CALL, `${r.leastMs} ms`);
  assert.ok(r.chars <= SHAPE_MAX_BYTES);
});

Deno.test("a different shape on every call keeps the stored shape within 4 KB and 5 ms per call", async () => {
  const s = store();
  const times: number[] = [];
  let maxChars = 0;
  for (let i = 0; i < 2_000; i++) {
    const kind = i % 4;
    const value = kind === 0
      ? { [`field_${"abcdefghij"[i % 10]}${i % 997}`]: { [`inner${"xyz"[i % 3]}`]: [i, "s", null] } }
      : kind === 1
      ? [{ ["k" + "abcdefghijklmnop"[i % 16]]: i % 2 ? "s" : { deep: { er: [i] } } }]
      : kind === 2
      ? { nested: { level: { [`p${"qrstuvw"[i % 7]}`]: i % 3 ? true : "x" } } }
      : `text ${i}`;
    const t0 = performance.now();
    s.observe("k", { tool: TOOL, value });
    times.push(performance.now() - t0);
    if (i % 100 === 99) maxChars = Math.max(maxChars, JSON.stringify((await s.rows("k"))[0]![3]).length);
  }
  await s.close();
  times.sort((a, b) => a - b);
  assert.ok(maxChars <= SHAPE_MAX_BYTES, `${maxChars}`);
  assert.ok(
    times[times.length >> 1]! <= MAX_MS_PER_CALL &&
      times[Math.floor(times.length * 0.99)]! <= MAX_MS_PER_CALL,
  );
});
