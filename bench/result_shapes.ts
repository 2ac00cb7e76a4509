/**
 * `deno task bench` (third part): what observing result shapes (`docs/writing-scripts.md`, "What tools return (observed result shapes)") costs and gives, over the
 * recorded answer corpus of `testdata/catalog/results/` (see `tests/catalog/_result_corpus.ts`).
 *
 * - Host time added per call: the hook `execute` runs after each successful call
 *   (`CatalogObserving.observe`: the server looked up, the shape derived and merged into the store),
 *   timed call by call on the host thread, at the median answer size of the corpus (its raw
 *   `tools/call` result as JSON), at the largest answer, and round-robin over every answer; p50 and
 *   p95. Beside it, for scale, `unwrapToolResult` of the same answer (what every call pays already).
 * - Coverage after one call, soundness after 1, 2 and 3 answers (a strict `deno check`), with each
 *   failing (tool, later answer), its kind and the exact type error, on the fitted corpus and apart
 *   on the held-out one (`testdata/catalog/results/held_out/`: answers the render rules were not
 *   fitted on); stored bytes per tool in the cache, declaration bytes before/after.
 *
 * Prints a table and writes `bench/results/result_shapes.json`. `BENCH_QUICK=1` takes fewer samples;
 * `BENCH_OUT=path` writes the JSON elsewhere.
 *
 * @module
 */
import type { ServerSpec } from "../lib/plugins/server_spec.ts";
import { DEFAULT_MCP_CONFIG } from "../lib/plugins/config_types.ts";
import { CatalogObserving } from "../lib/catalog/_observing.ts";
import { ToolCacheMemo } from "../lib/catalog/tool_cache.ts";
import { unwrapToolResult } from "../lib/catalog/result_unwrap.ts";
import type { CallOutcome } from "../lib/catalog/catalog_types.ts";
import {
  type CorpusServer,
  declarationsBeforeAfter,
  describeFailure,
  HELD_OUT_DIR,
  isConcrete,
  loadResultCorpus,
  shapeAfter,
  soundness,
  toolCases,
} from "../tests/catalog/_result_corpus.ts";
import { REPO } from "./_world.ts";
import { type Figure, loadAverage, type Stats, statsOf, writeReport } from "./_perf_stats.ts";

const QUICK = Deno.env.get("BENCH_QUICK") === "1";
const OUT = Deno.env.get("BENCH_OUT") ?? `${REPO}bench/results/result_shapes.json`;
const CALLS = QUICK ? 2_000 : 20_000;
const GOAL_MS = 0.05;

const loadAtStart = loadAverage();
const servers = await loadResultCorpus();
const cases = toolCases(servers);
const undeclared = cases.filter((c) => !c.declared);
const heldOut = toolCases(await loadResultCorpus(HELD_OUT_DIR)).filter((c) => !c.declared);

type Answer = { server: CorpusServer; outcome: CallOutcome; value: unknown; bytes: number };
const answers: Answer[] = [];
for (const s of servers) {
  for (const a of s.answers) {
    const definition = s.tools.find((t) => t.name === a.tool);
    const unwrapped = unwrapToolResult(a.result);
    if (!definition || definition.outputSchema !== undefined || !unwrapped.ok) continue;
    const outcome = { server: s.server, tool: a.tool, definition, result: a.result } as CallOutcome;
    answers.push({ server: s, outcome, value: unwrapped.value, bytes: JSON.stringify(a.result).length });
  }
}
answers.sort((a, b) => a.bytes - b.bytes);
const median = answers[answers.length >> 1]!;
const largest = answers.at(-1)!;
const jsonAnswers = answers.filter((a) =>
  typeof a.value === "object" && a.value !== a.outcome.result.content
);
const medianJson = jsonAnswers[jsonAnswers.length >> 1]!;

/** A catalog's observing side over the corpus servers (no cache files: nothing is written). */
function observing(): CatalogObserving {
  const specs = servers.map((s) => ({ name: s.server, transport: "stdio" }) as unknown as ServerSpec);
  return new CatalogObserving({
    configDir: "/nonexistent",
    config: DEFAULT_MCP_CONFIG,
    servers: specs,
    keyOf: (spec) => spec.name,
    useToolCache: false,
    memo: new ToolCacheMemo(),
    warn: (message) => console.error(message),
  });
}

function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

/** Per-call ms of `observe` over `pick(i)`, after a warm-up of a tenth of the calls. */
async function timeObserve(pick: (i: number) => Answer): Promise<number[]> {
  const o = observing();
  const samples: number[] = [];
  const warm = Math.floor(CALLS / 10);
  for (let i = 0; i < CALLS + warm; i++) {
    const a = pick(i);
    const t0 = performance.now();
    o.observe(a.outcome, a.value);
    const ms = performance.now() - t0;
    if (i >= warm) samples.push(ms);
  }
  await o.close();
  return samples;
}

function timeUnwrap(a: Answer): number[] {
  const samples: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    unwrapToolResult(a.outcome.result);
    samples.push(performance.now() - t0);
  }
  return samples;
}

const withP95 = (samples: number[]): Stats & { p95: number } => ({
  ...statsOf(samples),
  p95: percentile(samples, 0.95),
});
const atMedian = withP95(await timeObserve(() => median));
const atLargest = withP95(await timeObserve(() => largest));
const atMedianJson = withP95(await timeObserve(() => medianJson));
const roundRobin = withP95(await timeObserve((i) => answers[i % answers.length]!));
const unwrapMedian = withP95(timeUnwrap(median));

