/**
 * What the endpoint policy and the pinned connection cost per request on loopback: plain `fetch`
 * against the guarded fetch (policy check + node:http with a pinned lookup, keep-alive), and one
 * MCP `tools/call` over the http backend.
 */
import { createGuardedFetch } from "../lib/net/guarded_fetch.ts";
import { connectHttp } from "../lib/backends/http.ts";
import { NULL_LOGGER } from "../lib/log.ts";
import { startHttpFixture } from "../testdata/servers/http_server.ts";

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => new Response("ok"));
const url = `http://127.0.0.1:${server.addr.port}/`;
const localhostUrl = `http://localhost:${server.addr.port}/`;
const guarded = createGuardedFetch();
const fixture = startHttpFixture();
const conn = await connectHttp({
  transport: "http",
  name: "bench",
  plugin: "bench",
  location: { file: "bench", line: 1, column: 1 },
  startupTimeoutMs: 10_000,
  toolCallTimeoutMs: 10_000,
  url: fixture.url,
  headers: {},
}, { logger: NULL_LOGGER, now: Date.now, shutdownGraceMs: 1_000 });

Deno.bench("fetch() POST, loopback literal", { group: "request", baseline: true }, async () => {
  await (await fetch(url, { method: "POST", body: "{}" })).text();
});
Deno.bench("guarded fetch POST, loopback literal", { group: "request" }, async () => {
  await (await guarded(url, { method: "POST", body: "{}" })).text();
});
Deno.bench("guarded fetch POST, localhost (system resolver each request)", { group: "request" }, async () => {
  await (await guarded(localhostUrl, { method: "POST", body: "{}" })).text();
});
Deno.bench("connectHttp() callTool echo", async () => {
  await conn.callTool("echo", { text: "x" }, { timeoutMs: 10_000 });
});

globalThis.addEventListener("unload", () => {
  guarded.close();
});
