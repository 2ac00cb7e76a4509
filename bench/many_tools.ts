/**
 * `deno task bench` (fourth part): a server of 50,000 tools (`testdata/servers/many_tools.ts`, 7.7 MiB of
 * listing in 10 pages, within `MAX_LISTING_BYTES`) behind a real `mcp-serve`, with a `ping` sent every 50 ms
 * throughout (before, its first listing took 4.9 s and held the host thread 1.9 s). Each round starts
 * from an empty home, twice:
 *
 * - a session's first `list_tools { servers: ["many"] }` (the server starts, 10 pages are read, the tool
 *   cache is written, the declarations that fit are rendered), then a `query` search (the search index of
 *   50,000 tools is built), then the unfiltered index (summarized), then an `execute` calling one tool;
 * - a session whose first request is that `execute` (cold: start, listing and call in one).
 *
 * Figures: each step's time, the worst ping of all steps, and mcp-serve's peak RSS above its RSS once
 * initialized. Goals: worst ping ≤ 250 ms, peak ≤ 300 MiB above idle (what every hostile input must end
 * within). Prints a table and writes `bench/results/many_tools.json`. `BENCH_QUICK=1` runs one round (default 3); `BENCH_OUT=path` writes the
 * JSON elsewhere.
 *
 * @module
 */
import { denoServerToml, makeRawWorld, RawServe, REPO } from "./_raw_serve.ts";
import { type Figure, loadAverage, statsOf, writeReport } from "./_perf_stats.ts";

const QUICK = Deno.env.get("BENCH_QUICK") === "1";
const OUT = Deno.env.get("BENCH_OUT") ?? `${REPO}bench/results/many_tools.json`;
const ROUNDS = QUICK ? 1 : 3;
const PING_EVERY_MS = 50;
const MAX_PING_MS = 250;
const MAX_PEAK_ABOVE_IDLE_MIB = 300;
const EXECUTE = "return await many.repo_3_list({ owner: 'x' })";

type Step = (serve: RawServe) => Promise<{ text: string; isError: boolean }>;

/** One fresh session running `steps` in order, each with pings; times and worst ping per step. */
async function session(steps: [string, Step][]): Promise<{
  ms: Record<string, number>;
  /** Worst ping per step (and `settle`: the second after the last answer). */
  pingMs: Record<string, number>;
  maxPingMs: number;
  peakAboveIdleMiB: number;
}> {
  const world = await makeRawWorld(denoServerToml("many", "many_tools.ts"));
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    await serve.initialize();
    const idle = serve.memoryMiB().rss;
    const ms: Record<string, number> = {};
    const pingMs: Record<string, number> = {};
    for (const [name, step] of steps) {
      const started = performance.now();
      const { value, maxPingMs: worst } = await serve.whilePinging(step(serve), PING_EVERY_MS);
      ms[name] = performance.now() - started;
      if (value.isError) throw new Error(`${name} failed: ${value.text.slice(0, 300)}`);
      pingMs[name] = worst;
    }
    // The cache write and index building that follow an answer count too: pinged until they are done.
    const settle = new Promise<{ text: string; isError: boolean }>((r) =>
      setTimeout(() => r({ text: "", isError: false }), 1_000)
    );
    pingMs.settle = (await serve.whilePinging(settle, PING_EVERY_MS)).maxPingMs;
    const maxPingMs = Math.max(...Object.values(pingMs));
    return { ms, pingMs, maxPingMs, peakAboveIdleMiB: serve.memoryMiB().peak - idle };
  } finally {
    await serve.close();
    await world.remove();
  }
}

const loadAtStart = loadAverage();
const series: Record<string, number[]> = {};
const push = (key: string, value: number) => (series[key] ??= []).push(value);
for (let round = 0; round < ROUNDS; round++) {
  const listed = await session([
    ["firstListing", (s) => s.listTools({ servers: ["many"] })],
    ["search", (s) => s.listTools({ query: "archive tickets" })],
    ["index", (s) => s.listTools({})],
    ["execute", (s) => s.execute(EXECUTE)],
  ]);
  const cold = await session([["coldExecute", (s) => s.execute(EXECUTE)]]);
  for (const [key, ms] of Object.entries({ ...listed.ms, ...cold.ms })) push(key, ms);
  push("maxPing", Math.max(listed.maxPingMs, cold.maxPingMs));
  push("peak", Math.max(listed.peakAboveIdleMiB, cold.peakAboveIdleMiB));
  console.log(
    `round ${round + 1}: first listing ${listed.ms.firstListing!.toFixed(0)} ms, cold execute ${
      cold.ms.coldExecute!.toFixed(0)
    } ms, worst ping ${Math.max(listed.maxPingMs, cold.maxPingMs).toFixed(0)} ms, peak +${
      Math.max(listed.peakAboveIdleMiB, cold.peakAboveIdleMiB).toFixed(1)
    } MiB; worst ping per step: ${
      Object.entries({ ...listed.pingMs, cold: cold.pingMs.coldExecute!, coldSettle: cold.pingMs.settle! })
        .map(([k, v]) => `${k} ${v.toFixed(0)}`).join(", ")
    }`,
  );
}

const timing = (id: string, figure: string): Figure => ({
  id,
  figure,
  goal: "–",
  unit: "ms",
  ours: statsOf(series[id]!),
  met: true,
});
const maxPing = statsOf(series.maxPing!);
const peak = statsOf(series.peak!);
const figures: Figure[] = [
  timing("firstListing", "first list_tools { servers: [many] } (50,000 tools)"),
  timing("search", "then list_tools { query } (index of 50,000 built)"),
  timing("index", "then list_tools {} (summarized index)"),
  timing("execute", "then execute calling one tool"),
  timing("coldExecute", "execute as a session's first request"),
  {
    id: "maxPing",
    figure: `worst ping (every ${PING_EVERY_MS} ms, all steps)`,
    goal: `≤ ${MAX_PING_MS} ms`,
    unit: "ms",
    ours: maxPing,
    met: maxPing.max <= MAX_PING_MS,
  },
  {
    id: "peak",
    figure: "mcp-serve peak RSS above idle",
    goal: `≤ ${MAX_PEAK_ABOVE_IDLE_MIB} MiB`,
    unit: "MiB",
    ours: peak,
    met: peak.max <= MAX_PEAK_ABOVE_IDLE_MIB,
  },
];
await writeReport(figures, { rounds: ROUNDS }, { loadAtStart, quick: QUICK, out: OUT });
