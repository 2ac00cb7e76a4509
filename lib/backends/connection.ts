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
import {
  LOG_LEVEL_META_KEY,
  SdkError,
  SdkErrorCode,
  TRACEPARENT_META_KEY,
  TRACESTATE_META_KEY,
} from "@modelcontextprotocol/client";
import type {
  CallToolResult,
  LoggingLevel,
  ProtocolEra,
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
  type CallOptions,
  CLIENT_INFO,
  type ConnectionEnd,
  listChangedLog,
  MAX_TOOL_LIST_PAGES,
  MAX_TRACESTATE_CHARS,
  type ToolListing,
} from "./connection_types.ts";
import { dispatchCheckedMessages } from "../jsonrpc/mod.ts";
import type { Logger } from "../log.ts";
import { NULL_LOGGER } from "../log.ts";
import { CALL_RESULT_ENVELOPE, MODERN_CALL_RESULT_ENVELOPE } from "./_call_result.ts";
import { guardListAnswers, restoreProtoKeys } from "./_list_guard.ts";
import { slicedListCheck } from "./_sliced_list_check.ts";
export { MAX_LISTING_BYTES } from "./_list_guard.ts";
import { LeanClient } from "./_lean_client.ts";
import { relayToPeer } from "./_peer_relay.ts";
import { type ListHints, listHintsOf, ToolListFreshness } from "./_list_freshness.ts";
import { type ParamHeader, paramHeaders, scanParamHeaders } from "./_param_headers.ts";
import { requestError, secondsText, withDetail } from "./_request_error.ts";
import type { RelayAdmission } from "./_relay_admission.ts";
export { MAX_RELAYED_PER_CALL, MAX_RELAYED_REQUEST_BYTES } from "./_relay_admission.ts";

export type {
  CallToolResult,
  ProtocolEra,
  ReadResourceResult,
  Resource,
  Root,
  ServerCapabilities,
  Tool,
  Transport,
};
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

/**
 * Most `input_required` rounds one request to a modern server may take (8): past them the request fails
 * (`REQUEST_FAILED`, naming the bound). Each round relays its input requests to the agent.
 */
export const MAX_INPUT_ROUNDS = 8;

/**
 * How long the `server/discover` probe waits, in ms. stdio (a transport with `pid` and `stderr`, as the SDK
 * tells them apart): half the startup timeout but at most {@link MAX_STDIO_PROBE_MS}, after which the server counts as legacy (the spec's stdio
 * rule: no answer within a reasonable time) and `initialize` has the other half. HTTP: the whole startup
 * budget (4 × `startupTimeoutMs`; the startup deadline ends it first), since silence there is an outage.
 */
export function probeTimeoutMs(transport: Transport, startupTimeoutMs: number): number {
  return isStdioTransport(transport)
    ? Math.min(MAX_STDIO_PROBE_MS, Math.max(1, Math.floor(startupTimeoutMs / 2)))
    : 4 * startupTimeoutMs;
}

/** A W3C `traceparent` (version-traceid-parentid-flags, lower-case hex). */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** A W3C `tracestate`: printable ASCII list members. */
const TRACESTATE = /^[\x20-\x7e]*$/;

/** Whether `transport` is a stdio one, as the SDK tells (`pid` and `stderr`). */
function isStdioTransport(transport: Transport): boolean {
  return "pid" in transport && "stderr" in transport;
}

/** Longest wait for a background re-listing of a modern server's tools (after `ttlMs`), in ms. */
const RELIST_TIMEOUT_MS = 30_000;

/**
 * Longest `server/discover` probe of a stdio server, ms (10 s): a legacy server that never answers it (some
 * do not answer requests before `initialize`) costs this once, then its era is cached with its tools.
 */
