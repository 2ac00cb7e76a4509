/**
 * A streamable HTTP MCP server for tests: SDK v2 `McpServer` over the web-standard streamable
 * HTTP server transport (one transport per session) on `Deno.serve`, bound to 127.0.0.1 only.
 * Switches make it misbehave the ways a remote server can:
 *
 * - `requireHeader`: answer 401 with a `WWW-Authenticate` challenge unless the header has this value;
 * - `unauthorized`: answer every request with this status (401/403) and challenge;
 * - `redirectTo`: answer every request with 302 to this `Location`;
 * - `expireSessions()`: forget every session, so requests with an old session id get 404;
 * - `stop()` / `restart()`: go away (connections refused) and come back on the same port.
 *
 * Tools: `echo({text})` → `text`; `add({a, b})` → the sum; `slow({ms})` → waits, then `"done"`.
 *
 * Run directly (`deno run --allow-net --allow-read testdata/servers/http_server.ts [--port=N]
 * [--hostname=A] [--tls-cert=PEM --tls-key=PEM] [--require-header=K:V]`) it prints
 * `listening <url>` on stdout and serves until killed. `--hostname` other than 127.0.0.1 is only for
 * a test host inside a network namespace that the test made.
 *
 * @module
 */
import { McpServer, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { z } from "zod";

/** Switches of {@link startHttpFixture}. */
export interface HttpFixtureOptions {
  /** @default 0 (any free port) */
  port?: number;
  /** Address to listen on. @default "127.0.0.1" (a test host's address only inside a test network namespace) */
  hostname?: string;
  /** PEM certificate and key: serve https. */
  tls?: { cert: string; key: string } | undefined;
  /** `serverInfo.name`. @default "http-fixture" */
  name?: string;
  requireHeader?: { name: string; value: string } | undefined;
  unauthorized?: { status: 401 | 403; challenge: string } | undefined;
  redirectTo?: string | undefined;
}

/** One HTTP request as the fixture saw it. */
export interface FixtureHit {
  method: string;
  path: string;
  sessionId: string | null;
  protocolVersion: string | null;
  /** The JSON-RPC method of a POST body (`"initialize"`, `"tools/call"`, …), when there is one. */
  rpcMethod: string | undefined;
  headers: Headers;
  status: number;
}

/** A running fixture. */
export interface HttpFixture {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  port: number;
  hits: FixtureHit[];
  /** Session ids handed out, in order. */
  sessions: string[];
  /** Switches may be changed while running. */
  options: HttpFixtureOptions;
  /** Forgets every session: the next request with an old id gets 404. */
  expireSessions(): Promise<void>;
  /** Stops listening (connections are refused until {@link restart}). Sessions are lost. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): void;
  /** Stops for good. */
  close(): Promise<void>;
}

function newMcpServer(name: string): McpServer {
  const server = new McpServer({ name, version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Returns its text", inputSchema: z.object({ text: z.string() }) },
    ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerTool(
    "add",
    { description: "Adds two numbers", inputSchema: z.object({ a: z.number(), b: z.number() }) },
    ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  server.registerTool(
    "slow",
    { description: "Waits, then answers", inputSchema: z.object({ ms: z.number() }) },
    async ({ ms }) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: "text", text: "done" }] };
    },
  );
  return server;
}

const jsonRpcError = (status: number, message: string, headers: Record<string, string> = {}) =>
  Response.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, { status, headers });

/** Starts the fixture on 127.0.0.1. */
export function startHttpFixture(options: HttpFixtureOptions = {}): HttpFixture {
  const transports = new Map<string, { transport: WebStandardStreamableHTTPServerTransport; server: McpServer }>();
  const hits: FixtureHit[] = [];
  const sessions: string[] = [];

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const sessionId = request.headers.get("mcp-session-id");
    let rpcMethod: string | undefined;
    let body: unknown;
    if (request.method === "POST") {
      body = await request.json().catch(() => undefined);
      const m = (body as { method?: unknown } | undefined)?.method;
      rpcMethod = typeof m === "string" ? m : undefined;
    }
    const hit: FixtureHit = {
      method: request.method,
      path: url.pathname,
      sessionId,
      protocolVersion: request.headers.get("mcp-protocol-version"),
      rpcMethod,
      headers: request.headers,
      status: 0,
    };
    hits.push(hit);
    const answer = await route(request, url, sessionId, rpcMethod, body);
    hit.status = answer.status;
    return answer;
  }

  async function route(
    request: Request,
    url: URL,
    sessionId: string | null,
    rpcMethod: string | undefined,
    body: unknown,
  ): Promise<Response> {
    if (url.pathname !== "/mcp") return new Response("not found", { status: 404 });
    if (fixture.options.redirectTo) {
      return new Response(null, { status: 302, headers: { location: fixture.options.redirectTo } });
    }
    const deny = fixture.options.unauthorized;
    if (deny) return jsonRpcError(deny.status, "unauthorized", { "www-authenticate": deny.challenge });
    const required = fixture.options.requireHeader;
    if (required && request.headers.get(required.name) !== required.value) {
      return jsonRpcError(401, `missing or wrong ${required.name}`, {
        "www-authenticate": `Bearer realm="fixture", error="invalid_token"`,
      });
    }
    if (sessionId !== null) {
      const entry = transports.get(sessionId);
      if (!entry) return jsonRpcError(404, "Session not found");
      return await entry.transport.handleRequest(request, { parsedBody: body });
    }
    if (request.method !== "POST" || rpcMethod !== "initialize") {
      return jsonRpcError(400, "Bad Request: no session id");
    }
    const server = newMcpServer(fixture.options.name ?? "http-fixture");
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => {
        sessions.push(id);
        transports.set(id, { transport, server });
      },
      onsessionclosed: (id) => {
        transports.delete(id);
      },
    });
    await server.connect(transport);
    return await transport.handleRequest(request, { parsedBody: body });
  }

  let httpServer: Deno.HttpServer<Deno.NetAddr> | undefined;
  const hostname = options.hostname ?? "127.0.0.1";
  const listen = (port: number) => Deno.serve({ hostname, port, onListen() {}, ...(options.tls ?? {}) }, handle);
  httpServer = listen(options.port ?? 0);
  const port = httpServer.addr.port;

  async function dropSessions(): Promise<void> {
    const all = [...transports.values()];
    transports.clear();
    await Promise.all(all.map(({ server }) => server.close()));
  }

  const fixture: HttpFixture = {
    url: `${options.tls ? "https" : "http"}://${hostname}:${port}/mcp`,
    port,
    hits,
    sessions,
    options,
    expireSessions: dropSessions,
    async stop() {
      const server = httpServer;
      httpServer = undefined;
      await dropSessions();
      await server?.shutdown();
    },
    restart() {
      httpServer ??= listen(port);
    },
    close() {
      return fixture.stop();
    },
  };
  return fixture;
}

if (import.meta.main) {
  const flag = (name: string) => Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const header = flag("require-header");
  const sep = header?.indexOf(":") ?? -1;
  const cert = flag("tls-cert");
  const key = flag("tls-key");
  const fixture = startHttpFixture({
    port: Number(flag("port") ?? 0),
    hostname: flag("hostname") ?? "127.0.0.1",
    ...(cert && key ? { tls: { cert: Deno.readTextFileSync(cert), key: Deno.readTextFileSync(key) } } : {}),
    ...(header && sep > 0 ? { requireHeader: { name: header.slice(0, sep), value: header.slice(sep + 1) } } : {}),
  });
  console.log(`listening ${fixture.url}`);
}
