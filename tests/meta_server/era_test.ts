// The shell in both eras (MCP 2026-07-28 modern, per-request `_meta`; legacy, `initialize`), spoken to as
// raw JSON lines through the stdin transport, and by the SDK client with version negotiation.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import type { Transport } from "@modelcontextprotocol/client";
import {
  type CallEra,
  connectServerShell,
  INSTRUCTIONS,
  META_SERVER_VERSION,
  type ToolHandlers,
  TOOLS_LIST_TTL_MS,
} from "../../lib/meta_server/mod.ts";
import { LineStdioServerTransport } from "../../lib/jsonrpc/mod.ts";
import { MAX_OPEN_SUBSCRIPTIONS } from "../../lib/meta_server/_era_wire.ts";

// deno-lint-ignore no-explicit-any
type Message = Record<string, any>;

const MODERN = "2026-07-28";

/** The `_meta` of a modern request, with `extra` keys. */
function modernMeta(extra: Record<string, unknown> = {}, version = MODERN): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientInfo": { name: "raw-agent", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": {},
    ...extra,
  };
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: "init",
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "legacy-agent", version: "1" },
  },
};

/** A shell on a stdin/stdout pair; every line it writes is kept in order. */
async function rawShell(handlers: Partial<ToolHandlers> = {}) {
  const toServer = new TransformStream<Uint8Array, Uint8Array>();
  const fromServer = new TransformStream<Uint8Array, Uint8Array>();
  const transport = new LineStdioServerTransport({ input: toServer.readable, output: fromServer.writable });
  const shell = await connectServerShell(transport);
  const calls: { params: Message; call: CallEra }[] = [];
  shell.supply({
    listTools: () => Promise.resolve({ tools: [{ name: "execute", inputSchema: { type: "object" } }] }),
    callTool: (request, _ctx, call) => {
      calls.push({ params: request.params, call });
      return Promise.resolve({ content: [{ type: "text", text: "ok" }] });
    },
    setLevel: () => {},
    ...handlers,
  });
  const writer = toServer.writable.getWriter();
  const lines: Message[] = [];
  const reader = fromServer.readable.pipeThrough(new TextDecoderStream()).getReader();
  const reading = (async () => {
    let buffered = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      buffered += chunk.value;
      for (let at = buffered.indexOf("\n"); at !== -1; at = buffered.indexOf("\n")) {
        lines.push(JSON.parse(buffered.slice(0, at)));
        buffered = buffered.slice(at + 1);
      }
    }
  })();
  const until = async (found: (m: Message) => boolean): Promise<Message> => {
    for (let i = 0; i < 1_000; i++) {
      const hit = lines.find(found);
      if (hit) return hit;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`no such line among ${JSON.stringify(lines).slice(0, 2_000)}`);
  };
  return {
    shell,
    lines,
    calls,
    send: (m: Message) =>
      writer.write(new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n")),
    /** The answer to request `id`. */
    answer: (id: unknown) => until((m) => m.id === id && !("method" in m)),
    until,
    async close() {
      await writer.close();
      await shell.closed;
      await reader.cancel();
      await reading;
    },
  };
}

Deno.test("server/discover names 2026-07-28 and the legacy versions, the capabilities, instructions and serverInfo", async () => {
  const h = await rawShell();
  await h.send({ id: 1, method: "server/discover", params: { _meta: modernMeta() } });
  const { result } = await h.answer(1);
  assert.equal(result.resultType, "complete");
  assert.deepEqual(result.supportedVersions.slice(0, 2), [MODERN, "2025-11-25"]);
  assert.deepEqual(result.capabilities.tools, { listChanged: true });
  assert.equal(result.instructions, INSTRUCTIONS);
  assert.deepEqual(result._meta["io.modelcontextprotocol/serverInfo"], {
    name: "symposium",
    version: META_SERVER_VERSION,
  });
  assert.ok(Number.isSafeInteger(result.ttlMs) && result.ttlMs >= 0);
  assert.equal(result.cacheScope, "public");
  await h.close();
});

