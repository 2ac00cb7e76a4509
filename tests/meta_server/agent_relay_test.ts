import assert from "node:assert/strict";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import type { LoggingMessageNotification } from "@modelcontextprotocol/client";
import { Server } from "@modelcontextprotocol/server";
import {
  AgentRelay,
  checkElicitationUrl,
  DROPPED_LOGS_NOTICE_MS,
  MAX_FORWARDED_LOG_BYTES_PER_SECOND,
  MAX_FORWARDED_LOG_MESSAGE_BYTES,
  MAX_FORWARDED_LOGS_PER_SECOND,
} from "../../lib/meta_server/agent_relay.ts";

async function linked(capabilities: Record<string, unknown>, now: () => number) {
  const server = new Server({ name: "s", version: "1" }, { capabilities: { logging: {} } });
  const relay = new AgentRelay(server, { now });
  server.setRequestHandler("logging/setLevel", (request) => {
    relay.setLevel(request.params.level);
    return {};
  });
  const client = new Client({ name: "agent", version: "1" }, { capabilities });
  const logs: LoggingMessageNotification["params"][] = [];
  client.setNotificationHandler("notifications/message", (n) => void logs.push(n.params));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  await client.connect(a);
  return {
    server,
    relay,
    client,
    logs,
    close: async () => {
      relay.close();
      await client.close();
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

Deno.test("AgentRelay forwards at most MAX_FORWARDED_LOGS_PER_SECOND log messages in any second", async () => {
  let nowMs = 0;
  const h = await linked({}, () => nowMs);
  try {
    const peer = h.relay.peerFor("fx");
    for (let i = 0; i < 150; i++) peer.log({ level: "info", data: `m${i}` });
    await settle();
    assert.equal(h.logs.length, MAX_FORWARDED_LOGS_PER_SECOND);
    nowMs = 999;
    peer.log({ level: "info", data: "still inside the window" });
    await settle();
    assert.equal(h.logs.length, MAX_FORWARDED_LOGS_PER_SECOND);
    // The count reaches the agent within DROPPED_LOGS_NOTICE_MS, with no later log line to carry it.
    await new Promise((r) => setTimeout(r, DROPPED_LOGS_NOTICE_MS + 50));
    const [notice] = h.logs.slice(MAX_FORWARDED_LOGS_PER_SECOND);
    assert.match(String(notice!.data), /^51 log message\(s\) from backing servers were dropped/);
    assert.equal(notice!.logger, "symposium");
    nowMs = 1_000;
    peer.log({ level: "info", data: "next window" });
    await settle();
    assert.equal(h.logs.at(-1)!.data, "next window");
  } finally {
    await h.close();
  }
});

Deno.test("AgentRelay drops a log message over MAX_FORWARDED_LOG_MESSAGE_BYTES and bounds the bytes per second", async () => {
  const h = await linked({}, () => 0);
  try {
    const peer = h.relay.peerFor("fx");
    peer.log({ level: "info", data: "x".repeat(MAX_FORWARDED_LOG_MESSAGE_BYTES + 1) });
    for (let i = 0; i < 40; i++) peer.log({ level: "info", data: "y".repeat(60_000) });
    await settle();
    const chars = h.logs.reduce((n, l) => n + String(l.data).length, 0);
    assert.ok(chars <= MAX_FORWARDED_LOG_BYTES_PER_SECOND, `${chars} characters forwarded`);
    assert.equal(h.logs.length, Math.floor(MAX_FORWARDED_LOG_BYTES_PER_SECOND / 60_002));
  } finally {
    await h.close();
  }
});

Deno.test("AgentRelay removes control and bidi characters from relayed log lines", async () => {
  const h = await linked({}, () => 0);
  try {
    h.relay.peerFor("fx").log({
      level: "info",
      logger: "a\u001b[2K",
      data: { m: "ok\r\u0008\u0000\u202Eevil" },
    });
    await settle();
    assert.deepEqual(h.logs.map((l) => [l.logger, l.data]), [["fx/a[2K", { m: "okevil" }]]);
  } finally {
    await h.close();
  }
});

Deno.test("AgentRelay filters by the agent's level and names the server as logger", async () => {
  const h = await linked({}, () => 0);
  try {
    const peer = h.relay.peerFor("github");
    peer.log({ level: "debug", data: "hidden before any setLevel (default info)" });
    peer.log({ level: "info", logger: "api", data: "shown" });
    await h.client.setLoggingLevel("error");
    assert.equal(peer.logLevel(), "error");
    peer.log({ level: "warning", data: "hidden" });
    peer.log({ level: "critical", data: "shown too" });
    await settle();
    assert.deepEqual(h.logs.map((l) => [l.logger, l.data]), [["github/api", "shown"], [
      "github",
      "shown too",
    ]]);
  } finally {
    await h.close();
  }
});

Deno.test("AgentRelay offers only what the agent declared", async () => {
  const none = await linked({}, () => 0);
  const bare = await linked({ elicitation: {} }, () => 0);
  const urlOnly = await linked({ elicitation: { url: {} }, sampling: { tools: {} } }, () => 0);
  try {
    assert.deepEqual(none.relay.peerFor("x").capabilities(), {});
    assert.deepEqual(bare.relay.peerFor("x").capabilities(), {
      elicitation: { form: { applyDefaults: true } },
    });
    assert.equal(bare.relay.canElicitForm(), true);
    assert.deepEqual(urlOnly.relay.peerFor("x").capabilities(), {
      elicitation: { url: {} },
      sampling: { tools: {} },
    });
    assert.equal(urlOnly.relay.canElicitForm(), false);
  } finally {
    await Promise.all([none.close(), bare.close(), urlOnly.close()]);
  }
});

Deno.test("AgentRelay relays a URL-mode elicitation's completion only from the server that asked", async () => {
  const h = await linked({ elicitation: { url: {} } }, () => 0);
  const completed: string[] = [];
  h.client.setNotificationHandler(
    "notifications/elicitation/complete",
    (n) => void completed.push(n.params.elicitationId),
  );
  h.client.setRequestHandler("elicitation/create", () => ({ action: "accept" }));
  try {
    const signal = new AbortController().signal;
    await h.relay.peerFor("a").elicit(
      { mode: "url", message: "Sign in", url: "https://example.com/x", elicitationId: "e-42" },
      signal,
    );
    h.relay.peerFor("b").elicitationComplete("e-42");
    await settle();
    assert.deepEqual(completed, []);
    h.relay.peerFor("a").elicitationComplete("e-42");
    h.relay.peerFor("a").elicitationComplete("e-42");
    await settle();
    assert.deepEqual(completed, ["e-42"]);
  } finally {
    await h.close();
  }
});

Deno.test("checkElicitationUrl() allows https: and loopback http: only", () => {
  const verdicts = [
    "https://example.com/auth",
    "http://127.0.0.1:8080/cb",
    "http://localhost/cb",
    "http://[::1]/cb",
    "http://example.com/",
    "javascript:alert(1)",
    "data:text/html,<b>x</b>",
    "file:///etc/passwd",
    "vscode://x/y",
    "not a url",
  ].map((url) => checkElicitationUrl(url).ok);
  assert.deepEqual(verdicts, [true, true, true, true, false, false, false, false, false, false]);
});

Deno.test("AgentRelay sends a modern agent no request: a question goes to the run that calls its server", async () => {
  // Never initialized: the agent speaks MCP 2026-07-28 and declared its capabilities in `_meta`.
  const server = new Server({ name: "s", version: "1" }, { capabilities: {} });
  const relay = new AgentRelay(server);
  relay.noteModernAgent({ elicitation: { form: {} }, sampling: {} });
  const peer = relay.peerFor("fx");
  assert.deepEqual(peer.capabilities(), { elicitation: { form: { applyDefaults: true } }, sampling: {} });
  // Sampling is offered only to a server started while the agent declares it.
  relay.noteModernAgent({ elicitation: { form: {} } });
  assert.deepEqual(peer.capabilities(), { elicitation: { form: { applyDefaults: true } } });
  const signal = new AbortController().signal;
  const question = { message: "Pick\u202e", requestedSchema: { type: "object" as const, properties: {} } };
  await assert.rejects(peer.elicit(question, signal), /fx asked outside a script's call to it/);
  await assert.rejects(
    peer.sample({ messages: [], maxTokens: 1 }, signal),
    /fx asked outside a script's call to it/,
  );
  await assert.rejects(relay.elicit(question), /asked only while an execute waits/);
  const answer = await relay.runs.answer(
    { tool: "execute", script: "s", timeoutMs: 60_000, signal },
    async (hooks) => {
      const ended = hooks.callStarted("fx");
      try {
        return {
          content: [{ type: "text", text: JSON.stringify(await peer.elicit(question, hooks.signal)) }],
        };
      } finally {
        ended();
      }
    },
  ) as { resultType: string; inputRequests: Record<string, { params: Record<string, unknown> }> };
  assert.equal(answer.resultType, "input_required");
  const asked = answer.inputRequests["fx/1"]!.params;
  assert.equal(asked.message, "[fx] Pick");
  assert.deepEqual(asked._meta, { "symposium/server": "fx" });
  relay.close();
});
