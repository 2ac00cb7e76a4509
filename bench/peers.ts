/**
 * `deno task bench:peers`: cargo-agents side by side with other code-mode systems, in one run, on
 * `@modelcontextprotocol/server-everything` over stdio, the side-by-side figures:
 *
 * - **floor**: the official MCP SDK client calling the server directly (`bench/peers/direct.mjs`);
 * - **mcp-use** 1.34.6, code mode in `node:vm` (no isolation; `bench/peers/mcp_use.mjs`);
 * - **UTCP** code mode 1.2.12, `isolated-vm` (`bench/peers/utcp.mjs`);
 * - **cargo-agents** end to end through MCP stdio, started with the flags of its `serve` task.
 *
 * The peers are installed from npm into a cache outside the repository (`bench/_peers_install.ts`) and run
 * under Node 22 by their driver scripts, which time the work in process and report over stdout JSON lines;
 * cargo-agents is timed from this process, as an agent sees it. Every host's backing server is the same
 * `node …/server-everything/dist/index.js stdio`. Series are interleaved round by round, so load hits every
 * system alike. Definitions are `bench/perf.ts`'s: net per call = (200 sequential echoes in one execute −
 * the median `return 1`) / 200; process tree = host RSS + sandbox private memory + the backing server's RSS.
 * A peer that cannot be installed or started is reported as such, with the reason, and has no numbers.
 * Prints a Markdown table of medians (ratio to the floor) and writes `bench/results/peers.json`.
 *
 * Environment: `BENCH_QUICK=1` takes fewer samples (development only); `BENCH_OUT=path` writes the JSON
 * elsewhere; `CARGO_AGENTS_PEERS_CACHE` moves the install cache.
 *
 * @module
 */
import type { Client } from "@modelcontextprotocol/client";
import { connectMetaServer, npmServer, REPO, type World } from "./_world.ts";
import { describeMachine, loadAverage, markdownTable, type Stats, statsOf } from "./_perf_stats.ts";
import { DriverProcess, type RunKind, type TreeMemory, treeMemory } from "./_peer_process.ts";
import { installPeer, MCP_USE, NODE_22, peersCacheDir, UTCP_CODE_MODE } from "./_peers_install.ts";

const QUICK = Deno.env.get("BENCH_QUICK") === "1";
const OUT = Deno.env.get("BENCH_OUT") ?? `${REPO}bench/results/peers.json`;
const N = QUICK ? { fast: 40, seq: 3, cold: 2, rss: 200 } : { fast: 300, seq: 15, cold: 7, rss: 1_000 };
const KINDS: readonly RunKind[] = ["return1", "echo", "seq200"];

const SCRIPTS: Record<RunKind, string> = {
  return1: "return 1",
  echo: "return await everything.echo({ message: 'x' })",
  seq200: "let n = 0; for (let i = 0; i < 200; i++) { if ((await everything.echo({ message: 'x' })) " +
    "=== 'Echo: x') n++ } return n",
};
/** What each script returns (cargo-agents' `execute` answers `{"result": …}`). */
const EXPECTED: Record<RunKind, unknown> = { return1: 1, echo: "Echo: x", seq200: 200 };

const log = (line: string) => console.error(line);

/** A started host: timed work on it, its process id, and how to end it. */
interface Session {
  pid: number;
  /** ms from spawn to the first echo result. */
  firstMs: number;
  /** Times one run of `kind`, ms. */
  run(kind: RunKind): Promise<number>;
  /** Runs `n` one-echo executes back to back. */
  loop(n: number): Promise<void>;
  close(): Promise<void>;
}

/** One column of the table. */
interface System {
  id: "floor" | "mcpUse" | "utcp" | "cargoAgents";
  label: string;
  /** Run kinds it has (the floor has no script, so no `return1`). */
  kinds: readonly RunKind[];
  start(): Promise<Session>;
  /** Why it has no numbers, once it failed. */
  unavailable?: string;
  /** Failed attempts it recovered from (the memory run is tried twice), each with its reason. */
  retried: string[];
}

async function systemNode(): Promise<string> {
  const out = await new Deno.Command("sh", { args: ["-c", "command -v node"], stdout: "piped" }).output();
  const path = new TextDecoder().decode(out.stdout).trim();
  if (!out.success || !path) throw new Error("`node` is not on PATH: the backing server runs under it");
  return path;
}

