/**
 * `deno task test:conformance`: the official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * run under Deno: it needs Node 22's `fs.globSync`) against cargo-agents, on loopback only, twice:
 *
 * 1. 0.1.16, the 2025-11-25 era (the `initialize` handshake):
 *    - server side: `mcp-serve` (stdio) behind `supergateway --stateful` (streamable HTTP on 127.0.0.1),
 *      every server scenario (`--suite all`);
 *    - client side: every client scenario, one at a time (`MAX_PARALLEL_CLIENT_SCENARIOS` at once: each
 *      starts several Deno processes, and the suite's own `--suite` runs all 26 at once, too many for a
 *      2-core machine), with `client.ts` as the client (the real `mcp tools` / `mcp exec` / `mcp login`).
 *    `baseline.yml` lists the scenarios that cannot apply.
 * 2. 0.2.0-alpha.12 with `--requirements 2026-07-28` (the modern, stateless era):
 *    - server side: `mcp-serve` behind `modern_bridge.ts` (the modern Streamable HTTP binding on
 *      127.0.0.1; `supergateway` speaks only the 2025 sessions), the suite judging against
 *      `baseline-2026-07-28.yml` (whole scenarios or single checks);
 *    - client side: each client scenario the revision requires, as in 1., at `--spec-version 2026-07-28`.
 *
 * A baseline lists the scenarios that cannot apply, with the reason each; any other failure, or a listed
 * scenario that passes, fails the run (exit 1). Prints one line per scenario and the counts.
 * `--only=0.1.16` or `--only=2026-07-28` runs one of the two; `--side=server` or `--side=client` one side.
 *
 * @module
 */
import { parse } from "yaml";
import { sourceRunArgs } from "../lib/self_command.ts";
import { startModernBridge } from "./modern_bridge.ts";

const REPO = new URL("../", import.meta.url).pathname;
/** The suite at `version`, by its exact path (the two versions share one package name). */
const suitePath = (version: string) =>
  `${REPO}node_modules/.deno/@modelcontextprotocol+conformance@${version}/node_modules/@modelcontextprotocol/conformance/dist/index.js`;
const SUITE = suitePath("0.1.16");
const SUITE_NEXT = suitePath("0.2.0-alpha.12");
/** The revision the 0.2.0-alpha.12 run requires. */
const NEXT_REVISION = "2026-07-28";
const GATEWAY = `${REPO}node_modules/supergateway/dist/index.js`;
const BASELINE = `${REPO}conformance/baseline.yml`;
const BASELINE_NEXT = `${REPO}conformance/baseline-2026-07-28.yml`;
/** Client scenarios run at once. */
export const MAX_PARALLEL_CLIENT_SCENARIOS = 2;
/** Longest wait for one client scenario (the suite's `--timeout`), in ms. */
export const CLIENT_SCENARIO_TIMEOUT_MS = 90_000;
/** Longest wait for the gateway to accept connections, in ms. */
export const GATEWAY_START_TIMEOUT_MS = 30_000;

interface Outcome {
  side: "server" | "client";
  scenario: string;
  passed: boolean;
  detail: string;
}

const baseline = parse(await Deno.readTextFile(BASELINE)) as { server?: string[]; client?: string[] };
const expected = { server: new Set(baseline.server ?? []), client: new Set(baseline.client ?? []) };
const baselineNext = parse(await Deno.readTextFile(BASELINE_NEXT)) as { client?: string[] | null };
/** The 2026-07-28 client scenarios that cannot apply (the server side is judged by the suite itself). */
const expectedNext = { client: new Set(baselineNext.client ?? []) };

