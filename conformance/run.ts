/**
 * `deno task test:conformance`: the official MCP conformance suite (`@modelcontextprotocol/conformance`
 * 0.1.16, run under Deno: it needs Node 22's `fs.globSync`) against cargo-agents, on loopback only.
 *
 * - Server side: `mcp-serve` (stdio) behind `supergateway --stateful` (streamable HTTP on 127.0.0.1),
 *   every server scenario (`--suite all`).
 * - Client side: every client scenario, one at a time (`MAX_PARALLEL_CLIENT_SCENARIOS` at once: each
 *   starts several Deno processes, and the suite's own `--suite` runs all 26 at once, too many for a
 *   2-core machine), with `client.ts` as the client (the real `mcp tools` / `mcp exec` / `mcp login`).
 *
 * `baseline.yml` lists the scenarios that cannot apply, with the reason each; any other failure, or a
 * listed scenario that passes, fails the run (exit 1). Prints one line per scenario and the counts.
 *
 * @module
 */
import { parse } from "yaml";
import { sourceRunArgs } from "../lib/self_command.ts";

const REPO = new URL("../", import.meta.url).pathname;
const SUITE = `${REPO}node_modules/@modelcontextprotocol/conformance/dist/index.js`;
const GATEWAY = `${REPO}node_modules/supergateway/dist/index.js`;
const BASELINE = `${REPO}conformance/baseline.yml`;
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

/** Runs the suite's CLI under Deno; output captured. */
async function suite(args: string[], cwd: string): Promise<{ code: number; text: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", SUITE, ...args],
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
    await suite(["server", "--url", `http://127.0.0.1:${port}/mcp`, "--suite", "all", "-o", out], work);
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

async function clientSide(work: string): Promise<Outcome[]> {
  const listed = await suite(["list", "--client"], work);
  const scenarios = [...listed.text.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!);
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
      const out = `${work}/client-results/${scenario.replace(/\//g, "_")}`;
      const run = await suite(
        [
          "client",
          "--command",
          command,
          "--scenario",
          scenario,
          "--timeout",
          String(CLIENT_SCENARIO_TIMEOUT_MS),
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
        detail: result?.detail ?? `no results (exit ${run.code}): ${run.text.slice(-300)}`,
      });
    }
  };
  await Promise.all(Array.from({ length: MAX_PARALLEL_CLIENT_SCENARIOS }, worker));
  return outcomes.sort((a, b) => scenarios.indexOf(a.scenario) - scenarios.indexOf(b.scenario));
}

const work = await Deno.makeTempDir({ prefix: "symposium-conformance-run-" });
let failed = false;
try {
  const outcomes = [...await serverSide(work), ...await clientSide(work)];
  for (const side of ["server", "client"] as const) {
    const mine = outcomes.filter((o) => o.side === side);
    const applicable = mine.filter((o) => !expected[side].has(o.scenario));
    const unexpected = applicable.filter((o) => !o.passed);
    const stale = mine.filter((o) => expected[side].has(o.scenario) && o.passed);
    const missing = [...expected[side]].filter((s) => !mine.some((o) => o.scenario === s));
    console.log(`\n${side} scenarios:`);
    for (const o of mine) {
      const mark = expected[side].has(o.scenario)
        ? (o.passed ? "STALE" : "n/a ")
        : o.passed
        ? "ok  "
        : "FAIL";
      console.log(`  ${mark} ${o.scenario}${o.passed && mark === "ok  " ? "" : `  (${o.detail})`}`);
    }
    console.log(
      `${side}: ${
        applicable.length - unexpected.length
      } of ${applicable.length} applicable scenarios pass; ` +
        `${mine.length - applicable.length} cannot apply (conformance/baseline.yml)`,
    );
    for (const s of stale) console.log(`  baseline entry ${s.scenario} now passes: remove it`);
    for (const s of missing) console.log(`  baseline entry ${s} is not a scenario of this suite: remove it`);
    if (unexpected.length > 0 || stale.length > 0 || missing.length > 0) failed = true;
  }
  const passed = outcomes.filter((o) => o.passed && !expected[o.side].has(o.scenario)).length;
  const applicable = outcomes.filter((o) => !expected[o.side].has(o.scenario)).length;
  console.log(`\n${passed} passed, ${applicable - passed} failed`);
} finally {
  await Deno.remove(work, { recursive: true }).catch(() => {}); // A leftover temp dir is harmless.
}
Deno.exit(failed ? 1 : 0);
