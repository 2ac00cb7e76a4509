/**
 * What backing servers ask of their client, relayed to the agent: `elicitation/create` (the question
 * named after the server that asks it), `sampling/createMessage`, and `notifications/message` log
 * lines at or above the agent's `logging/setLevel` level, `logger` naming the server. Every bound is
 * here: at most {@link MAX_OPEN_RELAYED_REQUESTS} relayed requests open at once (the per-call bounds are
 * the connection's, `lib/backends/_relay_admission.ts`), URL elicitations only to `https:` (or `http:` on
 * this machine), log lines at most {@link MAX_FORWARDED_LOGS_PER_SECOND} and
 * {@link MAX_FORWARDED_LOG_BYTES_PER_SECOND} per second and {@link MAX_FORWARDED_LOG_MESSAGE_BYTES} each.
 * Every relayed text loses its control and bidi characters (`_relay_text.ts`), `_meta["symposium/server"]`
 * is always ours, and the meta-server's own questions carry {@link OWN_QUESTION_MARK}. A backing server is
 * offered elicitation and sampling only when the agent declared them. For an agent that speaks MCP
 * 2026-07-28 no request goes to the agent: a question asked during a script's call goes to that script's
 * run (`suspended_runs.ts`), which `execute` answers `input_required` with; any other is refused.
 *
 * @module
 */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type {
  ClientCapabilities,
  CreateMessageRequestParams,
  ElicitRequestParams,
  ElicitResult,
  LoggingLevel,
  LoggingMessageNotification,
  Server,
} from "@modelcontextprotocol/server";
import type { BackendPeer } from "../backends/mod.ts";
import type { Logger } from "../log.ts";
import { NULL_LOGGER } from "../log.ts";
import { namespaceKey } from "../plugins/mod.ts";
import { cleanRelayedText, cleanRelayedValue, OWN_QUESTION_MARK } from "./_relay_text.ts";
import { type InputRequest, SuspendedRuns } from "./suspended_runs.ts";

export { OWN_QUESTION_MARK } from "./_relay_text.ts";

/**
 * Longest wait for the agent's answer to a relayed elicitation or sampling request, in ms (10 min):
 * a person may take a while to answer. The request ends sooner when the tool call it came with ends
 * (the agent gets `notifications/cancelled`), or when the backing server cancels it.
 */
export const RELAY_REQUEST_TIMEOUT_MS = 600_000;

/** Most relayed elicitation and sampling requests open towards the agent at once (4); more are refused. */
export const MAX_OPEN_RELAYED_REQUESTS = 4;

/** Most backing-server log messages forwarded to the agent in any one-second window. */
export const MAX_FORWARDED_LOGS_PER_SECOND = 100;

/** Most characters of log messages (their `data` as JSON) forwarded in any one-second window (1 MiB). */
export const MAX_FORWARDED_LOG_BYTES_PER_SECOND = 1024 * 1024;

/** Largest log message forwarded, characters of its `data` as JSON (64 KiB); larger ones are dropped. */
export const MAX_FORWARDED_LOG_MESSAGE_BYTES = 64 * 1024;

/** Longest delay before the agent hears how many log messages were dropped, in ms. */
export const DROPPED_LOGS_NOTICE_MS = 1_000;

/** Relayed URL elicitations remembered for their `notifications/elicitation/complete`. */
const URL_ELICITATIONS_KEPT = 256;

/** The level forwarded from before the agent sends `logging/setLevel` (RFC 5424 order). */
export const DEFAULT_FORWARDED_LOG_LEVEL: LoggingLevel = "info";

/** RFC 5424 severities in increasing order, as MCP `logging` uses them. */
export const LOG_LEVELS: readonly LoggingLevel[] = Object.freeze([
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
]);

/** Whether `host` (a URL's `hostname`) is this machine: `localhost`, 127.0.0.0/8 or `[::1]`. */
function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * The URL of a URL-mode elicitation as it may be shown, or why not: `https:`, or `http:` to this machine.
 * `javascript:`, `data:`, `file:`, `vscode:` and plain `http:` elsewhere are refused.
 */
export function checkElicitationUrl(url: unknown): { ok: true; url: string } | { ok: false; reason: string } {
  if (typeof url !== "string" || !URL.canParse(url)) return { ok: false, reason: "its url is not a URL" };
  const parsed = new URL(url);
  if (parsed.protocol === "https:" || (parsed.protocol === "http:" && isLoopbackHost(parsed.hostname))) {
    return { ok: true, url: parsed.href };
  }
  return {
    ok: false,
    reason: `its url is ${
      JSON.stringify(cleanRelayedText(parsed.protocol))
    }; only https: URLs (http: to this machine) are shown`,
  };
}

