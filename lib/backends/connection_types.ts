/**
 * The shapes every backing-server connection shares (stdio, HTTP, in-memory): the connection itself,
 * its errors, and the peer seam through which a server's requests reach the agent. Pure types and
 * constants; `connection.ts` builds connections.
 *
 * @module
 */
import type {
  CallToolResult,
  ClientCapabilities,
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
  ElicitRequestParams,
  ElicitResult,
  LoggingLevel,
  LoggingMessageNotification,
  ProtocolEra,
  ReadResourceResult,
  Resource,
  ServerCapabilities,
  Tool,
} from "@modelcontextprotocol/client";
import { UserError } from "../diagnostics.ts";
import { maskSecrets, processSecrets } from "../secrets/mod.ts";
import denoJson from "../../deno.json" with { type: "json" };

/**
 * What a backing server may ask of the agent through us (the relays of `lib/meta_server/`), seen from
 * one connection. Read at connect time: the capabilities offered in `initialize` are those the agent
 * declared, so a server never asks for what the agent cannot give.
 */
export interface BackendPeer {
  /** `elicitation` and `sampling` to declare to the server (absent keys are not offered). */
  capabilities(): Pick<ClientCapabilities, "elicitation" | "sampling">;
  /** Relays the server's `elicitation/create`; `signal` aborts when the server cancels its request. */
  elicit(params: ElicitRequestParams, signal: AbortSignal): Promise<ElicitResult>;
  /** Relays the server's `sampling/createMessage`. */
  sample(
    params: CreateMessageRequestParams,
    signal: AbortSignal,
  ): Promise<CreateMessageResult | CreateMessageResultWithTools>;
  /**
   * Takes one of the agent's open-question slots for a relayed request, or `undefined` when none is free
   * (the request is then refused); the returned function gives it back. Default: no such bound.
   */
  reserveRelay?(): (() => void) | undefined;
  /** Relays the server's `notifications/elicitation/complete` (URL-mode elicitation finished out of band). */
  elicitationComplete(elicitationId: string): void;
  /** A log message of the server was dropped before it was read (too large to parse): counted. */
  droppedLog?(): void;
  /** Receives the server's `notifications/message` (the relay filters and rate-limits). */
  log(params: LoggingMessageNotification["params"]): void;
  /** The level the agent asked for with `logging/setLevel`, sent on to servers that log; `undefined` = none yet. */
  logLevel(): LoggingLevel | undefined;
  /** Calls `listener` with each later `logging/setLevel` of the agent; returns the unsubscribe. */
  onLogLevel(listener: (level: LoggingLevel) => void): () => void;
}

/** Name and version we announce to backing servers in `initialize`. */
export const CLIENT_INFO = { name: "symposium", version: denoJson.version } as const;

/** Longest `tracestate` forwarded to a backing server, characters (W3C: 32 list members of at most 256). */
export const MAX_TRACESTATE_CHARS = 512;

/** Most `tools/list` pages followed before the listing is cut with a warning. */
export const MAX_TOOL_LIST_PAGES = 100;

/**
 * Codes of {@link BackendError}:
 * - `START_FAILED`: the process or connection could not start, or the handshake failed;
 * - `STARTUP_TIMEOUT`: `initialize` did not answer within the startup timeout;
 * - `CALL_TIMEOUT`: a `tools/call` did not answer within the call timeout;
 * - `CONNECTION_LOST`: the connection ended (crash, exit) while a request was pending or before it;
 * - `REQUEST_FAILED`: the server answered a request with a JSON-RPC error (connection stays up);
 * - `CANCELLED`: the caller's signal aborted the request;
 * - `SERVER_FAILED`: the server failed too often and is given up for the session (pool);
 * - `RESTART_PENDING`: the server is waiting for its next restart slot (pool, when not waiting);
 * - `NEEDS_SIGN_IN`: a remote server answered 401/403 (http backend);
 * - `ANSWER_TOO_LARGE`: the answer was larger than `[mcp] max-message-mb` and was dropped unread
 *   (connection stays up).
 */
