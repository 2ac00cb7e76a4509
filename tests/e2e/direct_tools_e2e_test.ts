/**
 * End to end, chosen tools direct (`[mcp] direct-tools`): a real `mcp-serve` spoken to as a raw JSON-RPC
 * agent (legacy `initialize`, and modern per-request `_meta`), with the real npm servers `server-memory` and
 * `server-everything` and the many-tools fixture behind it.
 */
import assert from "node:assert/strict";
import {
  denoServerToml,
  makeRawWorld,
  type RawMessage,
  RawServe,
  type RawWorld,
  REPO,
} from "../../bench/_raw_serve.ts";
import { AGENT_IDS, toolNameProblem } from "../../lib/sync/agents/mod.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const NM = `${REPO}node_modules/@modelcontextprotocol`;
const node = (name: string, pkg: string, args: string[] = []) =>
  `[[mcp_servers]]\nname = "${name}"\ncommand = "node"\nargs = ${
    JSON.stringify([`${NM}/${pkg}/dist/index.js`, ...args])
  }\n`;

const memoryAndEverything = (root: string) =>
  node("memory", "server-memory") +
  `env = { MEMORY_FILE_PATH = "${root}/memory.jsonl" }\n\n` +
  node("everything", "server-everything", ["stdio"]);

const LEGACY_CAPABILITIES = { elicitation: { form: {} } };

async function startLegacy(world: RawWorld): Promise<RawServe> {
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  await serve.request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: LEGACY_CAPABILITIES,
    clientInfo: { name: "raw-agent", version: "1.0.0" },
  });
  await serve.sendLine(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return serve;
}

/** Every session log of `world`, concatenated. */
async function logText(world: RawWorld): Promise<string> {
  let text = "";
  for await (const entry of Deno.readDir(`${world.home}/logs`)) {
    text += await Deno.readTextFile(`${world.home}/logs/${entry.name}`);
  }
  return text;
}

const spawnCount = async (world: RawWorld) =>
  (await logText(world)).match(/\] spawned pid \d+/g)?.length ?? 0;

async function toolList(serve: RawServe, meta?: Record<string, unknown>): Promise<Json[]> {
  const reply = await serve.request("tools/list", meta ? { _meta: meta } : {});
  assert.ok(reply.result, JSON.stringify(reply));
  return (reply.result as Json).tools;
}

async function callTool(serve: RawServe, name: string, args: unknown, extra: Record<string, unknown> = {}) {
  const reply = await serve.request("tools/call", { name, arguments: args, ...extra });
  assert.ok(reply.result, JSON.stringify(reply));
  return reply.result as Json;
}

/** Answers each request mcp-serve sends the agent with `answer(request)` until the returned stop. */
function answering(serve: RawServe, answer: (request: RawMessage) => unknown): () => void {
  let seen = 0;
  const timer = setInterval(() => {
    for (; seen < serve.notifications.length; seen++) {
      const m = serve.notifications[seen]!;
      if (m.id === undefined || typeof m.method !== "string") continue;
      void serve.sendLine(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: answer(m) }));
    }
  }, 5);
  return () => clearInterval(timer);
}

