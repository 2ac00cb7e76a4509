/**
 * Our MCP client as the conformance suite drives it (`conformance client --command "… client.ts"`): the
 * suite appends the scenario server's URL and sets `MCP_CONFORMANCE_SCENARIO` (and, for some,
 * `MCP_CONFORMANCE_CONTEXT`). This builds a throw-away `SYMPOSIUM_HOME` whose plugin points the
 * server `conf` at that URL, then runs the real commands a user would:
 *
 * - `initialize`: `mcp tools conf` (handshake and `tools/list`);
 * - `tools_call`, `sse-retry`, `http-standard-headers`, `http-custom-headers` (the calls its context names),
 *   `http-invalid-tool-headers`, `sep-2322-client-request-state`: `mcp exec` of a script calling the
 *   scenario's tools; `request-metadata`: `mcp tools conf`;
 * - `elicitation-sep1034-client-defaults`: `mcp-serve` under an SDK agent that declares elicitation and
 *   accepts with empty content (the meta-server's client applies the schema defaults);
 * - 2026-07-28 scenarios: `request-metadata`, `json-schema-ref-no-deref`: `mcp tools conf`;
 *   `sep-2322-client-request-state`: `mcp-serve` (the backend's `input_required` rounds reach the agent);
 *   `http-standard-headers`, `http-custom-headers` (the calls `MCP_CONFORMANCE_CONTEXT` lists),
 *   `http-invalid-tool-headers`: `mcp exec`;
 * - `auth/*`: `mcp login conf` with a non-interactive browser step (`browser.ts`, named by
 *   `SYMPOSIUM_BROWSER`), then `mcp exec`; a call that asks for more permissions (step-up) gets one more
 *   `mcp login` and one more `mcp exec`, as a user following the error message would.
 *
 * Exit code: that of the last command.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { sourceRunArgs } from "../lib/self_command.ts";

const REPO = new URL("../", import.meta.url).pathname;
/** What the CIMD scenario expects as `client_id` (the suite's fixed document URL). */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";
/** Longest wait for one command, in ms. */
const COMMAND_TIMEOUT_MS = 25_000;

const url = Deno.args.at(-1) ?? "";
const scenario = Deno.env.get("MCP_CONFORMANCE_SCENARIO") ?? "";
const context = JSON.parse(Deno.env.get("MCP_CONFORMANCE_CONTEXT") ?? "{}") as Record<string, unknown>;

const root = await Deno.makeTempDir({ prefix: "symposium-conformance-" });
const home = `${root}/home`;
await Deno.mkdir(`${home}/plugins/conformance`, { recursive: true });
const quoted = (value: unknown) => JSON.stringify(String(value));
const lines = [
  'name = "conformance"',
  'depends-on = "*"',
  "",
  "[[mcp_servers]]",
  'name = "conf"',
  `url = ${quoted(url)}`,
  `client-metadata-url = ${quoted(CLIENT_METADATA_URL)}`,
  "startup-timeout-secs = 20",
  ...(context.client_id ? [`client-id = ${quoted(context.client_id)}`] : []),
  ...(context.client_secret ? [`client-secret = ${quoted(context.client_secret)}`] : []),
];
await Deno.writeTextFile(`${home}/plugins/conformance/SYMPOSIUM.toml`, lines.join("\n") + "\n");
const browser = `${root}/browser.sh`;
await Deno.writeTextFile(
  browser,
  `#!/bin/sh\nexec ${quoted(Deno.execPath())} run -A --quiet ${
    quoted(`${REPO}conformance/browser.ts`)
  } "$1"\n`,
);
await Deno.chmod(browser, 0o755);
const env = {
  ...Deno.env.toObject(),
  SYMPOSIUM_HOME: home,
  SYMPOSIUM_BROWSER: browser,
  SYMPOSIUM_LOGIN_TIMEOUT_MS: "15000",
};

