/**
 * `deno task test:agents`: the real agent CLIs from npm (pinned, cached), each in its own fake HOME.
 * `cargo-agents sync` writes the entry; the agent's own commands show that it accepts the entry
 * and, where they connect, that it connects and sees both tools; then, where the agent can use a
 * local model endpoint, one prompt against the scripted stand-in model (127.0.0.1) makes the agent
 * call `list_tools` and then `execute` with the README's TODO script, and the tool results the
 * agent sent back to the model are checked: the server's tools listed, the TODO files found, each
 * shown once. Ends with the agent × (accepted, connected, tools seen, end-to-end) table.
 *
 * Not part of `deno task test` (the file name does not end in _test.ts); CI runs both.
 * `CARGO_AGENTS_AGENT_CACHE` moves the install cache; `STAND_IN_DUMP=1` keeps each request body.
 *
 * @module
 */
import assert from "node:assert/strict";
import { AGENT_CASES, type AgentCase, type AgentContext, type CommandOutput, NODE_22 } from "./_agents.ts";
import { agentCacheDir, installPinned } from "./_install.ts";
import {
  EXECUTE_CALL_ID,
  LIST_TOOLS_CALL_ID,
  type StandInModel,
  startStandInModel,
} from "./_stand_in_model.ts";
import { type AgentWorld, denoDir, makeAgentWorld, readmeTodoScript, runBounded, runSync } from "./_world.ts";

/** Longest wait for one prompt run, in ms (an agent's own start plus three model turns). */
const PROMPT_TIMEOUT_MS = 180_000;
const PROMPT = "Which files in the data folder mention TODO? Use the symposium tools.";

type Cell = "yes" | "no" | "n/a";

/** One row of the closing table. */
interface Row {
  agent: string;
  accepted: Cell;
  connected: Cell;
  tools: Cell;
  e2e: Cell;
  /** The MCP eras of the agent's tool calls, from the session log (`modern`, `legacy`, both, or `-`). */
  era: string;
  /** Where each "yes" came from, or what failed. */
  notes: string[];
}

const rows: Row[] = [];
const cacheDir = agentCacheDir(Deno.env.toObject());
let sharedDenoDir: string | undefined;

function tail(text: string, lines = 25): string {
  return text.trim().split("\n").slice(-lines).join("\n");
}

/** The last lines of every meta-server session log in the world (what the server saw). */
async function serverLogs(world: AgentWorld): Promise<string> {
  const dir = `${world.configDir}/logs`;
  const parts: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      parts.push(`--- ${entry.name}\n${tail(await Deno.readTextFile(`${dir}/${entry.name}`), 10)}`);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    parts.push("(no meta-server log: the agent never started it)");
  }
  return parts.join("\n");
}

/**
 * The eras of the tool calls the meta-server served in this world, from its session logs (each call is
 * logged as `tools/call <tool>: <era> era, MCP <version>`), e.g. `["modern"]`.
 */
