import assert from "node:assert/strict";
import type { HttpServerSpec } from "../../lib/plugins/server_spec.ts";
import { AuthRequiredError, connectHttp, withHttpConnector } from "../../lib/backends/http.ts";
import type { HttpConnectOptions } from "../../lib/backends/http.ts";
import { BackendError } from "../../lib/backends/connection.ts";
import { connectBySpec, ServerPool } from "../../lib/backends/pool.ts";
import { EndpointPolicyError } from "../../lib/net/endpoint_policy.ts";
import { createGuardedFetch } from "../../lib/net/guarded_fetch.ts";
import type { Connector, PinnedRequest } from "../../lib/net/guarded_fetch.ts";
import { CREDENTIALS_FORMAT_VERSION, writeCredentials } from "../../lib/auth/credentials.ts";
import { createMemoryLogger, NULL_LOGGER } from "../../lib/log.ts";
import { startHttpFixture } from "../../testdata/servers/http_server.ts";
import { ManualClock } from "../_fakes_backends.ts";
import { startServerEverything } from "../_fakes_http.ts";

function httpSpec(url: string, overrides: Partial<HttpServerSpec> = {}): HttpServerSpec {
  return {
    transport: "http",
    name: "remote",
    plugin: "fixtures",
    location: { file: "plugins/fixtures/SYMPOSIUM.toml", line: 1, column: 1 },
    startupTimeoutMs: 10_000,
    toolCallTimeoutMs: 10_000,
    url,
    headers: {},
    ...overrides,
  };
}

function context(extra: Partial<HttpConnectOptions> = {}): HttpConnectOptions {
  return { shutdownGraceMs: 1_000, logger: NULL_LOGGER, now: Date.now, ...extra };
}

const CALL = { timeoutMs: 10_000 };

function textOf(result: { content?: unknown }): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  return first?.text ?? "";
}

Deno.test("connectHttp() lists and calls tools with session id and protocol version, and DELETEs the session on close", async () => {
  const fixture = startHttpFixture();
  try {
    const conn = await connectHttp(httpSpec(fixture.url), context());
    const { tools } = await conn.listTools(CALL);
    assert.deepEqual(tools.map((t) => t.name).sort(), ["add", "echo", "slow"]);
    const result = await conn.callTool("add", { a: 2, b: 3 }, CALL);
    assert.deepEqual(result.structuredContent, { sum: 5 });
    assert.equal(conn.serverInfo?.name, "http-fixture");
    await conn.close();
    assert.equal(conn.isClosed, true);
    assert.deepEqual(await conn.ended, { reason: "closed by us", isExpected: true });

    const [sessionId] = fixture.sessions;
    const init = fixture.hits.find((h) => h.rpcMethod === "initialize")!;
    assert.equal(init.sessionId, null, "initialize goes without a session id");
    const call = fixture.hits.find((h) => h.rpcMethod === "tools/call")!;
    assert.equal(call.sessionId, sessionId);
    assert.match(call.protocolVersion ?? "", /^\d{4}-\d{2}-\d{2}$/, "MCP-Protocol-Version after initialize");
    const del = fixture.hits.find((h) => h.method === "DELETE");
    assert.ok(del, "the session is deleted on close");
    assert.equal(del.sessionId, sessionId);
    assert.equal(del.status, 200);
  } finally {
    await fixture.close();
  }
});

Deno.test("connectHttp() sends the manifest headers on every request to the endpoint", async () => {
  const fixture = startHttpFixture({ requireHeader: { name: "x-api-key", value: "k-123" } });
  try {
    const conn = await connectHttp(httpSpec(fixture.url, { headers: { "X-Api-Key": "k-123" } }), context());
    assert.equal(textOf(await conn.callTool("echo", { text: "hi" }, CALL)), "hi");
    await conn.close();
    assert.ok(fixture.hits.length >= 4);
    for (const hit of fixture.hits) {
      assert.equal(hit.headers.get("x-api-key"), "k-123", `${hit.method} ${hit.rpcMethod}`);
    }
  } finally {
    await fixture.close();
  }
});

