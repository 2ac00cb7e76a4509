import assert from "node:assert/strict";
import { type ProgressReport, ProgressThrottle } from "../../lib/meta_server/_progress.ts";
import { fixtureServerToml, writePlugin } from "../_fakes_meta.ts";
import { harness, textOf } from "./_harness.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const report = (progress: number): ProgressReport => ({ progress, message: `step ${progress}` });

Deno.test("ProgressThrottle with interval 0 sends every report at once, then holds the end for the gap", async () => {
  const sent: number[] = [];
  const throttle = new ProgressThrottle((r) => Promise.resolve(void sent.push(r.progress)), {
    intervalMs: 0,
    flushGapMs: 30,
  });
  for (const p of [1, 2, 3]) throttle.report(report(p));
  assert.deepEqual(sent, [1, 2, 3]);
  const t0 = performance.now();
  await throttle.finish();
  assert.ok(performance.now() - t0 >= 25, "finish() did not wait for the gap after the last report");
  throttle.report(report(4));
  assert.deepEqual(sent, [1, 2, 3], "a report after finish() was sent");
});

Deno.test("ProgressThrottle sends nothing, and does not hold the end, for a run shorter than the interval", async () => {
  const sent: number[] = [];
  const throttle = new ProgressThrottle((r) => Promise.resolve(void sent.push(r.progress)), {
    intervalMs: 60_000,
    flushGapMs: 60_000,
  });
  throttle.report(report(1));
  throttle.report(report(2));
  await throttle.finish(); // would hang for a minute if it waited for a gap
  assert.deepEqual(sent, []);
});

Deno.test("ProgressThrottle sends the latest report when the interval allows, replacing older ones", async () => {
  const sent: number[] = [];
  const throttle = new ProgressThrottle((r) => Promise.resolve(void sent.push(r.progress)), {
    intervalMs: 200,
    flushGapMs: 0,
  });
  throttle.report(report(1)); // due 200 ms after the start
  await sleep(250);
  assert.deepEqual(sent, [1]);
  throttle.report(report(2)); // due 200 ms after the first was sent
  throttle.report(report(3)); // replaces 2
  await sleep(200);
  assert.deepEqual(sent, [1, 3]);
  throttle.report(report(4)); // not yet due when the run ends: dropped
  await throttle.finish();
  assert.deepEqual(sent, [1, 3]);
});

Deno.test("ProgressThrottle waits for a report still being written before the run ends", async () => {
  let written = false;
  const throttle = new ProgressThrottle(async () => {
    await sleep(30);
    written = true;
  }, { intervalMs: 0, flushGapMs: 0 });
  throttle.report(report(1));
  await throttle.finish();
  assert.ok(written);
});

Deno.test("execute with a progressToken sends no report for a script shorter than the throttle interval", async () => {
  // 5 s rather than the default 100 ms, so that a loaded machine cannot make the script that long.
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")), {
    progressIntervalMs: 5_000,
  });
  const script = "return await fx.echo({message: 'a'})";
  await h.client.callTool({ name: "execute", arguments: { script } }); // starts fx
  const seen: number[] = [];
  const result = await h.client.callTool(
    { name: "execute", arguments: { script } },
    { onprogress: (p) => seen.push(p.progress) },
  );
  assert.equal(textOf(result), '"a"');
  assert.deepEqual(seen, []);
  assert.ok(!h.notifications.includes("notifications/progress"));
  await h.close();
});