function refuse(reason: string): never {
  throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `Cannot relay to the user: ${reason}`);
}

/** Options of {@link AgentRelay}. */
export interface AgentRelayOptions {
  /** @default NULL_LOGGER */
  logger?: Logger | undefined;
  /** Milliseconds, monotonic enough for the rate window. @default performance.now */
  now?: (() => number) | undefined;
  /** @default MAX_FORWARDED_LOGS_PER_SECOND */
  maxLogsPerSecond?: number | undefined;
  /** Characters per second. @default MAX_FORWARDED_LOG_BYTES_PER_SECOND */
  maxLogBytesPerSecond?: number | undefined;
  /** @default RELAY_REQUEST_TIMEOUT_MS */
  requestTimeoutMs?: number | undefined;
  /** @default MAX_OPEN_RELAYED_REQUESTS */
  maxOpenRequests?: number | undefined;
  /** The runs that may wait for a modern agent. @default a new `SuspendedRuns` */
  runs?: SuspendedRuns | undefined;
}

/** The relays of one agent session (one meta-server `Server`). Call {@link close} at the session's end. */
export class AgentRelay {
  readonly #server: Server;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #maxPerSecond: number;
  readonly #maxBytesPerSecond: number;
  readonly #timeoutMs: number;
  readonly #maxOpen: number;
  #level: LoggingLevel | undefined;
  readonly #levelListeners = new Set<(level: LoggingLevel) => void>();
  /** Send times and sizes of the last forwarded messages, oldest first. */
  readonly #sent: { at: number; chars: number }[] = [];
  #sentChars = 0;
  #dropped = 0;
  #noticeTimer: ReturnType<typeof setTimeout> | undefined;
  #open = 0;
  /** URL elicitations relayed, by `elicitationId`: the server that asked (only it may complete them). */
  readonly #urlAsks = new Map<string, string>();
  #closed = false;
  /** What a modern agent (MCP 2026-07-28) declared in its latest request's `_meta`. */
  #modernCapabilities: ClientCapabilities | undefined;
  /** The session's runs that may wait for a modern agent's answer across `execute` requests. */
  readonly runs: SuspendedRuns;

  constructor(server: Server, options: AgentRelayOptions = {}) {
    this.runs = options.runs ?? new SuspendedRuns();
    this.#server = server;
    this.#logger = options.logger ?? NULL_LOGGER;
    this.#now = options.now ?? (() => performance.now());
    this.#maxPerSecond = Math.max(1, options.maxLogsPerSecond ?? MAX_FORWARDED_LOGS_PER_SECOND);
    this.#maxBytesPerSecond = options.maxLogBytesPerSecond ?? MAX_FORWARDED_LOG_BYTES_PER_SECOND;
    this.#timeoutMs = options.requestTimeoutMs ?? RELAY_REQUEST_TIMEOUT_MS;
    this.#maxOpen = options.maxOpenRequests ?? MAX_OPEN_RELAYED_REQUESTS;
  }

  /** The level the agent set with `logging/setLevel`, `undefined` before it did. */
  get level(): LoggingLevel | undefined {
    return this.#level;
  }

  /**
   * Records the agent's `logging/setLevel` and sends it on to the running servers that log (an unknown
   * level is refused by the caller's schema).
   */
  setLevel(level: LoggingLevel): void {
    this.#level = level;
    for (const listener of this.#levelListeners) listener(level);
  }

  /**
   * What the agent declared at `initialize`, else in its latest modern request's `_meta` (see
   * {@link noteModernAgent}), else `{}`.
   */
  agentCapabilities(): ClientCapabilities {
    return this.#server.getClientCapabilities() ?? this.#modernCapabilities ?? {};
  }

  /**
   * Records a request of an agent that speaks MCP 2026-07-28 and the capabilities it declared in it
   * (`_meta["io.modelcontextprotocol/clientCapabilities"]`): backing servers started from now on are
   * offered those, and no request is ever sent to the agent.
   */
  noteModernAgent(capabilities: ClientCapabilities): void {
    this.#modernCapabilities = capabilities;
  }

  /** Whether the agent speaks MCP 2026-07-28 (no `initialize`, a modern request seen). */
  #isModern(): boolean {
    return this.#modernCapabilities !== undefined && this.#server.getClientCapabilities() === undefined;
  }

  /** Whether the agent can answer a form elicitation (`elicitation: {}` counts, as before modes existed). */
  canElicitForm(): boolean {
    const e = this.agentCapabilities().elicitation;
    return e !== undefined && (e.form !== undefined || e.url === undefined);
  }