Deno.test("connectHttp() never logs header values", async () => {
  const fixture = startHttpFixture({
    requireHeader: { name: "authorization", value: "Bearer sk-very-secret" },
  });
  const logger = createMemoryLogger();
  try {
    const spec = httpSpec(fixture.url, { headers: { Authorization: "Bearer sk-very-secret" } });
    const conn = await connectHttp(spec, context({ logger }));
    await conn.callTool("echo", { text: "x" }, CALL);
    await conn.close();
    assert.ok(logger.lines.length > 0, "something was logged");
    for (const line of logger.lines) assert.ok(!line.includes("sk-very-secret"), line);
  } finally {
    await fixture.close();
  }
});

Deno.test("connectHttp() sends the stored sign-in as bearer token", async () => {
  const configDir = await Deno.makeTempDir({ prefix: "http_backend_test_" });
  const fixture = startHttpFixture({
    requireHeader: { name: "authorization", value: "Bearer stored-token" },
  });
  try {
    const spec = httpSpec(fixture.url);
    await writeCredentials(configDir, {
      version: CREDENTIALS_FORMAT_VERSION,
      server: spec.name,
      serverUrl: spec.url,
      tokens: { access_token: "stored-token", token_type: "Bearer" },
    });
    const conn = await connectHttp(spec, context({ configDir }));
    assert.equal(textOf(await conn.callTool("echo", { text: "signed" }, CALL)), "signed");
    await conn.close();
  } finally {
    await fixture.close();
    await Deno.remove(configDir, { recursive: true });
  }
});

Deno.test("connectHttp() reports a 401 at connect as AuthRequiredError naming the login command, keeping the challenge", async () => {
  const challenge =
    'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource", scope="mcp"';
  const fixture = startHttpFixture({ unauthorized: { status: 401, challenge } });
  const configDir = await Deno.makeTempDir({ prefix: "http_backend_test_" });
  try {
    for (const options of [context(), context({ configDir })]) {
      const error = await connectHttp(httpSpec(fixture.url, { name: "linear" }), options).catch((e) => e);
      assert.ok(error instanceof AuthRequiredError, String(error));
      assert.equal(error.code, "NEEDS_SIGN_IN");
      assert.equal(error.server, "linear");
      assert.equal(error.status, 401);
      assert.equal(error.challenge, challenge);
      assert.equal(
        error.message,
        "linear requires authorization (HTTP 401); run `cargo agents mcp login linear`",
      );
      assert.equal(error.hint, "run `cargo agents mcp login linear` to sign in");
    }
  } finally {
    await fixture.close();
    await Deno.remove(configDir, { recursive: true });
  }
});

Deno.test("connectHttp() reports a 403 during a call as AuthRequiredError", async () => {
  const fixture = startHttpFixture();
  try {
    const conn = await connectHttp(httpSpec(fixture.url), context());
    fixture.options.unauthorized = {
      status: 403,
      challenge: 'Bearer error="insufficient_scope", scope="admin"',
    };
    const error = await conn.callTool("echo", { text: "x" }, CALL).catch((e) => e);
    assert.ok(error instanceof AuthRequiredError, String(error));
    assert.equal(error.status, 403);
    assert.match(error.message, /run `cargo agents mcp login remote`/);
    fixture.options.unauthorized = undefined;
    await conn.close();
  } finally {
    await fixture.close();
  }
});

Deno.test("connectHttp() refuses a 302 at connect, naming where it pointed", async () => {
  const fixture = startHttpFixture();
  fixture.options.redirectTo = `http://127.0.0.1:${fixture.port}/other`;
  try {
    const error = await connectHttp(httpSpec(fixture.url), context()).catch((e) => e);
    assert.ok(error instanceof BackendError, String(error));
    assert.equal(error.code, "START_FAILED");
    assert.ok(error.cause instanceof EndpointPolicyError);
    assert.equal(error.cause.code, "ENDPOINT_REDIRECT");
    assert.match(
      error.message,
      new RegExp(`answered 302 redirecting to http://127\\.0\\.0\\.1:${fixture.port}/other`),
    );
    assert.deepEqual(fixture.hits.map((h) => h.path), ["/mcp"], "the redirect was not followed");
  } finally {
    await fixture.close();
  }
});

