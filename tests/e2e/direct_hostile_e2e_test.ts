/**
 * End to end, `[mcp] direct-tools` against a hostile backing server (`testdata/servers/hostile_direct.ts`):
 * names that mimic the meta-server's own tools or hold line breaks, bidi and 10 KB, a schema of megabytes,
 * a result of megabytes, a call that never ends, a tool that goes away.
 */
import assert from "node:assert/strict";
import {
  denoServerToml,
  makeRawWorld,
  type RawMessage,
  RawServe,
  type RawWorld,
} from "../../bench/_raw_serve.ts";
import { DIRECT_TOOL_NAME } from "../../lib/meta_server/direct_tools.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

async function startLegacy(world: RawWorld): Promise<RawServe> {
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  await serve.request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw-agent", version: "1.0.0" },
  });
  await serve.sendLine(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return serve;
}

async function waitUntil(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const listChanged = (serve: RawServe) =>
  serve.notifications.filter((m: RawMessage) => m.method === "notifications/tools/list_changed").length;

async function toolsReply(serve: RawServe): Promise<{ tools: Json[]; bytes: number }> {
  const reply = await serve.request("tools/list", {});
  assert.ok(reply.result, JSON.stringify(reply).slice(0, 500));
  return { tools: (reply.result as Json).tools, bytes: JSON.stringify(reply).length };
}

async function callTool(serve: RawServe, name: string, args: unknown): Promise<Json> {
  const reply = await serve.request("tools/call", { name, arguments: args });
  assert.ok(reply.result, JSON.stringify(reply).slice(0, 500));
  return reply.result;
}

const HOSTILE = denoServerToml("hostile", "hostile_direct.ts") + "tool-call-timeout-secs = 3\n";

/** Every session log of `world`, concatenated. */
async function logText(world: RawWorld): Promise<string> {
  let text = "";
  for await (const e of Deno.readDir(`${world.home}/logs`)) {
    text += await Deno.readTextFile(`${world.home}/logs/${e.name}`);
  }
  return text;
}

Deno.test("direct tools of a hostile server: own names never shadowed, schemas and results bounded, gone tools gone", async () => {
  const world = await makeRawWorld(HOSTILE, 'direct-tools = ["hostile.*"]');
  const serve = await startLegacy(world);
  try {
    await toolsReply(serve); // the agent was shown a list: a change is told
    await serve.listTools({ servers: ["hostile"] });
    await waitUntil(() => listChanged(serve) > 0, "tools/list_changed");
    const { tools, bytes } = await toolsReply(serve);
    const names = tools.map((t) => t.name);
    // The meta-server's own tools first and once; every name distinct and of the safe shape.
    assert.deepEqual(names.slice(0, 2), ["list_tools", "execute"]);
    assert.equal(new Set(names).size, names.length, names.join(", "));
    assert.ok(names.slice(2).every((n) => DIRECT_TOOL_NAME.test(n)), names.join(", "));
    assert.ok(names.includes("hostile__execute") && names.includes("hostile__list_tools"));
    // A 4 MiB schema is not direct: the agent's list stays small, and list_tools says why.
    assert.ok(!names.includes("hostile__big_schema"));
    assert.ok(bytes < 1024 * 1024, `tools/list is ${bytes} bytes`);
    const { text } = await serve.listTools({ servers: ["hostile"] });
    assert.match(text, /direct-tools: "hostile\.big_schema"'s definition is \d+ bytes, over the 32768/);

    // A result of 20 MiB is cut to max-result-bytes; a call that never ends ends at the call timeout.
    const huge = await callTool(serve, "hostile__huge", {});
    assert.ok(JSON.stringify(huge).length <= 32 * 1024);
    const hang = await callTool(serve, "hostile__hang", {});
    assert.equal(hang.isError, true);
    assert.match(hang.content[0].text, /did not answer within 3s/);

    // A value built to make the agent's (backtracking) check of the outputSchema's pattern stall: off
    // the schema by our linear check, so the agent gets no structuredContent to check.
    const redos = await callTool(serve, "hostile__redos", { n: 40 });
    assert.equal(redos.structuredContent, undefined);
    assert.equal(redos.isError, true);
    assert.match(redos.content.at(-1).text, /does not match its outputSchema, or that cannot be checked/);
    // The same with a schema our linear check cannot compile: not known to match, so left out too.
    const lookahead = await callTool(serve, "hostile__redos_lookahead", { n: 40 });
    assert.equal(lookahead.structuredContent, undefined);
    assert.equal(lookahead.isError, true);

    // A tool the server stops listing stops being direct, and its name no longer reaches anything.
    await callTool(serve, "hostile__swap", {});
    await waitUntil(() => listChanged(serve) > 1, "the second tools/list_changed");
    const after = (await toolsReply(serve)).tools.map((t) => t.name);
    assert.ok(after.includes("hostile__fresh") && !after.includes("hostile__gone"), after.join(", "));
    const gone = await serve.request("tools/call", { name: "hostile__gone", arguments: {} });
    assert.match(JSON.stringify(gone), /no such tool: hostile__gone/);
  } finally {
    await serve.close();
    await world.remove();
  }
});

Deno.test("a backing server's error that echoes the arguments reaches the caller, never the session log", async () => {
  const world = await makeRawWorld(HOSTILE, 'direct-tools = ["hostile.echo_*"]');
  const serve = await startLegacy(world);
  try {
    await serve.listTools({ servers: ["hostile"] });
    const thrown = await callTool(serve, "hostile__echo_throw", { v: "canary-direct-1" });
    assert.match(thrown.content[0].text, /canary-direct-1/);
    await serve.execute(`return await hostile.echo_error({ v: "canary-" + "script-2" })`);
    await serve.execute(`return await hostile.echo_throw({ v: "canary-" + "script-3" })`);
  } finally {
    await serve.close();
  }
  const log = await logText(world);
  await world.remove();
  assert.doesNotMatch(log, /canary-direct-1|canary-script-2|canary-script-3/);
  assert.match(log, /hostile__echo_throw \(direct\): failed in \d+ ms: \w+ \(message not logged\)/);
});

Deno.test("a manifest's secret a script passes on (as an argument, a tool name, a forged log line) stays out of the log and the report", async () => {
  const world = await makeRawWorld(
    HOSTILE + 'env = { HOSTILE_TOKEN = "${ATTACK_SECRET}" }\n',
    'direct-tools = ["hostile.echo_*"]',
  );
  const secret = "zq7-secret-value-xk2";
  const serve = RawServe.start({ home: world.home, cwd: world.ws, env: { ATTACK_SECRET: secret } });
  const get = `const tok = await hostile.env({ name: "HOSTILE_TOKEN" });`;
  const forged = String
    .raw`"\n2026-12-07T17:00:00.000Z DEBUG [trace] {\"v\":1,\"id\":\"f0f0f0f0\",\"part\":\"end\"}"`;
  const scripts = [
    `${get} return tok.length;`,
    `${get} return await hostile[tok]({});`,
    `${get} return await hostile[tok + ${forged}]({});`,
    `${get} return await hostile.echo_error({ v: tok });`,
    `${get} return await hostile.echo_throw({ v: tok });`,
    `${get} throw new Error(tok + ${forged});`,
  ];
  try {
    await serve.initialize();
    assert.equal((await serve.execute(scripts[0]!)).text, `{"result":${secret.length}}`);
    for (const script of scripts.slice(1)) assert.ok((await serve.execute(script)).isError);
  } finally {
    await serve.close();
  }
  const log = await logText(world);
  const report = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-P",
      "--v8-flags=--stack-size=1800",
      "main.ts",
      "report",
      "--config-dir",
      world.home,
      "--out",
      `${world.root}/r.html`,
    ],
    env: { SYMPOSIUM_BROWSER: "none" },
  }).output();
  const html = await Deno.readTextFile(`${world.root}/r.html`);
  await world.remove();
  assert.ok(!log.includes(secret) && !html.includes(secret));
  // Six executes, none forged.
  assert.match(new TextDecoder().decode(report.stderr), /: 6 executes/);
  assert.doesNotMatch(log, /^\S+ DEBUG \[trace\] \{"v":1,"id":"f0f0f0f0"/m);
});

Deno.test("a server sending 1,000 tools/list_changed, its direct tools changing each time, tells the agent far fewer times", async () => {
  const world = await makeRawWorld(HOSTILE, 'direct-tools = ["hostile.*"]');
  const serve = await startLegacy(world);
  try {
    await toolsReply(serve);
    await serve.listTools({ servers: ["hostile"] });
    await waitUntil(() => listChanged(serve) > 0, "tools/list_changed");
    await toolsReply(serve);
    const before = listChanged(serve);
    assert.equal((await callTool(serve, "hostile__flip", { count: 1000 })).content[0].text, "flipping");
    for (let sent = 0; sent < 1000;) {
      await new Promise((r) => setTimeout(r, 200));
      sent = Number((await callTool(serve, "hostile__flips", {})).content[0].text);
    }
    await toolsReply(serve);
    const told = listChanged(serve) - before;
    assert.ok(told >= 1 && told < 200, `told ${told} times`);
  } finally {
    await serve.close();
    await world.remove();
  }
});
