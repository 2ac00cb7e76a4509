/**
 * What backing servers ask of their client, relayed to the agent: `elicitation/create` (the question
 * named after the server that asks it), `sampling/createMessage`, and `notifications/message` log
 * lines at or above the agent's `logging/setLevel` level, `logger` naming the server, at most
 * {@link MAX_FORWARDED_LOGS_PER_SECOND} per second. A backing server is offered elicitation and
 * sampling only when the agent declared them, so it never asks for what the agent cannot give.
 *
 * @module
 */
import type {
  ClientCapabilities,
  ElicitRequestParams,
  ElicitResult,
  LoggingLevel,
  LoggingMessageNotification,
  Server,
} from "@modelcontextprotocol/server";
import type { BackendPeer } from "../backends/connection.ts";
import type { Logger } from "../log.ts";
import { NULL_LOGGER } from "../log.ts";

/**
 * Longest wait for the agent's answer to a relayed elicitation or sampling request, in ms (10 min):
 * a person may take a while to answer. The backing server's own timeout (and its cancellation, which
 * is passed on) usually ends the wait first.
 */
export const RELAY_REQUEST_TIMEOUT_MS = 600_000;

/** Most backing-server log messages forwarded to the agent in any one-second window. */
export const MAX_FORWARDED_LOGS_PER_SECOND = 100;

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

/** Options of {@link AgentRelay}. */
export interface AgentRelayOptions {
  /** @default NULL_LOGGER */
  logger?: Logger | undefined;
  /** Milliseconds, monotonic enough for the rate window. @default performance.now */
  now?: (() => number) | undefined;
  /** @default MAX_FORWARDED_LOGS_PER_SECOND */
  maxLogsPerSecond?: number | undefined;
  /** @default RELAY_REQUEST_TIMEOUT_MS */
  requestTimeoutMs?: number | undefined;
}

/** The relays of one agent session (one meta-server `Server`). */
export class AgentRelay {
  readonly #server: Server;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #maxPerSecond: number;
  readonly #timeoutMs: number;
  #level: LoggingLevel | undefined;
  readonly #levelListeners = new Set<(level: LoggingLevel) => void>();
  /** Send times of the last forwarded messages, oldest first (at most `#maxPerSecond`). */
  readonly #sent: number[] = [];
  #dropped = 0;

  constructor(server: Server, options: AgentRelayOptions = {}) {
    this.#server = server;
    this.#logger = options.logger ?? NULL_LOGGER;
    this.#now = options.now ?? (() => performance.now());
    this.#maxPerSecond = Math.max(1, options.maxLogsPerSecond ?? MAX_FORWARDED_LOGS_PER_SECOND);
    this.#timeoutMs = options.requestTimeoutMs ?? RELAY_REQUEST_TIMEOUT_MS;
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

  /** What the agent declared at `initialize` (`{}` before it did). */
  agentCapabilities(): ClientCapabilities {
    return this.#server.getClientCapabilities() ?? {};
  }

  /** Whether the agent can answer a form elicitation (`elicitation: {}` counts, as before modes existed). */
  canElicitForm(): boolean {
    const e = this.agentCapabilities().elicitation;
    return e !== undefined && (e.form !== undefined || e.url === undefined);
  }

  /**
   * Sends `elicitation/create` to the agent as it is (the caller names the asker in `message`).
   *
   * @throws The agent's JSON-RPC error, a timeout after {@link RELAY_REQUEST_TIMEOUT_MS}, or the
   *   abort of `signal`.
   */
  async elicit(params: ElicitRequestParams, signal?: AbortSignal): Promise<ElicitResult> {
    return await this.#server.request(
      { method: "elicitation/create", params },
      { timeout: this.#timeoutMs, ...(signal ? { signal } : {}) },
    );
  }

  /** The peer one backing server gets: it asks as `server` (its manifest name). */
  peerFor(server: string): BackendPeer {
    return {
      capabilities: () => this.#offered(),
      elicit: (params, signal) =>
        this.elicit({ ...params, message: `[${server}] ${params.message}` }, signal),
      sample: (params, signal) =>
        this.#server.createMessage(
          { ...params, _meta: { ...params._meta, "symposium/server": server } },
          { timeout: this.#timeoutMs, signal },
        ),
      elicitationComplete: (elicitationId) => {
        this.#server.notification({ method: "notifications/elicitation/complete", params: { elicitationId } })
          .catch(() => {}); // The agent may be gone.
      },
      log: (params) => this.#forwardLog(server, params),
      logLevel: () => this.#level,
      onLogLevel: (listener) => {
        this.#levelListeners.add(listener);
        return () => void this.#levelListeners.delete(listener);
      },
    };
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
    if (!this.#take()) {
      if (this.#dropped++ === 0) {
        this.#logger.warn(`log messages from backing servers over ${this.#maxPerSecond}/s are dropped`);
      }
      return;
    }
    if (this.#dropped > 0) {
      const dropped = this.#dropped;
      this.#dropped = 0;
      this.#send({
        level: "warning",
        logger: "symposium",
        data:
          `${dropped} log message(s) from backing servers were dropped (more than ${this.#maxPerSecond} per second)`,
      });
      if (!this.#take()) {
        this.#dropped++;
        return;
      }
    }
    const logger = params.logger ? `${server}/${params.logger}` : server;
    this.#send({ ...params, logger });
  }

  /** Takes one slot of the sliding one-second window; `false` when it is full. */
  #take(): boolean {
    const now = this.#now();
    while (this.#sent.length > 0 && now - this.#sent[0]! >= 1_000) this.#sent.shift();
    if (this.#sent.length >= this.#maxPerSecond) return false;
    this.#sent.push(now);
    return true;
  }

  #send(params: LoggingMessageNotification["params"]): void {
    this.#server.sendLoggingMessage(params).catch(() => {}); // The agent may be gone; logs are best effort.
  }
}
