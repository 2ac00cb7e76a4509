import assert from "node:assert/strict";
import type { ElicitRequestParams, LoggingLevel } from "@modelcontextprotocol/client";
import { connectStdio } from "../../lib/backends/stdio.ts";
import { connectHttp } from "../../lib/backends/http.ts";
import type { HttpServerSpec } from "../../lib/plugins/server_spec.ts";
import { startModernHttp } from "../../testdata/servers/modern_server.ts";
import type { ConnectContext } from "../../lib/backends/stdio.ts";
import type { BackendPeer } from "../../lib/backends/connection.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { ServerPool } from "../../lib/backends/pool.ts";
import { fixtureSpec, REPO } from "../_fakes_backends.ts";

const MODERN = `${REPO}testdata/servers/modern_server.ts`;
const LOG_LEVEL = "io.modelcontextprotocol/logLevel";

/** A stdio spec running `testdata/servers/modern_server.ts` with `flags`, recording its wire to `wire`. */
function modernSpec(name: string, flags: string[], wire: string) {
  const spec = fixtureSpec(name);
  return {
    ...spec,
    args: ["run", "-A", "--quiet", "--config", `${REPO}deno.json`, MODERN, ...flags, `--wire=${wire}`],
  };
}

function ctx(extra: Partial<ConnectContext> = {}): ConnectContext {
  return { shutdownGraceMs: 1_000, logger: createMemoryLogger([]), now: Date.now, ...extra };
}

/** The messages the fixture received, one per line of `wire`. */
async function wireOf(wire: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(wire).catch(() => "");
  return text.split("\n").filter((l) => l).map((l) => JSON.parse(l));
}

/** A peer that answers every elicitation with `value` and records what it was asked. */
function answeringPeer(value: string, asked: ElicitRequestParams[]): BackendPeer {
  return {
    capabilities: () => ({ elicitation: { form: {} } }),
    elicit: (params) => {
      asked.push(params);
      return Promise.resolve({ action: "accept", content: { value } });
    },
    sample: () => Promise.reject(new Error("no sampling")),
    elicitationComplete: () => {},
    log: () => {},
    logLevel: () => undefined as LoggingLevel | undefined,
    onLogLevel: () => () => {},
  };
}

