/**
 * Numbers and printing for `bench/perf.ts` and the benchmarks beside it (`peers.ts`, `isolation_floors.ts`):
 * interleaved sampling, samples → min / median / max, process memory (RSS, private), the goal check of each
 * figure, the machine description, and the text tables and JSON report.
 *
 * @module
 */

/** Summary of a series of samples, in the series' unit. */
export interface Stats {
  min: number;
  median: number;
  max: number;
  /** Number of samples. */
  n: number;
}

/** Min, median (mean of the two middle samples for an even count) and max of `samples`. */
export function statsOf(samples: readonly number[]): Stats {
  if (samples.length === 0) return { min: NaN, median: NaN, max: NaN, n: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { min: sorted[0]!, median, max: sorted.at(-1)!, n: sorted.length };
}

/** Time `fn` takes to settle, ms. */
export async function timedMs(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/**
 * Runs each named series `n` times after `warmup` rounds, one sample of every series per round, so that
 * load on the shared machine affects every series alike.
 *
 * @param between Awaited after each sample, untimed. Default: nothing.
 * @param order `"rotate"`: each round starts one series later, the order kept (a series always follows
 *   the same one, and carries what that one leaves running: a sandbox making its next context, a GC);
 *   `"shuffle"`: a new random order each round, so that such after-work falls on every series alike.
 *   @default "rotate"
 * @returns The samples of each series, ms, warm-up rounds left out.
 */
export async function interleaved(
  n: number,
  warmup: number,
  series: Record<string, () => Promise<unknown>>,
  between: () => Promise<unknown> = () => Promise.resolve(),
  order: "rotate" | "shuffle" = "rotate",
): Promise<Record<string, number[]>> {
  const names = Object.keys(series);
  const out: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  for (let round = 0; round < warmup + n; round++) {
    const roundOrder = order === "shuffle" ? shuffled(names) : names;
    for (let i = 0; i < names.length; i++) {
      const name = roundOrder[order === "shuffle" ? i : (round + i) % names.length]!;
      const ms = await timedMs(series[name]!);
      if (round >= warmup) out[name]!.push(ms);
      await between();
    }
  }
  return out;
}

/** A copy of `items` in a random order (Fisher–Yates). */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** One row of the goals table: what we measured, beside its floor. */
export interface Figure {
  /** Stable key, e.g. `"return1"`. */
  id: string;
  /** The figure as the goals table names it. */
  figure: string;
  /** The goal as text, e.g. `"≤ 1.0 ms"`. */
  goal: string;
  unit: "ms" | "MiB" | "×" | "B" | "%";
  /** What the floor is, e.g. `"no-op tool, SDK over stdio"`; absent when the figure has none. */
  floorLabel?: string;
  floor?: Stats;
  ours: Stats;
  /** ours.median / floor.median. */
  ratio?: number;
  /** Whether the goal is met (by the medians). */
  met: boolean;
  /** Anything else worth keeping (extra series, checks). */
  notes?: string[];
}

/** The machine the benchmark ran on. */
export interface Machine {
  os: string;
  cpu: string;
  cores: number;
  memoryGiB: number;
  deno: string;
  v8: string;
  node: string;
}

/** What `command args…` prints on stdout, trimmed; `undefined` when it cannot run. */
function outputOf(command: string, args: string[]): string | undefined {
  try {
    const out = new Deno.Command(command, { args, stdout: "piped", stderr: "null" }).outputSync();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : undefined;
  } catch {
    return undefined; // Not installed here: the caller says "unknown".
  }
}

/**
 * Describes this machine. The CPU model comes from `/proc/cpuinfo` through `grep` (Deno reads `/proc`
 * only with `--allow-all`), so it is `"unknown"` off Linux.
 */
export function describeMachine(): Machine {
  const cpuLine = outputOf("grep", ["-m1", "model name", "/proc/cpuinfo"]);
  const cpu = cpuLine?.replace(/^model name\s*:\s*/, "") ?? "unknown";
  const node = outputOf("node", ["--version"]) ?? "none";
  return {
    os: `${Deno.build.os} ${Deno.osRelease()} ${Deno.build.arch}`,
    cpu,
    cores: navigator.hardwareConcurrency,
    memoryGiB: Math.round(Deno.systemMemoryInfo().total / 2 ** 30),
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    node,
  };
}

/** The 1-minute load average, or `NaN` where the OS does not say. */
export function loadAverage(): number {
  try {
    return Deno.loadavg()[0]!;
  } catch {
    return NaN;
  }
}

/** Resident set size of process `pid` (threads included, children not), MiB. */
export function rssMiB(pid: number): number {
  return Number(outputOf("ps", ["-o", "rss=", "-p", String(pid)]) ?? NaN) / 1024;
}

/** Memory of the sandbox processes under one host, MiB (0 each when none runs). */
export interface SandboxMemory {
  /** Their resident sets added up: pages of the runtime's binary they share with the host counted again. */
  rssMiB: number;
  /**
   * Their unique set sizes added up (Linux `smaps_rollup` `Private_Clean` + `Private_Dirty`): the memory
   * they hold beyond what the host already maps, so host RSS + this is what host and sandboxes take
   * together. `NaN` where the OS does not say.
   */
  ussMiB: number;
}

/** The command line of a sandbox process: `lib/sandbox/guest/main.ts` from source, `__sandbox-guest` in a binary. */
export const GUEST_ARGS = /sandbox[/\\]guest[/\\]main\.ts|__sandbox-guest/;

/**
 * The sandbox processes under `pid` (its children whose command line matches `guest`), their resident and
 * unique set sizes.
 *
 * @param guest What a sandbox process's command line holds. @default {@link GUEST_ARGS}
 */
export function sandboxMemory(pid: number, guest: RegExp = GUEST_ARGS): SandboxMemory {
  const out = outputOf("ps", ["-eo", "pid=,ppid=,rss=,args="]) ?? "";
  let rssKib = 0;
  let ussKib = 0;
  for (const line of out.split("\n")) {
    const [child, ppid, rss, ...args] = line.trim().split(/\s+/);
    if (Number(ppid) === pid && guest.test(args.join(" "))) {
      rssKib += Number(rss);
      ussKib += ussKiB(Number(child));
    }
  }
  return { rssMiB: rssKib / 1024, ussMiB: ussKib / 1024 };
}

/** Unique set size of process `pid` (`Private_Clean` + `Private_Dirty` of its `smaps_rollup`), MiB; `NaN` off Linux. */
export function privateMiB(pid: number): number {
  return ussKiB(pid) / 1024;
}

/** Unique set size of process `pid` from `/proc/<pid>/smaps_rollup`, KiB; `NaN` where there is none. */
function ussKiB(pid: number): number {
  const rollup = outputOf("cat", [`/proc/${pid}/smaps_rollup`]);
  if (rollup === undefined) return NaN;
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? NaN);
  return field("Private_Clean") + field("Private_Dirty");
}

function fmt(value: number | undefined, unit: string): string {
  if (value === undefined || Number.isNaN(value)) return "–";
  const digits = unit === "MiB" ? 1 : value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return value.toFixed(digits);
}

function statsText(s: Stats | undefined, unit: string): string {
  if (!s) return "–";
  if (s.n === 1) return fmt(s.median, unit);
  return `${fmt(s.min, unit)} / ${fmt(s.median, unit)} / ${fmt(s.max, unit)}`;
}

/** The figures as a Markdown table (min / median / max; ratio = our median over the floor's). */
export function renderTable(figures: readonly Figure[]): string {
  const rows = [
    ["figure", "goal", "floor (min / median / max)", "cargo-agents (min / median / max)", "ratio", "met"],
    ...figures.map((f) => [
      f.figure,
      f.goal,
      f.floor ? `${statsText(f.floor, f.unit)} ${f.unit} (${f.floorLabel})` : "–",
      `${statsText(f.ours, f.unit)} ${f.unit}`,
      f.ratio === undefined ? "–" : `${f.ratio.toFixed(2)}×`,
      f.met ? "yes" : "NO",
    ]),
  ];
  return markdownTable(rows);
}

/** `rows` (the first is the header) as a Markdown table, each column padded to its widest cell. */
export function markdownTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: readonly string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(rows[0]!), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.slice(1).map(line)]
    .join("\n");
}