export const MAX_STDIO_PROBE_MS = 10_000;

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
  /**
   * The era this server configuration spoke last time (the tool cache's): `"legacy"` skips the
   * `server/discover` probe (a legacy server that never answers it costs the probe timeout once, not at
   * every start); when `initialize` is then refused, the server is probed again. `"modern"` or
   * `undefined`: probe. Default: probe.
   */
  priorEra?: ProtocolEra | undefined;
  /** Aborts the startup. */
  signal?: AbortSignal | undefined;
  /** @default NULL_LOGGER */
  logger?: Logger | undefined;
  /** Clock for `connectedAtMs`. @default Date.now */
  now?: (() => number) | undefined;
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
  const { server, peer } = options;
  const offered = peer?.capabilities() ?? {};
  const client = new LeanClient(
    { ...CLIENT_INFO },
    {
      capabilities: { ...(options.roots ? { roots: { listChanged: false } } : {}), ...offered },
      // `server/discover` first, `initialize` when the server is legacy (the SDK's in-place probe).
      // Bounded by the startup deadline (see `probeTimeoutMs`).
      versionNegotiation: {
        mode: "auto",
        probe: { timeoutMs: probeTimeoutMs(transport, options.startupTimeoutMs) },
      },
      inputRequired: { maxRounds: MAX_INPUT_ROUNDS },
    },
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
  const connection = new LiveConnection(client, admission, {
    server,
    isStdio: isStdioTransport(transport),
    logger,
    describeEnd: options.describeEnd,
  });
  const startMs = await handshake(client, transport, connection, options, now);

  // A transport that checks every message itself (stdio) skips the SDK's probes of each message's kind.
  dispatchCheckedMessages(client, transport);
  guardListAnswers(transport);
  connection.markConnected(now());
  client.completesResults = connection.era === "modern";
  // Modern servers ask in `input_required` results (admitted per input request), never on the wire.
  if (connection.era === "legacy") {
    admission.guard(transport, (reason) => logger.debug(`not relayed: ${reason}`));
  }
  const info = connection.serverInfo;
  logger.info(
    `connected (${info?.name ?? "?"} ${info?.version ?? "?"}, ${connection.era} era, ` +
      `${connection.protocolVersion ?? "?"}) in ${connection.connectedAtMs - startMs} ms`,
  );
  if (peer && connection.serverCapabilities.logging) connection.relayLogLevel(peer);
  if (connection.era === "modern" && options.onToolListChanged) {
    connection.watchToolList(client, options.onToolListChanged);
  }
  return connection;
}

/**
 * The startup deadline of one connection: `startupTimeoutMs` after the start, pushed back to
 * `startupTimeoutMs` from now by each sign of life (`onStartupActivity`) but never past
 * 4 × `startupTimeoutMs`, checked at least once a second. When it passes, `passed` resolves and `signal`
 * aborts; the caller's own `signal` aborts it too and resolves `cancelled`.
 */
class StartupDeadline {
  /** Resolves with `"timeout"` once the deadline passed; never rejects. */
  readonly passed: Promise<"timeout">;
  /** Resolves with `"cancelled"` once the caller's signal aborts (never, without one); never rejects. */
  readonly cancelled: Promise<"cancelled">;
  readonly #abort = new AbortController();
  readonly #unsubscribe: (() => void) | undefined;
  readonly #callerSignal: AbortSignal | undefined;
  readonly #onCallerAbort: () => void;
  #deadlineMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: OpenConnectionOptions, now: () => number, startMs: number) {
    const stepMs = options.startupTimeoutMs;
    const capMs = startMs + 4 * stepMs;
    this.#deadlineMs = startMs + stepMs;
    this.#unsubscribe = options.onStartupActivity?.(() => {
      this.#deadlineMs = Math.min(capMs, Math.max(this.#deadlineMs, now() + stepMs));
    });
    this.passed = new Promise<"timeout">((resolve) => {
      const check = () => {
        const left = this.#deadlineMs - now();
        if (left <= 0) {
          resolve("timeout");
          this.#abort.abort(new Error("startup timeout"));
        } else this.#timer = setTimeout(check, Math.min(left, 1_000));
      };
      this.#timer = setTimeout(check, Math.min(stepMs, 1_000));
    });
    this.#callerSignal = options.signal;
    let cancel: (value: "cancelled") => void = () => {};
    this.cancelled = new Promise((resolve) => cancel = resolve);
    this.#onCallerAbort = () => {
      this.#abort.abort(options.signal?.reason);
      cancel("cancelled");
    };
    this.#callerSignal?.addEventListener("abort", this.#onCallerAbort, { once: true });
  }

  /** Aborted when the deadline passes or the caller aborts. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Stops the timer and lets go of the activity feed and the caller's signal. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#unsubscribe?.();
    this.#callerSignal?.removeEventListener("abort", this.#onCallerAbort);
  }
}

/**
 * Starts the transport and completes `initialize` under the startup deadline. On failure the client is
 * closed (by us) before the error is thrown.
 *
 * @returns When the start began, per `now` (ms).
 * @throws {BackendError} `CANCELLED`, `STARTUP_TIMEOUT`, `START_FAILED`.
 */
