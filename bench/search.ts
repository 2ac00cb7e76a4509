/**
 * `deno task bench` (second part): the catalog at scale (`docs/writing-scripts.md`, "Finding tools among many"), end to end through MCP stdio. 50
 * servers / 9,866 tools (`testdata/catalog/scale_corpus.ts`: the 15 real corpora plus 35 generated
 * distractors), each served by the fixture server (`--tools-file`, `--starts-file`), their tool lists
 * cached once by `cargo-agents mcp tools` runs; then fresh `mcp-serve` sessions answer from the cache:
 *
 * - `list_tools { query }` latency over the labelled queries (`testdata/catalog/queries.json`), median
 *   and p95, and recall@1 / recall@5 read from the answers the agent receives;
 * - the first `list_tools` of a fresh session (unfiltered, and a query sent at once), from the
 *   request and from process spawn, with the server's CPU time; and a first query sent as an agent
 *   would, 1 s after its `tools/list` (the index is built in the background meanwhile);
 * - RSS of the session with the catalog loaded (after a search) beside a one-server session;
 * - the unfiltered answer's size and the `execute` description's size;
 * - that no backing server started during any of it (the starts file does not grow).
 *
 * Prints a table and writes `bench/results/search.json`. `BENCH_QUICK=1` takes fewer samples;
 * `BENCH_OUT=path` writes the JSON elsewhere.
 *
 * @module
 */
import type { Client } from "@modelcontextprotocol/client";
import { sourceRunArgs } from "../lib/self_command.ts";
import { scaleCorpus } from "../testdata/catalog/scale_corpus.ts";
import { connectMetaServer, REPO, type World } from "./_world.ts";
import { type Figure, loadAverage, rssMiB, type Stats, statsOf, writeReport } from "./_perf_stats.ts";

const QUICK = Deno.env.get("BENCH_QUICK") === "1";
const OUT = Deno.env.get("BENCH_OUT") ?? `${REPO}bench/results/search.json`;
const N = QUICK ? { rounds: 2, fresh: 2 } : { rounds: 6, fresh: 5 };
const FIXTURE = `${REPO}testdata/servers/fixture.ts`;
const QUERIES = (JSON.parse(await Deno.readTextFile(`${REPO}testdata/catalog/queries.json`)) as {
  queries: { query: string; server: string; tool: string }[];
}).queries;

const log = (line: string) => console.error(line);
const bytes = (text: string) => new TextEncoder().encode(text).length;
const single = (value: number): Stats => ({ min: value, median: value, max: value, n: 1 });

/** The `p`-th percentile (nearest rank) of `samples`. */
function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** A home with one plugin per corpus server (fixture server over its tools file) and a workspace. */
async function makeScaleWorld(servers: ReturnType<typeof scaleCorpus>): Promise<World> {
  const root = await Deno.makeTempDir({ prefix: "cargo-agents-search-" });
  const home = `${root}/home`;
  const ws = `${root}/workspace`;
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.mkdir(`${root}/tools`, { recursive: true });
  await Deno.writeTextFile(
    `${ws}/Cargo.toml`,
    `[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nserde = "1"\n`,
  );
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  for (const { server, tools } of servers) {
    const toolsFile = `${root}/tools/${server}.json`;
    await Deno.writeTextFile(toolsFile, JSON.stringify({ tools }));
    const args = [
      "run",
      "-A",
      "--quiet",
      "--config",
      `${REPO}deno.json`,
      FIXTURE,
      `--name=${server}`,
      `--tools-file=${toolsFile}`,
      `--starts-file=${root}/starts`,
    ];
    await Deno.mkdir(`${home}/plugins/${server}`, { recursive: true });
    await Deno.writeTextFile(
      `${home}/plugins/${server}/SYMPOSIUM.toml`,
      `name = "${server}"\ndepends-on = "*"\n\n[[mcp_servers]]\nname = "${server}"\ncommand = ${
        JSON.stringify(Deno.execPath())
      }\nargs = ${JSON.stringify(args)}\n`,
    );
  }
  return { root, home, ws, data: root, todoFiles: [], remove: () => Deno.remove(root, { recursive: true }) };
}

/**
 * CPU time (user + system) process `pid` has used so far, in ms, from `/proc/<pid>/stat` (10 ms
 * resolution; read through `cat`, since Deno reads `/proc` only with `--allow-all`); `NaN` off Linux.
 * A figure the load of a shared machine barely changes.
 */
function cpuMs(pid: number): number {
  try {
    const out = new Deno.Command("cat", { args: [`/proc/${pid}/stat`], stdout: "piped", stderr: "null" })
      .outputSync();
    const fields = new TextDecoder().decode(out.stdout).split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in clock ticks (100 Hz)
  } catch {
    return NaN;
  }
}

function startsOf(world: World): number {
  try {
    return Deno.readTextFileSync(`${world.root}/starts`).split("\n").filter((l) => l !== "").length;
  } catch {
    return 0;
  }
}

