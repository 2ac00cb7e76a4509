/**
 * `deno task bench:floors`: the lowest any design with cargo-agents' sandbox properties (a separate,
 * killable process with no permissions, a fresh QuickJS context per script, reached over MCP stdio) can reach
 * on this machine, so that each goal of the isolated sandbox (`return 1` ≤ 0.85 ms, one echo ≤ 1.7 ms, net per
 * call ≤ 1.9× a direct client, process tree ≤ a direct client's + 36 MiB) is judged against a physical floor.
 * Measured in one run, interleaved round by round, beside the product itself:
 *
 * 1. **MCP hop**: `bench/_floor_server.ts` (the SDK's `McpServer` on the product's `LineStdioServerTransport`,
 *    run with `mcp-serve`'s flags) answering `execute` at once; and the same on the SDK's own stdio transport
 *    (the design of `bench/perf.ts`'s no-op floor) beside it;
 * 2. **process isolation**: the same server handing each `execute` to a long-lived child started as the
 *    sandbox is (`bench/_floor_guest.ts`), one frame each way: a bare child reading with async reads or
 *    `readSync`, and a child evaluating the script in a QuickJS context made ahead (fresh per script; and,
 *    for comparison, one context reused, which the isolation rules forbid); and, without MCP, one hand-over
 *    from this process to such a child and back;
 * 3. **one echo**: (2) plus one call from the child through the host to `server-everything` and back; and
 *    200 such calls in one run (net per call);
 * 4. **memory**: RSS and private memory (`smaps_rollup`) of a bare child and of a QuickJS child after the
 *    calls, of the hop floor's host after them, the process tree of the echo floor (host + child's private
 *    memory + backing server, counted as `bench/perf.ts` does), and the same tree for a Node SDK client
 *    calling the server directly (`bench/peers/direct.mjs`, the floor of `bench:peers`).
 *
 * Prints every series (min / median / max), the memory floors, and a table of each floor against the
 * goals and the product's figures; writes `bench/results/floors.json`.
 *
 * Environment: `BENCH_QUICK=1` takes fewer samples (development only); `BENCH_OUT=path` writes the JSON
 * elsewhere; `CARGO_AGENTS_PEERS_CACHE` as for `bench:peers` (where Node 22 is installed once).
 *
 * @module
 */
import type { Client } from "@modelcontextprotocol/client";
import {
  connectBenchServer,
  connectDirect,
  connectMetaServer,
  makeWorld,
  npmServer,
  REPO,
} from "./_world.ts";
import {
  describeMachine,
  interleaved,
  loadAverage,
  markdownTable,
  privateMiB,
  rssMiB,
  type Stats,
  statsOf,
} from "./_perf_stats.ts";
import { DriverProcess, type TreeMemory, treeMemory } from "./_peer_process.ts";
import { installPeer, NODE_22, peersCacheDir } from "./_peers_install.ts";
import { FLOOR_HEAP_LIMIT_BYTES, FloorContext, floorScript } from "./_floor_guest.ts";
import { FloorChild } from "./_floor_server.ts";
import { loadSandboxModule } from "../lib/sandbox/guest/wasm_module.ts";

const QUICK = Deno.env.get("BENCH_QUICK") === "1";
const OUT = Deno.env.get("BENCH_OUT") ?? `${REPO}bench/results/floors.json`;
const N = QUICK ? { fast: 60, seq: 3, memCalls: 200 } : { fast: 400, seq: 25, memCalls: 1_000 };

/**
 * The isolated sandbox's goals on this machine at load ≤ 1: `return 1` and one echo per `execute`, ms; net per
 * call as a multiple of a direct SDK client's; process tree RSS as a margin over a direct client's tree, MiB.
 */
const GOALS = { return1Ms: 0.85, echoMs: 1.7, perCallRatio: 1.9, treeMarginMiB: 36 };

