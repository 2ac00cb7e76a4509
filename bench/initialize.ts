/**
 * `deno task bench:initialize`: how soon `cargo-agents mcp-serve` answers an agent after the agent starts
 * it, run as `sync` writes the entry from source (warm Deno cache): process start → `initialize` answered,
 * and → `tools/list` answered (what Codex waits for, 1 s by default, before its first turn; Cline gives
 * `initialize` 3 s). Measured on an idle machine and with every core kept busy by CPU burners, beside the
 * floor of the same SDK serving a no-op tool with the same Deno flags (`bench/_noop_server.ts`), rounds
 * interleaved so load hits both alike. Goal: `initialize` within 1 s on a busy 2-core machine.
 * Prints min / median / max and writes `bench/results/initialize.json`.
 *
 * Environment: `BENCH_QUICK=1` takes 5 rounds instead of 12; `BENCH_OUT=path` writes the JSON elsewhere;
 * `BENCH_BEFORE=/path/to/checkout` adds that checkout's `mcp-serve` as a third interleaved series (before/after).
 *
 * @module
 */
import { makeWorld, REPO } from "./_world.ts";
import { type Figure, loadAverage, type Stats, statsOf, writeRoundsReport } from "./_perf_stats.ts";
import { sourceRunArgs } from "../lib/self_command.ts";

const QUICK = Deno.env.get("BENCH_QUICK") === "1";
const ROUNDS = QUICK ? 5 : 12;
const OUT = Deno.env.get("BENCH_OUT") ?? `${REPO}bench/results/initialize.json`;
const GOAL_MS = 1_000;
const BEFORE = Deno.env.get("BENCH_BEFORE");
/** A round that takes longer than this is a hang, not a sample. */
const ROUND_TIMEOUT_MS = 30_000;

interface Round {
  initializeMs: number;
  toolsListMs: number;
}

/** Starts `args` under `deno`, sends `initialize` then `tools/list`, and times both answers from the spawn. */
async function timeStart(args: string[], env: Record<string, string>, cwd: string): Promise<Round> {
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env,
    cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const send = (message: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  const answered = new Map<number, number>();
  const reading = (async () => {
    let buffer = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        const id = (JSON.parse(line) as { id?: number }).id;
        if (typeof id === "number") answered.set(id, performance.now() - t0);
      }
      if (answered.has(2)) return;
    }
  })();
  const timer = setTimeout(() => child.kill("SIGKILL"), ROUND_TIMEOUT_MS);
  try {
    // Sent at once, as agents do: the server reads them when it is ready.
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    });
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
    await reading;
  } finally {
    clearTimeout(timer);
    await writer.close().catch(() => {}); // Already gone when killed.
    await child.status;
  }
  const initializeMs = answered.get(1);
  const toolsListMs = answered.get(2);
  if (initializeMs === undefined || toolsListMs === undefined) {
    throw new Error(`deno ${args.join(" ")} did not answer within ${ROUND_TIMEOUT_MS} ms`);
  }
  return { initializeMs, toolsListMs };
}

function fmtStats(s: Stats): string {
  return [s.min, s.median, s.max].map((v) => v.toFixed(0)).join(" / ");
}

/** Keeps every core busy with one CPU-bound process each until `stop()`. */
function startBurners(): { stop(): Promise<void> } {
  const burners = Array.from(
    { length: navigator.hardwareConcurrency },
    () =>
      new Deno.Command(Deno.execPath(), {
        args: ["eval", "for (;;) {}"],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn(),
  );
  return {
    async stop() {
      for (const b of burners) b.kill("SIGKILL");
      await Promise.all(burners.map((b) => b.status));
    },
  };
}

const world = await makeWorld(10);
const env = { ...Deno.env.toObject(), SYMPOSIUM_HOME: world.home };
const serveArgs = [...sourceRunArgs(REPO), "mcp-serve"];
const noopArgs = ["run", ...sourceRunArgs(REPO).slice(1, -1), `${REPO}bench/_noop_server.ts`];
const beforeArgs = BEFORE === undefined ? undefined : [...sourceRunArgs(BEFORE), "mcp-serve"];
const figures: Figure[] = [];
const loadAtStart = loadAverage();
try {
  await timeStart(serveArgs, env, world.ws); // compile cache warm
  await timeStart(noopArgs, env, world.ws);
  if (beforeArgs) await timeStart(beforeArgs, env, world.ws);
  for (const busy of [false, true]) {
    const burners = busy ? startBurners() : undefined;
    const ours: Round[] = [];
    const floor: Round[] = [];
    const before: Round[] = [];
    try {
      for (let i = 0; i < ROUNDS; i++) {
        ours.push(await timeStart(serveArgs, env, world.ws));
        floor.push(await timeStart(noopArgs, env, world.ws));
        if (beforeArgs) before.push(await timeStart(beforeArgs, env, world.ws));
      }
    } finally {
      await burners?.stop();
    }
    const when = busy ? `every core busy (${navigator.hardwareConcurrency} CPU burners)` : "idle machine";
    const stats = (rounds: Round[], key: keyof Round): Stats => statsOf(rounds.map((r) => r[key]));
    for (const key of ["initializeMs", "toolsListMs"] as const) {
      const o = stats(ours, key);
      const f = stats(floor, key);
      figures.push({
        id: `${key === "initializeMs" ? "initialize" : "tools_list"}_${busy ? "busy" : "idle"}`,
        figure: `process start → ${key === "initializeMs" ? "initialize" : "tools/list"} answered, ${when}`,
        goal: key === "initializeMs" && busy ? `≤ ${GOAL_MS} ms` : "–",
        unit: "ms",
        floorLabel: "no-op SDK server, same flags",
        floor: f,
        ours: o,
        ratio: o.median / f.median,
        met: key === "initializeMs" && busy ? o.median <= GOAL_MS : true,
        ...(beforeArgs
          ? {
            notes: [`before (${BEFORE}): ${fmtStats(stats(before, key))} ms (min / median / max)`],
          }
          : {}),
      });
    }
  }
} finally {
  await world.remove();
}
await writeRoundsReport(figures, { out: OUT, rounds: ROUNDS, loadAtStart, repoDir: REPO });
for (const f of figures) for (const note of f.notes ?? []) console.log(`${f.figure}: ${note}`);