/** A throwaway `SYMPOSIUM_HOME` with one plugin, `everything`, and a workspace for `mcp-serve` to run in. */
async function makeEverythingWorld(node: string): Promise<World> {
  const root = await Deno.makeTempDir({ prefix: "cargo-agents-peers-" });
  const [home, ws] = [`${root}/home`, `${root}/workspace`];
  await Deno.mkdir(`${home}/plugins/everything`, { recursive: true });
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.writeTextFile(
    `${ws}/Cargo.toml`,
    `[package]\nname = "peers"\nversion = "0.1.0"\nedition = "2021"\n`,
  );
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  await Deno.writeTextFile(`${home}/config.toml`, `[mcp]\nmax-tool-calls = 2000\n`);
  await Deno.writeTextFile(
    `${home}/plugins/everything/SYMPOSIUM.toml`,
    `name = "everything"\ndepends-on = "*"\n\n[[mcp_servers]]\nname = "everything"\ncommand = ${
      JSON.stringify(node)
    }\nargs = ${JSON.stringify([npmServer("server-everything"), "stdio"])}\n`,
  );
  return {
    root,
    home,
    ws,
    data: ws,
    todoFiles: [],
    remove: () => Deno.remove(root, { recursive: true }),
  };
}

async function execute(client: Client, kind: RunKind): Promise<void> {
  const result = await client.callTool({ name: "execute", arguments: { script: SCRIPTS[kind] } });
  const text = (result.content as { type: string; text: string }[])[0]?.text ?? "";
  let value: unknown;
  try {
    value = (JSON.parse(text) as { result?: unknown }).result;
  } catch {
    value = undefined; // Not JSON: reported below with the text.
  }
  if (result.isError || value !== EXPECTED[kind]) {
    throw new Error(`cargo-agents execute of ${kind} answered ${text.slice(0, 300)}`);
  }
}

function cargoAgents(world: World): System {
  return {
    id: "cargoAgents",
    label: "cargo-agents",
    retried: [],
    kinds: KINDS,
    start: async () => {
      const t0 = performance.now();
      const { client, pid } = await connectMetaServer(world);
      await execute(client, "echo");
      const firstMs = performance.now() - t0;
      return {
        pid,
        firstMs,
        run: async (kind) => {
          const t = performance.now();
          await execute(client, kind);
          return performance.now() - t;
        },
        loop: async (n) => {
          for (let i = 0; i < n; i++) await execute(client, "echo");
        },
        close: () => client.close(),
      };
    },
  };
}

function driven(
  id: System["id"],
  label: string,
  script: string,
  env: Record<string, string>,
  node: string,
): System {
  return {
    id,
    label,
    retried: [],
    kinds: id === "floor" ? ["echo", "seq200"] : KINDS,
    start: async () => {
      const driver = new DriverProcess(node, `${REPO}bench/peers/${script}`, env);
      const firstMs = await driver.first().catch(async (error) => {
        await driver.close();
        throw error;
      });
      return {
        pid: driver.pid,
        firstMs,
        run: (kind) => driver.request({ op: "run", kind }),
        loop: async (n) => void await driver.request({ op: "loop", n }),
        close: () => driver.close(),
      };
    },
  };
}

/** Installs the peers (once) and lists the four systems; a peer that fails to install is marked. */
async function makeSystems(world: World, backingNode: string): Promise<{ systems: System[]; node: string }> {
  const cache = peersCacheDir(Deno.env.toObject());
  log(`installing the peers (once) under ${cache}`);
  const nodeDir = await installPeer(NODE_22, cache);
  const node = `${nodeDir}/node_modules/node/bin/node`;
  const nodeBin = `${nodeDir}/node_modules/node/bin`;
  const server = JSON.stringify({ command: backingNode, args: [npmServer("server-everything"), "stdio"] });
  const peer = async (id: System["id"], label: string, script: string, install?: typeof MCP_USE) => {
    const env: Record<string, string> = { PEER_SERVER: server, MCP_USE_ANONYMIZED_TELEMETRY: "false" };
    const system = driven(id, label, script, env, node);
    if (!install) return system;
    try {
      env.PEER_PREFIX = await installPeer(install, cache, nodeBin);
    } catch (error) {
      system.unavailable = `cannot be installed: ${(error as Error).message}`;
    }
    return system;
  };
  const systems = [
    await peer("floor", "direct SDK client (floor)", "direct.mjs"),
    await peer("mcpUse", "mcp-use 1.34.6 (node:vm, no isolation)", "mcp_use.mjs", MCP_USE),
    await peer("utcp", "UTCP code mode 1.2.12 (isolated-vm)", "utcp.mjs", UTCP_CODE_MODE),
    cargoAgents(world),
  ];
  return { systems, node };
}

/** Marks `system` unavailable with the reason, once; the run goes on without it. */
function fail(system: System, phase: string, error: unknown): void {
  system.unavailable ??= `failed during ${phase}: ${(error as Error).message?.split("\n")[0]}`;
  log(`  ${system.label}: ${system.unavailable}`);
}

const available = (systems: System[]) => systems.filter((s) => !s.unavailable);