async function handshake(
  client: LeanClient,
  transport: Transport,
  connection: LiveConnection,
  options: OpenConnectionOptions,
  now: () => number,
): Promise<number> {
  const server = options.server;
  const startMs = now();
  const deadline = new StartupDeadline(options, now, startMs);
  try {
    if (options.signal?.aborted) throw new BackendError("CANCELLED", server, `${server}: start cancelled`);
    const connecting = client.connect(transport, {
      signal: deadline.signal,
      timeout: 4 * options.startupTimeoutMs,
      ...(options.priorEra === "legacy" ? { prior: { kind: "legacy" as const } } : {}),
    });
    connecting.catch(() => {}); // Observed below through the race; a late rejection must not go unhandled.
    // The SDK's `server/discover` probe does not heed the signal: a caller's abort must not wait it out.
    const outcome = await Promise.race([
      connecting.then(() => "ok" as const),
      deadline.passed,
      deadline.cancelled,
    ]);
    if (outcome === "cancelled") throw new BackendError("CANCELLED", server, `${server}: start cancelled`);
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
    await connection.abandon();
    // During the `server/discover` probe the SDK holds the transport without the client: close it too.
    await transport.close().catch(() => {}); // Best effort, as `abandon`.
    throw startError(error, options);
  } finally {
    deadline.stop();
  }
  return startMs;
}

/**
 * Whether a failed start ended because the server closed its pipe during the `server/discover` probe
 * (the SDK's `ERA_NEGOTIATION_FAILED` as the cause): some legacy stdio servers exit on any request before
 * `initialize`, and are then started again without the probe (`pool.ts`).
 */
export function closedDuringProbe(error: BackendError): boolean {
  return error.cause instanceof SdkError && error.cause.code === SdkErrorCode.EraNegotiationFailed;
}

/** The error a failed start reports: `error` itself when it is one of ours, else `CANCELLED` or `START_FAILED`. */
function startError(error: unknown, options: OpenConnectionOptions): BackendError {
  const server = options.server;
  if (error instanceof BackendError) return error;
  if (options.signal?.aborted) return new BackendError("CANCELLED", server, `${server}: start cancelled`);
  const detail = options.describeFailure?.();
  const base = error instanceof Error ? error.message : String(error);
  return new BackendError("START_FAILED", server, withDetail(`${server} failed to start: ${base}`, detail), {
    cause: error,
  });
}

/** Settings of a {@link LiveConnection} that come from {@link OpenConnectionOptions}. */
interface LiveConnectionOptions {
  server: string;
  /** The transport is a stdio one (no per-request headers). */
  isStdio: boolean;
  logger: Logger;
  describeEnd: (() => string | undefined) | undefined;
}

/**
 * One connection's state across calls: the SDK client, the relay's admission, whether it has ended and
 * who ended it. Built before the handshake (it watches the client's close from the start) and completed by
 * {@link LiveConnection.markConnected} after it.
 */
class LiveConnection implements BackendConnection {
  readonly server: string;
  readonly ended: Promise<ConnectionEnd>;
  connectedAtMs = 0;
  era: ProtocolEra = "legacy";
  toolListHints: ListHints = {};
  #logLevel: (() => LoggingLevel | undefined) | undefined;
  readonly #paramHeaders = new Map<string, ParamHeader[]>();
  #freshness: ToolListFreshness | undefined;
  protocolVersion: string | undefined = undefined;
  serverInfo: { name: string; version: string } | undefined = undefined;
  serverCapabilities: ServerCapabilities = {};
  readonly #client: LeanClient;
  readonly #admission: RelayAdmission;
  readonly #options: LiveConnectionOptions;
  #resolveEnded!: (end: ConnectionEnd) => void;
  #closedByUs = false;
  #isClosed = false;
  #lastTransportError: Error | undefined;

