/**
 * The per-`execute` figures, focused: `execute` of `return 1` and of one echo, end to end through MCP stdio
 * against a real `cargo-agents mcp-serve` (run from source as an agent starts it), beside the no-op floor
 * (`bench/_noop_server.ts`). Series are interleaved round by round, so load hits them alike. Prints min /
 * median / p90 / max per series, in ms.
 *
 * Environment:
 * - `BENCH_N` rounds (default 300; a tenth more are run first as warm-up).
 * - `BENCH_REPOS=dirA,dirB` serves from each of these checkouts (default: this one), each its own series
 *   (`return1@1`, `return1@2`, …), interleaved in the same rounds: a before/after comparison at one load.
 * - `BENCH_CPU_N=300` also measures CPU time per `execute` (host and sandbox processes, user + system, from
 *   `/proc`; the backing servers' left out): per checkout and script, runs of that many executes, twice each,
 *   alternating checkouts. Unlike latency, CPU time hardly moves with the machine's load.
 * - `BENCH_GAP_MS` idles this long after each request (default 0: back to back, as `bench/perf.ts`).
 * - `BENCH_STEPS=1` runs the servers with `--verbose` and reads lines `STEP <name> <epoch ms>` from their
 *   stderr (timestamps a build prints while it is being measured; the product prints none), then gives the
 *   median time from each step to the next, per series, with the client's send and receive as first and
 *   last steps (`performance.timeOrigin + performance.now()` on every side).
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { sourceRunArgs } from "../lib/self_command.ts";
import { connectNoop, makeWorld, REPO } from "./_world.ts";
import { loadAverage, statsOf } from "./_perf_stats.ts";

const ROUNDS = Number(Deno.env.get("BENCH_N") ?? "300");
const REPOS = (Deno.env.get("BENCH_REPOS") ?? REPO).split(",").filter((r) => r !== "");
const STEPS = Deno.env.get("BENCH_STEPS") === "1";
const GAP_MS = Number(Deno.env.get("BENCH_GAP_MS") ?? "0");
const CPU_N = Number(Deno.env.get("BENCH_CPU_N") ?? "0");
const TICK_MS = 10; // USER_HZ = 100 on Linux

/**
 * CPU ms of process `pid` (with its reaped children) and of its live `deno` children (its sandbox processes),
 * from every `/proc/<n>/stat` (read through `cat`: `/proc` is outside the permissions `-P` grants).
 */
function treeCpuMs(pid: number): number {
  const out = new Deno.Command("sh", { args: ["-c", "cat /proc/[0-9]*/stat 2>/dev/null"], stdout: "piped" })
    .outputSync();
  let ticks = NaN;
  let children = 0;
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const close = line.lastIndexOf(")");
    if (close < 0) continue;
    const self = Number(line.slice(0, line.indexOf(" ")));
    const comm = line.slice(line.indexOf("(") + 1, close);
    // After the name: state 0, ppid 1, …, utime 11, stime 12, cutime 13, cstime 14.
    const f = line.slice(close + 2).split(" ");
    if (self === pid) ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    else if (Number(f[1]) === pid && comm === "deno") children += Number(f[11]) + Number(f[12]);
  }
  return (ticks + children) * TICK_MS;
}

const SCRIPTS = { return1: "return 1", echo: "return await everything.echo({ message: 'x' })" };

const now = () => performance.timeOrigin + performance.now();

/** Step marks read from one server's stderr, in arrival order. */
interface Marks {
  list: Array<{ name: string; at: number }>;
}

async function readMarks(stream: ReadableStream<Uint8Array>, marks: Marks): Promise<void> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop()!;
    for (const line of lines) {
      // A guest's lines reach the host's log as one message, maybe with its newlines escaped.
      for (const found of line.matchAll(/STEP ([\w.]+) (\d+(?:\.\d+)?)/g)) {
        marks.list.push({ name: found[1]!, at: Number(found[2]) });
      }
    }
  }
}

async function connect(
  repo: string,
  home: string,
  ws: string,
): Promise<{ client: Client; marks: Marks; pid: number }> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [
      ...sourceRunArgs(repo),
      "mcp-serve",
      ...(STEPS && Deno.env.get("BENCH_VERBOSE") !== "0" ? ["--verbose"] : []),
    ],
    env: { ...Deno.env.toObject(), SYMPOSIUM_HOME: home },
    cwd: ws,
    stderr: STEPS ? "pipe" : "ignore",
  });
  const client = new Client({ name: "steps-agent", version: "1.0.0" });
  await client.connect(transport);
  const marks: Marks = { list: [] };
  if (STEPS) {
    const stderr = transport.stderr as unknown as ReadableStream<Uint8Array> | null;
    // The SDK gives a Node-style stream under Deno; both are async-iterable.
    if (stderr) readMarks(toWeb(stderr), marks).catch(() => {});
  }
  return { client, marks, pid: transport.pid ?? 0 };
}

