/**
 * The part of the `symposium` server an agent meets first. `initialize` needs only the name, version,
 * instructions and capabilities, so `mcp-serve` connects this shell before it loads the catalog, the
 * sandbox and the declarations (agents give a server 1 to 3 s: Codex's first turn, Cline's `initialize`);
 * `tools/list`, `tools/call` and `logging/setLevel` wait for the handlers the rest of the meta-server supplies.
 * It speaks both eras of MCP on stdio, as the agent's first message chooses: `initialize` (2025-11-25 and
 * earlier, a session) or a request with the 2026-07-28 `_meta` (`server/discover` first, as Claude Code and
 * Copilot CLI open; every request then carries its own version, capabilities and identity).
 *
 * @module
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  McpServer,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { dispatchCheckedMessages } from "../jsonrpc/mod.ts";
import type {
  CallToolRequest,
  CallToolResult,
  ClientCapabilities,
  InputRequests,
  InputResponses,
  JSONRPCRequest,
  ListToolsResult,
  LoggingLevel,
  Result,
  ServerContext,
  StandardSchemaV1,
  Transport,
} from "@modelcontextprotocol/server";
import { type Era, guardModernWire, RetryFieldsKeeper, SERVED_PROTOCOL_VERSIONS } from "./_era_wire.ts";
import denoJson from "../../deno.json" with { type: "json" };

/** The version this server reports in `initialize` (`serverInfo.version`): the program's, from `deno.json`. */
export const META_SERVER_VERSION: string = denoJson.version;

/** What the agent reads at `initialize`. */
export const INSTRUCTIONS =
  "Symposium exposes the MCP tools of this Rust workspace through two tools. Start with `execute`: " +
  "its description names the servers in scope, and one script can call several tools and return only " +
  "what matters. Call `list_tools` with `query` to find tools by what they do, or with `servers` for " +
  "their TypeScript signatures.";

export { type Era, MODERN_PROTOCOL_VERSIONS, SERVED_PROTOCOL_VERSIONS } from "./_era_wire.ts";

/**
 * The era and protocol version of one `tools/call`, as the shell read it (third argument of
 * {@link ToolHandlers.callTool}).
 */
export interface CallEra {
  /**
   * `"modern"`: the request carried `_meta["io.modelcontextprotocol/protocolVersion"]` (2026-07-28): the
   * agent takes no server->client request; input is asked by returning an {@link InputRequiredToolResult}.
   * `"legacy"`: the agent opened with `initialize`; input is asked with `elicitation/create` as before.
   */
  era: Era;
  /** The request's protocol version (modern: from its `_meta`; legacy: the one `initialize` negotiated). */
  protocolVersion: string;
  /** The agent's name and version (modern: from the request's `_meta`; legacy: from `initialize`). */
  clientInfo?: { name: string; version: string } | undefined;
  /**
   * What a modern agent declared in this request's `_meta` (`io.modelcontextprotocol/clientCapabilities`;
   * `{}` when absent or not an object). Absent for a legacy call (see `Server.getClientCapabilities()`).
   */
  capabilities?: ClientCapabilities | undefined;
}

/**
 * A `tools/call` answer that asks the agent for input (MCP 2026-07-28 multi round-trip request): the
 * agent answers every entry of `inputRequests` and retries the same call with `inputResponses` and
 * `requestState` echoed, which the shell hands to {@link ToolHandlers.callTool} untouched in
 * `request.params`. Only for a {@link CallEra} `"modern"` call: the shell refuses it for a legacy one
 * (internal error). The shell adds `_meta["io.modelcontextprotocol/serverInfo"]`.
 */
export interface InputRequiredToolResult {
  resultType: "input_required";
  /** Keyed by an id the handler chooses; each value an `elicitation/create`, `sampling/createMessage` or `roots/list` request. */
  inputRequests?: InputRequests;
  /** Opaque to the agent, echoed on the retry. */
  requestState?: string;
  [key: string]: unknown;
}

/**
 * A `tools/call` request as the handlers get it: the agent's params untouched, typed with the modern
 * retry's `inputResponses` (answers keyed as the `inputRequests` were) and `requestState` (echoed as sent).
 */
export interface ToolCallRequest extends CallToolRequest {
  params: CallToolRequest["params"] & { inputResponses?: InputResponses; requestState?: string };
}

/** What answers `tools/list`, `tools/call` and `logging/setLevel` once the meta-server is loaded. */
export interface ToolHandlers {
  listTools(): Promise<ListToolsResult>;
  /**
   * Answers one `tools/call`. `request.params` is the agent's, untouched (for a modern retry it carries
   * `inputResponses` and `requestState`); `call` tells the era.
   */
  callTool(
    request: ToolCallRequest,
    ctx: ServerContext,
    call: CallEra,
  ): Promise<CallToolResult | InputRequiredToolResult>;
  setLevel(level: LoggingLevel): void;
}