  /**
   * Sends the meta-server's own `elicitation/create` to the agent: its message begins with
   * {@link OWN_QUESTION_MARK} and its `_meta["symposium/server"]` is `"symposium"`. Not counted
   * against {@link MAX_OPEN_RELAYED_REQUESTS}.
   *
   * @throws The agent's JSON-RPC error, a timeout after {@link RELAY_REQUEST_TIMEOUT_MS}, or the
   *   abort of `signal`.
   */
  async elicit(params: ElicitRequestParams, signal?: AbortSignal): Promise<ElicitResult> {
    if (this.#isModern()) refuse("the agent speaks MCP 2026-07-28 and is asked only while an execute waits");
    return await this.#server.request(
      { method: "elicitation/create", params: ownQuestion(params) },
      { timeout: this.#timeoutMs, ...(signal ? { signal } : {}) },
    );
  }

  /** Ends the session's relays: a pending dropped-logs notice is not sent, waiting runs are cancelled. Idempotent. */
  close(): void {
    this.#closed = true;
    this.runs.close();
    clearTimeout(this.#noticeTimer);
    this.#noticeTimer = undefined;
  }

  /** The peer one backing server gets: it asks as `server` (its manifest name). */
  peerFor(server: string): BackendPeer {
    return {
      capabilities: () => this.#offered(),
      reserveRelay: () => this.#reserve(),
      elicit: (params, signal) => this.#relayElicit(server, params, signal),
      sample: async (params, signal) => {
        const relayed = relayedSampling(server, params);
        const asked = await this.#askWaitingRun(
          server,
          { method: "sampling/createMessage", params: relayed },
          signal,
        );
        if (asked.run) return asked.answer as Awaited<ReturnType<BackendPeer["sample"]>>;
        return await this.#server.createMessage(relayed, { timeout: this.#timeoutMs, signal });
      },
      elicitationComplete: (elicitationId) => {
        // Only the server that asked may close its question (server b cannot close server a's).
        if (this.#urlAsks.get(elicitationId) !== server) return;
        this.#urlAsks.delete(elicitationId);
        this.#server.notification({ method: "notifications/elicitation/complete", params: { elicitationId } })
          .catch(() => {}); // The agent may be gone.
      },
      log: (params) => this.#forwardLog(server, params),
      droppedLog: () => this.#drop(),
      logLevel: () => this.#level,
      onLogLevel: (listener) => {
        this.#levelListeners.add(listener);
        return () => void this.#levelListeners.delete(listener);
      },
    };
  }

  /**
   * One of the {@link MAX_OPEN_RELAYED_REQUESTS} slots of questions open with the agent, or `undefined`
   * when all are taken; the returned function gives it back (once).
   */
  #reserve(): (() => void) | undefined {
    if (this.#open >= this.#maxOpen) return undefined;
    this.#open++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#open--;
    };
  }

  async #relayElicit(
    server: string,
    params: ElicitRequestParams,
    signal: AbortSignal,
  ): Promise<ElicitResult> {
    const clean = cleanRelayedValue(params) as ElicitRequestParams;
    const relayed = {
      ...clean,
      message: `[${server}] ${clean.message}`,
      _meta: { ...withoutOurMeta(clean._meta), "symposium/server": server },
    } as ElicitRequestParams;
    if (relayed.mode === "url") {
      const checked = checkElicitationUrl(params.mode === "url" ? params.url : undefined);
      if (!checked.ok) refuse(`the URL elicitation of ${server} was not shown: ${checked.reason}`);
      relayed.url = checked.url;
      if (this.#urlAsks.size >= URL_ELICITATIONS_KEPT) {
        this.#urlAsks.delete(this.#urlAsks.keys().next().value!);
      }
      this.#urlAsks.set(relayed.elicitationId, server);
    }
    const asked = await this.#askWaitingRun(
      server,
      { method: "elicitation/create", params: relayed },
      signal,
    );
    if (asked.run) return asked.answer as ElicitResult;
    return await this.#server.request(
      { method: "elicitation/create", params: relayed },
      { timeout: this.#timeoutMs, signal },
    );
  }

  /**
   * For a modern agent: asks `request` through the run that has a call to `server` in flight (the script
   * waits for the agent's retry of `execute`); `{ run: false }` for a legacy agent (relay as a request).
   * @throws {ProtocolError} `InvalidRequest` for a modern agent when no run of the session calls `server`.
   */
  async #askWaitingRun(
    server: string,
    request: InputRequest,
    signal: AbortSignal,
  ): Promise<{ run: true; answer: unknown } | { run: false }> {
    const run = this.runs.callingRun(namespaceKey(server));
    if (run) return { run: true, answer: await run.ask(namespaceKey(server), request, { signal }) };
    if (this.#isModern()) {
      refuse(
        `${server} asked outside a script's call to it, and an MCP 2026-07-28 agent is asked only while an execute waits`,
      );
    }
    return { run: false };
  }

  /** Elicitation and sampling as the agent declared them; form elicitation gets defaults applied. */
  #offered(): Pick<ClientCapabilities, "elicitation" | "sampling"> {
    const agent = this.agentCapabilities();
    const offered: Pick<ClientCapabilities, "elicitation" | "sampling"> = {};
    const e = agent.elicitation;
    if (e !== undefined) {
      offered.elicitation = {
        ...(this.canElicitForm() ? { form: { ...e.form, applyDefaults: true } } : {}),
        ...(e.url !== undefined ? { url: e.url } : {}),
      };
    }
    if (agent.sampling !== undefined) offered.sampling = agent.sampling;
    return offered;
  }

  #forwardLog(server: string, params: LoggingMessageNotification["params"]): void {
    const threshold = LOG_LEVELS.indexOf(this.#level ?? DEFAULT_FORWARDED_LOG_LEVEL);
    if (LOG_LEVELS.indexOf(params.level) < threshold) return;
    const chars = (JSON.stringify(params.data) ?? "").length + (params.logger?.length ?? 0);
    if (chars > MAX_FORWARDED_LOG_MESSAGE_BYTES || !this.#take(chars)) return this.#drop();
    const logger = params.logger ? `${server}/${cleanRelayedText(params.logger)}` : server;
    this.#send({ ...params, data: cleanRelayedValue(params.data), logger });
  }

  /** Counts a dropped message; the agent hears the count within {@link DROPPED_LOGS_NOTICE_MS}. */
  #drop(): void {
    if (this.#dropped++ === 0) {
      this.#logger.warn(
        `log messages from backing servers over ${this.#maxPerSecond}/s, ` +
          `${this.#maxBytesPerSecond} characters/s or ${MAX_FORWARDED_LOG_MESSAGE_BYTES} characters each are dropped`,
      );
    }
    if (this.#noticeTimer !== undefined || this.#closed) return;
    this.#noticeTimer = setTimeout(() => {
      this.#noticeTimer = undefined;
      this.#tellDropped();
    }, DROPPED_LOGS_NOTICE_MS);
    Deno.unrefTimer(this.#noticeTimer as unknown as number);
  }

  #tellDropped(): void {
    if (this.#dropped === 0 || this.#closed) return;
    const dropped = this.#dropped;
    this.#dropped = 0;
    this.#send({
      level: "warning",
      logger: "symposium",
      data: `${dropped} log message(s) from backing servers were dropped (more than ${this.#maxPerSecond} ` +
        `per second, ${this.#maxBytesPerSecond} characters per second, or one over ` +
        `${MAX_FORWARDED_LOG_MESSAGE_BYTES} characters)`,
    });
  }

  /** Takes room for one message of `chars` in the sliding one-second window; `false` when it is full. */
  #take(chars: number): boolean {
    const now = this.#now();
    while (this.#sent.length > 0 && now - this.#sent[0]!.at >= 1_000) {
      this.#sentChars -= this.#sent.shift()!.chars;
    }
    if (this.#sent.length >= this.#maxPerSecond || this.#sentChars + chars > this.#maxBytesPerSecond) {
      return false;
    }
    this.#sent.push({ at: now, chars });
    this.#sentChars += chars;
    return true;
  }

  #send(params: LoggingMessageNotification["params"]): void {
    this.#server.sendLoggingMessage(params).catch(() => {}); // The agent may be gone; logs are best effort.
  }
}