  constructor(client: LeanClient, admission: RelayAdmission, options: LiveConnectionOptions) {
    this.server = options.server;
    this.#client = client;
    this.#admission = admission;
    this.#options = options;
    this.ended = new Promise<ConnectionEnd>((resolve) => (this.#resolveEnded = resolve));
    client.onerror = (error) => {
      this.#lastTransportError = error;
      this.#options.logger.debug(`transport: ${error.message}`);
    };
    client.onclose = () => this.#onClose();
  }

  get isClosed(): boolean {
    return this.#isClosed;
  }

  /** Records what `initialize` answered, at `connectedAtMs` (ms since the epoch). */
  markConnected(connectedAtMs: number): void {
    this.connectedAtMs = connectedAtMs;
    const info = this.#client.getServerVersion();
    this.era = this.#client.getProtocolEra() ?? "legacy";
    this.protocolVersion = this.#client.getNegotiatedProtocolVersion();
    this.serverInfo = info ? { name: info.name, version: info.version } : undefined;
    this.serverCapabilities = this.#client.getServerCapabilities() ?? {};
  }

  /** Closes the client after a failed start, as our own close (best effort: the start error is reported). */
  async abandon(): Promise<void> {
    this.#closedByUs = true;
    await this.#client.close().catch(() => {}); // Best effort: the start already failed, report that error.
  }

  /**
   * The `_meta` a modern server's request carries beyond the SDK's own (protocol version, client info and
   * capabilities): the agent's trace context, and the log level only when the agent asked for logs.
   * Nothing for a legacy server (its requests stay as they were).
   */
  #modernMeta(trace: CallOptions["trace"]): { _meta?: Record<string, string> } {
    if (this.era !== "modern") return {};
    const meta: Record<string, string> = {};
    const level = this.#logLevel?.();
    if (level !== undefined) meta[LOG_LEVEL_META_KEY] = level;
    if (trace?.traceparent !== undefined && TRACEPARENT.test(trace.traceparent)) {
      meta[TRACEPARENT_META_KEY] = trace.traceparent;
      const state = trace.tracestate;
      if (state !== undefined && state.length <= MAX_TRACESTATE_CHARS && TRACESTATE.test(state)) {
        meta[TRACESTATE_META_KEY] = state;
      }
    }
    return Object.keys(meta).length > 0 ? { _meta: meta } : {};
  }

  /** Keeps the server's log level at the agent's: per request for a modern server, else `logging/setLevel`. */
  relayLogLevel(peer: BackendPeer): void {
    if (this.era === "modern") {
      this.#logLevel = () => peer.logLevel();
      return;
    }
    // Best effort: a server that refuses the level still has its messages filtered by the relay.
    const send = (level: LoggingLevel) =>
      void this.#client.setLoggingLevel(level).catch((error) =>
        this.#options.logger.debug(`logging/setLevel: ${String(error)}`)
      );
    const level = peer.logLevel();
    if (level !== undefined) send(level);
    const unsubscribe = peer.onLogLevel((next) => !this.#isClosed && send(next));
    void this.ended.then(unsubscribe);
  }

  /** Whether calls mirror `x-mcp-header` parameters into headers: modern era over HTTP (not stdio). */
  #mirrorsParams(): boolean {
    return this.era === "modern" && !this.#options.isStdio;
  }