Deno.test("a modern tools/list without initialize has resultType, ttlMs, cacheScope and serverInfo", async () => {
  const h = await rawShell();
  await h.send({ id: 1, method: "tools/list", params: { _meta: modernMeta() } });
  const { result } = await h.answer(1);
  assert.equal(result.resultType, "complete");
  assert.equal(result.ttlMs, TOOLS_LIST_TTL_MS);
  assert.equal(result.cacheScope, "private");
  assert.equal(result._meta["io.modelcontextprotocol/serverInfo"].name, "symposium");
  assert.deepEqual(result.tools.map((t: Message) => t.name), ["execute"]);
  await h.send({
    id: 2,
    method: "tools/call",
    params: { _meta: modernMeta(), name: "execute", arguments: {} },
  });
  const call = await h.answer(2);
  assert.equal(call.result.resultType, "complete");
  assert.equal(call.result._meta["io.modelcontextprotocol/serverInfo"].name, "symposium");
  assert.deepEqual(h.calls[0]!.call, {
    era: "modern",
    protocolVersion: MODERN,
    clientInfo: { name: "raw-agent", version: "1.0.0" },
    capabilities: {},
  });
  await h.close();
});

Deno.test("an unsupported protocol version gets -32022 with supported and requested, first or later", async () => {
  const h = await rawShell();
  await h.send({ id: 1, method: "tools/list", params: { _meta: modernMeta({}, "1900-01-01") } });
  const first = await h.answer(1);
  assert.equal(first.error.code, -32022);
  assert.equal(first.error.data.requested, "1900-01-01");
  assert.ok(first.error.data.supported.includes(MODERN));
  await h.send({ id: 2, method: "tools/list", params: { _meta: modernMeta() } });
  assert.equal((await h.answer(2)).result.resultType, "complete");
  await h.send({
    id: 3,
    method: "tools/call",
    params: { _meta: modernMeta({}, "2099-01-01"), name: "execute" },
  });
  const later = await h.answer(3);
  assert.equal(later.error.code, -32022);
  assert.deepEqual(later.error.data.requested, "2099-01-01");
  assert.equal(h.calls.length, 0, "the refused call reached the handlers");
  await h.close();
});