async function waitUntil(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const listChanged = (serve: RawServe) =>
  serve.notifications.filter((m) => m.method === "notifications/tools/list_changed").length;

const DIRECT_CONFIG = [
  'direct-tools = ["memory.read_graph", "memory.create_entities", "everything.echo", ' +
  '"everything.trigger-elicitation-request", "nothing.*", "memory.no_such_tool"]',
  'confirm-tools = "writes"',
  "max-result-bytes = 2000",
].join("\n");

const DIRECT_NAMES = [
  "everything__echo",
  "everything__trigger-elicitation-request",
  "memory__create_entities",
  "memory__read_graph",
];

Deno.test("mcp-serve lists direct tools from the tool cache without starting a server, and calls them through confirmation", async () => {
  const world = await makeRawWorld(memoryAndEverything, DIRECT_CONFIG);
  try {
    // First session, nothing cached: only the two tools; the servers' first listing adds them (told).
    let serve = await startLegacy(world);
    let live: Json[];
    try {
      assert.deepEqual((await toolList(serve)).map((t) => t.name), ["list_tools", "execute"]);
      assert.equal(await spawnCount(world), 0);
      // A search starts nothing: the direct tools of servers never listed are missing, and said so.
      const searched = await serve.listTools({ query: "read the graph" });
      assert.match(searched.text, /direct-tools: `memory` has not been listed yet/);
      assert.match(searched.text, /direct-tools: "nothing\.\*" names no server in scope/);
      assert.equal(await spawnCount(world), 0);
      // An unfiltered list_tools starts the servers not cached (as it always does): their first listing
      // adds their direct tools, and the agent is told.
      const listed = await serve.listTools({});
      assert.doesNotMatch(listed.text, /has not been listed yet/);
      assert.match(listed.text, /direct-tools: "nothing\.\*" names no server in scope/);
      await waitUntil(() => listChanged(serve) > 0, "tools/list_changed");
      live = await toolList(serve);
      assert.deepEqual(live.slice(2).map((t) => t.name), DIRECT_NAMES);
      const after = await serve.listTools({});
      assert.match(
        after.text,
        /direct-tools: "memory\.no_such_tool" matches none of the \d+ visible tools of `memory`/,
      );
    } finally {
      await serve.close();
    }
    // A new session: listed from the cache, no server started, the same definitions as the live listing.
    const spawnedBefore = await spawnCount(world);
    serve = await startLegacy(world);
    try {
      const cached = await toolList(serve);
      assert.deepEqual(cached, live);
      const graph = cached.find((t) => t.name === "memory__read_graph");
      assert.equal(graph.annotations?.readOnlyHint, true);
      assert.ok(graph.outputSchema?.properties?.entities, JSON.stringify(graph));
      assert.equal(await spawnCount(world), spawnedBefore);
      for (const tool of cached) {
        for (const id of AGENT_IDS) assert.equal(toolNameProblem(id, tool.name), undefined);
      }

      // A read-only tool under confirm-tools = "writes": no question; the server's own result.
      const empty = await callTool(serve, "memory__read_graph", {});
      assert.deepEqual(empty.structuredContent, { entities: [], relations: [] });
      assert.ok(await spawnCount(world) > spawnedBefore); // started on the call

      // A write: the agent is asked first, then the call goes through.
      const stop = answering(serve, () => ({ action: "accept", content: { remember: false } }));
      try {
        const entity = { name: "direct-canary", entityType: "test", observations: ["seen"] };
        const created = await callTool(serve, "memory__create_entities", { entities: [entity] });
        assert.equal(created.isError, undefined, JSON.stringify(created));
        const asked = serve.notifications.filter((m) => m.method === "elicitation/create");
        assert.equal(asked.length, 1);
        assert.match(
          (asked[0]!.params as Json).message,
          /^\u27e6symposium\u27e7 The agent wants to call create_entities of the MCP server "memory"/,
        );
        const graphNow = await callTool(serve, "memory__read_graph", {});
        assert.deepEqual(graphNow.structuredContent.entities.map((e: Json) => e.name), ["direct-canary"]);

        // The backing server's own question reaches the agent through the relay.
        const elicited = await callTool(serve, "everything__trigger-elicitation-request", {});
        assert.equal(elicited.isError, undefined, JSON.stringify(elicited));
        assert.ok(serve.notifications.filter((m) => m.method === "elicitation/create").length >= 2);
      } finally {
        stop();
      }

      // A result past max-result-bytes is cut, saying so.
      const echoed = await callTool(serve, "everything__echo", { message: "z".repeat(5_000) });
      const text = echoed.content.map((c: Json) => c.text).join("\n");
      assert.ok(new TextEncoder().encode(JSON.stringify(echoed)).length <= 2_000);
      assert.match(text, /\[cut: this result is \d+ bytes, over \[mcp\] max-result-bytes \(2000\)/);
      assert.match(text, /Call everything\.echo\(…\) from execute/);
    } finally {
      await serve.close();
    }
  } finally {
    await world.remove();
  }
});

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "modern-agent", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
};

Deno.test("a modern agent lists direct tools and confirms a direct call with input_required and a retry", async () => {
  const world = await makeRawWorld(memoryAndEverything, DIRECT_CONFIG);
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    assert.deepEqual((await toolList(serve, MODERN_META)).map((t) => t.name), ["list_tools", "execute"]);
    await serve.sendLine(JSON.stringify({
      jsonrpc: "2.0",
      id: "listen-1",
      method: "subscriptions/listen",
      params: { _meta: MODERN_META, notifications: { toolsListChanged: true } },
    }));
    await waitUntil(
      () => serve.notifications.some((n) => n.method === "notifications/subscriptions/acknowledged"),
      "the subscription's acknowledgement",
    );
    const listed = await serve.request("tools/call", {
      name: "list_tools",
      arguments: { servers: ["memory", "everything"] },
      _meta: MODERN_META,
    });
    assert.ok(listed.result, JSON.stringify(listed));
    // The first listing of memory adds its direct tools: told on the subscription, tagged with its id.
    await waitUntil(() => listChanged(serve) > 0, "tools/list_changed on the subscription");
    const changed = serve.notifications.find((n) => n.method === "notifications/tools/list_changed")!;
    assert.equal((changed.params as Json)._meta["io.modelcontextprotocol/subscriptionId"], "listen-1");
    const names = (await toolList(serve, MODERN_META)).map((t) => t.name);
    assert.deepEqual(names.filter((n) => n.startsWith("memory__")), [
      "memory__create_entities",
      "memory__read_graph",
    ]);
    const args = { entities: [{ name: "modern-canary", entityType: "test", observations: [] }] };
    const first = await callTool(serve, "memory__create_entities", args, { _meta: MODERN_META });
    assert.equal(first.resultType, "input_required", JSON.stringify(first));
    const [key, question] = Object.entries(first.inputRequests as Record<string, Json>)[0]!;
    assert.equal(question.method, "elicitation/create");
    assert.match(
      question.params.message,
      /The agent wants to call create_entities of the MCP server "memory"/,
    );
    const done = await callTool(serve, "memory__create_entities", args, {
      _meta: MODERN_META,
      requestState: first.requestState,
      inputResponses: { [key]: { action: "accept", content: { remember: false } } },
    });
    assert.equal(done.isError, undefined, JSON.stringify(done));
    const graph = await callTool(serve, "memory__read_graph", {}, { _meta: MODERN_META });
    assert.deepEqual(graph.structuredContent.entities.map((e: Json) => e.name), ["modern-canary"]);

    // The backing server's own question during a direct call: input_required too, each retry resuming it.
    let reply = await callTool(serve, "everything__trigger-elicitation-request", {}, { _meta: MODERN_META });
    const methods: string[] = [];
    for (let round = 0; reply.resultType === "input_required" && round < 4; round++) {
      const inputResponses: Record<string, unknown> = {};
      for (const [id, asked] of Object.entries(reply.inputRequests as Record<string, Json>)) {
        methods.push(asked.method);
        inputResponses[id] = /wants to call/.test(asked.params.message)
          ? { action: "accept", content: { remember: false } }
          : { action: "decline" };
      }
      reply = await callTool(serve, "everything__trigger-elicitation-request", {}, {
        _meta: MODERN_META,
        requestState: reply.requestState,
        inputResponses,
      });
    }
    assert.deepEqual(methods, ["elicitation/create", "elicitation/create"]);
    assert.notEqual(reply.resultType, "input_required", JSON.stringify(reply));
    assert.match(JSON.stringify(reply.content), /decline/i);
  } finally {
    await serve.close();
    await world.remove();
  }
});

Deno.test("mcp-serve lists at most 32 direct tools and names the patterns past the cap under Problems", async () => {
  const world = await makeRawWorld(
    () => denoServerToml("many", "many_tools.ts", ["--tools=40"]),
    'direct-tools = ["many.*"]',
  );
  const serve = await startLegacy(world);
  try {
    assert.deepEqual((await toolList(serve)).map((t) => t.name), ["list_tools", "execute"]);
    await serve.listTools({ servers: ["many"] });
    await waitUntil(() => listChanged(serve) > 0, "tools/list_changed");
    const direct = (await toolList(serve)).slice(2);
    assert.equal(direct.length, 32);
    assert.ok(direct.every((t) => t.name.startsWith("many__")));
    const { text } = await serve.listTools({});
    assert.match(
      text,
      /direct-tools: 40 tools match "many\.\*", more than 32; the first 32 \(by server, then tool name\) are listed, up to many\.\S+: narrow the patterns in config\.toml/,
    );
  } finally {
    await serve.close();
    await world.remove();
  }
});