  /**
   * The tools whose `x-mcp-header` marks are valid (the spec: an HTTP client excludes the others, saying
   * why in `warnings`); remembers each one's marks for its calls.
   */
  #scanParamHeaders(tools: Tool[], warnings: string[]): Tool[] {
    this.#paramHeaders.clear();
    return tools.filter((tool) => {
      const scan = scanParamHeaders(tool.inputSchema);
      if (!scan.valid) {
        const line = `${this.server}: tool ${tool.name} left out: ${scan.reason}`;
        warnings.push(line);
        this.#options.logger.warn(line);
        return false;
      }
      if (scan.headers.length > 0) this.#paramHeaders.set(tool.name, scan.headers);
      return true;
    });
  }

  /** A modern server's tool-list changes: its listen stream, else a new listing after `ttlMs`. */
  watchToolList(client: LeanClient, onChange: () => void): void {
    this.#freshness = new ToolListFreshness(client, {
      logger: this.#options.logger,
      onChange,
      relist: async () => JSON.stringify((await this.listTools({ timeoutMs: RELIST_TIMEOUT_MS })).tools),
    });
    this.#freshness.listen(this.serverCapabilities.tools?.listChanged === true);
  }

  async listTools(
    { timeoutMs, signal }: { timeoutMs: number; signal?: AbortSignal | undefined },
  ): Promise<ToolListing> {
    const { items, warnings, hints } = await this.#walkPages("tools/list", timeoutMs, signal);
    this.toolListHints = hints;
    this.#freshness?.listed(JSON.stringify(items), hints);
    const tools = this.#mirrorsParams() ? this.#scanParamHeaders(items as Tool[], warnings) : items as Tool[];
    return { tools, warnings };
  }

  async listResources(
    { timeoutMs, signal }: { timeoutMs: number; signal?: AbortSignal | undefined },
  ): Promise<{ resources: Resource[]; warnings: string[] }> {
    this.#requireResources("resources/list");
    const { items, warnings } = await this.#walkPages("resources/list", timeoutMs, signal);
    return { resources: items as Resource[], warnings };
  }

  async readResource(
    uri: string,
    { timeoutMs, signal }: { timeoutMs: number; signal?: AbortSignal | undefined },
  ): Promise<ReadResourceResult> {
    this.#requireResources("resources/read");
    const what = `${this.server} resources/read ${JSON.stringify(uri)}`;
    if (this.#isClosed) {
      throw this.#errorOf(new SdkError(SdkErrorCode.ConnectionClosed, "closed"), what, timeoutMs);
    }
    try {
      return await this.#client.request(
        { method: "resources/read", params: { uri } },
        { timeout: timeoutMs, ...(signal ? { signal } : {}) },
      );
    } catch (error) {
      throw this.#errorOf(error, what, timeoutMs, signal);
    }
  }

  async callTool(
    tool: string,
    args: Record<string, unknown>,
    { timeoutMs, signal, onProgress, trace }: CallOptions,
  ): Promise<CallToolResult> {
    const what = `${this.server}.${tool}`;
    if (this.#isClosed) {
      throw this.#errorOf(new SdkError(SdkErrorCode.ConnectionClosed, "closed"), what, timeoutMs);
    }
    const marks = this.#paramHeaders.get(tool);
    let headers: Record<string, string> | undefined;
    try {
      headers = marks && this.#mirrorsParams() ? paramHeaders(marks, args) : undefined;
    } catch (error) {
      throw new BackendError("REQUEST_FAILED", this.server, `${what} not sent: ${(error as Error).message}`);
    }
    const end = this.#admission.begin();
    try {
      return await this.#client.request(
        { method: "tools/call", params: { name: tool, arguments: args, ...this.#modernMeta(trace) } },
        this.era === "modern" ? MODERN_CALL_RESULT_ENVELOPE : CALL_RESULT_ENVELOPE,
        {
          timeout: timeoutMs,
          resetTimeoutOnProgress: true,
          ...(signal ? { signal } : {}),
          ...(headers ? { headers } : {}),
          onprogress: (p) => onProgress?.({ progress: p.progress, total: p.total, message: p.message }),
        },
      );
    } catch (error) {
      throw this.#errorOf(error, what, timeoutMs, signal);
    } finally {
      end();
    }
  }

  async close(): Promise<void> {
    if (this.#isClosed) return;
    this.#closedByUs = true;
    try {
      await this.#client.close();
    } catch (error) {
      this.#options.logger.debug(`close: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.#client.onclose?.();
  }

  #onClose(): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.#freshness?.close();
    this.#admission.releaseAll();
    const reason = this.#closedByUs
      ? "closed by us"
      : this.#options.describeEnd?.() ?? this.#lastTransportError?.message ?? "connection closed";
    if (!this.#closedByUs) this.#options.logger.warn(`connection ended: ${reason}`);
    this.#resolveEnded({ reason, isExpected: this.#closedByUs });
  }

  #requireResources(method: string): void {
    if (!this.serverCapabilities.resources) {
      throw new BackendError(
        "REQUEST_FAILED",
        this.server,
        `${this.server} declares no resources, so ${method} cannot be sent`,
      );
    }
  }

  /** Walks a paginated list method to the end; items are deduplicated by `name` (tools) or `uri`. */
  async #walkPages(
    method: "tools/list" | "resources/list",
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<{ items: unknown[]; warnings: string[]; hints: ListHints }> {
    const server = this.server;
    let hints: ListHints | undefined;
    const pages = new ListPages(server, method);
    let cursor: string | undefined;
    for (let page = 1;; page++) {
      let result: { nextCursor?: string | undefined; tools?: Tool[]; resources?: Resource[] };
      try {
        if (this.#isClosed) throw new SdkError(SdkErrorCode.ConnectionClosed, "closed");
        // Checked as the SDK would, a slice of items at a time (a page of 5,000 tools held the thread).
        result = await this.#client.request(
          { method, params: cursor === undefined ? {} : { cursor } },
          slicedListCheck(method),
          { timeout: timeoutMs, ...(signal ? { signal } : {}) },
        ) as typeof result;
      } catch (error) {
        throw this.#errorOf(error, `${server} ${method}`, timeoutMs, signal);
      }
      hints ??= listHintsOf(result); // The first page's `ttlMs`/`cacheScope` (2026-07-28) speak for the list.
      cursor = pages.take(page, cursor, result);
      if (cursor === undefined) break;
    }
    for (const w of pages.warnings) this.#options.logger.warn(w);
    return { items: pages.items, warnings: pages.warnings, hints: hints ?? {} };
  }

  /** The {@link BackendError} for a failed request `what` (e.g. `"github.search"`). */
  #errorOf(error: unknown, what: string, timeoutMs: number, signal?: AbortSignal): BackendError {
    return requestError(error, {
      server: this.server,
      what,
      timeoutMs,
      signal,
      isClosed: this.#isClosed,
      describeEnd: this.#options.describeEnd,
    });
  }
}