/** Arguments of `bench/_floor_server.ts` for each floor, and what it shows. */
const FLOORS = {
  hop: { args: [], label: "MCP hop (Deno SDK server, LineStdioServerTransport)" },
  hopSdk: { args: ["--transport=sdk"], label: "MCP hop, SDK StdioServerTransport (perf.ts's no-op floor)" },
  childAsync: { args: ["--child", "--read=async"], label: "+ bare child, async reads" },
  childSync: { args: ["--child", "--read=sync"], label: "+ bare child, readSync" },
  quickjsAsync: { args: ["--child", "--read=async", "--quickjs=fresh"], label: "+ QuickJS fresh ctx, async" },
  quickjsSync: {
    args: ["--child", "--read=sync", "--quickjs=fresh"],
    label: "+ QuickJS fresh ctx, readSync",
  },
  quickjsReused: {
    args: ["--child", "--read=sync", "--quickjs=reused"],
    label: "+ QuickJS one ctx reused (forbidden)",
  },
  echoBare: { args: ["--child", "--read=sync", "--calls=1"], label: "bare child + 1 echo via host" },
  echoQuickjs: {
    args: ["--child", "--read=sync", "--quickjs=fresh", "--calls=1"],
    label: "QuickJS fresh ctx + 1 echo via host",
  },
  echoQuickjsLean: {
    args: ["--child", "--read=sync", "--quickjs=fresh", "--calls=1", "--client=product"],
    label: "QuickJS fresh ctx + 1 echo via host, product's client",
  },
  seqQuickjs: {
    args: ["--child", "--read=sync", "--quickjs=fresh", "--calls=200"],
    label: "QuickJS fresh ctx + 200 echoes via host",
  },
  seqQuickjsLean: {
    args: ["--child", "--read=sync", "--quickjs=fresh", "--calls=200", "--client=product"],
    label: "QuickJS fresh ctx + 200 echoes via host, product's client",
  },
} as const;
type FloorId = keyof typeof FLOORS;

/** What the floor child's command line holds (for its memory, as `sandboxMemory` finds the product's). */
const FLOOR_GUEST = /bench[/\\]_floor_guest\.ts/;

const ECHO = "return await everything.echo({ message: 'x' })";
const SEQ_200 =
  "let n = 0; for (let i = 0; i < 200; i++) { await everything.echo({ message: 'x' }); n++ } return n";

const log = (line: string) => console.error(line);

/** A connected MCP client and its server's process id. */
interface Session {
  client: Client;
  pid: number;
}

/**
 * Calls `execute` with `script` and checks the answer.
 *
 * @param expected The answer's text, when known (the floors'); the product's is only checked for `isError`.
 * @throws {Error} When the answer is an error or not `expected`.
 */
async function execute(session: Session, script: string, expected?: string): Promise<void> {
  const result = await session.client.callTool({ name: "execute", arguments: { script } });
  const text = (result.content as { type: string; text: string }[])[0]?.text;
  if (result.isError || (expected !== undefined && text !== expected)) {
    throw new Error(`execute answered ${JSON.stringify(result).slice(0, 300)}`);
  }
}

/** What a floor's `execute` answers: `1`, or the number of its echoes that came back right. */
function floorAnswer(id: FloorId): string {
  const calls = FLOORS[id].args.find((a) => a.startsWith("--calls="))?.slice("--calls=".length);
  return calls ?? "1";
}

/** Starts one floor server and checks it answers. */
async function connectFloor(id: FloorId): Promise<Session> {
  const session = await connectBenchServer("bench/_floor_server.ts", FLOORS[id].args);
  await execute(session, "return 1", floorAnswer(id));
  return session;
}

/** One echo straight to `server-everything`. */
async function directEcho(session: Session): Promise<void> {
  await session.client.callTool({ name: "echo", arguments: { message: "x" } });
}

/** Resident and private memory of one process, MiB. */
interface ProcessMemory {
  rssMiB: number;
  privateMiB: number;
}

/** RSS and private memory of process `pid`, MiB. */
function processMemory(pid: number): ProcessMemory {
  return { rssMiB: rssMiB(pid), privateMiB: privateMiB(pid) };
}

/** The floor child of server `pid` (its only child whose command line is `_floor_guest.ts`). */
function floorChildMemory(serverPid: number): ProcessMemory {
  const tree = treeMemory(serverPid, FLOOR_GUEST);
  return { rssMiB: tree.sandboxRssMiB, privateMiB: tree.sandboxMiB };
}