/** `rounds` rounds, each timing `sample(system)` once per system in a rotating order; the first `warmup` dropped. */
async function interleaved(
  systems: System[],
  rounds: number,
  warmup: number,
  sample: (system: System) => Promise<number | undefined>,
  phase: string,
): Promise<Map<System, number[]>> {
  const out = new Map(systems.map((s) => [s, [] as number[]]));
  for (let round = 0; round < warmup + rounds; round++) {
    for (let i = 0; i < systems.length; i++) {
      const system = systems[(round + i) % systems.length]!;
      if (system.unavailable) continue;
      try {
        const ms = await sample(system);
        if (ms !== undefined && round >= warmup) out.get(system)!.push(ms);
      } catch (error) {
        fail(system, phase, error);
      }
    }
  }
  return out;
}

/** Spawn → first echo result, each sample a fresh host (closed before the next sample starts). */
function coldStarts(systems: System[]): Promise<Map<System, number[]>> {
  log(`spawn → first echo result: ${N.cold} rounds (+1 warm-up), a fresh host each`);
  return interleaved(available(systems), N.cold, 1, async (system) => {
    const session = await system.start();
    await session.close();
    await new Promise((r) => setTimeout(r, 300));
    return session.firstMs;
  }, "cold start");
}

/** Starts a warm session on `system`, runs `N.rss` one-echo executes on it and reads its process tree. */
async function memoryRun(system: System): Promise<{ session: Session; memory: TreeMemory }> {
  const session = await system.start();
  try {
    await session.loop(N.rss - 1); // The first echo was the first of them.
    return { session, memory: treeMemory(session.pid) };
  } catch (error) {
    await session.close().catch(() => {}); // Best effort: the failure is what the report says.
    throw error;
  }
}

/**
 * One warm session per system after its memory run; a system whose memory run fails twice is marked
 * unavailable, a first failure is kept in `retried`.
 */
async function warmSessions(
  systems: System[],
): Promise<Map<System, { session: Session; memory: TreeMemory }>> {
  log(`memory: ${N.rss} executes of one echo each on a fresh host per system, then its process tree`);
  const out = new Map<System, { session: Session; memory: TreeMemory }>();
  for (const system of available(systems)) {
    for (let attempt = 1; attempt <= 2 && !out.has(system); attempt++) {
      try {
        out.set(system, await memoryRun(system));
      } catch (error) {
        if (attempt === 2) fail(system, "the memory run", error);
        else {
          system.retried.push(`memory run: ${(error as Error).message.split("\n")[0]}`);
          log(`  ${system.label}: the memory run failed, once more: ${system.retried.at(-1)}`);
        }
      }
    }
  }
  return out;
}

/** One row of the table: each system's figure (absent where it has none), in `unit`. */
interface Row {
  id: string;
  figure: string;
  unit: "ms" | "MiB";
  values: Partial<Record<System["id"], Stats>>;
}

const single = (value: number): Stats => ({ min: value, median: value, max: value, n: 1 });

function row(id: string, figure: string, unit: Row["unit"], entries: [System, Stats | undefined][]): Row {
  const values: Row["values"] = {};
  for (const [system, stats] of entries) {
    if (stats && stats.n > 0 && !system.unavailable) values[system.id] = stats;
  }
  return { id, figure, unit, values };
}

function cell(row: Row, system: System): string {
  const stats = row.values[system.id];
  if (!stats) return system.unavailable ? "n/a" : "–";
  const digits = row.unit === "MiB" ? 1 : stats.median >= 100 ? 0 : stats.median >= 10 ? 1 : 2;
  const floor = row.values.floor;
  const ratio = floor && system.id !== "floor" ? ` (${(stats.median / floor.median).toFixed(2)}×)` : "";
  return `${stats.median.toFixed(row.id === "seq200" ? 3 : digits)} ${row.unit}${ratio}`;
}

function renderTable(rows: Row[], systems: System[]): string {
  const lines = [
    ["figure (median)", ...systems.map((s) => s.label)],
    ...rows.map((r) => [
      r.figure,
      ...systems.map((s) => cell(r, s)),
    ]),
  ];
  return markdownTable(lines);
}