/**
 * The pages of one list walk: items deduplicated by `name` (tools) or `uri` (resources), and the walk's
 * end (no cursor, a repeated cursor, a page that added nothing, or {@link MAX_TOOL_LIST_PAGES} pages).
 */
class ListPages {
  readonly items: unknown[] = [];
  readonly warnings: string[] = [];
  readonly #keys = new Set<string>();
  readonly #seenCursors = new Set<string>();
  readonly #server: string;
  readonly #method: string;

  constructor(server: string, method: string) {
    this.#server = server;
    this.#method = method;
  }

  /**
   * Takes page `page` (1-based), asked for with `cursor`.
   *
   * @returns The cursor of the next page, or `undefined` when the walk ends here.
   */
  take(
    page: number,
    cursor: string | undefined,
    result: { nextCursor?: string | undefined; tools?: Tool[]; resources?: Resource[] },
  ): string | undefined {
    let added = 0;
    for (const listed of result.tools ?? result.resources ?? []) {
      const item = restoreProtoKeys(listed);
      const key = "uri" in item ? item.uri : item.name;
      if (this.#keys.has(key)) continue;
      this.#keys.add(key);
      this.items.push(item);
      added++;
    }
    const next = result.nextCursor;
    const what = `${this.#server}: ${this.#method}`;
    if (next === undefined || next === null || next === "") return undefined;
    if (this.#seenCursors.has(next) || next === cursor) {
      this.warnings.push(`${what} cursor "${next}" repeated; listing stopped after ${page} page(s)`);
      return undefined;
    }
    if (added === 0 && page > 1) {
      this.warnings.push(`${what} page ${page} added nothing new; listing stopped`);
      return undefined;
    }
    if (page >= MAX_TOOL_LIST_PAGES) {
      this.warnings.push(`${what} has more than ${MAX_TOOL_LIST_PAGES} pages; listing stopped`);
      return undefined;
    }
    this.#seenCursors.add(next);
    return next;
  }
}
