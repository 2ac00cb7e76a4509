/**
 * `deno task bench:cold`: where the time of a cold start goes, on a timeline from the spawn of a fresh
 * `cargo-agents mcp-serve` (run from source as `sync` writes the entry, warm Deno cache) to the result of
 * its first `execute` (`return await everything.echo({ message: 'x' })` against the npm
 * server-everything over stdio, the `cold` figure of `bench/perf.ts`). The agent side is a raw stdio
 * client that sends `initialize`, and `notifications/initialized` plus the `execute` once answered (as
 * the SDK client does). The server-side marks come from the session log (`<home>/logs/`, stamped in
 * ms): `[everything] starting` (the catalog is resolved), `spawned pid`, `connected` (its `initialize`
 * answered), `agent:` (the tool handlers supplied) and `execute: ok`.
 *
 * Beside it, interleaved round by round, the floors: Deno itself (`deno run` of an empty module with the
 * same flags, to its exit), the SDK serving a no-op tool with the same flags (spawn → `initialize`
 * answered, `bench/_noop_server.ts`) and a direct SDK client spawning server-everything (spawn →
 * `initialize` → echo result). Prints min / median / max per mark; writes `bench/results/cold_start.json`.
 *
 * Environment: `BENCH_QUICK=1` takes 4 rounds instead of 12; `BENCH_OUT=path` writes the JSON elsewhere;
 * `BENCH_BEFORE=/path/to/checkout` adds that checkout's `mcp-serve` as an interleaved series (its echo
 * result only; run with this checkout's flags minus `--unstable-lazy-dynamic-imports`), for a before/after.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { makeWorld, npmServer, REPO } from "./_world.ts";
import { describeMachine, loadAverage, type Stats, statsOf } from "./_perf_stats.ts";
import { DENO_RUN_FLAGS, sourceRunArgs } from "../lib/self_command.ts";

const QUICK = Deno.env.get("BENCH_QUICK") === "1";
const ROUNDS = QUICK ? 4 : 12;
const OUT = Deno.env.get("BENCH_OUT") ?? `${REPO}bench/results/cold_start.json`;
const BEFORE = Deno.env.get("BENCH_BEFORE");
const ECHO = "return await everything.echo({ message: 'x' })";
/** A round that takes longer than this is a hang, not a sample. */
const ROUND_TIMEOUT_MS = 60_000;

/** Milliseconds since the epoch, sub-millisecond. */
const epochMs = () => performance.timeOrigin + performance.now();

/** Session-log lines that mark a step, by the mark's name (the first matching line counts). */
const LOG_MARKS: [string, RegExp][] = [
  ["[everything] starting", /\[everything\] starting/],
  ["[everything] spawned", /\[everything\] spawned pid/],
  ["agent: handlers supplied", /INFO agent: /],
  ["[everything] connected (initialize answered)", /\[everything\] connected/],
  ["execute: ok (result sent)", /(?:INFO|DEBUG) execute: ok/], // debug since dfa63dd
];

/** One cold start: ms from spawn for each mark seen. */
type Marks = Map<string, number>;

/** Starts `args` under `deno`, runs initialize + the echo execute over raw stdio, and returns the marks. */
async function coldRound(args: string[], env: Record<string, string>, cwd: string): Promise<Marks> {
  const marks: Marks = new Map();
  const t0 = epochMs();
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env,
    cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const send = (message: unknown) =>
    writer.write(new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", ...message as object }) + "\n"));
  const timer = setTimeout(() => child.kill("SIGKILL"), ROUND_TIMEOUT_MS);
  try {
    await send({
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    });
    let buffer = "";
    reading: for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const message = JSON.parse(buffer.slice(0, newline)) as {
          id?: number;
          result?: { isError?: boolean };
        };
        buffer = buffer.slice(newline + 1);
        if (message.id === 1) {
          marks.set("client: initialize answered", epochMs() - t0);
          await send({ method: "notifications/initialized" });
          await send({
            id: 2,
            method: "tools/call",
            params: { name: "execute", arguments: { script: ECHO } },
          });
        } else if (message.id === 2) {
          marks.set("client: echo result", epochMs() - t0);
          if (message.result?.isError) throw new Error(`execute failed: ${JSON.stringify(message)}`);
          break reading;
        }
      }
    }
  } finally {
    clearTimeout(timer);
    await writer.close().catch(() => {}); // Already gone when killed.
    await child.status;
  }
  if (!marks.has("client: echo result")) throw new Error(`no echo result within ${ROUND_TIMEOUT_MS} ms`);
  return marks;
}