/** The floor processes' memory at one moment. */
interface FloorSnapshot {
  /** The bare child. */
  bareChild: ProcessMemory;
  /** The QuickJS child (module loaded, a fresh runtime + context per run). */
  quickjsChild: ProcessMemory;
  /** The hop floor's host (no child, no client). */
  hopHost: ProcessMemory;
  /** The echo floor's tree: host (with its SDK client) + QuickJS child's private memory + backing server. */
  echoTree: TreeMemory;
  /** The same with the product's own backend connection instead of the SDK client (`--client=product`). */
  echoTreeLean: TreeMemory;
}

/** The memory floors and the product's, read after {@link N}`.memCalls` calls on fresh processes. */
interface MemoryFloors {
  calls: number;
  /** The bare child and the QuickJS child (one runtime + context) right after their start. */
  bareChildIdle: ProcessMemory;
  quickjsChildIdle: ProcessMemory;
  /** The floors after the calls, and then after a full collection of every floor heap (host and child). */
  afterCalls: FloorSnapshot;
  afterGc: FloorSnapshot;
  /** The product's tree after as many one-echo executes. */
  productTree: TreeMemory;
  /** A Node SDK client calling the backing server directly: its tree, its own memory; or why it has none. */
  node: { tree: TreeMemory; client: ProcessMemory; version: string } | { unavailable: string };
}