type RequestHandler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/**
 * The SDK server without its `tools/call` wrapper, which parses every request with zod a second time and
 * then every result (the SDK's own hook for subclasses). The request was checked once already: by
 * `lib/jsonrpc/` against the MCP schema (`-32602` with the reason) and by {@link CALL_PARAMS}; the
 * results are the meta-server's own (`execute`'s and `list_tools`' text, structured content and media
 * blocks whose type and base64 `extractMedia` checked). `server/discover` names the legacy revisions
 * `initialize` negotiates after the modern ones (the SDK names only the modern ones).
 */
class LeanServer extends Server {
  protected override _wrapHandler(method: string, handler: RequestHandler): RequestHandler {
    if (method === "tools/call") return handler;
    const wrapped = super._wrapHandler(method, handler);
    if (method !== "server/discover") return wrapped;
    return async (request, ctx) => ({
      ...await wrapped(request, ctx),
      supportedVersions: [...SERVED_PROTOCOL_VERSIONS],
    });
  }
}

/**
 * How long an agent may keep our `tools/list` answer, in ms: the workspace, plugin and config files are
 * looked at this often (`serveMetaServer`'s `watchIntervalMs` default), and a change is also told at once
 * (`notifications/tools/list_changed`, to a modern agent on its `subscriptions/listen`).
 */
export const TOOLS_LIST_TTL_MS = 2_000;

/** How long an agent may keep our `server/discover` answer, in ms: it does not change while the process runs. */
export const DISCOVER_TTL_MS = 3_600_000;

/**
 * Cache hints of the modern era's cacheable results: `tools/list` is private (`execute`'s description
 * names this workspace's servers), `server/discover` the same for every agent.
 */
const CACHE_HINTS = {
  "tools/list": { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: "private" },
  "server/discover": { ttlMs: DISCOVER_TTL_MS, cacheScope: "public" },
} as const;

/** The era of a request the handlers answer: its own `_meta` says modern, else the connection is legacy. */
function callEraOf(server: Server, ctx: ServerContext): CallEra {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const version = envelope?.[PROTOCOL_VERSION_META_KEY];
  if (typeof version === "string") {
    const info = envelope?.[CLIENT_INFO_META_KEY] as CallEra["clientInfo"];
    const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY];
    const capabilities = typeof declared === "object" && declared !== null && !Array.isArray(declared)
      ? declared as ClientCapabilities
      : {};
    return { era: "modern", protocolVersion: version, clientInfo: info, capabilities };
  }
  return {
    era: "legacy",
    protocolVersion: server.getNegotiatedProtocolVersion() ?? "",
    clientInfo: server.getClientVersion(),
  };
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

/**
 * `params` with the modern retry's `inputResponses` and `requestState` put back where the agent sent them
 * (the SDK lifted them out into `ctx.mcpReq`): as read from the wire when `kept` noted them, else as the
 * SDK kept them.
 */
function withRetryFields(
  params: CallToolRequest["params"],
  ctx: ServerContext,
  kept: RetryFieldsKeeper | undefined,
): ToolCallRequest["params"] {
  const fields = kept?.take(ctx.mcpReq.id) ?? {
    ...(ctx.mcpReq.inputResponses !== undefined ? { inputResponses: ctx.mcpReq.inputResponses } : {}),
    ...(ctx.mcpReq.requestState() !== undefined ? { requestState: ctx.mcpReq.requestState() } : {}),
  };
  return Object.keys(fields).length === 0 ? params : { ...params, ...fields } as ToolCallRequest["params"];
}

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
   * servers it names while the rest of the meta-server loads (`call`: the era of that request, so a modern
   * agent's capabilities are known before the servers start). One listener: a second replaces the first.
   */
  onEarlyExecute(listener: (script: string, call: CallEra) => void): void;
}

/** Scripts of `execute` calls kept for {@link ServerShell.onEarlyExecute} before it is called; later ones are not. */
export const EARLY_SCRIPTS_KEPT = 8;

/**
 * Builds the `symposium` server with its `initialize` answer and tool handlers that wait for
 * {@link ServerShell.supply}. Not connected.
 *
 * @param options.onToolRequest Called when a `tools/list` or `tools/call` request arrives.
 * @param options.retryFields Where the wire noted each modern `tools/call`'s `inputResponses` and
 *   `requestState` as sent (else they are rebuilt from what the SDK lifted out of `params`).
 */