function toWeb(stream: unknown): ReadableStream<Uint8Array> {
  if (stream instanceof ReadableStream) return stream;
  const iterable = stream as AsyncIterable<Uint8Array>;
  return new ReadableStream({
    async start(controller) {
      for await (const chunk of iterable) controller.enqueue(new Uint8Array(chunk));
      controller.close();
    },
  });
}

const world = await makeWorld(3);
const servers = await Promise.all(REPOS.map((repo) => connect(repo, world.home, world.ws)));
const noop = await connectNoop();
const samples: Record<string, number[]> = {};
/** Each sampled request of a series: its server's marks and when the client sent and received it. */
const windows: Array<{ label: string; marks: Marks; sent: number; received: number }> = [];
const series: Array<[string, () => Promise<void>]> = [["noop", async () => {
  await noop.client.callTool({ name: "noop", arguments: {} });
}]];
servers.forEach((server, i) => {
  for (const [name, script] of Object.entries(SCRIPTS)) {
    const label = REPOS.length > 1 ? `${name}@${i + 1}` : name;
    series.push([label, async () => {
      const sent = now();
      const result = await server.client.callTool({ name: "execute", arguments: { script } });
      const received = now();
      if (result.isError) throw new Error(`${label}: ${JSON.stringify(result.content)}`);
      if (STEPS) windows.push({ label, marks: server.marks, sent, received });
    }]);
  }
});
const warmup = Math.ceil(ROUNDS / 10);
const loadAtStart = loadAverage();
for (let round = 0; round < warmup + ROUNDS; round++) {
  for (let k = 0; k < series.length; k++) {
    const [label, fn] = series[(round + k) % series.length]!;
    const t0 = performance.now();
    await fn();
    const ms = performance.now() - t0;
    if (round >= warmup) (samples[label] ??= []).push(ms);
    if (GAP_MS > 0) await new Promise((resolve) => setTimeout(resolve, GAP_MS));
  }
  if (round === warmup - 1) windows.length = 0;
}
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;
console.log(`load ${loadAtStart.toFixed(2)} → ${loadAverage().toFixed(2)}; ${ROUNDS} rounds; repos ${REPOS}`);
for (const [label, xs] of Object.entries(samples)) {
  const s = statsOf(xs);
  console.log(
    `${label.padEnd(12)} min ${s.min.toFixed(3)}  median ${s.median.toFixed(3)}  p90 ${
      p90(xs).toFixed(3)
    }  max ${s.max.toFixed(2)} ms`,
  );
}
if (CPU_N > 0) {
  const cpu: Record<string, number[]> = {};
  for (let round = 0; round < 2; round++) {
    for (let k = 0; k < servers.length; k++) {
      const i = (k + round) % servers.length;
      const server = servers[i]!;
      for (const [name, script] of Object.entries(SCRIPTS)) {
        const before = treeCpuMs(server.pid);
        for (let n = 0; n < CPU_N; n++) {
          await server.client.callTool({ name: "execute", arguments: { script } });
        }
        (cpu[REPOS.length > 1 ? `${name}@${i + 1}` : name] ??= []).push(
          (treeCpuMs(server.pid) - before) / CPU_N,
        );
      }
    }
  }
  console.log(`\nCPU per execute (host + sandbox, ms; ${CPU_N} executes per run, ${TICK_MS} ms ticks):`);
  for (const [label, runs] of Object.entries(cpu)) {
    console.log(`  ${label.padEnd(12)} ${runs.map((ms) => ms.toFixed(3)).join("  ")}`);
  }
}

// The servers' stderr may trail their answers (the guest's goes through the host's log).
await new Promise((resolve) => setTimeout(resolve, 300));
for (const [label, table] of Object.entries(stepTable())) {
  console.log(`\n${label}: step medians (ms, n)`);
  for (const [step, xs] of Object.entries(table)) {
    console.log(`  ${step.padEnd(48)} ${statsOf(xs).median.toFixed(3)} (${xs.length})`);
  }
}
/** Per series, each step's durations: the marks inside each request's window, in time order. */
function stepTable(): Record<string, Record<string, number[]>> {
  const table: Record<string, Record<string, number[]>> = {};
  for (const { label, marks, sent, received } of windows) {
    const inside = marks.list.filter((m) => m.at >= sent && m.at <= received).sort((a, b) => a.at - b.at);
    const all = [{ name: "client.send", at: sent }, ...inside, { name: "client.receive", at: received }];
    const rows = table[label] ??= {};
    for (let k = 1; k < all.length; k++) {
      (rows[`${all[k - 1]!.name} → ${all[k]!.name}`] ??= []).push(all[k]!.at - all[k - 1]!.at);
    }
  }
  return table;
}

await Promise.all([...servers.map((s) => s.client.close()), noop.client.close()]);
await world.remove();