Deno.test("connectHttp() reports a 404 with its status and a short one-line excerpt, not the whole page", async () => {
  const page =
    `<!DOCTYPE html>\n<html><head><title>Not Found</title><style>body { color: red }</style></head>\n` +
    `<body><h1>Page not found</h1>\n<p>${
      "The page you asked for is not here. ".repeat(200)
    }</p></body></html>`;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(page, { status: 404, headers: { "content-type": "text/html" } }),
  );
  try {
    const url = `http://127.0.0.1:${server.addr.port}/mcp`;
    const error = await connectHttp(httpSpec(url), context()).catch((e) => e);
    assert.ok(error instanceof BackendError, String(error));
    assert.equal(error.code, "START_FAILED");
    assert.match(
      error.message,
      new RegExp(
        `^remote failed to start: ${url} answered HTTP 404( Not Found)?: Not Found Page not found The page`,
      ),
    );
    assert.ok(!error.message.includes("\n") && !error.message.includes("<"), error.message);
    assert.ok(error.message.length < 300, `${error.message.length} characters`);
  } finally {
    await server.shutdown();
  }
});

Deno.test("connectHttp() refuses an endpoint the policy refuses before sending anything", async () => {
  const sent: PinnedRequest[] = [];
  const connector: Connector = {
    send: (r) => (sent.push(r), Promise.resolve(new Response("{}"))),
    close() {},
  };
  const fetch = createGuardedFetch({ server: "internal", connector });
  try {
    const error = await connectHttp(httpSpec("http://10.0.0.1/mcp", { name: "internal" }), context({ fetch }))
      .catch((e) => e);
    assert.ok(error instanceof BackendError);
    assert.equal(error.code, "START_FAILED");
    assert.ok(error.cause instanceof EndpointPolicyError);
    assert.equal(error.cause.code, "ENDPOINT_INSECURE_HTTP");
    assert.match(
      error.message,
      /^Cannot connect to server "internal" at http:\/\/10\.0\.0\.1\/mcp: plain http/,
    );
    assert.ok(error.hint);
    assert.equal(sent.length, 0);
  } finally {
    fetch.close();
  }
});

Deno.test("connectHttp() refuses an invalid header without showing its value", async () => {
  const error = await connectHttp(
    httpSpec("http://127.0.0.1:9/mcp", { headers: { "X-Token": "secret\nvalue" } }),
    context(),
  ).catch((e) => e);
  assert.ok(error instanceof BackendError);
  assert.equal(error.code, "START_FAILED");
  assert.equal(error.message, 'remote failed to start: the value for header "X-Token" is not valid');
  const badName = await connectHttp(
    httpSpec("http://127.0.0.1:9/mcp", { headers: { "Bad Name": "v" } }),
    context(),
  )
    .catch((e) => e);
  assert.equal(badName.message, 'remote failed to start: "Bad Name" is not a valid header name');
});

Deno.test("connectHttp() re-initializes once when the server answers 404 for an expired session", async () => {
  const fixture = startHttpFixture();
  try {
    const conn = await connectHttp(httpSpec(fixture.url), context());
    assert.equal(textOf(await conn.callTool("echo", { text: "one" }, CALL)), "one");
    await fixture.expireSessions();
    assert.equal(textOf(await conn.callTool("echo", { text: "two" }, CALL)), "two");
    assert.equal(fixture.sessions.length, 2, "a second session was initialized");
    const inits = fixture.hits.filter((h) => h.rpcMethod === "initialize");
    assert.equal(inits.length, 2);
    assert.equal(inits[1]!.sessionId, null, "the new initialize carries no stale session id");
    assert.ok(fixture.hits.some((h) => h.status === 404 && h.sessionId === fixture.sessions[0]));
    assert.equal(conn.isClosed, false);
    await conn.close();
    assert.equal(fixture.hits.at(-1)!.method, "DELETE");
    assert.equal(fixture.hits.at(-1)!.sessionId, fixture.sessions[1]);
  } finally {
    await fixture.close();
  }
});