Deno.test("connectStdio() speaks 2026-07-28 to a modern-only stdio server: no initialize, _meta on every request", async () => {
  const wire = await Deno.makeTempFile();
  const conn = await connectStdio(
    modernSpec("modern", ["--stdio=modern"], wire),
    ctx({ onToolListChanged: () => {} }),
  );
  try {
    assert.equal(conn.era, "modern");
    assert.equal(conn.protocolVersion, "2026-07-28");
    const { tools } = await conn.listTools({ timeoutMs: 5_000 });
    assert.deepEqual(tools.map((t) => t.name).sort(), ["ask", "echo"]);
    assert.deepEqual(conn.toolListHints, { ttlMs: 60_000, cacheScope: "public" });
    const result = await conn.callTool("echo", { text: "hi" }, { timeoutMs: 5_000 });
    assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
  } finally {
    await conn.close();
  }
  const messages = await wireOf(wire);
  assert.equal(messages[0]?.method, "server/discover");
  const listen = messages.find((m) => m.method === "subscriptions/listen");
  assert.deepEqual((listen?.params as { notifications?: unknown })?.notifications, {
    toolsListChanged: true,
  });
  assert.ok(!messages.some((m) => m.method === "initialize"), "no initialize");
  for (const m of messages.filter((m) => m.id !== undefined)) {
    const meta = (m.params as { _meta?: Record<string, unknown> })._meta ?? {};
    assert.equal(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28", JSON.stringify(m));
    assert.ok(meta["io.modelcontextprotocol/clientInfo"], `clientInfo in ${m.method}`);
    assert.ok(meta["io.modelcontextprotocol/clientCapabilities"], `clientCapabilities in ${m.method}`);
  }
  await Deno.remove(wire);
});

Deno.test("connectStdio() uses a dual-era stdio server in the modern era", async () => {
  const wire = await Deno.makeTempFile();
  const conn = await connectStdio(modernSpec("dual", ["--stdio=dual"], wire), ctx());
  try {
    assert.equal(conn.era, "modern");
    const result = await conn.callTool("echo", { text: "both" }, { timeoutMs: 5_000 });
    assert.deepEqual(result.content, [{ type: "text", text: "both" }]);
  } finally {
    await conn.close();
  }
  assert.ok(!(await wireOf(wire)).some((m) => m.method === "initialize"));
  await Deno.remove(wire);
});

Deno.test("connectStdio() keeps a legacy stdio server in the legacy era", async () => {
  const conn = await connectStdio(fixtureSpec("meta_files"), ctx());
  try {
    assert.equal(conn.era, "legacy");
    const result = await conn.callTool("echo", { message: "old" }, { timeoutMs: 5_000 });
    assert.deepEqual(result.content, [{ type: "text", text: "old" }]);
  } finally {
    await conn.close();
  }
});

Deno.test("an input_required tool call of a modern server: elicitation to the peer, roots by us, retried with requestState", async () => {
  const wire = await Deno.makeTempFile();
  const asked: ElicitRequestParams[] = [];
  const conn = await connectStdio(
    modernSpec("asker", ["--stdio=modern"], wire),
    ctx({ peer: answeringPeer("blue", asked), roots: () => [{ uri: "file:///work/space", name: "space" }] }),
  );
  try {
    const result = await conn.callTool("ask", { question: "colour?" }, { timeoutMs: 5_000 });
    assert.deepEqual(result.content, [{ type: "text", text: "blue @ file:///work/space" }]);
  } finally {
    await conn.close();
  }
  assert.equal(asked.length, 1, "roots/list never reaches the peer");
  assert.equal(asked[0]?.message, "colour?");
  const calls = (await wireOf(wire)).filter((m) => m.method === "tools/call");
  assert.equal(calls.length, 3);
  const ids = new Set(calls.map((c) => c.id));
  assert.equal(ids.size, 3, "each retry has a fresh id");
  const params = calls.map((c) => c.params as Record<string, unknown>);
  assert.equal(params[0]!.requestState, undefined);
  assert.equal(params[1]!.requestState, "state-1");
  assert.deepEqual(params[1]!.inputResponses, { answer: { action: "accept", content: { value: "blue" } } });
  assert.equal(params[2]!.requestState, "state-2:blue");
  assert.deepEqual(params[2]!.inputResponses, {
    roots: { roots: [{ uri: "file:///work/space", name: "space" }] },
  });
  await Deno.remove(wire);
});

function httpSpec(url: string): HttpServerSpec {
  return {
    transport: "http",
    name: "remote",
    plugin: "fixtures",
    location: { file: "plugins/fixtures/SYMPOSIUM.toml", line: 1, column: 1 },
    startupTimeoutMs: 10_000,
    toolCallTimeoutMs: 10_000,
    url,
    headers: {},
  };
}

for (const legacy of ["reject", "stateless"] as const) {
  Deno.test(`connectHttp() speaks 2026-07-28 to a createMcpHandler server (legacy: ${legacy}): headers, _meta, no session`, async () => {
    const fixture = startModernHttp(legacy);
    try {
      const conn = await connectHttp(httpSpec(fixture.url), {
        ...ctx(),
        peer: answeringPeer("red", []),
        roots: () => [{ uri: "file:///ws", name: "ws" }],
      });
      assert.equal(conn.era, "modern");
      const result = await conn.callTool("echo", { text: "over http" }, { timeoutMs: 5_000 });
      assert.deepEqual(result.content, [{ type: "text", text: "over http" }]);
      const asked = await conn.callTool("ask", { question: "colour?" }, { timeoutMs: 5_000 });
      assert.match(String((asked.content[0] as { text: string }).text), /^red @ file:/);
      const trace = {
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
        tracestate: "k=v",
      };
      const bare = await conn.callTool("bare", {}, { timeoutMs: 5_000, trace });
      assert.deepEqual(bare.content, [{ type: "text", text: "bare" }], "no resultType: complete");
      const list = await conn.callTool("list", {}, { timeoutMs: 5_000 });
      assert.deepEqual(list.structuredContent, [1, 2], "structuredContent may be any JSON value");
      await assert.rejects(conn.callTool("cut", {}, { timeoutMs: 30_000 }), {
        code: "REQUEST_FAILED",
        message: /remote\.cut failed: the response stream broke before the result .*not sent again/,
      });
      const spoofed = { traceparent: "not-a-trace\r\nx: y" };
      await conn.callTool("echo", { text: "t" }, { timeoutMs: 5_000, trace: spoofed });
      await conn.close();
    } finally {
      await fixture.stop();
    }
    const posts = fixture.hits.filter((h) => h.method === "POST");
    assert.ok(!posts.some((h) => JSON.parse(h.body).method === "initialize"), "no initialize");
    assert.ok(
      !fixture.hits.some((h) => h.method === "GET" || h.method === "DELETE"),
      "no GET stream, no DELETE",
    );
    const calls = posts.map((h) => JSON.parse(h.body)).filter((b) => b.method === "tools/call");
    assert.equal(
      calls.filter((b) => b.params.name === "cut").length,
      1,
      "a broken stream is reported, not re-sent",
    );
    const bareMeta = calls.find((b) => b.params.name === "bare").params._meta;
    assert.equal(bareMeta.traceparent, "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
    assert.equal(bareMeta.tracestate, "k=v");
    assert.equal(
      bareMeta["io.modelcontextprotocol/logLevel"],
      undefined,
      "no log level the agent did not ask for",
    );
    assert.equal(calls.at(-1).params._meta.traceparent, undefined, "a malformed traceparent is dropped");
    for (const hit of posts) {
      const body = JSON.parse(hit.body);
      assert.equal(hit.headers["mcp-session-id"], undefined);
      assert.equal(hit.headers["mcp-protocol-version"], "2026-07-28");
      assert.equal(hit.headers["mcp-method"], body.method);
      if (body.method === "tools/call") assert.equal(hit.headers["mcp-name"], body.params.name);
      assert.equal(body.params?._meta?.["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    }
  });
}

Deno.test("a modern request asks for a log level only when the agent asked for one", async () => {
  const wire = await Deno.makeTempFile();
  let level: LoggingLevel | undefined;
  const peer = { ...answeringPeer("x", []), logLevel: () => level };
  const conn = await connectStdio(modernSpec("logs", ["--stdio=modern"], wire), ctx({ peer }));
  try {
    await conn.callTool("echo", { text: "quiet" }, { timeoutMs: 5_000 });
    level = "warning";
    await conn.callTool("echo", { text: "loud" }, { timeoutMs: 5_000 });
  } finally {
    await conn.close();
  }
  const calls = (await wireOf(wire)).filter((m) => m.method === "tools/call");
  const levels = calls.map((m) => (m.params as { _meta: Record<string, unknown> })._meta[LOG_LEVEL]);
  assert.deepEqual(levels, [undefined, "warning"]);
  assert.ok(!(await wireOf(wire)).some((m) => m.method === "logging/setLevel"));
  await Deno.remove(wire);
});

Deno.test("the pool starts a server cached as legacy without the probe, and probes when that start fails", async () => {
  const wire = await Deno.makeTempFile();
  const lines: string[] = [];
  const pool = new ServerPool({
    logger: createMemoryLogger(lines),
    priorEra: () => Promise.resolve("legacy"),
  });
  try {
    const conn = await pool.acquire(modernSpec("moved", ["--stdio=modern"], wire));
    assert.equal(conn.era, "modern");
  } finally {
    await pool.close();
  }
  assert.ok(lines.some((l) => l.includes("start as a legacy server failed")), lines.join("\n"));
  const methods = (await wireOf(wire)).map((m) => m.method);
  assert.equal(methods[0], "initialize", "the cached verdict: no probe");
  assert.ok(methods.includes("server/discover"), "then probed");
  await Deno.remove(wire);
});

Deno.test("a legacy stdio server that never answers server/discover is used after the probe's timeout", async () => {
  const spec = {
    ...fixtureSpec("silent"),
    startupTimeoutMs: 6_000, // the probe waits 3 s
    args: [
      "run",
      "-A",
      "--quiet",
      "--config",
      `${REPO}deno.json`,
      `${REPO}testdata/servers/silent_legacy.ts`,
    ],
  };
  const conn = await connectStdio(spec, ctx());
  try {
    assert.equal(conn.era, "legacy");
    const result = await conn.callTool("echo", { text: "late" }, { timeoutMs: 5_000 });
    assert.deepEqual(result.content, [{ type: "text", text: "late" }]);
  } finally {
    await conn.close();
  }
});

Deno.test("a start cancelled during the server/discover probe ends then, not when the probe times out", async () => {
  const spec = {
    ...fixtureSpec("silent"),
    startupTimeoutMs: 60_000, // the probe waits its longest, 10 s
    args: [
      "run",
      "-A",
      "--quiet",
      "--config",
      `${REPO}deno.json`,
      `${REPO}testdata/servers/silent_legacy.ts`,
    ],
  };
  const abort = new AbortController();
  const spawned = Promise.withResolvers<void>();
  const lines: string[] = [];
  const logger = createMemoryLogger(lines);
  const start = connectStdio(spec, ctx({ signal: abort.signal, logger }));
  start.catch(() => {});
  // Cancel once the process is up and the probe is waiting for an answer that never comes.
  const poll = setInterval(() => lines.some((l) => l.includes("spawned pid")) && spawned.resolve(), 20);
  await spawned.promise;
  clearInterval(poll);
  abort.abort(new Error("stop"));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const probeOver = new Promise<"probe timed out">((resolve) => {
    timer = setTimeout(() => resolve("probe timed out"), 10_000);
  });
  const outcome = await Promise.race([start.then(() => "connected", (e) => e.code), probeOver]);
  clearTimeout(timer);
  await start.catch(() => {}); // the process is gone before the test ends
  assert.equal(outcome, "CANCELLED");
});

Deno.test("the pool starts a legacy stdio server that exits on the probe once more without it", async () => {
  const lines: string[] = [];
  const pool = new ServerPool({ logger: createMemoryLogger(lines) });
  const spec = {
    ...fixtureSpec("exits-on-probe"),
    args: [
      "run",
      "-A",
      "--quiet",
      "--config",
      `${REPO}deno.json`,
      `${REPO}testdata/servers/silent_legacy.ts`,
      "--exit-before-initialize",
    ],
  };
  try {
    const conn = await pool.acquire(spec);
    assert.equal(conn.era, "legacy");
    const result = await conn.callTool("echo", { text: "still here" }, { timeoutMs: 5_000 });
    assert.deepEqual(result.content, [{ type: "text", text: "still here" }]);
  } finally {
    await pool.close();
  }
  assert.ok(lines.some((l) => l.includes("trying legacy")), lines.join("\n"));
});
