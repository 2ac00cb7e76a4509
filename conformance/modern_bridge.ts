/**
 * A loopback Streamable HTTP front for one stdio MCP server in the modern era (MCP 2026-07-28), for the
 * conformance suite, which reaches a server by URL only: `supergateway` speaks the 2025 sessions, not the
 * stateless modern binding. Each POST is one JSON-RPC message, checked by the SDK's HTTP ladder
 * (`classifyInboundRequest`: headers against `_meta`, envelope, method), then written to the server's
 * stdin under an id of the bridge's own (clients of a stateless server reuse ids); the answer, and the
 * notifications that belong to it (its progress, its logs, its subscription's events), come back on the
 * POST's response as an SSE stream. A client that closes the stream cancels the request. 2025-era
 * traffic (`initialize`, no `_meta`) is refused as a modern-only server refuses it: the 0.1.16 run covers
 * that era through `supergateway`.
 *
 * @module
 */
import {
  classifyInboundRequest,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from "@modelcontextprotocol/server";

/** Largest POST body read, in bytes. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
const LOG_LEVEL = "io.modelcontextprotocol/logLevel";

type Json = Record<string, unknown>;

/** One request waiting for the server's answer, with the stream its POST is answered on. */
interface Pending {
  originalId: unknown;
  progressToken: unknown;
  wantsLogs: boolean;
  write(message: Json): void;
  end(): void;
}

/** A running bridge (see {@link startModernBridge}). */
export interface ModernBridge {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Stops the listener, closes the server's stdin and waits for it to exit. */
  close(): Promise<void>;
}

/**
 * Starts the server `command` (stdio) and serves it on `127.0.0.1`, on a free port.
 *
 * @param options.env Environment of the server (the whole of it). @default the bridge's
 * @param options.cwd Working directory of the server.
 */
export function startModernBridge(
  command: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): ModernBridge {
  const child = new Deno.Command(command[0]!, {
    args: command.slice(1),
    ...(options.env ? { env: options.env, clearEnv: true } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const stdin = child.stdin.getWriter();
  const pending = new Map<string, Pending>();
  let nextId = 1;
  const toServer = (message: Json) =>
    stdin.write(new TextEncoder().encode(JSON.stringify(message) + "\n")).catch(() => {});
  const reading = readLines(child.stdout, (message) => route(pending, message));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => answer(request, { pending, toServer, newId: () => `bridge-${nextId++}` }),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    async close() {
      await server.shutdown();
      await stdin.close().catch(() => {});
      await reading;
      await child.status;
    },
  };
}

/** Hands each line of `stdout` to `onMessage`, parsed; lines that are not JSON are skipped. */
async function readLines(stdout: ReadableStream<Uint8Array>, onMessage: (m: Json) => void): Promise<void> {
  let buffered = "";
  for await (const chunk of stdout.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    for (let at = buffered.indexOf("\n"); at !== -1; at = buffered.indexOf("\n")) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      try {
        onMessage(JSON.parse(line));
      } catch {
        // stdout of an MCP server is JSON-RPC only; a stray line has nowhere to go.
      }
    }
  }
}

/** Sends one message from the server to the stream it belongs to. */
function route(pending: Map<string, Pending>, message: Json): void {
  if (!("method" in message)) {
    const waiting = pending.get(String(message.id));
    if (!waiting) return;
    pending.delete(String(message.id));
    waiting.write({ ...message, id: waiting.originalId });
    waiting.end();
    return;
  }
  if ("id" in message) return; // A server→client request: the modern era has none to carry.
  const params = (message.params ?? {}) as Json;
  const meta = (params._meta ?? {}) as Json;
  if (meta[SUBSCRIPTION_ID] !== undefined) {
    const listening = pending.get(String(meta[SUBSCRIPTION_ID]));
    listening?.write({
      ...message,
      params: { ...params, _meta: { ...meta, [SUBSCRIPTION_ID]: listening.originalId } },
    });
    return;
  }
  const all = [...pending.values()];
  const to = message.method === "notifications/progress"
    ? all.filter((p) => p.progressToken !== undefined && p.progressToken === params.progressToken)
    : message.method === "notifications/message"
    ? all.filter((p) => p.wantsLogs).slice(-1)
    : [];
  for (const p of to) p.write(message);
}

interface AnswerContext {
  pending: Map<string, Pending>;
  toServer(message: Json): Promise<void>;
  newId(): string;
}

async function answer(request: Request, context: AnswerContext): Promise<Response> {
  const refused = hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
    originValidationResponse(request, localhostAllowedOrigins());
  if (refused) return refused;
  if (new URL(request.url).pathname !== "/mcp") return new Response("Not Found", { status: 404 });
  let body: unknown;
  if (request.method === "POST") {
    const text = await request.text();
    if (text.length > MAX_BODY_BYTES) return rpcError(413, null, -32600, "Request body too large");
    try {
      body = JSON.parse(text);
    } catch {
      return rpcError(400, null, -32700, "Parse error");
    }
  }
  const route = classifyInboundRequest({
    httpMethod: request.method,
    ...header(request, "mcp-protocol-version", "protocolVersionHeader"),
    ...header(request, "mcp-method", "mcpMethodHeader"),
    ...header(request, "mcp-name", "mcpNameHeader"),
    body,
  });
  const id = (body as Json | undefined)?.id ?? null;
  if (route.kind === "reject") {
    return rpcError(route.httpStatus, id, route.code, route.message, route.data);
  }
  if (route.kind === "legacy") {
    if (request.method !== "POST") return new Response("Method Not Allowed", { status: 405 });
    return rpcError(400, id, -32022, "Unsupported protocol version: this endpoint serves 2026-07-28 only", {
      supported: ["2026-07-28"],
      requested: route.requestedVersion ?? "unknown",
    });
  }
  if (route.messageKind === "notification") {
    await context.toServer(route.message as unknown as Json);
    return new Response(null, { status: 202 });
  }
  return stream(route.message as unknown as Json, request.signal, context);
}

/** HTTP status of a JSON-RPC error answered as a whole (the modern Streamable HTTP binding), else 200. */
const ERROR_STATUS: Readonly<Record<number, number>> = {
  [-32601]: 404, // method not found
  [-32020]: 400, // header mismatch
  [-32021]: 400, // missing required client capability
  [-32022]: 400, // unsupported protocol version
};

/**
 * Writes request `message` to the server under a new id. Its answer alone comes back as JSON (an error
 * with the binding's HTTP status); when a notification of it comes first (progress, a log, a subscription
 * event), the POST is answered with an SSE stream of all of them, the answer last.
 */
function stream(message: Json, signal: AbortSignal, context: AnswerContext): Promise<Response> {
  const internalId = context.newId();
  const params = (message.params ?? {}) as Json;
  const meta = (params._meta ?? {}) as Json;
  const encoder = new TextEncoder();
  const { promise: response, resolve: respond } = Promise.withResolvers<Response>();
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let finished = false;
  const sse = (m: Json) => encoder.encode(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
  context.pending.set(internalId, {
    originalId: message.id,
    progressToken: meta.progressToken,
    wantsLogs: typeof meta[LOG_LEVEL] === "string",
    write: (m) => {
      if (finished) return;
      if (controller) return controller.enqueue(sse(m));
      if (!("method" in m)) {
        const code = (m.error as Json | undefined)?.code as number | undefined;
        finished = true;
        return respond(Response.json(m, { status: code === undefined ? 200 : ERROR_STATUS[code] ?? 200 }));
      }
      const body = new ReadableStream<Uint8Array>({
        start: (c) => {
          controller = c;
          c.enqueue(sse(m));
        },
        cancel: () => {
          finished = true;
        },
      });
      respond(
        new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } }),
      );
    },
    end: () => {
      if (!controller || finished) return;
      finished = true;
      controller.close();
    },
  });
  signal.addEventListener("abort", () => {
    if (!context.pending.delete(internalId)) return;
    finished = true;
    respond(new Response(null, { status: 204 })); // Nobody reads it: the client has gone.
    void context.toServer({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: internalId, reason: "the client closed the response stream" },
    });
  }, { once: true });
  void context.toServer({ ...message, id: internalId });
  return response;
}

function header(request: Request, name: string, key: string): Record<string, string> {
  const value = request.headers.get(name);
  return value === null ? {} : { [key]: value };
}

function rpcError(status: number, id: unknown, code: number, message: string, data?: unknown): Response {
  const error = { code, message, ...(data !== undefined ? { data } : {}) };
  return Response.json({ jsonrpc: "2.0", id, error }, { status });
}