Deno.test("ServerPool with withHttpConnector() restarts a remote server that went away, after backoff", async () => {
  const fixture = startHttpFixture();
  const clock = new ManualClock();
  const pool = new ServerPool({ connect: withHttpConnector(connectBySpec), clock, logger: NULL_LOGGER });
  const spec = httpSpec(fixture.url);
  try {
    const first = await pool.acquire(spec);
    assert.equal(textOf(await first.callTool("echo", { text: "a" }, CALL)), "a");

    await fixture.stop(); // The server goes away mid-session.
    const lost = await first.callTool("echo", { text: "b" }, CALL).catch((e) => e);
    assert.ok(lost instanceof BackendError, String(lost));
    assert.equal(lost.code, "CONNECTION_LOST");
    assert.match(lost.message, /remote: connection lost: 127\.0\.0\.1:\d+ is unreachable/);
    assert.equal((await first.ended).isExpected, false);
    const state = pool.state(spec);
    assert.equal(state.status, "backoff");
    assert.equal(state.nextAttemptAtMs! - clock.now(), 1_000, "first restart after 1 s");

    fixture.restart();
    const second = await pool.acquire(spec); // Waits out the backoff on the manual clock, then reconnects.
    assert.notEqual(second, first);
    assert.deepEqual(clock.sleeps, [1_000]);
    assert.equal(textOf(await second.callTool("echo", { text: "c" }, CALL)), "c");
    assert.equal(pool.state(spec).starts, 2);
  } finally {
    await pool.close();
    await fixture.close();
  }
});

Deno.test("connectHttp() works with @modelcontextprotocol/server-everything in streamable HTTP mode", async () => {
  const everything = await startServerEverything();
  try {
    const conn = await connectHttp(httpSpec(everything.url, { name: "everything" }), context());
    const { tools } = await conn.listTools(CALL);
    assert.ok(tools.some((t) => t.name === "echo"), tools.map((t) => t.name).join(","));
    const result = await conn.callTool("echo", { message: "over http" }, CALL);
    assert.match(textOf(result), /over http/);
    await conn.close();
    assert.match(everything.output(), /Received session termination request/, "the session was deleted");
  } finally {
    await everything.close();
  }
});

Deno.test("connectHttp() checks the configured URL text, which the transport would normalize away", async () => {
  const fixture = startHttpFixture();
  try {
    const error = await connectHttp(httpSpec(`http://0x7f.1:${fixture.port}/mcp`, { name: "odd" }), context())
      .catch((e) => e);
    assert.ok(error instanceof BackendError, String(error));
    assert.equal(error.code, "START_FAILED");
    assert.ok(error.cause instanceof EndpointPolicyError);
    assert.equal(error.cause.code, "ENDPOINT_HOST_NOT_CANONICAL");
    assert.match(error.message, /host "0x7f\.1" is an unusual spelling of 127\.0\.0\.1/);
    assert.equal(fixture.hits.length, 0);
  } finally {
    await fixture.close();
  }
});

Deno.test("connectHttp() fails a pending call with CONNECTION_LOST when the server goes away during it", async () => {
  const fixture = startHttpFixture();
  try {
    const conn = await connectHttp(httpSpec(fixture.url), context());
    const pending = conn.callTool("slow", { ms: 3_000 }, { timeoutMs: 20_000 }).catch((e) => e);
    while (!fixture.hits.some((h) => h.rpcMethod === "tools/call")) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await fixture.stop();
    const error = await pending;
    assert.ok(error instanceof BackendError, String(error));
    assert.equal(error.code, "CONNECTION_LOST", error.message); // Not CALL_TIMEOUT: it did not wait 20 s.
    assert.match(error.message, /^remote: connection lost: 127\.0\.0\.1:\d+ is unreachable/);
    assert.equal((await conn.ended).isExpected, false);
    await conn.close();
  } finally {
    await fixture.close();
  }
});