const jsonOrMedia = undeclared.filter((c) => c.kind !== "text");
const coverage = jsonOrMedia.filter((c) => isConcrete(shapeAfter(c, 1))).length / jsonOrMedia.length;
const sound = [];
for (const n of [1, 2, 3]) sound.push({ n, ...(await soundness(undeclared, n)) });
const heldOutJsonOrMedia = heldOut.filter((c) => c.kind !== "text");
const heldOutCoverage = heldOutJsonOrMedia.filter((c) => isConcrete(shapeAfter(c, 1))).length /
  heldOutJsonOrMedia.length;
const heldOutSound = [];
for (const n of [1, 2, 3]) heldOutSound.push({ n, ...(await soundness(heldOut, n)) });
const rowBytes = undeclared.map((c) =>
  new TextEncoder().encode(
    JSON.stringify([c.tool.name, "00000000000000", c.values.length, shapeAfter(c, c.values.length)]),
  )
    .length
);
const decls = declarationsBeforeAfter(servers, cases);
const declBefore = decls.reduce((n, d) => n + d.before.length, 0);
const declAfter = decls.reduce((n, d) => n + d.after.length, 0);

const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
const single = (value: number): Stats => ({ min: value, median: value, max: value, n: 1 });
const figures: Figure[] = [
  {
    id: "observeMedian",
    figure:
      `host time added per call, median answer (${median.bytes} B, ${median.server.server}.${median.outcome.tool})`,
    goal: `p95 ≤ ${GOAL_MS} ms`,
    unit: "ms",
    floorLabel: "unwrapToolResult of the same answer",
    floor: unwrapMedian,
    ours: atMedian,
    ratio: atMedian.median / unwrapMedian.median,
    met: atMedian.p95 <= GOAL_MS,
    notes: [`p50 ${us(atMedian.median)}, p95 ${us(atMedian.p95)}; unwrap p95 ${us(unwrapMedian.p95)}`],
  },
  {
    id: "observeMedianJson",
    figure:
      `host time added per call, median JSON answer (${medianJson.bytes} B, ${medianJson.server.server}.${medianJson.outcome.tool})`,
    goal: "≤ 5 ms",
    unit: "ms",
    ours: atMedianJson,
    met: atMedianJson.p95 <= 5,
    notes: [`p50 ${us(atMedianJson.median)}, p95 ${us(atMedianJson.p95)}`],
  },
  {
    id: "observeLargest",
    figure:
      `host time added per call, largest answer (${largest.bytes} B, ${largest.server.server}.${largest.outcome.tool})`,
    goal: "≤ 5 ms",
    unit: "ms",
    ours: atLargest,
    met: atLargest.p95 <= 5,
    notes: [`p50 ${us(atLargest.median)}, p95 ${us(atLargest.p95)}`],
  },
  {
    id: "observeAll",
    figure:
      `host time added per call, every answer in turn (${answers.length} answers, ${undeclared.length} tools)`,
    goal: "≤ 5 ms",
    unit: "ms",
    ours: roundRobin,
    met: roundRobin.p95 <= 5,
    notes: [`p50 ${us(roundRobin.median)}, p95 ${us(roundRobin.p95)}`],
  },
  {
    id: "storedBytes",
    figure: "cache bytes per tool (shape row)",
    goal: "≤ 4,096 B",
    unit: "B",
    ours: statsOf(rowBytes),
    met: Math.max(...rowBytes) <= 4096,
  },
  {
    id: "coverage",
    figure: "coverage after 1 call (tools with JSON or media answers)",
    goal: "≥ 95 %",
    unit: "%",
    ours: single(100 * coverage),
    met: coverage >= 0.95,
  },
  ...sound.map((s): Figure => ({
    id: `soundness${s.n}`,
    figure:
      `fitted corpus: soundness of later answers, shape after ${s.n} answer(s) (${s.passed}/${s.checked})`,
    goal: "≥ 97 %",
    unit: "%",
    ours: single(100 * s.passed / s.checked),
    met: s.passed / s.checked >= 0.97,
    // Each later answer that does not type-check: its kind, the tool, the answer, the exact error.
    notes: s.failures.map(describeFailure),
  })),
  {
    id: "heldOutCoverage",
    figure:
      `held-out corpus: coverage after 1 call (${heldOutJsonOrMedia.length} tools with JSON or media answers)`,
    goal: "≥ 95 %",
    unit: "%",
    ours: single(100 * heldOutCoverage),
    met: heldOutCoverage >= 0.95,
  },
  ...heldOutSound.map((s): Figure => ({
    id: `heldOutSoundness${s.n}`,
    figure: `held-out corpus: soundness, shape after ${s.n} answer(s) (${s.passed}/${s.checked})`,
    goal: "≥ 97 %",
    unit: "%",
    ours: single(100 * s.passed / s.checked),
    met: s.passed / s.checked >= 0.97,
    notes: s.failures.map(describeFailure),
  })),
  {
    id: "declarationBytes",
    figure: "signatures of the corpus servers, after all answers ÷ before",
    goal: "(informative)",
    unit: "×",
    ours: single(declAfter / declBefore),
    met: true,
    notes: [`${declBefore} B before, ${declAfter} B after`],
  },
];
await writeReport(figures, { answers: answers.length, medianAnswerBytes: median.bytes }, {
  loadAtStart,
  quick: QUICK,
  out: OUT,
  fullMachine: false,
});
