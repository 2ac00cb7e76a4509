/**
 * The part of the `symposium` server an agent meets first. `initialize` needs only the name, version,
 * instructions and capabilities, so `mcp-serve` connects this shell before it loads the catalog, the
 * sandbox and the declarations (agents give a server 1 to 3 s: Codex's first turn, Cline's `initialize`);
 * `tools/list`, `tools/call` and `logging/setLevel` wait for the handlers the rest of the meta-server supplies.
 *
 * @module
 */
import { ProtocolError, ProtocolErrorCode, Server } from "@modelcontextprotocol/server";
import { dispatchCheckedMessages } from "../jsonrpc/mod.ts";
import type {
  CallToolRequest,
  CallToolResult,
  JSONRPCRequest,
  ListToolsResult,
  LoggingLevel,
  Result,
  ServerContext,
  StandardSchemaV1,
  Transport,
} from "@modelcontextprotocol/server";
import denoJson from "../../deno.json" with { type: "json" };

/** The version this server reports in `initialize` (`serverInfo.version`): the program's, from `deno.json`. */
export const META_SERVER_VERSION: string = denoJson.version;

/** What the agent reads at `initialize`. */
export const INSTRUCTIONS =
  "Symposium exposes the MCP tools of this Rust workspace through two tools. Start with `execute`: " +
  "its description names the servers in scope, and one script can call several tools and return only " +
  "what matters. Call `list_tools` with `query` to find tools by what they do, or with `servers` for " +
  "their TypeScript signatures.";

/** What answers `tools/list`, `tools/call` and `logging/setLevel` once the meta-server is loaded. */
export interface ToolHandlers {
  listTools(): Promise<ListToolsResult>;
  callTool(request: CallToolRequest, ctx: ServerContext): Promise<CallToolResult>;
  setLevel(level: LoggingLevel): void;
}

type RequestHandler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/**
 * The SDK server without its `tools/call` wrapper, which parses every request with zod a second time and
 * then every result (the SDK's own hook for subclasses). The request was checked once already: by
 * `lib/jsonrpc/` against the MCP schema (`-32602` with the reason) and by {@link CALL_PARAMS}; the
 * results are the meta-server's own (`execute`'s and `list_tools`' text, structured content and media
 * blocks whose type and base64 `extractMedia` checked).
 */
class LeanServer extends Server {
  protected override _wrapHandler(method: string, handler: RequestHandler): RequestHandler {
    return method === "tools/call" ? handler : super._wrapHandler(method, handler);
  }
}

/**
 * `tools/call` params as the handlers read them: an object with a string `name` and, when present, an
 * object `arguments` and an object `_meta`. Refused otherwise (`-32602 Invalid params for tools/call`).
 */
const CALL_PARAMS: StandardSchemaV1<unknown, CallToolRequest["params"]> = {
  "~standard": {
    version: 1,
    vendor: "cargo-agents",
    validate(value: unknown) {
      const isObject = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);
      const params = value as Record<string, unknown>;
      if (!isObject(value) || typeof params.name !== "string") {
        return { issues: [{ message: "params.name must be a string" }] };
      }
      if (params.arguments !== undefined && !isObject(params.arguments)) {
        return { issues: [{ message: "params.arguments must be an object" }] };
      }
      if (params._meta !== undefined && !isObject(params._meta)) {
        return { issues: [{ message: "params._meta must be an object" }] };
      }
      return { value: params as CallToolRequest["params"] };
    },
  },
};

/** A shell whose handlers come later (see {@link createServerShell}). */
export interface ServerShell {
  server: Server;
  /**
   * Hands over the tool handlers, once. Requests that arrived before wait for them; when `handlers`
   * rejects, every tool request fails with its error (the agent sees an internal error).
   */
  supply(handlers: ToolHandlers | Promise<ToolHandlers>): void;
  /**
   * Calls `listener` with the script of each `execute` call that arrived before {@link supply} (kept, at
   * most {@link EARLY_SCRIPTS_KEPT}) and of each that arrives until then, so `mcp-serve` can start the
   * servers it names while the rest of the meta-server loads. One listener: a second replaces the first.
   */
  onEarlyExecute(listener: (script: string) => void): void;
}

/** Scripts of `execute` calls kept for {@link ServerShell.onEarlyExecute} before it is called; later ones are not. */
export const EARLY_SCRIPTS_KEPT = 8;