/** Caches every server's tools: `cargo-agents mcp tools` over batches of 5 (each run starts and ends them). */
async function warmCache(world: World, names: string[]): Promise<void> {
  for (let i = 0; i < names.length; i += 5) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...sourceRunArgs(REPO), "mcp", "tools", ...names.slice(i, i + 5)],
      env: { ...Deno.env.toObject(), SYMPOSIUM_HOME: world.home },
      cwd: world.ws,
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(`mcp tools failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

async function listTools(client: Client, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name: "list_tools", arguments: args });
  return (result.content as { type: string; text: string }[])[0]!.text;
}

/** `[server global, wire name]` of each numbered result of a search answer, best first. */
function resultsOf(text: string): string[] {
  return [...text.matchAll(/^(\d+)\. ([^.\s]+)\.(\S+)/gm)].map((m) => `${m[2]}.${m[3]}`);
}

const loadAtStart = loadAverage();
log(`load average at start: ${loadAtStart.toFixed(2)}`);
const corpus = scaleCorpus();
const toolCount = corpus.reduce((n, s) => n + s.tools.length, 0);
const world = await makeScaleWorld(corpus);
const oneWorld = await makeScaleWorld(corpus.filter((s) => s.server === "github"));
const figures: Figure[] = [];
const checks: Record<string, unknown> = { servers: corpus.length, tools: toolCount, queries: QUERIES.length };
const closing: Promise<void>[] = [];
try {
  log(`caching ${corpus.length} servers / ${toolCount} tools (mcp tools in batches of 5)`);
  await warmCache(world, corpus.map((s) => s.server));
  await warmCache(oneWorld, ["github"]);
  const startsAfterWarmup = startsOf(world);
  checks.startsDuringWarmup = startsAfterWarmup;

  // --- fresh sessions: first answer from the cache ---
  log(`fresh sessions: first unfiltered list_tools and first query, ${N.fresh} each`);
  const firstIndex: number[] = [];
  const firstIndexFromSpawn: number[] = [];
  const firstQuery: number[] = [];
  const firstQueryFromSpawn: number[] = [];
  const cpu: Record<"index" | "query", number[]> = { index: [], query: [] };
  const afterThinking: number[] = [];
  let unfilteredBytes = 0;
  let executeDescriptionBytes = 0;
  for (let i = 0; i < N.fresh; i++) {
    for (const kind of ["index", "query"] as const) {
      const spawned = performance.now();
      const fresh = await connectMetaServer(world);
      const asked = performance.now();
      const cpuBefore = cpuMs(fresh.pid);
      const text = kind === "index"
        ? await listTools(fresh.client, {})
        : await listTools(fresh.client, { query: QUERIES[i % QUERIES.length]!.query });
      const answered = performance.now();
      cpu[kind].push(cpuMs(fresh.pid) - cpuBefore);
      (kind === "index" ? firstIndex : firstQuery).push(answered - asked);
      (kind === "index" ? firstIndexFromSpawn : firstQueryFromSpawn).push(answered - spawned);
      if (kind === "index") {
        unfilteredBytes = Math.max(unfilteredBytes, bytes(text));
        const tools = (await fresh.client.listTools()).tools;
        executeDescriptionBytes = bytes(tools.find((t) => t.name === "execute")!.description ?? "");
      }
      closing.push(fresh.client.close());
      await Promise.allSettled(closing.splice(0));
    }
    // As an agent does it: tools/list, a second of thought, then the first query.
    const agent = await connectMetaServer(world);
    await agent.client.listTools();
    await new Promise((r) => setTimeout(r, 1_000));
    const asked = performance.now();
    await listTools(agent.client, { query: QUERIES[(i + 7) % QUERIES.length]!.query });
    afterThinking.push(performance.now() - asked);
    closing.push(agent.client.close());
    await Promise.allSettled(closing.splice(0));
  }
  figures.push({
    id: "firstIndex",
    figure: "first `list_tools` (unfiltered) of a fresh session, request → answer",
    goal: "≤ 1,500 ms",
    unit: "ms",
    ours: statsOf(firstIndex),
    met: statsOf(firstIndex).median <= 1500,
    notes: [
      `spawn → answer: median ${statsOf(firstIndexFromSpawn).median.toFixed(0)} ms; server CPU for the ` +
      `request: median ${statsOf(cpu.index).median.toFixed(0)} ms`,
    ],
  });
  figures.push({
    id: "firstQuery",
    figure: "first `list_tools { query }` of a fresh session (index built), request → answer",
    goal: "≤ 1,500 ms",
    unit: "ms",
    ours: statsOf(firstQuery),
    met: statsOf(firstQuery).median <= 1500,
    notes: [
      `spawn → answer: median ${statsOf(firstQueryFromSpawn).median.toFixed(0)} ms; server CPU for the ` +
      `request: median ${statsOf(cpu.query).median.toFixed(0)} ms`,
    ],
  });
  figures.push({
    id: "firstQueryAfterList",
    figure: "first `list_tools { query }` 1 s after the agent's `tools/list` (index built meanwhile)",
    goal: "≤ 1,500 ms",
    unit: "ms",
    ours: statsOf(afterThinking),
    met: statsOf(afterThinking).median <= 1500,
  });
  figures.push({
    id: "unfilteredBytes",
    figure: "unfiltered `list_tools` answer, 50 servers / 9,866 tools",
    goal: "≤ 16,384 B",
    unit: "B",
    ours: single(unfilteredBytes),
    met: unfilteredBytes <= 16_384,
    notes: [`execute description: ${executeDescriptionBytes} bytes (goal ≤ 2,000)`],
  });
  checks.executeDescriptionBytes = executeDescriptionBytes;

  // --- memory: the loaded catalog beside a one-server session ---
  log("memory: one-server session and 50-server session, each after a search");
  const one = await connectMetaServer(oneWorld);
  await listTools(one.client, { query: "list issues" });
  const big = await connectMetaServer(world);
  await listTools(big.client, { query: "list issues" });
  await new Promise((r) => setTimeout(r, 2_000)); // let both settle (late GC) before reading
  const rssOne = rssMiB(one.pid);
  const rssBig = rssMiB(big.pid);
  closing.push(one.client.close());
  figures.push({
    id: "rssCatalog",
    figure: "RSS with the 50-server catalog loaded and indexed",
    goal: "≤ 60 MiB above a one-server session",
    unit: "MiB",
    floorLabel: "one-server session (github), same search",
    floor: single(rssOne),
    ours: single(rssBig),
    met: rssBig - rssOne <= 60,
    notes: [`difference ${(rssBig - rssOne).toFixed(1)} MiB`],
  });

  // --- search latency and recall, warm session ---
  log(`search: ${QUERIES.length} labelled queries × ${N.rounds} rounds over stdio`);
  const latency: number[] = [];
  let first = 0;
  let top5 = 0;
  const misses: string[] = [];
  for (let round = 0; round < N.rounds; round++) {
    for (const q of QUERIES) {
      const t0 = performance.now();
      const text = await listTools(big.client, { query: q.query });
      latency.push(performance.now() - t0);
      if (round > 0) continue;
      const rank = resultsOf(text).indexOf(`${q.server}.${q.tool}`);
      if (rank === 0) first++;
      if (rank >= 0 && rank < 5) top5++;
      else misses.push(`${q.query} → ${resultsOf(text).slice(0, 3).join(", ")}`);
    }
  }
  const scriptSearch: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t0 = performance.now();
    await big.client.callTool({
      name: "execute",
      arguments: {
        script: `return await symposium.search(${JSON.stringify(QUERIES[i]!.query)}, { limit: 5 })`,
      },
    });
    scriptSearch.push(performance.now() - t0);
  }
  closing.push(big.client.close());
  const lat = statsOf(latency);
  const p95 = percentile(latency, 95);
  figures.push({
    id: "searchMedian",
    figure: "`list_tools { query }` over stdio, 9,866 tools cached (median)",
    goal: "≤ 30 ms",
    unit: "ms",
    ours: lat,
    met: lat.median <= 30,
    notes: [`${latency.length} samples`],
  });
  figures.push({
    id: "searchP95",
    figure: "`list_tools { query }` over stdio (p95)",
    goal: "≤ 80 ms",
    unit: "ms",
    ours: single(p95),
    met: p95 <= 80,
  });
  figures.push({
    id: "recall1",
    figure: `recall@1 over ${QUERIES.length} labelled queries`,
    goal: "≥ 0.6",
    unit: "×",
    ours: single(first / QUERIES.length),
    met: first / QUERIES.length >= 0.6,
  });
  figures.push({
    id: "recall5",
    figure: `recall@5 over ${QUERIES.length} labelled queries`,
    goal: "≥ 0.9",
    unit: "×",
    ours: single(top5 / QUERIES.length),
    met: top5 / QUERIES.length >= 0.9,
    notes: misses.map((m) => `miss: ${m}`),
  });
  figures.push({
    id: "scriptSearch",
    figure: "`execute` of `symposium.search(…, { limit: 5 })`",
    goal: "(no goal)",
    unit: "ms",
    ours: statsOf(scriptSearch),
    met: true,
  });
  await Promise.allSettled(closing.splice(0));
  const startsAfter = startsOf(world) - startsAfterWarmup;
  checks.serversStartedByListTools = startsAfter;
  figures.push({
    id: "noStarts",
    figure: "backing servers started by any `list_tools` above",
    goal: "0",
    unit: "×",
    ours: single(startsAfter),
    met: startsAfter === 0,
  });
} finally {
  await Promise.allSettled(closing);
  await world.remove();
  await oneWorld.remove();
}

await writeReport(figures, checks, { loadAtStart, quick: QUICK, out: OUT, fullMachine: false });