async function callEras(world: AgentWorld): Promise<string[]> {
  const eras = new Set<string>();
  try {
    for await (const entry of Deno.readDir(`${world.configDir}/logs`)) {
      const text = await Deno.readTextFile(`${world.configDir}/logs/${entry.name}`);
      for (const m of text.matchAll(/tools\/call \S+: (modern|legacy) era, MCP (\S+)/g)) eras.add(m[1]!);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return [...eras].sort();
}

/** Whether a request offered both of our tools (as the agent spells them). */
function offersBoth(tools: string[]): boolean {
  return tools.some((t) => /symposium.*list_tools$/.test(t)) &&
    tools.some((t) => /symposium.*execute$/.test(t));
}

/** Checks the tool results the agent sent the model; returns what is wrong, or `undefined`. */
function checkResults(model: StandInModel, world: AgentWorld): string | undefined {
  const last = model.requests.findLast((r) => r.results[EXECUTE_CALL_ID] !== undefined);
  if (!last) {
    const listed = model.requests.some((r) => r.results[LIST_TOOLS_CALL_ID] !== undefined);
    return listed
      ? "the agent never sent the execute result back"
      : "the agent never sent the list_tools result back";
  }
  const listing = last.results[LIST_TOOLS_CALL_ID] ?? "";
  if (!listing.includes("filesystem") || !listing.includes("read_text_file")) {
    return `list_tools result does not list filesystem's tools: ${listing.slice(0, 300)}`;
  }
  const result = last.results[EXECUTE_CALL_ID]!;
  const missing = world.todoFiles.filter((name) => !result.includes(name));
  if (missing.length > 0) return `execute result lacks ${missing.join(", ")}: ${result.slice(0, 500)}`;
  const shown = result.split(world.token).length - 1;
  if (shown !== world.todoFiles.length) {
    return `execute result shows the ${world.todoFiles.length} file names ${shown} times (the value twice?): ${
      result.slice(0, 500)
    }`;
  }
  return undefined;
}

async function runAgent(agent: AgentCase, row: Row): Promise<void> {
  const binDir = await installPinned(agent.pkg, cacheDir);
  const nodeBin = agent.needsNode22 ? await installPinned(NODE_22, cacheDir) : undefined;
  sharedDenoDir ??= await denoDir();
  const world = await makeAgentWorld(`${cacheDir}/runs`, agent.id, { denoDir: sharedDenoDir });
  const dumpDir = Deno.env.get("STAND_IN_DUMP") ? `${world.root}/model-requests` : undefined;
  if (dumpDir) await Deno.mkdir(dumpDir);
  const model = await startStandInModel({ script: await readmeTodoScript(world.data), dumpDir });
  const transcript: string[] = [];
  let passed = false;
  try {
    const denoBin = Deno.execPath().slice(0, Deno.execPath().lastIndexOf("/"));
    const path = [nodeBin, binDir, denoBin, "/usr/local/bin", "/usr/bin", "/bin"].filter((p) => p).join(":");
    const base = {
      HOME: world.home,
      PATH: path,
      LANG: "C.UTF-8",
      USER: "tester",
      TMPDIR: `${world.root}/tmp`,
    };
    const env = { ...base, TERM: "dumb", NO_COLOR: "1", ...agent.env({ modelUrl: model.baseUrl }) };
    const record = (what: string, out: CommandOutput) => {
      transcript.push(`$ ${what}  (exit ${out.code})\n${tail(out.stdout)}\n${tail(out.stderr, 10)}`);
      return out;
    };
    const ctx: AgentContext = {
      home: world.home,
      ws: world.ws,
      modelUrl: model.baseUrl,
      run: async (args, options) =>
        record(
          `${agent.bin} ${args.join(" ")}`.slice(0, 200),
          await runBounded(`${binDir}/${agent.bin}`, args, { cwd: world.ws, env, ...options }),
        ),
    };
    await agent.prepare?.(ctx);
    const synced = record(
      `cargo-agents sync --agent ${agent.syncName}`,
      await runSync(world, agent.syncName, base),
    );
    assert.equal(synced.code, 0, `sync failed:\n${transcript.join("\n")}`);
    for (const check of agent.checks) {
      const out = await ctx.run(check.args);
      const text = `${out.stdout}\n${out.stderr}`;
      const label = `\`${agent.bin} ${check.args.join(" ")}\``;
      if (check.accepted.test(text)) {
        row.accepted = "yes";
        row.notes.push(`accepted: ${label}`);
      }
      if (check.connected) {
        row.connected = check.connected.test(text) ? "yes" : "no";
        if (row.connected === "yes") row.notes.push(`connected: ${label}`);
      }
      if (check.tools) {
        row.tools = check.tools.test(text) ? "yes" : "no";
        if (row.tools === "yes") row.notes.push(`tools: ${label}`);
      }
    }
    if (agent.prompt) {
      await ctx.run(agent.prompt(PROMPT), { timeoutMs: PROMPT_TIMEOUT_MS });
      if (model.requests.some((r) => offersBoth(r.tools))) {
        // The agent offered both tools to the model: it loaded the entry and connected.
        if (row.accepted !== "yes") row.accepted = "yes";
        if (row.connected !== "yes") row.connected = "yes";
        row.tools = "yes";
        row.notes.push("tools: offered to the model in the run");
      }
      const problem = checkResults(model, world);
      row.e2e = problem === undefined ? "yes" : "no";
      if (problem) row.notes.push(`end-to-end: ${problem}`);
      const eras = await callEras(world);
      row.era = eras.join("+") || "-";
      row.notes.push(`era of its tool calls (session log): ${row.era}`);
      if (agent.era && row.era !== agent.era) {
        row.e2e = "no";
        row.notes.push(`end-to-end: its tool calls were ${row.era}, expected ${agent.era} only`);
      }
    } else {
      row.notes.push(`end-to-end: ${agent.noPromptReason ?? "no local model endpoint"}`);
    }
    const failed = (["accepted", "connected", "tools", "e2e"] as const).filter((k) => row[k] === "no");
    assert.deepEqual(
      failed,
      [],
      `${agent.name}: ${failed.join(", ")} failed\n${row.notes.join("\n")}\n\n${
        transcript.join("\n\n")
      }\n\n` +
        `meta-server logs:\n${await serverLogs(world)}\n\nworld kept at ${world.root}`,
    );
    passed = true;
  } finally {
    await model.close();
    if (passed && !dumpDir) await world.remove();
  }
}

for (const agent of AGENT_CASES) {
  Deno.test({
    name: `${agent.name} ${agent.pkg.version}: accepts the synced entry, connects, sees both tools${
      agent.prompt ? ", runs list_tools and execute for the stand-in model" : ""
    }`,
    fn: async () => {
      const row: Row = {
        agent: `${agent.name} ${agent.pkg.version}`,
        accepted: "no",
        connected: "no",
        tools: "no",
        e2e: agent.prompt ? "no" : "n/a",
        era: "-",
        notes: [],
      };
      rows.push(row);
      await runAgent(agent, row);
    },
  });
}

Deno.test("agent table", () => {
  const mark = (c: Cell) => (c === "yes" ? "✔" : c === "no" ? "✘" : "n/a");
  const lines = [
    "| agent | accepted | connected | tools seen | end-to-end | era |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map((r) =>
      `| ${r.agent} | ${mark(r.accepted)} | ${mark(r.connected)} | ${mark(r.tools)} | ${
        mark(r.e2e)
      } | ${r.era} |`
    ),
  ];
  console.log(`\n${lines.join("\n")}\n`);
  for (const r of rows) console.log(`${r.agent}:\n  ${r.notes.join("\n  ")}`);
  assert.ok(rows.length > 0, "no agent ran");
});