async function measure(systems: System[]): Promise<{ rows: Row[]; memory: Record<string, TreeMemory> }> {
  const warm = await warmSessions(systems);
  const withSession = (kind: RunKind) => async (system: System) => {
    const session = warm.get(system)?.session;
    return session && system.kinds.includes(kind) ? await session.run(kind) : undefined;
  };
  log(`latency: ${N.fast} rounds of return 1 and one echo per execute`);
  const return1 = await interleaved(
    available(systems),
    N.fast,
    Math.ceil(N.fast / 10),
    withSession("return1"),
    "return 1",
  );
  const echo = await interleaved(
    available(systems),
    N.fast,
    Math.ceil(N.fast / 10),
    withSession("echo"),
    "echo",
  );
  log(`200 sequential echoes in one execute: ${N.seq} rounds`);
  const seq = await interleaved(available(systems), N.seq, 2, withSession("seq200"), "200 sequential calls");
  await Promise.allSettled([...warm.values()].map(({ session }) => session.close()));
  const cold = await coldStarts(systems);
  const netPerCall = (system: System): Stats | undefined => {
    const samples = seq.get(system) ?? [];
    if (system.id === "floor") return statsOf(samples.map((ms) => ms / 200));
    const fixed = statsOf(return1.get(system) ?? []).median;
    return statsOf(samples.map((ms) => (ms - fixed) / 200));
  };
  const mem = (system: System, pick: (m: TreeMemory) => number) => {
    const m = warm.get(system)?.memory;
    return m ? single(pick(m)) : undefined;
  };
  const after = `after ${N.rss.toLocaleString("en")} executes`;
  const rows = [
    row("return1", "`execute` of `return 1`", "ms", systems.map((s) => [s, statsOf(return1.get(s) ?? [])])),
    row("echo", "one echo per execute", "ms", systems.map((s) => [s, statsOf(echo.get(s) ?? [])])),
    row("seq200", "net per call, 200 sequential calls", "ms", systems.map((s) => [s, netPerCall(s)])),
    row(
      "treeRss",
      `process tree RSS ${after} (host + sandbox + backing server)`,
      "MiB",
      systems.map((s) => [s, mem(s, (m) => m.totalMiB)]),
    ),
    row("cold", "spawn → first echo result", "ms", systems.map((s) => [s, statsOf(cold.get(s) ?? [])])),
    row("hostRss", `host RSS ${after}`, "MiB", systems.map((s) => [s, mem(s, (m) => m.hostMiB)])),
  ];
  const memory = Object.fromEntries([...warm].map(([system, { memory }]) => [system.id, memory]));
  return { rows, memory };
}

const loadAtStart = loadAverage();
log(
  `load average at start: ${loadAtStart.toFixed(2)}${
    loadAtStart > 0.7 ? " (busy machine: figures may be high)" : ""
  }`,
);
const backingNode = await systemNode();
const world = await makeEverythingWorld(backingNode);
let result: { rows: Row[]; memory: Record<string, TreeMemory> };
let systems: System[];
let driverNode: string;
try {
  ({ systems, node: driverNode } = await makeSystems(world, backingNode));
  result = await measure(systems);
} finally {
  await world.remove();
}
const loadAtEnd = loadAverage();
const machine = describeMachine();
const versions = {
  driverNode: new TextDecoder().decode(
    new Deno.Command(driverNode, { args: ["--version"], stdout: "piped" }).outputSync().stdout,
  ).trim(),
  backingNode: `${machine.node} (${backingNode})`,
  serverEverything: JSON.parse(
    await Deno.readTextFile(`${REPO}node_modules/@modelcontextprotocol/server-everything/package.json`),
  ).version as string,
  peers: { mcpUse: MCP_USE.packages, utcp: UTCP_CODE_MODE.packages },
};
console.log(renderTable(result.rows, systems));
for (const system of systems) {
  if (system.unavailable) console.log(`- ${system.label}: ${system.unavailable}`);
  for (const failure of system.retried) console.log(`- ${system.label}: retried after a failed ${failure}`);
}
for (const [id, m] of Object.entries(result.memory)) {
  console.log(
    `- ${id} memory: host ${m.hostMiB.toFixed(1)} + sandbox private ${m.sandboxMiB.toFixed(1)} (RSS ` +
      `${m.sandboxRssMiB.toFixed(1)}) + others ${m.othersMiB.toFixed(1)} MiB (${m.others.length} ` +
      `process${m.others.length === 1 ? "" : "es"} under the host)`,
  );
}
console.log(
  `\n${new Date().toISOString().slice(0, 10)} · ${machine.cpu}, ${machine.cores} cores · drivers on node ` +
    `${versions.driverNode}, server-everything on node ${machine.node} · load ${loadAtStart.toFixed(2)} → ` +
    `${loadAtEnd.toFixed(2)}${QUICK ? " · QUICK (fewer samples)" : ""}`,
);
await Deno.mkdir(OUT.slice(0, OUT.lastIndexOf("/")), { recursive: true });
const report = {
  date: new Date().toISOString(),
  machine,
  versions,
  loadAverage: { start: loadAtStart, end: loadAtEnd },
  quick: QUICK,
  rounds: N,
  systems: systems.map((s) => ({
    id: s.id,
    label: s.label,
    ...(s.unavailable ? { unavailable: s.unavailable } : {}),
    retried: s.retried,
  })),
  figures: result.rows,
  memory: result.memory,
};
await Deno.writeTextFile(OUT, JSON.stringify(report, null, 2) + "\n");
console.log(`written: ${OUT}`);