/** Path of the `node` the backing server runs under (as `bench:peers` starts it). */
async function systemNode(): Promise<string> {
  const out = await new Deno.Command("sh", { args: ["-c", "command -v node"], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).trim() || "node";
}

/** The floor of `bench:peers`' memory: Node 22 running the direct SDK client driver after `calls` echoes. */
async function nodeClientMemory(calls: number): Promise<MemoryFloors["node"]> {
  let driver: DriverProcess | undefined;
  try {
    const nodeDir = await installPeer(NODE_22, peersCacheDir(Deno.env.toObject()));
    const node = `${nodeDir}/node_modules/node/bin/node`;
    const server = { command: await systemNode(), args: [npmServer("server-everything"), "stdio"] };
    driver = new DriverProcess(node, `${REPO}bench/peers/direct.mjs`, {
      PEER_SERVER: JSON.stringify(server),
    });
    await driver.first();
    await driver.request({ op: "loop", n: calls - 1 });
    const version = new TextDecoder().decode(
      new Deno.Command(node, { args: ["--version"], stdout: "piped" }).outputSync().stdout,
    ).trim();
    return { tree: treeMemory(driver.pid), client: processMemory(driver.pid), version };
  } catch (error) {
    return { unavailable: (error as Error).message.split("\n")[0]! };
  } finally {
    await driver?.close().catch(() => {}); // Best effort: the numbers are read.
  }
}

/** Fresh processes, `N.memCalls` calls each (interleaved), then their memory. */
async function measureMemory(product: () => Promise<Session>): Promise<MemoryFloors> {
  log(`memory: ${N.memCalls} calls on fresh floor servers and a fresh mcp-serve (one echo per execute)`);
  const hop = await connectFloor("hop");
  const bare = await connectFloor("childSync");
  const quickjs = await connectFloor("echoQuickjs");
  const lean = await connectFloor("echoQuickjsLean");
  const meta = await product();
  try {
    const bareChildIdle = floorChildMemory(bare.pid);
    const quickjsChildIdle = floorChildMemory(quickjs.pid);
    await interleaved(N.memCalls - 1, 0, {
      hop: () => execute(hop, "return 1", "1"),
      bare: () => execute(bare, "return 1", "1"),
      quickjs: () => execute(quickjs, "return 1", "1"),
      lean: () => execute(lean, "return 1", "1"),
      product: () => execute(meta, ECHO),
    });
    const snapshot = (): FloorSnapshot => ({
      bareChild: floorChildMemory(bare.pid),
      quickjsChild: floorChildMemory(quickjs.pid),
      hopHost: processMemory(hop.pid),
      echoTree: treeMemory(quickjs.pid, FLOOR_GUEST),
      echoTreeLean: treeMemory(lean.pid, FLOOR_GUEST),
    });
    const afterCalls = snapshot();
    const productTree = treeMemory(meta.pid);
    await Promise.all(
      [hop, bare, quickjs, lean].map((s) => s.client.callTool({ name: "gc", arguments: {} })),
    );
    const afterGc = snapshot();
    const node = await nodeClientMemory(N.memCalls);
    return { calls: N.memCalls, bareChildIdle, quickjsChildIdle, afterCalls, afterGc, productTree, node };
  } finally {
    await Promise.allSettled([hop, bare, quickjs, lean, meta].map((s) => s.client.close()));
  }
}

/** The timed series: each fast one's stats, and the raw samples of 200 sequential echoes, ms. */
interface Latency {
  fast: Record<string, Stats>;
  seq: Record<string, number[]>;
}

/** Every timed series: the floors, the SDK no-op server, a direct echo and the product. */
async function measureLatency(
  product: Session,
): Promise<Latency> {
  const ids = Object.keys(FLOORS) as FloorId[];
  const isSeq = (id: FloorId) => id.startsWith("seq");
  const floors = {} as Record<FloorId, Session>;
  for (const id of ids) floors[id] = await connectFloor(id);
  const direct = await connectDirect("server-everything", ["stdio"]);
  const noCalls = () => Promise.reject(new Error("a hand-over floor makes no tool call"));
  const handOvers = {
    handOver: new FloorChild(["--read=sync"], noCalls, () => {}),
    handOverQuickjs: new FloorChild(["--read=sync", "--quickjs=fresh"], noCalls, () => {}),
  };
  await Promise.all(Object.values(handOvers).map((child) => child.ready()));
  try {
    const series: Record<string, () => Promise<unknown>> = {
      direct: () => directEcho(direct),
      productReturn1: () => execute(product, "return 1"),
      productEcho: () => execute(product, ECHO),
    };
    for (const [id, child] of Object.entries(handOvers)) series[id] = () => child.run(0);
    for (const id of ids.filter((id) => !isSeq(id))) {
      series[id] = () => execute(floors[id], "return 1", floorAnswer(id));
    }
    log(`latency: ${N.fast} rounds of ${Object.keys(series).length} series, interleaved`);
    // Shuffled: each series follows every other alike (the product's after-work lands on all of them).
    const fast = await interleaved(N.fast, Math.ceil(N.fast / 10), series, undefined, "shuffle");
    log(`200 sequential echoes: ${N.seq} rounds of the floor, a direct client and the product`);
    const seq = await interleaved(
      N.seq,
      2,
      {
        ...Object.fromEntries(
          ids.filter(isSeq).map((id) => [id, () => execute(floors[id], "return 1", floorAnswer(id))]),
        ),
        direct: async () => {
          for (let i = 0; i < 200; i++) await directEcho(direct);
        },
        product: () => execute(product, SEQ_200),
      },
      undefined,
      "shuffle",
    );
    return { fast: Object.fromEntries(Object.entries(fast).map(([k, v]) => [k, statsOf(v)])), seq };
  } finally {
    const sessions = [...Object.values(floors), direct];
    await Promise.allSettled([
      ...sessions.map((s) => s.client.close()),
      ...Object.values(handOvers).map((child) => child.close()),
    ]);
  }
}

/** CPU of the QuickJS steps of one `execute` in a fresh context, in this process, ms per step. */
interface ContextCost {
  /** A runtime and context made (with `call` defined) and disposed. */
  makeMs: Stats;
  /** `1` evaluated in a context made ahead. */
  evaluateMs: Stats;
}

/**
 * Times, in this process, what a fresh context per script costs the sandbox's CPU: making and disposing a
 * runtime and context, and evaluating `1` in one made ahead ({@link N}`.fast` samples each).
 */
async function measureContextCost(): Promise<ContextCost> {
  const sandbox = await loadSandboxModule(FLOOR_HEAP_LIMIT_BYTES);
  const make: number[] = [];
  const evaluate: number[] = [];
  for (let i = 0; i < N.fast; i++) {
    let t0 = performance.now();
    const context = new FloorContext(sandbox, () => "Echo: x");
    make.push(performance.now() - t0);
    t0 = performance.now();
    context.evaluate(floorScript(0));
    evaluate.push(performance.now() - t0);
    t0 = performance.now();
    context.dispose();
    make[i]! += performance.now() - t0;
  }
  return { makeMs: statsOf(make), evaluateMs: statsOf(evaluate) };
}

/** One row of the goals table: a floor against a goal, beside the product. */
interface GoalRow {
  goal: string;
  floor: string;
  unit: "ms" | "MiB";
  /** The goal's bound in this run, in `unit`. */
  bound: number;
  floorStats: Stats;
  product?: Stats | undefined;
  /** What reaching the goal below this floor would give up. */
  givesUp: string;
}

/** The goals table's rows from the series and the memory floors of this run. */
function goalRows({ fast, seq }: Latency, memory: MemoryFloors): GoalRow[] {
  const r1 = (floor: string, stats: Stats, givesUp: string): GoalRow => ({
    goal: `\`return 1\` ≤ ${GOALS.return1Ms} ms`,
    floor,
    unit: "ms",
    bound: GOALS.return1Ms,
    floorStats: stats,
    product: fast.productReturn1,
    givesUp,
  });
  const echo = (floor: string, stats: Stats, givesUp: string): GoalRow => ({
    goal: `one echo ≤ ${GOALS.echoMs} ms`,
    floor,
    unit: "ms",
    bound: GOALS.echoMs,
    floorStats: stats,
    product: fast.productEcho,
    givesUp,
  });
  // Net per call as bench/perf.ts has it: (200 sequential echoes − the median `return 1`) / 200.
  const perCall = (samples: number[], fixedMs: number) => statsOf(samples.map((ms) => (ms - fixedMs) / 200));
  const directPerCall = perCall(seq.direct!, 0);
  const perCallRow = (floor: string, samples: number[]): GoalRow => ({
    goal: `net per call ≤ ${GOALS.perCallRatio}× direct (${
      (GOALS.perCallRatio * directPerCall.median).toFixed(3)
    } ms)`,
    floor,
    unit: "ms",
    bound: GOALS.perCallRatio * directPerCall.median,
    floorStats: perCall(samples, fast.quickjsSync!.median),
    product: perCall(seq.product!, fast.productReturn1!.median),
    givesUp: "the separate process (a call crosses it twice)",
  });
  const rows: GoalRow[] = [
    r1(FLOORS.hop.label, fast.hop!, "MCP over stdio on Deno itself (no sandbox property)"),
    r1(FLOORS.hopSdk.label, fast.hopSdk!, "MCP over stdio on Deno itself (no sandbox property)"),
    r1(FLOORS.childSync.label, fast.childSync!, "the separate process (hard stop, no permissions)"),
    r1(FLOORS.quickjsSync.label, fast.quickjsSync!, "the separate process or a fresh context per script"),
    echo("direct SDK client → server-everything", fast.direct!, "the meta-server hop itself"),
    echo(FLOORS.echoBare.label, fast.echoBare!, "the separate process (hard stop, no permissions)"),
    echo(FLOORS.echoQuickjs.label, fast.echoQuickjs!, "the separate process or a fresh context per script"),
    echo(
      FLOORS.echoQuickjsLean.label,
      fast.echoQuickjsLean!,
      "the separate process or a fresh context per script",
    ),
    perCallRow(FLOORS.seqQuickjs.label, seq.seqQuickjs!),
    perCallRow(FLOORS.seqQuickjsLean.label, seq.seqQuickjsLean!),
  ];
  if ("tree" in memory.node) rows.push(...treeRows(memory, memory.node.tree));
  return rows;
}

/**
 * The tree goal against the leaner of the two echo floors: as the bench counts it, and without the backing
 * server (the same program under both, whose RSS varies by several MiB from one instance to the next).
 */
function treeRows(memory: MemoryFloors, nodeTree: TreeMemory): GoalRow[] {
  const { echoTree, echoTreeLean } = memory.afterGc;
  const floor = echoTreeLean.totalMiB < echoTree.totalMiB ? echoTreeLean : echoTree;
  const client = `${floor === echoTree ? "SDK client" : "product's client"}, after GC`;
  const one = (v: number): Stats => ({ min: v, median: v, max: v, n: 1 });
  const withoutServer = (t: TreeMemory) => t.hostMiB + t.sandboxMiB;
  const row = {
    unit: "MiB" as const,
    givesUp: "the second runtime (the separate process)",
  };
  return [
    {
      ...row,
      goal: `tree ≤ Node client tree + ${GOALS.treeMarginMiB} MiB`,
      floor: `Deno host (${client}) + QuickJS child private + server`,
      bound: nodeTree.totalMiB + GOALS.treeMarginMiB,
      floorStats: one(floor.totalMiB),
      product: one(memory.productTree.totalMiB),
    },
    {
      ...row,
      goal: `the same, backing server left out`,
      floor: `Deno host (${client}) + QuickJS child private`,
      bound: nodeTree.hostMiB + GOALS.treeMarginMiB,
      floorStats: one(withoutServer(floor)),
      product: one(withoutServer(memory.productTree)),
    },
  ];
}

function num(value: number, unit: "ms" | "MiB"): string {
  return value.toFixed(unit === "MiB" ? 1 : value < 1 ? 3 : 2);
}

/** Whether cargo-agents' median meets the row's goal: "yes", "no (+X over)", or "–" without a figure. */
function productMet(row: GoalRow): string {
  if (!row.product) return "–";
  const over = row.product.median - row.bound;
  return over <= 0 ? "yes" : `no (+${num(over, row.unit)} ${row.unit})`;
}

/**
 * The goals table: each floor's min / median, the room it leaves under the goal, the product and whether it
 * meets the goal, and the floor's verdict.
 */
function renderGoals(rows: readonly GoalRow[]): string {
  return markdownTable([
    ["goal", "floor", "floor min / median", "goal − floor median", "cargo-agents median", "met", "verdict"],
    ...rows.map((row) => {
      const room = row.bound - row.floorStats.median;
      const verdict = room >= 0
        ? "reachable at the floor"
        : row.floorStats.min <= row.bound
        ? `only the floor's best samples reach it; else give up ${row.givesUp}`
        : `unreachable without giving up ${row.givesUp}`;
      return [
        row.goal,
        row.floor,
        row.floorStats.n === 1
          ? `${num(row.floorStats.median, row.unit)} ${row.unit}`
          : `${num(row.floorStats.min, row.unit)} / ${num(row.floorStats.median, row.unit)} ${row.unit}`,
        `${room >= 0 ? "+" : ""}${num(room, row.unit)} ${row.unit}`,
        row.product ? `${num(row.product.median, row.unit)} ${row.unit}` : "–",
        productMet(row),
        verdict,
      ];
    }),
  ]);
}

/** Every series as min / median / max. */
function renderSeries({ fast, seq }: Latency): string {
  const labels: Record<string, string> = {
    direct: "direct SDK client → server-everything echo",
    productReturn1: "cargo-agents `return 1`",
    productEcho: "cargo-agents one echo",
    handOver: "one hand-over, this process → bare child → back (a frame each way, no MCP)",
    handOverQuickjs: "one hand-over to a QuickJS child (fresh ctx) and back, no MCP",
    ...Object.fromEntries(Object.entries(FLOORS).map(([id, f]) => [id, f.label])),
  };
  const line = (name: string, s: Stats) => [
    name,
    `${num(s.min, "ms")} / ${num(s.median, "ms")} / ${num(s.max, "ms")}`,
    String(s.n),
  ];
  return markdownTable([
    ["series (ms per execute or call)", "min / median / max", "n"],
    ...Object.entries(fast).map(([id, s]) => line(labels[id] ?? id, s)),
    ...Object.entries(seq).map(([id, s]) => line(`200 sequential echoes: ${labels[id] ?? id}`, statsOf(s))),
  ]);
}

/** The memory floors as a table. */
function renderMemory(memory: MemoryFloors): string {
  const mem = (m: ProcessMemory) => `${m.rssMiB.toFixed(1)} / ${m.privateMiB.toFixed(1)}`;
  const tree = (t: TreeMemory) =>
    `${t.totalMiB.toFixed(1)} (host ${t.hostMiB.toFixed(1)} + child private ${t.sandboxMiB.toFixed(1)} + ` +
    `server ${t.othersMiB.toFixed(1)})`;
  const after = `after ${memory.calls.toLocaleString("en")} calls`;
  const { afterCalls: calls, afterGc: gc } = memory;
  const rows = [
    ["process: RSS / private (MiB)", "idle after start", after, "then after a full GC"],
    ["(a) bare `deno run` child", mem(memory.bareChildIdle), mem(calls.bareChild), mem(gc.bareChild)],
    [
      "(b) QuickJS child (a fresh runtime + context per run)",
      mem(memory.quickjsChildIdle),
      mem(calls.quickjsChild),
      mem(gc.quickjsChild),
    ],
    ["(c) hop floor host (Deno MCP server)", "–", mem(calls.hopHost), mem(gc.hopHost)],
    [
      "echo floor host (+ SDK client), RSS",
      "–",
      calls.echoTree.hostMiB.toFixed(1),
      gc.echoTree.hostMiB.toFixed(1),
    ],
    [
      "echo floor host (+ product's client), RSS",
      "–",
      calls.echoTreeLean.hostMiB.toFixed(1),
      gc.echoTreeLean.hostMiB.toFixed(1),
    ],
  ];
  if ("tree" in memory.node) {
    rows.push([`Node ${memory.node.version} SDK client`, "–", mem(memory.node.client), "–"]);
  }
  const lines = [
    markdownTable(rows),
    `- echo floor tree ${after}: ${tree(calls.echoTree)}; after GC ${tree(gc.echoTree)} MiB`,
    `- the same with the product's backend client: ${tree(calls.echoTreeLean)}; after GC ${
      tree(gc.echoTreeLean)
    } MiB`,
    `- cargo-agents tree ${after}: ${tree(memory.productTree)} MiB`,
    "tree" in memory.node
      ? `- Node SDK client tree (bench:peers' floor) ${after}: ${tree(memory.node.tree)} MiB`
      : `- Node SDK client: unavailable (${memory.node.unavailable})`,
  ];
  return lines.join("\n");
}

const load: Record<string, number> = { start: loadAverage() };
log(`load average at start: ${load.start!.toFixed(2)}`);
const world = await makeWorld(1);
let memory: MemoryFloors;
let latency: Latency;
try {
  memory = await measureMemory(() => connectMetaServer(world));
  load.afterMemory = loadAverage();
  log(`load average: ${load.afterMemory.toFixed(2)}`);
  const product = await connectMetaServer(world);
  try {
    await execute(product, ECHO);
    latency = await measureLatency(product);
  } finally {
    await product.client.close();
  }
} finally {
  await world.remove();
}
log("QuickJS in this process: a fresh runtime + context, and evaluating `1`");
const contextCost = await measureContextCost();
load.end = loadAverage();
const rows = goalRows(latency, memory);
const machine = describeMachine();
console.log(renderSeries(latency));
console.log();
console.log(renderMemory(memory));
console.log();
console.log(renderGoals(rows));
const statsText = (s: Stats) => `${num(s.min, "ms")} / ${num(s.median, "ms")} / ${num(s.max, "ms")} ms`;
console.log(
  `- a fresh QuickJS runtime + context (made and disposed, in this process): ${
    statsText(contextCost.makeMs)
  }; ` +
    `evaluating \`1\` in one made ahead: ${statsText(contextCost.evaluateMs)} (min / median / max)`,
);
console.log(
  `\n${new Date().toISOString()} · ${machine.cpu}, ${machine.cores} cores · Deno ${machine.deno} · load ` +
    `${load.start!.toFixed(2)} → ${load.afterMemory!.toFixed(2)} → ${load.end.toFixed(2)}` +
    (QUICK ? " · QUICK (fewer samples)" : ""),
);
await Deno.mkdir(OUT.slice(0, OUT.lastIndexOf("/")), { recursive: true });
const report = {
  date: new Date().toISOString(),
  machine,
  loadAverage: load,
  quick: QUICK,
  rounds: N,
  fast: latency.fast,
  seq: Object.fromEntries(Object.entries(latency.seq).map(([k, v]) => [k, statsOf(v)])),
  memory,
  contextCost,
  goals: rows.map((row) => ({ ...row, met: productMet(row) })),
};
await Deno.writeTextFile(OUT, JSON.stringify(report, null, 2) + "\n");
console.log(`written: ${OUT}`);