/** Adds the session log's marks of the newest log in `logDir` to `marks`, relative to `t0` (epoch ms). */
async function addLogMarks(logDir: string, t0: number, marks: Marks): Promise<void> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(logDir)) if (entry.name.endsWith(".log")) names.push(entry.name);
  const newest = names.sort().at(-1);
  if (newest === undefined) return;
  const lines = (await Deno.readTextFile(`${logDir}/${newest}`)).split("\n");
  for (const [mark, pattern] of LOG_MARKS) {
    const line = lines.find((l) => l !== "" && pattern.test(l));
    const at = line === undefined ? NaN : Date.parse(line.slice(0, line.indexOf(" ")));
    if (Number.isFinite(at)) marks.set(`log: ${mark}`, at - t0);
  }
}

/** Spawn → exit of `deno run` with the same flags on an empty module: Deno's own start. */
async function denoFloor(emptyModule: string): Promise<number> {
  const t0 = epochMs();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...DENO_RUN_FLAGS, "--config", `${REPO}deno.json`, emptyModule],
    stdout: "null",
    stderr: "null",
  }).output();
  if (!out.success) throw new Error(`deno run of an empty module failed (${out.code})`);
  return epochMs() - t0;
}

/** Spawn → `initialize` answered by an SDK client, for `command args`, and → an `echo` result when `echo`. */
async function sdkStart(command: string, args: string[], echo = false): Promise<number[]> {
  const t0 = epochMs();
  const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(transport);
  const initialized = epochMs() - t0;
  const times = [initialized];
  if (echo) {
    await client.callTool({ name: "echo", arguments: { message: "x" } });
    times.push(epochMs() - t0);
  }
  await client.close();
  return times;
}

const world = await makeWorld(3);
const env = { ...Deno.env.toObject(), SYMPOSIUM_HOME: world.home };
const serveArgs = [...sourceRunArgs(REPO), "mcp-serve"];
// The checkouts before it ran without the lazy-imports flag (this one's flags otherwise).
const beforeArgs = BEFORE === undefined
  ? undefined
  : [...sourceRunArgs(BEFORE).filter((a) => a !== "--unstable-lazy-dynamic-imports"), "mcp-serve"];
const emptyModule = `${world.root}/empty.ts`;
await Deno.writeTextFile(emptyModule, "");
const noopArgs = ["run", ...DENO_RUN_FLAGS, "--config", `${REPO}deno.json`, `${REPO}bench/_noop_server.ts`];
const samples = new Map<string, number[]>();
const add = (mark: string, ms: number) => (samples.get(mark) ?? samples.set(mark, []).get(mark)!).push(ms);
const loadAtStart = loadAverage();
try {
  // Warm the compile caches (ours, the floors') before the first sample.
  await coldRound(serveArgs, env, world.ws);
  if (beforeArgs) await coldRound(beforeArgs, env, world.ws);
  await denoFloor(emptyModule);
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = epochMs();
    const marks = await coldRound(serveArgs, env, world.ws);
    await addLogMarks(`${world.home}/logs`, t0, marks);
    for (const [mark, ms] of marks) add(mark, ms);
    if (beforeArgs) {
      add(
        "before: client: echo result",
        (await coldRound(beforeArgs, env, world.ws)).get("client: echo result")!,
      );
    }
    add("floor: deno run of an empty module, to exit", await denoFloor(emptyModule));
    add("floor: no-op SDK server, initialize answered", (await sdkStart(Deno.execPath(), noopArgs))[0]!);
    const [init, echo] = await sdkStart("node", [npmServer("server-everything"), "stdio"], true);
    add("floor: direct server-everything, initialize answered", init!);
    add("floor: direct server-everything, echo result", echo!);
    await new Promise((resolve) => setTimeout(resolve, 200)); // Let the last processes' exit settle.
  }
} finally {
  await world.remove();
}
const rows: { mark: string; stats: Stats }[] = [...samples].map(([mark, ms]) => ({
  mark,
  stats: statsOf(ms),
}));
const ours = rows.filter((r) => !r.mark.startsWith("floor:") && !r.mark.startsWith("before:"))
  .sort((a, b) => a.stats.median - b.stats.median);
const others = rows.filter((r) => r.mark.startsWith("floor:") || r.mark.startsWith("before:"));
const fmt = (s: Stats) => [s.min, s.median, s.max].map((v) => v.toFixed(0).padStart(5)).join(" ");
console.log(`ms from spawn, ${ROUNDS} rounds:   min   med   max`);
for (const { mark, stats } of [...ours, ...others]) console.log(`${mark.padEnd(52)} ${fmt(stats)}`);
console.log(`\nload average at start: ${loadAtStart.toFixed(2)}, at end: ${loadAverage().toFixed(2)}`);
await Deno.mkdir(`${REPO}bench/results`, { recursive: true });
await Deno.writeTextFile(
  OUT,
  JSON.stringify(
    { machine: describeMachine(), rounds: ROUNDS, marks: rows, measuredAt: new Date().toISOString() },
    null,
    2,
  ) + "\n",
);
console.log(`written: ${OUT}`);