export type BackendErrorCode =
  | "START_FAILED"
  | "STARTUP_TIMEOUT"
  | "CALL_TIMEOUT"
  | "CONNECTION_LOST"
  | "REQUEST_FAILED"
  | "CANCELLED"
  | "SERVER_FAILED"
  | "RESTART_PENDING"
  | "NEEDS_SIGN_IN"
  | "ANSWER_TOO_LARGE";

/**
 * A backing server could not do what was asked. The message is what a script sees as the
 * `Error` message, e.g. `filesystem.read_file did not answer within 60s`.
 */
export class BackendError extends UserError {
  override name = "BackendError";
  /** Server name as declared in the manifest. */
  readonly server: string;
  declare readonly code: BackendErrorCode;

  constructor(
    code: BackendErrorCode,
    server: string,
    message: string,
    options: { hint?: string | undefined; cause?: unknown } = {},
  ) {
    super(code, message, options);
    this.server = server;
  }
}

/**
 * Longest part of a backing server's error text kept in a {@link BackendError} message, in characters
 * (2,000): past it the text ends with `... <n> more characters`. The server's JSON-RPC error message, or
 * the SDK's list of schema issues with an answer (one pretty-printed issue per bad field: a 220 KB
 * `tools/list` of 20,000 bad tools made 7.8 MB), would otherwise reach the script, the agent and the log whole.
 */
export const MAX_ERROR_DETAIL_CHARS = 2_000;

/**
 * `text` with secrets masked, cut to {@link MAX_ERROR_DETAIL_CHARS}, saying how many characters were left out.
 * Masked before it is cut: a long secret (a token over 256 characters) at the cut is masked whole, not shown
 * in part.
 */
export function clipErrorDetail(text: string): string {
  const reach = MAX_ERROR_DETAIL_CHARS + Math.max(256, processSecrets.longestChars);
  const masked = maskSecrets(text.length > reach ? text.slice(0, reach) : text);
  if (masked.length <= MAX_ERROR_DETAIL_CHARS && text.length <= reach) return masked;
  return `${masked.slice(0, MAX_ERROR_DETAIL_CHARS)}\u2026 ${
    Math.max(0, text.length - MAX_ERROR_DETAIL_CHARS)
  } more characters`;
}

/**
 * Shortest gap between two log lines about a server's `tools/list_changed`, in ms (1,000): the ones between
 * are counted in the next line. One line per notification let a server flooding them (1,000/s) fill the
 * 10 MiB session log in minutes, which then ended it for the rest of the session.
 */
export const LIST_CHANGED_LOG_INTERVAL_MS = 1_000;

/**
 * A debug line for `notifications/tools/list_changed` as {@link LIST_CHANGED_LOG_INTERVAL_MS} allows.
 *
 * @param now Clock, ms.
 * @returns Call once per notification: `debug` gets `tools/list_changed received` (with `(and <n> more
 *   since the last line)` when some were not logged), or nothing within the interval of the last line.
 */
export function listChangedLog(debug: (line: string) => void, now: () => number): () => void {
  let loggedAtMs = -Infinity;
  let unlogged = 0;
  return () => {
    const at = now();
    if (at - loggedAtMs < LIST_CHANGED_LOG_INTERVAL_MS) return void unlogged++;
    debug(`tools/list_changed received${unlogged > 0 ? ` (and ${unlogged} more since the last line)` : ""}`);
    loggedAtMs = at;
    unlogged = 0;
  };
}

/** How a connection ended. */
export interface ConnectionEnd {
  /** Why, in words, e.g. `exited with code 1` or `closed by us`. */
  reason: string;
  /** `true` when we closed it (shutdown), `false` when it broke on its own. */
  isExpected: boolean;
}

/** The result of walking `tools/list` to the end. */
export interface ToolListing {
  /** Tools in server order, duplicates (same `name`) dropped. */
  tools: Tool[];
  /** What went wrong on the way, e.g. a cursor that repeated. Empty when the listing was clean. */
  warnings: string[];
}

