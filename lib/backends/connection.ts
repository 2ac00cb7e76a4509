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
import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import type {
  CallToolResult,
  LoggingLevel,
  ReadResourceResult,
  Resource,
  Root,
  ServerCapabilities,
  Tool,
  Transport,
} from "@modelcontextprotocol/client";
import {
  type BackendConnection,
  BackendError,
  type BackendPeer,
  CLIENT_INFO,
  clipErrorDetail,
  type ConnectionEnd,
  listChangedLog,
  MAX_TOOL_LIST_PAGES,
} from "./connection_types.ts";
import {
  dispatchCheckedMessages,
  formatBytes,
  isTooLargeData,
  MESSAGE_BUDGET_KEY,
  MessageTooLargeError,
} from "../jsonrpc/mod.ts";
import type { Logger } from "../log.ts";
import { NULL_LOGGER } from "../log.ts";
import { CALL_RESULT_ENVELOPE } from "./_call_result.ts";
import { guardListAnswers, restoreProtoKeys } from "./_list_guard.ts";
export { MAX_LISTING_BYTES } from "./_list_guard.ts";
import { LeanClient } from "./_lean_client.ts";
import { relayToPeer } from "./_peer_relay.ts";
export { MAX_RELAYED_PER_CALL, MAX_RELAYED_REQUEST_BYTES } from "./_relay_admission.ts";

export type { CallToolResult, ReadResourceResult, Resource, Root, ServerCapabilities, Tool, Transport };
export {
  type BackendConnection,
  BackendError,
  type BackendErrorCode,
  type BackendPeer,
  type CallOptions,
  CLIENT_INFO,
  type ConnectionEnd,
  MAX_ERROR_DETAIL_CHARS,
  MAX_TOOL_LIST_PAGES,
  type ToolListing,
} from "./connection_types.ts";

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
  /** Elicitation, sampling and logging relayed to the agent. Default: none offered, log messages dropped. */
  peer?: BackendPeer | undefined;
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

/**
 * The budget an answer passed, when `error` says so: a made-up JSON-RPC error answer whose `data`
 * is `TooLargeData` (stdio, the answer read to its end: `exact`), or a {@link MessageTooLargeError}
 * anywhere in the cause chain (http, reading stopped at the budget).
 */