export function createServerShell(
  options: { onToolRequest?: () => void; retryFields?: RetryFieldsKeeper } = {},
): ServerShell {
  const { promise, resolve } = Promise.withResolvers<ToolHandlers>();
  // A rejection nobody awaits yet (no request came) must not end the process.
  promise.catch(() => {});
  let supplied = false;
  const earlyScripts: [string, CallEra][] = [];
  let onEarly: ((script: string, call: CallEra) => void) | undefined;
  const noteEarly = (params: CallToolRequest["params"], call: CallEra) => {
    const script = params.arguments?.script;
    if (supplied || params.name !== "execute" || typeof script !== "string") return;
    if (onEarly) onEarly(script, call);
    else if (earlyScripts.length < EARLY_SCRIPTS_KEPT) earlyScripts.push([script, call]);
  };
  const server = new LeanServer(
    { name: "symposium", version: META_SERVER_VERSION },
    {
      capabilities: { tools: { listChanged: true }, logging: {} },
      instructions: INSTRUCTIONS,
      cacheHints: CACHE_HINTS,
    },
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
    const call = callEraOf(server, ctx);
    noteEarly(params, call);
    const request = {
      method: "tools/call" as const,
      params: withRetryFields(params, ctx, options.retryFields),
    };
    const result = await (await promise).callTool(request, ctx, call);
    if (result.resultType === "input_required" && call.era === "legacy") {
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        "tools/call answered input_required to a legacy agent (it can only be asked with elicitation/create)",
      );
    }
    return result as CallToolResult;
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
      for (const [script, call] of earlyScripts.splice(0)) listener(script, call);
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
 * Creates a shell and serves it on `transport` at once, in the era the agent's opening message chooses
 * (the SDK's `serveStdio`): `initialize` pins the legacy era (today's behaviour); a request with modern
 * `_meta` (`server/discover` first, as Claude Code and Copilot CLI open) pins the modern era, where every
 * request is served by its own metadata, `server/discover` and `subscriptions/listen` are answered and our
 * `notifications/tools/list_changed` goes to the agent's subscriptions. {@link guardModernWire} adds the
 * version check on every request, the log gate and the refusal of server->client requests.
 *
 * @param signal Ends {@link ConnectedShell.closed} early (SIGINT/SIGTERM).
 * @param options.onError Told what the SDK's era entry refused or failed at (a 2025-era request on a
 *   connection pinned modern, a message before the era was chosen...); reporting only. @default none
 */
export async function connectServerShell(
  transport: Transport,
  signal?: AbortSignal,
  options: { onError?: (error: Error) => void } = {},
): Promise<ConnectedShell> {
  const { promise: firstAnswered, resolve: markAnswered } = Promise.withResolvers<void>();
  const timer = setTimeout(markAnswered, FIRST_ANSWER_WAIT_MS);
  void firstAnswered.then(() => clearTimeout(timer));
  const retryFields = new RetryFieldsKeeper();
  const shell = createServerShell({ onToolRequest: markAnswered, retryFields });
  // The first answer is handed to the transport within the turn its request was read in.
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const sent = send(message, options);
    markAnswered();
    return sent;
  };
  const { promise: closed, resolve: markClosed } = Promise.withResolvers<void>();
  signal?.addEventListener("abort", () => markClosed(), { once: true });
  void closed.then(markAnswered);
  let era: Era | undefined;
  const product = eraProduct(shell.server, transport);
  const started = new Promise<void>((resolve) => {
    const start = transport.start.bind(transport);
    transport.start = () => start().finally(resolve);
  });
  serveStdio((opening) => {
    era = opening?.era === "modern" ? "modern" : "legacy";
    // After a `server/discover` probe, `initialize` reconnects the server the probe marked modern: unmark it,
    // so that the SDK serves `initialize` (an era the SDK keeps in this field, set by `serveStdio`).
    if (era === "legacy") (shell.server as unknown as LegacyMark)._negotiatedProtocolVersion = undefined;
    return product;
  }, { transport, ...(options.onError ? { onerror: options.onError } : {}) });
  guardModernWire(transport, () => era, { retryFields });
  const onclose = transport.onclose;
  transport.onclose = () => {
    onclose?.();
    markClosed();
  };
  await started;
  return { ...shell, firstAnswered, closed };
}

/** Where the SDK's `Server` keeps the protocol version of its era (a `Protocol` field). */
interface LegacyMark {
  _negotiatedProtocolVersion: string | undefined;
}

/**
 * The one server of the connection as `serveStdio` takes it from its factory, for either era: an
 * `McpServer` in form only (`serveStdio` reads `.server`), whose `connect` also installs the checked
 * dispatch (the agent's messages passed `lib/jsonrpc/` already) and whose `close` only disconnects,
 * so a `server/discover` probe followed by `initialize` reconnects the same server in the legacy era;
 * the session ends when the agent's transport closes.
 */
function eraProduct(server: Server, wire: Transport): McpServer {
  const checked = (wire as { checksMessages?: boolean }).checksMessages === true;
  return Object.create(McpServer.prototype, {
    server: { value: server },
    connect: {
      value: async (channel: Transport) => {
        await server.connect(channel);
        if (checked) dispatchCheckedMessages(server, channel, { checked: true });
      },
    },
    close: { value: () => Server.prototype.close.call(server) },
  });
}
