/**
 * One live MCP connection to a backing server, whatever carries it (stdio child, streamable HTTP,
 * in-memory pair): the SDK v2 `Client` over any SDK `Transport`, with the handshake under a startup
 * deadline, `tools/list` walked to the end with a guard against a cursor that never advances,
 * `tools/call` sent raw (so an off-shape `structuredContent` reaches us instead of being refused
 * by the SDK's output validation), `roots/list` answered, and the end of the connection reported.
 *
 * Transports plug in through {@link openConnection}; `stdio.ts` and `http.ts` build a `Transport`
 * and hand it here.
 *
 * @module
 */
import { Client, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import type { CallToolResult, Root, Tool, Transport } from "@modelcontextprotocol/client";
import { UserError } from "../diagnostics.ts";
import type { Logger } from "../log.ts";
import { NULL_LOGGER } from "../log.ts";

export type { CallToolResult, Root, Tool, Transport };

/** Name and version we announce to backing servers in `initialize`. */
export const CLIENT_INFO = { name: "symposium", version: "0.1.0" } as const;

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
 * - `NEEDS_SIGN_IN`: a remote server answered 401/403 (http backend).
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
  | "NEEDS_SIGN_IN";

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
  /** `serverInfo` from `initialize`, when the server sent one. */
  readonly serverInfo: { name: string; version: string } | undefined;
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
  /** Closes the connection (for stdio: the graceful-then-forceful shutdown of the process tree). */
  close(): Promise<void>;
}

/** Options of {@link openConnection}. */
export interface OpenConnectionOptions {
  /** Server name as declared in the manifest (used in every message). */
  server: string;
  /** Longest wait for the handshake (transport start + `initialize`), in ms. */
  startupTimeoutMs: number;
  /**
   * Subscribes to signs of life during startup (e.g. stderr output while `npx` downloads): each
   * one pushes the startup deadline back to `startupTimeoutMs` from now, up to
   * `4 × startupTimeoutMs` in total. Returns an unsubscribe function. Default: none.
   */
  onStartupActivity?: ((listener: () => void) => () => void) | undefined;
  /** What `roots/list` answers (called on every request). Default: no roots capability. */
  roots?: (() => Root[]) | undefined;
  /** Called when the server sends `notifications/tools/list_changed`. */
  onToolListChanged?: (() => void) | undefined;
  /** Extra detail appended to start failures, e.g. the stderr tail. Called only on failure. */
  describeFailure?: (() => string) | undefined;
  /** Describes how the transport ended when it closes on its own, e.g. `exited with code 1`. */
  describeEnd?: (() => string | undefined) | undefined;
  /** Aborts the startup. */
  signal?: AbortSignal | undefined;
  /** @default NULL_LOGGER */
  logger?: Logger | undefined;
  /** Clock for `connectedAtMs`. @default Date.now */
  now?: (() => number) | undefined;
}

function secondsText(ms: number): string {
  return `${Math.round(ms / 100) / 10}s`;
}

function withDetail(message: string, detail: string | undefined): string {
  const d = detail?.trim();
  return d ? `${message}: ${d}` : message;
}

/**
 * Connects an SDK `Client` over `transport` and completes the MCP handshake under the startup
 * deadline. On failure the transport is closed before the error is thrown.
 *
 * @returns The live connection.
 * @throws {BackendError} `START_FAILED` (transport or handshake failed, message ends with
 *   `describeFailure()`), `STARTUP_TIMEOUT`, `CANCELLED`.
 * @example Connect over an in-memory pair
 * ```ts ignore
 * const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
 * await server.connect(serverSide);
 * const conn = await openConnection(clientSide, { server: "demo", startupTimeoutMs: 5_000 });
 * const { tools } = await conn.listTools({ timeoutMs: 5_000 });
 * ```
 */