function answerTooLarge(error: unknown): { bytes: number; maxBytes: number; exact: boolean } | undefined {
  for (
    let e = error, depth = 0;
    e !== undefined && depth < 10;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (e instanceof MessageTooLargeError) return { bytes: e.bytes, maxBytes: e.maxBytes, exact: false };
    const data = (e as { data?: unknown } | null)?.data;
    if (isTooLargeData(data)) return { ...data.tooLarge, exact: data.tooLarge.exact === true };
    if (typeof e !== "object" || e === null) break;
  }
  return undefined;
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
  const peer = options.peer;
  const offered = peer?.capabilities() ?? {};
  const client = new LeanClient(
    { ...CLIENT_INFO },
    { capabilities: { ...(options.roots ? { roots: { listChanged: false } } : {}), ...offered } },
  );
  if (options.roots) {
    const roots = options.roots;
    client.setRequestHandler("roots/list", () => ({ roots: roots() }));
  }
  // What the server asks of the agent goes to the peer, bounded (`_peer_relay.ts`, `_relay_admission.ts`).
  const admission = relayToPeer(client, server, peer, offered);
  const logChange = listChangedLog((line) => logger.debug(line), now);
  client.setNotificationHandler("notifications/tools/list_changed", () => {
    logChange();
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
    admission.releaseAll();
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

  // A transport that checks every message itself (stdio) skips the SDK's probes of each message's kind.
  dispatchCheckedMessages(client, transport);
  guardListAnswers(transport);
  admission.guard(transport, (reason) => logger.debug(`not relayed: ${reason}`));
  const connectedAtMs = now();
  const info = client.getServerVersion();
  const serverCapabilities = client.getServerCapabilities() ?? {};
  logger.info(`connected (${info?.name ?? "?"} ${info?.version ?? "?"}) in ${connectedAtMs - startMs} ms`);
  if (peer && serverCapabilities.logging) {
    // Best effort: a server that refuses the level still has its messages filtered by the relay.
    const send = (level: LoggingLevel) =>
      void client.setLoggingLevel(level).catch((error) => logger.debug(`logging/setLevel: ${String(error)}`));
    const level = peer.logLevel();
    if (level !== undefined) send(level);
    const unsubscribe = peer.onLogLevel((next) => !isClosed && send(next));
    void ended.then(unsubscribe);
  }

  function mapError(error: unknown, what: string, timeoutMs: number, signal?: AbortSignal): BackendError {
    if (error instanceof BackendError) return error;
    const tooLarge = answerTooLarge(error);
    if (tooLarge) {
      return new BackendError(
        "ANSWER_TOO_LARGE",
        server,
        `${what} answered ${tooLarge.exact ? `${formatBytes(tooLarge.bytes)}, ` : ""}more than the ` +
          `${formatBytes(tooLarge.maxBytes)} one answer may be (${MESSAGE_BUDGET_KEY}); ` +
          (tooLarge.exact ? "the answer was dropped unread" : "reading stopped there"),
        {
          cause: error,
          hint: `ask the tool for less (a page, a range, a filter), or raise ${MESSAGE_BUDGET_KEY}`,
        },
      );
    }
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
    return new BackendError("REQUEST_FAILED", server, `${what} failed: ${clipErrorDetail(message)}`, {
      cause: error,
    });
  }

  function requireResources(method: string): void {
    if (!serverCapabilities.resources) {
      throw new BackendError(
        "REQUEST_FAILED",
        server,
        `${server} declares no resources, so ${method} cannot be sent`,
      );
    }
  }

  /** Walks a paginated list method to the end; items are deduplicated by `name` (tools) or `uri`. */
  async function walkPages(
    method: "tools/list" | "resources/list",
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<{ items: unknown[]; warnings: string[] }> {
    const items: unknown[] = [];
    const keys = new Set<string>();
    const warnings: string[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1;; page++) {
      let result: { nextCursor?: string | undefined; tools?: Tool[]; resources?: Resource[] };
      try {
        if (isClosed) throw new SdkError(SdkErrorCode.ConnectionClosed, "closed");
        result = await client.request(
          { method, params: cursor === undefined ? {} : { cursor } },
          { timeout: timeoutMs, ...(signal ? { signal } : {}) },
        );
      } catch (error) {
        throw mapError(error, `${server} ${method}`, timeoutMs, signal);
      }
      let added = 0;
      for (const listed of result.tools ?? result.resources ?? []) {
        const item = restoreProtoKeys(listed);
        const key = "uri" in item ? item.uri : item.name;
        if (keys.has(key)) continue;
        keys.add(key);
        items.push(item);
        added++;
      }
      const next = result.nextCursor;
      if (next === undefined || next === null || next === "") break;
      if (seenCursors.has(next) || next === cursor) {
        warnings.push(
          `${server}: ${method} cursor "${next}" repeated; listing stopped after ${page} page(s)`,
        );
        break;
      }
      if (added === 0 && page > 1) {
        warnings.push(`${server}: ${method} page ${page} added nothing new; listing stopped`);
        break;
      }
      if (page >= MAX_TOOL_LIST_PAGES) {
        warnings.push(`${server}: ${method} has more than ${MAX_TOOL_LIST_PAGES} pages; listing stopped`);
        break;
      }
      seenCursors.add(next);
      cursor = next;
    }
    for (const w of warnings) logger.warn(w);
    return { items, warnings };
  }

  const connection: BackendConnection = {
    server,
    connectedAtMs,
    serverInfo: info ? { name: info.name, version: info.version } : undefined,
    serverCapabilities,
    ended,
    get isClosed() {
      return isClosed;
    },
    async listTools({ timeoutMs, signal }) {
      const { items, warnings } = await walkPages("tools/list", timeoutMs, signal);
      return { tools: items as Tool[], warnings };
    },
    async listResources({ timeoutMs, signal }) {
      requireResources("resources/list");
      const { items, warnings } = await walkPages("resources/list", timeoutMs, signal);
      return { resources: items as Resource[], warnings };
    },
    async readResource(uri, { timeoutMs, signal }) {
      requireResources("resources/read");
      const what = `${server} resources/read ${JSON.stringify(uri)}`;
      if (isClosed) throw mapError(new SdkError(SdkErrorCode.ConnectionClosed, "closed"), what, timeoutMs);
      try {
        return await client.request(
          { method: "resources/read", params: { uri } },
          { timeout: timeoutMs, ...(signal ? { signal } : {}) },
        );
      } catch (error) {
        throw mapError(error, what, timeoutMs, signal);
      }
    },
    async callTool(tool, args, { timeoutMs, signal, onProgress }) {
      const what = `${server}.${tool}`;
      if (isClosed) throw mapError(new SdkError(SdkErrorCode.ConnectionClosed, "closed"), what, timeoutMs);
      const end = admission.begin();
      try {
        return await client.request(
          { method: "tools/call", params: { name: tool, arguments: args } },
          CALL_RESULT_ENVELOPE,
          {
            timeout: timeoutMs,
            resetTimeoutOnProgress: true,
            ...(signal ? { signal } : {}),
            onprogress: (p) => onProgress?.({ progress: p.progress, total: p.total, message: p.message }),
          },
        );
      } catch (error) {
        throw mapError(error, what, timeoutMs, signal);
      } finally {
        end();
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