/** Runs the CLI of the suite at `path` under Deno; output captured. */
async function suite(path: string, args: string[], cwd: string): Promise<{ code: number; text: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", path, ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  // deno-lint-ignore no-control-regex -- the suite colours its output with ANSI escapes
  const decode = (b: Uint8Array) => new TextDecoder().decode(b).replace(/\x1b\[[0-9;]*m/g, "");
  return { code: out.code, text: decode(out.stdout) + decode(out.stderr) };
}

/** Scenario results of one run's `checks.json` files: a scenario passes with no FAILURE and no WARNING. */
async function readChecks(dir: string): Promise<Map<string, { passed: boolean; detail: string }>> {
  const results = new Map<string, { passed: boolean; detail: string }>();
  const walk = async (path: string, rel: string) => {
    for await (const entry of Deno.readDir(path)) {
      const child = `${path}/${entry.name}`;
      if (entry.isDirectory) await walk(child, rel ? `${rel}/${entry.name}` : entry.name);
      else if (entry.name === "checks.json") {
        const checks = JSON.parse(await Deno.readTextFile(child)) as {
          id: string;
          status: string;
          description?: string;
          errorMessage?: string;
        }[];
        const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
        const scenario = rel.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
        results.set(scenario, {
          passed: bad.length === 0,
          detail: bad.map((c) => `${c.id}: ${c.errorMessage ?? c.description ?? c.status}`).join("; ") ||
            `${checks.filter((c) => c.status === "SUCCESS").length} checks passed`,
        });
      }
    }
  };
  await walk(dir, "");
  return results;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function waitForPort(port: number): Promise<void> {
  const until = Date.now() + GATEWAY_START_TIMEOUT_MS;
  for (;;) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch (error) {
      if (Date.now() > until) throw new Error(`the gateway did not listen on 127.0.0.1:${port}: ${error}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function serverSide(work: string): Promise<Outcome[]> {
  const home = `${work}/server-home`;
  await Deno.mkdir(home, { recursive: true });
  const port = freePort();
  const serve = [Deno.execPath(), ...sourceRunArgs(REPO), "mcp-serve"].join(" ");
  const gateway = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      GATEWAY,
      "--stdio",
      serve,
      "--outputTransport",
      "streamableHttp",
      "--stateful",
      "--port",
      String(port),
      "--logLevel",
      "none",
    ],
    env: { ...Deno.env.toObject(), SYMPOSIUM_HOME: home },
    cwd: work,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    await waitForPort(port);
    const out = `${work}/server-results`;
    await suite(
      SUITE,
      ["server", "--url", `http://127.0.0.1:${port}/mcp`, "--suite", "all", "-o", out],
      work,
    );
    const results = await readChecks(out);
    return [...results].map(([scenario, r]) => ({ side: "server", scenario, ...r }));
  } finally {
    try {
      gateway.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    await gateway.status;
  }
}

/** Which suite a client-side run uses, and how it names and runs its scenarios. */
interface ClientRun {
  path: string;
  /** The scenarios to run. */
  scenarios: string[];
  /** Added to each scenario's run (e.g. `--spec-version`). */
  extraArgs: string[];
  /** Where results go, under the run's temporary directory. */
  dir: string;
}

async function clientSide(work: string, run: ClientRun): Promise<Outcome[]> {
  const { scenarios } = run;
  const command = [
    Deno.execPath(),
    "run",
    "-A",
    "--quiet",
    "--config",
    `${REPO}deno.json`,
    `${REPO}conformance/client.ts`,
  ].join(" ");
  const outcomes: Outcome[] = [];
  const queue = [...scenarios];
  const worker = async () => {
    for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift()) {
      const out = `${work}/${run.dir}/${scenario.replace(/\//g, "_")}`;
      const ran = await suite(
        run.path,
        [
          "client",
          "--command",
          command,
          "--scenario",
          scenario,
          "--timeout",
          String(CLIENT_SCENARIO_TIMEOUT_MS),
          ...run.extraArgs,
          "-o",
          out,
        ],
        work,
      );
      const result = (await readChecks(out).catch(() => new Map())).values().next().value as
        | { passed: boolean; detail: string }
        | undefined;
      outcomes.push({
        side: "client",
        scenario,
        passed: result?.passed ?? false,
        detail: result?.detail ?? `no results (exit ${ran.code}): ${ran.text.slice(-300)}`,
      });
    }
  };
  await Promise.all(Array.from({ length: MAX_PARALLEL_CLIENT_SCENARIOS }, worker));
  return outcomes.sort((a, b) => scenarios.indexOf(a.scenario) - scenarios.indexOf(b.scenario));
}

/** The 0.1.16 client scenarios (the suite's `list --client`). */
async function legacyClientScenarios(work: string): Promise<string[]> {
  const listed = await suite(SUITE, ["list", "--client"], work);
  return [...listed.text.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!);
}

/**
 * The client scenarios the revision requires (`list --requirements`, its "Client scenarios" section; the
 * ones it runs without scoring are left out).
 */
async function nextClientScenarios(work: string): Promise<string[]> {
  const listed = await suite(SUITE_NEXT, ["list", "--requirements", NEXT_REVISION], work);
  const section = listed.text.split(/^Client scenarios.*$/m)[1]?.split(/^\S/m)[0] ?? "";
  return [...section.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!);
}

/**
 * The 0.2.0-alpha.12 server side: `mcp-serve` behind the modern bridge, every server scenario the revision
 * requires, judged by the suite against `baseline-2026-07-28.yml`.
 *
 * @returns The scenarios (for the report) and whether the suite found nothing unexpected.
 */
async function nextServerSide(work: string): Promise<{ outcomes: Outcome[]; ok: boolean; verdict: string }> {
  const home = `${work}/next-server-home`;
  await Deno.mkdir(home, { recursive: true });
  const bridge = startModernBridge([Deno.execPath(), ...sourceRunArgs(REPO), "mcp-serve"], {
    env: { ...Deno.env.toObject(), SYMPOSIUM_HOME: home },
    cwd: work,
  });
  try {
    const out = `${work}/next-server-results`;
    const ran = await suite(SUITE_NEXT, [
      "server",
      "--url",
      bridge.url,
      "--requirements",
      NEXT_REVISION,
      "--expected-failures",
      BASELINE_NEXT,
      "-o",
      out,
    ], work);
    const results = await readChecks(out);
    const outcomes = [...results].map(([scenario, r]) => ({ side: "server" as const, scenario, ...r }));
    const at = ran.text.search(/^Total:/m);
    const verdict = (at >= 0 ? ran.text.slice(at) : ran.text.slice(-2_000)).trim();
    return { outcomes, ok: ran.code === 0, verdict };
  } finally {
    await bridge.close();
  }
}

/** Prints one side's scenarios against `expected`; `true` when something unexpected happened. */
function report(label: string, mine: Outcome[], expected: Set<string>): boolean {
  const applicable = mine.filter((o) => !expected.has(o.scenario));
  const unexpected = applicable.filter((o) => !o.passed);
  const stale = mine.filter((o) => expected.has(o.scenario) && o.passed);
  const missing = [...expected].filter((s) => !mine.some((o) => o.scenario === s));
  console.log(`\n${label} scenarios:`);
  for (const o of mine) {
    const mark = expected.has(o.scenario) ? (o.passed ? "STALE" : "n/a ") : o.passed ? "ok  " : "FAIL";
    console.log(`  ${mark} ${o.scenario}${o.passed && mark === "ok  " ? "" : `  (${o.detail})`}`);
  }
  console.log(
    `${label}: ${applicable.length - unexpected.length} of ${applicable.length} applicable scenarios pass; ` +
      `${mine.length - applicable.length} cannot apply (baseline)`,
  );
  for (const s of stale) console.log(`  baseline entry ${s.scenario} now passes: remove it`);
  for (const s of missing) console.log(`  baseline entry ${s} is not a scenario of this suite: remove it`);
  return unexpected.length > 0 || stale.length > 0 || missing.length > 0;
}

const flags = new Map(Deno.args.map((a) => a.replace(/^--/, "").split("=") as [string, string]));
const only = flags.get("only");
const sides = flags.has("side") ? [flags.get("side")] : ["server", "client"];
const work = await Deno.makeTempDir({ prefix: "symposium-conformance-run-" });
let failed = false;
try {
  if (only === undefined || only === "0.1.16") {
    console.log("== @modelcontextprotocol/conformance 0.1.16 (2025-11-25)");
    const outcomes = [
      ...(sides.includes("server") ? await serverSide(work) : []),
      ...(sides.includes("client")
        ? await clientSide(work, {
          path: SUITE,
          scenarios: await legacyClientScenarios(work),
          extraArgs: [],
          dir: "client-results",
        })
        : []),
    ];
    for (const side of ["server", "client"] as const) {
      if (!sides.includes(side)) continue;
      if (report(side, outcomes.filter((o) => o.side === side), expected[side])) failed = true;
    }
  }
  if (only === undefined || only === NEXT_REVISION) {
    console.log(`\n== @modelcontextprotocol/conformance 0.2.0-alpha.12 (--requirements ${NEXT_REVISION})`);
    if (sides.includes("server")) {
      const { outcomes, ok, verdict } = await nextServerSide(work);
      console.log(`\nserver scenarios (${NEXT_REVISION}):`);
      for (const o of outcomes) console.log(`  ${o.passed ? "ok  " : "fail"} ${o.scenario}  (${o.detail})`);
      console.log(verdict);
      console.log(`server (${NEXT_REVISION}): ${ok ? "nothing beyond the baseline" : "FAILED"}`);
      if (!ok) failed = true;
    }
    if (sides.includes("client")) {
      const outcomes = await clientSide(work, {
        path: SUITE_NEXT,
        scenarios: await nextClientScenarios(work),
        extraArgs: ["--spec-version", NEXT_REVISION],
        dir: "next-client-results",
      });
      if (report(`client (${NEXT_REVISION})`, outcomes, expectedNext.client)) failed = true;
    }
  }
} finally {
  await Deno.remove(work, { recursive: true }).catch(() => {}); // A leftover temp dir is harmless.
}
Deno.exit(failed ? 1 : 0);