export async function openConnection(
  transport: Transport,
  options: OpenConnectionOptions,
): Promise<BackendConnection> {
  const logger = options.logger ?? NULL_LOGGER;
  const now = options.now ?? Date.now;
  const server = options.server;
  const client = new Client(
    { ...CLIENT_INFO },
    { capabilities: options.roots ? { roots: { listChanged: false } } : {} },
  );
  if (options.roots) {
    const roots = options.roots;
    client.setRequestHandler("roots/list", () => ({ roots: roots() }));
  }
  client.setNotificationHandler("notifications/tools/list_changed", () => {
    logger.debug("tools/list_changed received");
    options.onToolListChanged?.();
  });

  let closedByUs = false;
  let resolveEnded!: (end: ConnectionEnd) => void;
  const ended = new Promise<ConnectionEnd>((resolve) => (resolveEnded = resolve));
  let isClosed = false;
  let lastTransportError: Error | undefined;
  client.onerror = (error) => {
    lastTransportError = error;
    logger.debug(`transport: ${error.message}`);
  };
  client.onclose = () => {
    if (isClosed) return;
    isClosed = true;
    const reason = closedByUs
      ? "closed by us"
      : options.describeEnd?.() ?? lastTransportError?.message ?? "connection closed";
    if (!closedByUs) logger.warn(`connection ended: ${reason}`);
    resolveEnded({ reason, isExpected: closedByUs });
  };

  const startMs = now();
  const deadlineCapMs = startMs + 4 * options.startupTimeoutMs;
  let deadlineMs = startMs + options.startupTimeoutMs;
  const unsubscribe = options.onStartupActivity?.(() => {
    deadlineMs = Math.min(deadlineCapMs, Math.max(deadlineMs, now() + options.startupTimeoutMs));
  });
  const abort = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    const check = () => {
      const left = deadlineMs - now();
      if (left <= 0) {
        resolve("timeout");
        abort.abort(new Error("startup timeout"));
      } else timer = setTimeout(check, Math.min(left, 1_000));
    };
    timer = setTimeout(check, Math.min(options.startupTimeoutMs, 1_000));
  });
  const onCallerAbort = () => abort.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onCallerAbort, { once: true });
  try {
    if (options.signal?.aborted) throw new BackendError("CANCELLED", server, `${server}: start cancelled`);
    const connecting = client.connect(transport, {
      signal: abort.signal,
      timeout: 4 * options.startupTimeoutMs,
    });
    connecting.catch(() => {}); // Observed below through the race; a late rejection must not go unhandled.
    const outcome = await Promise.race([connecting.then(() => "ok" as const), timedOut]);
    if (outcome === "timeout") {
      throw new BackendError(
        "STARTUP_TIMEOUT",
        server,
        withDetail(
          `${server} did not start within ${secondsText(now() - startMs)}`,
          options.describeFailure?.(),
        ),
        { hint: "raise startup-timeout-secs for this server if it is slow to start" },
      );
    }
  } catch (error) {
    closedByUs = true;
    await client.close().catch(() => {}); // Best effort: the start already failed, report that error.
    if (error instanceof BackendError) throw error;
    if (options.signal?.aborted) throw new BackendError("CANCELLED", server, `${server}: start cancelled`);
    const detail = options.describeFailure?.();
    const base = error instanceof Error ? error.message : String(error);
    throw new BackendError("START_FAILED", server, withDetail(`${server} failed to start: ${base}`, detail), {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
    unsubscribe?.();
    options.signal?.removeEventListener("abort", onCallerAbort);
  }

  const connectedAtMs = now();
  const info = client.getServerVersion();
  logger.info(`connected (${info?.name ?? "?"} ${info?.version ?? "?"}) in ${connectedAtMs - startMs} ms`);

  function mapError(error: unknown, what: string, timeoutMs: number, signal?: AbortSignal): BackendError {
    if (error instanceof BackendError) return error;
    if (signal?.aborted) {
      return new BackendError("CANCELLED", server, `${what} was cancelled`, { cause: error });
    }
    if (error instanceof SdkError) {
      if (error.code === SdkErrorCode.RequestTimeout) {
        return new BackendError(
          "CALL_TIMEOUT",
          server,
          `${what} did not answer within ${secondsText(timeoutMs)}`,
          {
            cause: error,
            hint: "raise tool-call-timeout-secs for this server if the tool is legitimately slow",
          },
        );
      }
      if (
        error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected || isClosed
      ) {
        const end = options.describeEnd?.();
        return new BackendError("CONNECTION_LOST", server, withDetail(`${server}: connection lost`, end), {
          cause: error,
        });
      }
    }
    if (isClosed) {
      return new BackendError(
        "CONNECTION_LOST",
        server,
        withDetail(`${server}: connection lost`, options.describeEnd?.()),
        {
          cause: error,
        },
      );
    }
    const message = error instanceof Error ? error.message : String(error);
    return new BackendError("REQUEST_FAILED", server, `${what} failed: ${message}`, { cause: error });
  }

  const connection: BackendConnection = {
    server,
    connectedAtMs,
    serverInfo: info ? { name: info.name, version: info.version } : undefined,
    ended,
    get isClosed() {
      return isClosed;
    },
    async listTools({ timeoutMs, signal }) {
      const tools: Tool[] = [];
      const names = new Set<string>();
      const warnings: string[] = [];
      const seenCursors = new Set<string>();
      let cursor: string | undefined;
      for (let page = 1;; page++) {
        let result;
        try {
          if (isClosed) throw new SdkError(SdkErrorCode.ConnectionClosed, "closed");
          result = await client.request(
            { method: "tools/list", params: cursor === undefined ? {} : { cursor } },
            { timeout: timeoutMs, ...(signal ? { signal } : {}) },
          );
        } catch (error) {
          throw mapError(error, `${server} tools/list`, timeoutMs, signal);
        }
        let added = 0;
        for (const tool of result.tools) {
          if (names.has(tool.name)) continue;
          names.add(tool.name);
          tools.push(tool);
          added++;
        }
        const next = result.nextCursor;
        if (next === undefined || next === null || next === "") break;
        if (seenCursors.has(next) || next === cursor) {
          warnings.push(
            `${server}: tools/list cursor "${next}" repeated; listing stopped after ${page} page(s)`,
          );
          break;
        }
        if (added === 0 && page > 1) {
          warnings.push(`${server}: tools/list page ${page} added no new tool; listing stopped`);
          break;
        }
        if (page >= MAX_TOOL_LIST_PAGES) {
          warnings.push(`${server}: tools/list has more than ${MAX_TOOL_LIST_PAGES} pages; listing stopped`);
          break;
        }
        seenCursors.add(next);
        cursor = next;
      }
      for (const w of warnings) logger.warn(w);
      return { tools, warnings };
    },
    async callTool(tool, args, { timeoutMs, signal, onProgress }) {
      const what = `${server}.${tool}`;
      if (isClosed) throw mapError(new SdkError(SdkErrorCode.ConnectionClosed, "closed"), what, timeoutMs);
      try {
        return await client.request(
          { method: "tools/call", params: { name: tool, arguments: args } },
          {
            timeout: timeoutMs,
            resetTimeoutOnProgress: true,
            ...(signal ? { signal } : {}),
            onprogress: (p) => onProgress?.({ progress: p.progress, total: p.total, message: p.message }),
          },
        );
      } catch (error) {
        throw mapError(error, what, timeoutMs, signal);
      }
    },
    async close() {
      if (isClosed) return;
      closedByUs = true;
      try {
        await client.close();
      } catch (error) {
        logger.debug(`close: ${error instanceof Error ? error.message : String(error)}`);
      }
      client.onclose?.();
    },
  };
  return connection;
}