Deno.test("a modern retry's inputResponses and requestState reach callTool untouched; input_required goes back", async () => {
  const h = await rawShell({
    callTool: (request, _ctx, call) => {
      if (call.era === "modern" && request.params.requestState === undefined) {
        return Promise.resolve({
          resultType: "input_required",
          inputRequests: {
            q1: {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: "[fx] ok?",
                requestedSchema: { type: "object", properties: {} },
              },
            },
          },
          requestState: "state-1",
        });
      }
      return Promise.resolve({
        content: [{
          type: "text",
          text: JSON.stringify([request.params.inputResponses, request.params.requestState]),
        }],
      });
    },
  });
  const meta = modernMeta({ "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } });
  await h.send({ id: 1, method: "tools/call", params: { _meta: meta, name: "execute", arguments: {} } });
  const asked = (await h.answer(1)).result;
  assert.equal(asked.resultType, "input_required");
  assert.equal(asked.requestState, "state-1");
  assert.equal(asked.inputRequests.q1.method, "elicitation/create");
  assert.equal(asked._meta["io.modelcontextprotocol/serverInfo"].name, "symposium");
  const inputResponses = { q1: { action: "accept", content: { ok: true } } };
  await h.send({
    id: 2,
    method: "tools/call",
    params: { _meta: meta, name: "execute", arguments: {}, inputResponses, requestState: "state-1" },
  });
  const done = (await h.answer(2)).result;
  assert.equal(done.resultType, "complete");
  assert.deepEqual(JSON.parse(done.content[0].text), [inputResponses, "state-1"]);
  await h.close();
});

Deno.test("a legacy agent (initialize) gets today's answers; input_required is never sent to it", async () => {
  const h = await rawShell({
    callTool: () => Promise.resolve({ resultType: "input_required", inputRequests: {}, requestState: "s" }),
  });
  await h.send(INITIALIZE);
  const init = (await h.answer("init")).result;
  assert.equal(init.protocolVersion, "2025-11-25");
  assert.equal(init.instructions, INSTRUCTIONS);
  await h.send({ method: "notifications/initialized" });
  await h.send({ id: 1, method: "tools/list" });
  const listed = (await h.answer(1)).result;
  assert.equal(listed.resultType, undefined);
  assert.equal(listed.ttlMs, undefined);
  assert.equal(listed._meta, undefined);
  await h.send({ id: 2, method: "tools/call", params: { name: "execute", arguments: {} } });
  const refused = await h.answer(2);
  assert.equal(refused.error.code, -32603);
  await h.close();
});

Deno.test("a server/discover probe then initialize: the legacy session is served by the same shell", async () => {
  const seen: CallEra[] = [];
  const h = await rawShell({
    callTool: (_request, _ctx, call) => {
      seen.push(call);
      return Promise.resolve({ content: [] });
    },
  });
  await h.send({ id: 1, method: "server/discover", params: { _meta: modernMeta() } });
  assert.equal((await h.answer(1)).result.resultType, "complete");
  await h.send(INITIALIZE);
  assert.equal((await h.answer("init")).result.protocolVersion, "2025-11-25");
  await h.send({ method: "notifications/initialized" });
  await h.send({ id: 2, method: "tools/call", params: { name: "execute", arguments: {} } });
  assert.deepEqual((await h.answer(2)).result, { content: [] });
  assert.equal(seen[0]!.era, "legacy");
  assert.equal(seen[0]!.clientInfo?.name, "legacy-agent");
  await h.close();
});

Deno.test("logs reach a modern agent only for a request whose _meta asked for that level", async () => {
  const h: Awaited<ReturnType<typeof rawShell>> = await rawShell({
    callTool: async () => {
      await h.shell.server.sendLoggingMessage({ level: "debug", data: "debug line" });
      await h.shell.server.sendLoggingMessage({ level: "warning", data: "warning line" });
      return { content: [] };
    },
  });
  await h.send({ id: 1, method: "tools/call", params: { _meta: modernMeta(), name: "execute" } });
  await h.answer(1);
  const logLevel = { "io.modelcontextprotocol/logLevel": "info" };
  await h.send({ id: 2, method: "tools/call", params: { _meta: modernMeta(logLevel), name: "execute" } });
  await h.answer(2);
  const logs = h.lines.filter((m) => m.method === "notifications/message").map((m) => m.params.data);
  assert.deepEqual(logs, ["warning line"]);
  await h.close();
});

Deno.test("subscriptions/listen is acknowledged; tools/list_changed goes to the subscription, never unasked", async () => {
  const h = await rawShell();
  await h.send({ id: 1, method: "tools/list", params: { _meta: modernMeta() } });
  await h.answer(1);
  await h.shell.server.sendToolListChanged();
  await h.send({
    id: "sub",
    method: "subscriptions/listen",
    params: { _meta: modernMeta(), notifications: { toolsListChanged: true } },
  });
  const ack = await h.until((m) => m.method === "notifications/subscriptions/acknowledged");
  assert.equal(ack.params._meta["io.modelcontextprotocol/subscriptionId"], "sub");
  assert.deepEqual(ack.params.notifications, { toolsListChanged: true });
  await h.shell.server.sendToolListChanged();
  const changed = await h.until((m) => m.method === "notifications/tools/list_changed");
  assert.equal(changed.params._meta["io.modelcontextprotocol/subscriptionId"], "sub");
  assert.equal(h.lines.filter((m) => m.method === "notifications/tools/list_changed").length, 1);
  await h.close();
});

Deno.test("no server→client request is written to a modern agent", async () => {
  const h: Awaited<ReturnType<typeof rawShell>> = await rawShell({
    callTool: async (_request, ctx) => {
      const send = (request: unknown) => Promise.resolve().then(() => ctx.mcpReq.send(request as never));
      const outcomes = await Promise.allSettled([
        send(
          {
            method: "elicitation/create",
            params: { message: "?", requestedSchema: { type: "object", properties: {} } },
          } as never,
        ),
        send({ method: "roots/list" }),
        send({ method: "ping" }),
        // Past the SDK's own era check: straight to the connection's transport.
        h.shell.server.transport!.send({
          jsonrpc: "2.0",
          id: 99,
          method: "sampling/createMessage",
          params: {},
        }),
      ]);
      return { content: [{ type: "text", text: outcomes.map((o) => o.status).join(",") }] };
    },
  });
  const meta = modernMeta({ "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, roots: {} } });
  await h.send({ id: 1, method: "tools/call", params: { _meta: meta, name: "execute" } });
  const { result } = await h.answer(1);
  assert.equal(result.content[0].text, "rejected,rejected,rejected,rejected");
  assert.deepEqual(h.lines.filter((m) => "method" in m && "id" in m), []);
  await h.close();
});

/** A client transport over the stdin/stdout pair of a shell. */
async function pairedClientTransport(): Promise<
  { transport: Transport; closed: Promise<void>; shellHandlers: (h: ToolHandlers) => void }
> {
  const toServer = new TransformStream<Uint8Array, Uint8Array>();
  const fromServer = new TransformStream<Uint8Array, Uint8Array>();
  const shell = await connectServerShell(
    new LineStdioServerTransport({ input: toServer.readable, output: fromServer.writable }),
  );
  const writer = toServer.writable.getWriter();
  const reader = fromServer.readable.pipeThrough(new TextDecoderStream()).getReader();
  const transport: Transport = {
    start() {
      void (async () => {
        let buffered = "";
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          buffered += chunk.value;
          for (let at = buffered.indexOf("\n"); at !== -1; at = buffered.indexOf("\n")) {
            transport.onmessage?.(JSON.parse(buffered.slice(0, at)));
            buffered = buffered.slice(at + 1);
          }
        }
      })();
      return Promise.resolve();
    },
    async send(message) {
      await writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
    },
    async close() {
      await writer.close().catch(() => {});
      transport.onclose?.();
    },
  };
  return { transport, closed: shell.closed, shellHandlers: (h) => shell.supply(h) };
}

Deno.test("the SDK client with version negotiation stays modern with the shell", async () => {
  const { transport, closed, shellHandlers } = await pairedClientTransport();
  const eras: CallEra[] = [];
  shellHandlers({
    listTools: () => Promise.resolve({ tools: [{ name: "execute", inputSchema: { type: "object" } }] }),
    callTool: (_request, _ctx, call) => {
      eras.push(call);
      return Promise.resolve({ content: [{ type: "text", text: "ok" }] });
    },
    setLevel: () => {},
  });
  const client = new Client({ name: "modern-agent", version: "2" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(transport);
  assert.equal(client.getProtocolEra(), "modern");
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  assert.equal(client.getInstructions(), INSTRUCTIONS);
  assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ["execute"]);
  await client.callTool({ name: "execute", arguments: { script: "1" } });
  assert.equal(eras[0]!.era, "modern");
  assert.equal(eras[0]!.clientInfo?.name, "modern-agent");
  await client.close();
  await closed;
});

Deno.test("methods the modern era removed get -32601 from a modern request (logging/setLevel, ping, initialize)", async () => {
  const h = await rawShell();
  await h.send({ id: 1, method: "logging/setLevel", params: { _meta: modernMeta() } });
  assert.equal((await h.answer(1)).error.code, -32601);
  await h.send({ id: 2, method: "ping", params: { _meta: modernMeta() } });
  assert.equal((await h.answer(2)).error.code, -32601);
  await h.close();
});

Deno.test("a modern tools/call gets its progress notifications and can be cancelled, as today", async () => {
  let aborted = false;
  const h = await rawShell({
    callTool: async (_request, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      if (progressToken !== undefined) {
        await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken, progress: 1 } });
        return { content: [] };
      }
      const signal = ctx.mcpReq.signal;
      if (!signal.aborted) {
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
      }
      aborted = true;
      return { content: [] };
    },
  });
  await h.send({
    id: 1,
    method: "tools/call",
    params: { _meta: modernMeta({ progressToken: "p1" }), name: "execute" },
  });
  await h.answer(1);
  const progress = h.lines.find((m) => m.method === "notifications/progress");
  assert.equal(progress?.params.progressToken, "p1");
  await h.send({ id: 2, method: "tools/call", params: { _meta: modernMeta(), name: "execute" } });
  await h.send({ method: "notifications/cancelled", params: { requestId: 2, _meta: modernMeta() } });
  for (let i = 0; i < 500 && !aborted; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(aborted, true, "the cancelled call's signal did not abort");
  await h.close();
});

Deno.test("subscriptions/listen past MAX_OPEN_SUBSCRIPTIONS is refused with -32602; the open ones go on", async () => {
  const h = await rawShell();
  const listen = (id: string) =>
    h.send({
      id,
      method: "subscriptions/listen",
      params: { _meta: modernMeta(), notifications: { toolsListChanged: true } },
    });
  for (let i = 0; i < MAX_OPEN_SUBSCRIPTIONS; i++) await listen(`s${i}`);
  await h.until((m) =>
    m.method === "notifications/subscriptions/acknowledged" &&
    m.params._meta["io.modelcontextprotocol/subscriptionId"] === `s${MAX_OPEN_SUBSCRIPTIONS - 1}`
  );
  await listen("one-too-many");
  const refused = await h.answer("one-too-many");
  assert.equal(refused.error.code, -32602);
  assert.match(refused.error.message, /16 are open/);
  await h.shell.server.sendToolListChanged();
  await h.until((m) =>
    m.method === "notifications/tools/list_changed" &&
    m.params._meta["io.modelcontextprotocol/subscriptionId"] === "s0"
  );
  await h.close();
});