/**
 * Builds the `symposium` server with its `initialize` answer and tool handlers that wait for
 * {@link ServerShell.supply}. Not connected.
 *
 * @param options.onToolRequest Called when a `tools/list` or `tools/call` request arrives.
 */
export function createServerShell(options: { onToolRequest?: () => void } = {}): ServerShell {
  const { promise, resolve } = Promise.withResolvers<ToolHandlers>();
  // A rejection nobody awaits yet (no request came) must not end the process.
  promise.catch(() => {});
  let supplied = false;
  const earlyScripts: string[] = [];
  let onEarly: ((script: string) => void) | undefined;
  const noteEarly = (params: CallToolRequest["params"]) => {
    const script = params.arguments?.script;
    if (supplied || params.name !== "execute" || typeof script !== "string") return;
    if (onEarly) onEarly(script);
    else if (earlyScripts.length < EARLY_SCRIPTS_KEPT) earlyScripts.push(script);
  };
  const server = new LeanServer(
    { name: "symposium", version: META_SERVER_VERSION },
    { capabilities: { tools: { listChanged: true }, logging: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler("logging/setLevel", async (request) => {
    (await promise).setLevel(request.params.level);
    return {};
  });
  server.setRequestHandler("tools/list", async (request) => {
    options.onToolRequest?.();
    // One page only, so no cursor was ever given: the spec asks for -32602 for an invalid cursor.
    const cursor = request.params?.cursor;
    if (cursor !== undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Invalid params for tools/list: cursor ${
          JSON.stringify(String(cursor).slice(0, 80))
        } was never given (the list has one page); send tools/list without a cursor`,
      );
    }
    return (await promise).listTools();
  });
  server.setRequestHandler("tools/call", { params: CALL_PARAMS }, async (params, ctx) => {
    options.onToolRequest?.();
    noteEarly(params);
    return (await promise).callTool({ method: "tools/call", params }, ctx);
  });
  return {
    server,
    supply: (handlers) => {
      supplied = true;
      earlyScripts.length = 0;
      onEarly = undefined;
      resolve(handlers);
    },
    onEarlyExecute: (listener) => {
      if (supplied) return;
      onEarly = listener;
      for (const script of earlyScripts.splice(0)) listener(script);
    },
  };
}

/** A shell connected to its transport (see {@link connectServerShell}). */
export interface ConnectedShell extends ServerShell {
  /**
   * Resolves once the first answer went out (normally `initialize`'s), when a tool request arrives
   * first, or after {@link FIRST_ANSWER_WAIT_MS}: the moment to load the rest, whose module loading
   * would otherwise hold the event loop while `initialize` waits to be read.
   */
  firstAnswered: Promise<void>;
  /** Resolves when the agent disconnects (stdin closed) or the signal given to the connect aborts. */
  closed: Promise<void>;
}

/** Longest wait for the agent's first request before the rest loads anyway, in ms. */
export const FIRST_ANSWER_WAIT_MS = 1_000;

/**
 * Creates a shell and connects it to `transport` at once, so `initialize` is answered before the rest
 * of the meta-server loads.
 *
 * @param signal Ends {@link ConnectedShell.closed} early (SIGINT/SIGTERM).
 */
export async function connectServerShell(
  transport: Transport,
  signal?: AbortSignal,
): Promise<ConnectedShell> {
  const { promise: firstAnswered, resolve: markAnswered } = Promise.withResolvers<void>();
  const timer = setTimeout(markAnswered, FIRST_ANSWER_WAIT_MS);
  void firstAnswered.then(() => clearTimeout(timer));
  const shell = createServerShell({ onToolRequest: markAnswered });
  // The first answer is handed to the transport within the turn its request was read in.
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const sent = send(message, options);
    markAnswered();
    return sent;
  };
  const closed = new Promise<void>((resolve) => {
    shell.server.onclose = () => resolve();
    signal?.addEventListener("abort", () => resolve(), { once: true });
  });
  void closed.then(markAnswered);
  // Only a transport nothing else listens on (a wrapper set before connect keeps the SDK's path).
  const unwrapped = transport.onmessage === undefined;
  await shell.server.connect(transport);
  if (unwrapped) dispatchCheckedMessages(shell.server, transport);
  return { ...shell, firstAnswered, closed };
}
