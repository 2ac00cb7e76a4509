/**
 * MCP 2026-07-28 backing servers for tests, built with the SDK 2.4.0 server's era-aware entries:
 *
 * - `--stdio=modern`: `serveStdio(…, { legacy: "reject" })`, modern only (refuses `initialize`);
 * - `--stdio=dual`: `serveStdio(…)`, both eras (the opening request decides);
 * - `--http=modern`: `createMcpHandler(…, { legacy: "reject" })` on 127.0.0.1 (prints `listening <url>`);
 * - `--http=dual`: `createMcpHandler(…, { legacy: "stateless" })`.
 *
 * `--wire=<file>` appends every message the server receives (stdio) or every request with its headers
 * (HTTP), one JSON object a line, so tests can assert on the wire.
 *
 * Tools: `echo({text})` → `text`; `ask({question})` answers `input_required` with an elicitation, then
 * with a `roots/list` input request, then completes with `"<answer> @ <first root uri>"`; `ttl` is listed with
 * `ttlMs` 60,000 and `cacheScope` `"public"` (every `tools/list`). Over HTTP, a `tools/call` of `bare` is
 * answered by hand without `resultType`, one of `list` with an array as `structuredContent`, and one of `cut` with a response stream that breaks before the result.
 *
 * @module
 */
import { createMcpHandler, inputRequired, McpServer } from "@modelcontextprotocol/server";
import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { z } from "zod";

const flag = (name: string) => Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const wireFile = flag("wire");

/** Appends one line of JSON to the wire file, when there is one. */
function record(entry: unknown): void {
  if (wireFile) Deno.writeTextFileSync(wireFile, JSON.stringify(entry) + "\n", { append: true });
}

/** One server instance (the entries build one per connection or request). */
function build(): McpServer {
  const server = new McpServer({ name: "modern-fixture", version: "1.0.0" }, {
    capabilities: { tools: { listChanged: true }, logging: {} },
    cacheHints: { "tools/list": { ttlMs: 60_000, cacheScope: "public" } },
  });
  server.registerTool(
    "echo",
    { description: "Echoes text", inputSchema: z.object({ text: z.string() }) },
    ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerTool(
    "ask",
    { description: "Asks the user, then lists roots", inputSchema: z.object({ question: z.string() }) },
    ({ question }, ctx) => {
      const responses = ctx.mcpReq.inputResponses ?? {};
      const state = ctx.mcpReq.requestState<string>();
      const answer = responses.answer as { action?: string; content?: { value?: string } } | undefined;
      const roots = responses.roots as { roots?: { uri: string }[] } | undefined;
      if (answer === undefined && state === undefined) {
        return inputRequired({
          inputRequests: { answer: inputRequired.elicit({ message: question, requestedSchema: { type: "object", properties: { value: { type: "string" } } } }) },
          requestState: "state-1",
        });
      }
      if (roots === undefined) {
        return inputRequired({
          inputRequests: { roots: inputRequired.listRoots() },
          requestState: `state-2:${answer?.content?.value ?? answer?.action}`,
        });
      }
      return {
        content: [{ type: "text", text: `${state?.slice("state-2:".length)} @ ${roots.roots?.[0]?.uri}` }],
      };
    },
  );
  return server;
}

/** A stdio transport that records each message it receives. */
function recordingStdio(): Transport {
  const transport = new StdioServerTransport();
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    const deliver = transport.onmessage;
    transport.onmessage = (message: JSONRPCMessage, extra?: unknown) => {
      record(message);
      (deliver as (m: JSONRPCMessage, e?: unknown) => void)?.(message, extra);
    };
  };
  return transport;
}

/** One HTTP request as the modern fixture saw it. */
export interface ModernHit {
  method: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Serves the tools above over streamable HTTP on 127.0.0.1 (any free port) with `createMcpHandler`:
 * `"reject"` = modern only, `"stateless"` = both eras. `hits` records every request.
 */
export function startModernHttp(legacy: "reject" | "stateless"): {
  url: string;
  hits: ModernHit[];
  stop: () => Promise<void>;
} {
  const hits: ModernHit[] = [];
  const handler = createMcpHandler(build, { legacy });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const body = request.method === "POST" ? await request.clone().text() : "";
    const hit = { method: request.method, headers: Object.fromEntries(request.headers), body };
    hits.push(hit);
    record(hit);
    const message = body ? JSON.parse(body) : {};
    if (message.method === "tools/call" && message.params?.name === "bare") {
      // A result without `resultType` (a server written by hand): complete, by the spec.
      return Response.json({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: "bare" }] } });
    }
    if (message.method === "tools/call" && message.params?.name === "list") {
      const result = { resultType: "complete", content: [{ type: "text", text: "[1,2]" }], structuredContent: [1, 2] };
      return Response.json({ jsonrpc: "2.0", id: message.id, result });
    }
    if (message.method === "tools/call" && message.params?.name === "cut") {
      // The response stream opens, then breaks before the result.
      const stream = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(": opened\n\n"));
          setTimeout(() => controller.error(new Error("cut")), 50);
        },
      });
      return new Response(stream, { headers: { "content-type": "text/event-stream" } });
    }
    return handler.fetch(request);
  });
  return { url: `http://127.0.0.1:${server.addr.port}/mcp`, hits, stop: () => server.shutdown() };
}

if (import.meta.main) {
  const stdio = flag("stdio");
  const http = flag("http");
  if (stdio) {
    serveStdio(build, { legacy: stdio === "modern" ? "reject" : "serve", transport: recordingStdio() });
  } else if (http) console.log(`listening ${startModernHttp(http === "modern" ? "reject" : "stateless").url}`);
}