/**
 * The meta-server's own question as the agent gets it: its message begins with {@link OWN_QUESTION_MARK}
 * and its `_meta["symposium/server"]` is `"symposium"`.
 */
export function ownQuestion(params: ElicitRequestParams): ElicitRequestParams {
  return {
    ...params,
    message: `${OWN_QUESTION_MARK} ${params.message}`,
    _meta: { ...params._meta, "symposium/server": "symposium" },
  };
}

/** `_meta` without the keys we set (`symposium/...`): a server cannot speak for another. */
function withoutOurMeta(meta: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(meta ?? {})) if (!key.startsWith("symposium/")) out[key] = value;
  return out;
}

/**
 * A backing server's sampling request as the agent gets it: text cleaned, `_meta["symposium/server"]`
 * naming the server, `includeContext` dropped (context of the agent's other servers is not the backing
 * server's to ask for), and a `systemPrompt` labelled `[<server>] ` as its questions are.
 */
function relayedSampling(server: string, params: CreateMessageRequestParams): CreateMessageRequestParams {
  const { includeContext: _dropped, ...clean } = cleanRelayedValue(params);
  return {
    ...clean,
    ...(typeof clean.systemPrompt === "string" ? { systemPrompt: `[${server}] ${clean.systemPrompt}` } : {}),
    _meta: { ...withoutOurMeta(clean._meta), "symposium/server": server },
  };
}