/** What {@link writeReport} needs besides the figures. */
export interface ReportOptions {
  /** Load average when the run began ({@link loadAverage}). */
  loadAtStart: number;
  /** The run took fewer samples (`BENCH_QUICK=1`). */
  quick: boolean;
  /** Where the JSON goes. */
  out: string;
  /** Print the machine's memory and node version in the summary line. @default true */
  fullMachine?: boolean;
}

/**
 * Prints the figures as a table with their notes and a one-line summary (date, machine, load), and
 * writes the report `{ date, machine, loadAverage, quick, figures, checks }` as JSON to `options.out`.
 */
export async function writeReport(
  figures: readonly Figure[],
  checks: Record<string, unknown>,
  options: ReportOptions,
): Promise<void> {
  const loadAtEnd = loadAverage();
  const machine = describeMachine();
  const report = {
    date: new Date().toISOString(),
    machine,
    loadAverage: { start: options.loadAtStart, end: loadAtEnd },
    quick: options.quick,
    figures,
    checks,
  };
  console.log(renderTable(figures));
  for (const f of figures) for (const note of f.notes ?? []) console.log(`- ${f.figure}: ${note}`);
  const hardware = options.fullMachine === false
    ? `${machine.cpu}, ${machine.cores} cores`
    : `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB · ${machine.os} · Deno ${machine.deno} · ` +
      `node ${machine.node}`;
  console.log(
    `\n${report.date.slice(0, 10)} · ${hardware} · load ${options.loadAtStart.toFixed(2)} → ` +
      `${loadAtEnd.toFixed(2)}${options.quick ? " · QUICK (fewer samples)" : ""}`,
  );
  await Deno.mkdir(options.out.slice(0, options.out.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(options.out, JSON.stringify(report, null, 2) + "\n");
  console.log(`written: ${options.out}`);
}

/**
 * Prints `figures` as a table with the load average at start and now, and writes them with the machine,
 * the number of rounds and the time to `out` (JSON), creating `bench/results/` under `repoDir` if needed.
 *
 * @param options.loadAtStart The 1-minute load average when the run began.
 */
export async function writeRoundsReport(
  figures: readonly Figure[],
  options: { out: string; rounds: number; loadAtStart: number; repoDir: string },
): Promise<void> {
  console.log(renderTable(figures));
  console.log(
    `\nload average at start: ${options.loadAtStart.toFixed(2)}, at end: ${loadAverage().toFixed(2)}`,
  );
  await Deno.mkdir(`${options.repoDir}bench/results`, { recursive: true });
  const report = {
    machine: describeMachine(),
    rounds: options.rounds,
    figures,
    measuredAt: new Date().toISOString(),
  };
  await Deno.writeTextFile(options.out, JSON.stringify(report, null, 2) + "\n");
  console.log(`written: ${options.out}`);
}