/** Runs `main.ts <args>` with the scenario's home; its output goes to ours (the suite records it). */
async function cargoAgents(args: string[], stdin?: string): Promise<{ code: number; output: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...sourceRunArgs(REPO), ...args],
    env,
    cwd: root,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const timer = setTimeout(() => child.kill("SIGKILL"), COMMAND_TIMEOUT_MS);
  const out = await child.output();
  clearTimeout(timer);
  const output = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  console.log(`$ cargo-agents ${args.join(" ")} → exit ${out.code}\n${output}`);
  return { code: out.code, output };
}

/** `mcp exec` of `script` (from stdin). */
function exec(script: string) {
  return cargoAgents(["mcp", "exec", "-"], script);
}

/** The scenario's tool call through `mcp-serve`, under an SDK agent that declares form elicitation. */
async function throughServe(script: string): Promise<number> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...sourceRunArgs(REPO), "mcp-serve"],
    env,
    cwd: root,
    stderr: "inherit",
  });
  const agent = new Client({ name: "conformance-agent", version: "1.0.0" }, {
    capabilities: { elicitation: { form: {} } },
  });
  agent.setRequestHandler("elicitation/create", () => ({ action: "accept", content: {} }));
  await agent.connect(transport);
  try {
    const result = await agent.callTool({ name: "execute", arguments: { script } });
    console.log(JSON.stringify(result));
    return result.isError ? 1 : 0;
  } finally {
    await agent.close();
  }
}

let code = 0;
try {
  if (scenario === "initialize") {
    code = (await cargoAgents(["mcp", "tools", "conf"])).code;
  } else if (scenario === "tools_call") {
    code = (await exec("return await conf.add_numbers({ a: 5, b: 3 })")).code;
  } else if (scenario === "sse-retry") {
    code = (await exec("return await conf.test_reconnection({})")).code;
  } else if (scenario === "elicitation-sep1034-client-defaults") {
    code = await throughServe("return await conf.test_client_elicitation_defaults({})");
  } else if (scenario === "request-metadata" || scenario === "json-schema-ref-no-deref") {
    code = (await cargoAgents(["mcp", "tools", "conf"])).code;
  } else if (scenario === "sep-2322-client-request-state") {
    // Two multi-round-trip calls at once with a plain one between their rounds, then the others.
    code = await throughServe(
      "const [a, b] = await Promise.all([conf.test_mrtr_echo_state({}), conf.test_mrtr_unrelated({})]);" +
        " const c = await conf.test_mrtr_no_state({}); const d = await conf.test_mrtr_no_result_type({});" +
        " return [a, b, c, d];",
    );
  } else if (scenario === "http-standard-headers") {
    code = (await exec("return await conf.test_headers({})")).code;
  } else if (scenario === "http-custom-headers") {
    const calls = (context.toolCalls ?? []) as { name: string; arguments: unknown }[];
    const script = calls.map((c) => `await conf[${JSON.stringify(c.name)}](${JSON.stringify(c.arguments)});`);
    code = (await exec(`${script.join(" ")} return "done"`)).code;
  } else if (scenario === "http-invalid-tool-headers") {
    // The valid tool is called; an invalid one must not be there to call.
    code = (await exec(
      'const r = await conf.valid_tool({ region: "us-west1" });' +
        " try { await conf.invalid_number_header({ score: 1 }); return 'invalid tool reachable'; } catch { return r; }",
    )).code;
  } else {
    // auth/*: sign in, call, and sign in once more when the server asks for more permissions.
    const call = 'return await conf["test-tool"]({})';
    code = (await cargoAgents(["mcp", "login", "conf"])).code;
    let run = await exec(call);
    if (run.code !== 0 && /mcp login conf/.test(run.output)) {
      await cargoAgents(["mcp", "login", "conf"]);
      run = await exec(call);
    }
    code = run.code;
  }
} finally {
  await Deno.remove(root, { recursive: true }).catch(() => {}); // A leftover temp dir is harmless.
}
Deno.exit(code);