/** Per-call options of {@link BackendConnection.callTool}. */
export interface CallOptions {
  /** Longest silence before the call fails with `CALL_TIMEOUT`, in ms; progress notifications reset it. */
  timeoutMs: number;
  /** Aborts the call (the server gets `notifications/cancelled`). */
  signal?: AbortSignal | undefined;
  /**
   * The agent's W3C trace context for this call (from its request's `_meta`), forwarded in the `_meta` of a
   * modern server's request (`traceparent`, `tracestate`); a value of the wrong shape or longer than
   * {@link MAX_TRACESTATE_CHARS} is dropped. Default: none.
   */
  trace?: { traceparent?: string | undefined; tracestate?: string | undefined } | undefined;
  /** Receives the server's progress notifications for this call. */
  onProgress?:
    | ((progress: { progress: number; total?: number | undefined; message?: string | undefined }) => void)
    | undefined;
}

/** A live connection to one backing server. */
export interface BackendConnection {
  /** Server name as declared in the manifest. */
  readonly server: string;
  /** When the handshake completed, ms since the epoch (per the connection's clock). */
  readonly connectedAtMs: number;
  /**
   * The protocol era the connection speaks: `"modern"` (2026-07-28, stateless: `server/discover`,
   * `_meta` on every request, `input_required` results) or `"legacy"` (`initialize`, 2025-11-25 and before).
   */
  readonly era: ProtocolEra;
  /** The protocol version in use (e.g. `2026-07-28`, `2025-11-25`), when known. */
  readonly protocolVersion: string | undefined;
  /**
   * The last `tools/list`'s cache hints (2026-07-28): `ttlMs` (how long the list is fresh, ms) and
   * `cacheScope`; `{}` (or absent) when the server gave none (every legacy server).
   */
  readonly toolListHints?:
    | { ttlMs?: number | undefined; cacheScope?: "public" | "private" | undefined }
    | undefined;
  /** `serverInfo` from `server/discover` or `initialize`, when the server sent one. */
  readonly serverInfo: { name: string; version: string } | undefined;
  /** What the server declared in `initialize` (`{}` when it declared nothing). */
  readonly serverCapabilities: ServerCapabilities;
  /** Resolves once, when the connection has ended for any reason. Never rejects. */
  readonly ended: Promise<ConnectionEnd>;
  /** `true` once {@link ended} has resolved (or is about to). */
  readonly isClosed: boolean;
  /**
   * Walks `tools/list` page by page to the end. Stops (with a warning) when a cursor repeats, when
   * a page adds nothing new, or after {@link MAX_TOOL_LIST_PAGES} pages.
   *
   * @throws {BackendError} `CALL_TIMEOUT`, `CONNECTION_LOST`, `REQUEST_FAILED`, `CANCELLED`.
   */
  listTools(options: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<ToolListing>;
  /**
   * Sends `tools/call` as a raw request: the result comes back as the server sent it (only its
   * envelope is checked), never refused for not matching the tool's `outputSchema`.
   *
   * @param tool Wire name of the tool.
   * @param args The `arguments` object.
   * @throws {BackendError} `CALL_TIMEOUT`, `CONNECTION_LOST`, `REQUEST_FAILED`, `CANCELLED`.
   */
  callTool(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult>;
  /**
   * Walks `resources/list` page by page to the end, with the guards of {@link listTools} (a cursor
   * that repeats, a page that adds nothing, {@link MAX_TOOL_LIST_PAGES} pages). Duplicates (same
   * `uri`) are dropped.
   *
   * @throws {BackendError} As {@link listTools}; `REQUEST_FAILED` when the server declares no `resources`.
   */
  listResources(options: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<{
    resources: Resource[];
    warnings: string[];
  }>;
  /**
   * Sends `resources/read` for `uri`.
   *
   * @returns The server's result: `contents`, each `{ uri, mimeType?, text }` or `{ uri, mimeType?, blob }` (base64).
   * @throws {BackendError} As {@link callTool}; `REQUEST_FAILED` when the server declares no `resources`.
   */
  readResource(
    uri: string,
    options: { timeoutMs: number; signal?: AbortSignal | undefined },
  ): Promise<ReadResourceResult>;
  /** Closes the connection (for stdio: the graceful-then-forceful shutdown of the process tree). */
  close(): Promise<void>;
}
