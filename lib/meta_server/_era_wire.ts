/**
 * What the agent's stdio connection must hold to in the modern era (MCP 2026-07-28) beyond what the SDK's
 * `serveStdio` does: the protocol version of every request is checked (an unsupported one gets `-32022`
 * whether it comes first or later), a `notifications/message` goes out only for a request whose `_meta`
 * asked for logs at that level, and no server->client request is ever written to a modern agent.
 *
 * @module
 */
import {
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/server";
import type { JSONRPCMessage, LoggingLevel, Transport } from "@modelcontextprotocol/server";
import { LOG_LEVELS as LEVELS } from "./agent_relay.ts";

/** The modern revisions `mcp-serve` serves, newest first. */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ["2026-07-28"];

/** Every revision `mcp-serve` serves: the modern ones, then the legacy ones `initialize` negotiates. */
export const SERVED_PROTOCOL_VERSIONS: readonly string[] = [
  ...MODERN_PROTOCOL_VERSIONS,
  ...SUPPORTED_PROTOCOL_VERSIONS.filter((v) => !MODERN_PROTOCOL_VERSIONS.includes(v)),
];

/** MCP 2026-07-28 `UnsupportedProtocolVersionError` code. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The era of a connection once its opening message chose one (`undefined` before). */
export type Era = "modern" | "legacy";

/** In-flight modern requests kept for log routing; past this many the oldest is forgotten. */
const TRACKED_REQUESTS_MAX = 1_024;

/**
 * Open `subscriptions/listen` requests one agent may hold at once (each stays open until the connection
 * ends); past it a new one is refused with `-32602` and the open ones go on.
 */
export const MAX_OPEN_SUBSCRIPTIONS = 16;

type Message = Record<string, unknown>;

function metaOf(message: Message): Record<string, unknown> | undefined {
  const params = message.params;
  if (typeof params !== "object" || params === null) return undefined;
  const meta = (params as Message)._meta;
  return typeof meta === "object" && meta !== null && !Array.isArray(meta) ? meta as Message : undefined;
}

/**
 * The protocol version a request claims in `_meta["io.modelcontextprotocol/protocolVersion"]`, when it is a
 * string (a modern request), else `undefined` (a legacy one).
 */
export function claimedVersion(message: JSONRPCMessage): string | undefined {
  const version = metaOf(message as Message)?.[PROTOCOL_VERSION_META_KEY];
  return typeof version === "string" ? version : undefined;
}

/** A modern `tools/call` retry's `inputResponses` and `requestState`, as the agent sent them. */
export interface RetryFields {
  inputResponses?: unknown;
  requestState?: unknown;
}

/**
 * Keeps the `inputResponses` and `requestState` of each modern `tools/call` as read from the wire, until
 * its handler takes them: the SDK lifts them out of `params` (and drops malformed entries) before a
 * handler runs, and the meta-server hands them on untouched. At most {@link TRACKED_REQUESTS_MAX} kept.
 */
export class RetryFieldsKeeper {
  readonly #kept = new Map<string, RetryFields>();

  /** Notes the fields of request `message`, if it is a `tools/call` that has any. */
  note(message: Message): void {
    const params = message.params as Message | undefined;
    if (message.method !== "tools/call" || typeof params !== "object" || params === null) return;
    if (!("inputResponses" in params) && !("requestState" in params)) return;
    if (this.#kept.size >= TRACKED_REQUESTS_MAX) this.#kept.delete(this.#kept.keys().next().value!);
    const fields: RetryFields = {};
    if ("inputResponses" in params) fields.inputResponses = params.inputResponses;
    if ("requestState" in params) fields.requestState = params.requestState;
    this.#kept.set(JSON.stringify(message.id), fields);
  }

  /** The fields noted for request `id` (then forgotten), or `undefined`. */
  take(id: unknown): RetryFields | undefined {
    const key = JSON.stringify(id);
    const fields = this.#kept.get(key);
    this.#kept.delete(key);
    return fields;
  }
}

/**
 * Puts the modern-era rules on `wire`, whose `onmessage`, `send` and `onclose` the SDK's `serveStdio` has
 * just set: call it right after `serveStdio()`.
 *
 * @param eraOf The connection's era now (`undefined` until the opening message chose one).
 * @param options.retryFields Where each modern `tools/call`'s retry fields are noted.
 */
export function guardModernWire(
  wire: Transport,
  eraOf: () => Era | undefined,
  options: { retryFields?: RetryFieldsKeeper } = {},
): void {
  /** Modern requests not answered yet -> the log level their `_meta` asked for (`null`: none). */
  const inFlight = new Map<string, LoggingLevel | null>();
  /** Open `subscriptions/listen` requests (their ids as JSON), until answered. */
  const listening = new Set<string>();
  const deliver = wire.onmessage!;
  wire.onmessage = (message, extra) => {
    const m = message as Message;
    if (typeof m.method === "string" && "id" in m) {
      const version = claimedVersion(message);
      if (version !== undefined && !MODERN_PROTOCOL_VERSIONS.includes(version)) {
        refuseVersion(wire, m.id, version);
        return;
      }
      if (m.method === "subscriptions/listen") {
        if (listening.size >= MAX_OPEN_SUBSCRIPTIONS) {
          refuse(
            wire,
            m.id,
            -32602,
            `Cannot open another subscription: ${MAX_OPEN_SUBSCRIPTIONS} are open (the most one agent may hold); listen on one of them`,
          );
          return;
        }
        listening.add(JSON.stringify(m.id));
      }
      if (version !== undefined) {
        const level = metaOf(m)?.[LOG_LEVEL_META_KEY];
        if (inFlight.size >= TRACKED_REQUESTS_MAX) inFlight.delete(inFlight.keys().next().value!);
        inFlight.set(
          JSON.stringify(m.id),
          LEVELS.includes(level as LoggingLevel) ? level as LoggingLevel : null,
        );
        options.retryFields?.note(m);
      }
    }
    deliver(message, extra);
  };
  const send = wire.send.bind(wire);
  wire.send = (message, options) => {
    const m = message as Message;
    if (!("method" in m)) {
      const id = JSON.stringify(m.id);
      inFlight.delete(id);
      listening.delete(id);
    } else if (eraOf() === "modern") {
      if ("id" in m) {
        // The 2026-07-28 revision has no server->client request: its questions travel in `input_required` results.
        return Promise.reject(
          new Error(`Cannot send ${String(m.method)} to a modern (2026-07-28) agent: it takes no requests`),
        );
      }
      if (m.method === "notifications/message" && !logWanted(inFlight, m, options?.relatedRequestId)) {
        return Promise.resolve();
      }
    }
    return send(message, options);
  };
}

/** Whether a log notification may go out: some request in flight (the related one, if named) asked for its level. */
function logWanted(
  inFlight: ReadonlyMap<string, LoggingLevel | null>,
  notification: Message,
  relatedRequestId: unknown,
): boolean {
  const level = (notification.params as Message | undefined)?.level as LoggingLevel;
  const severity = LEVELS.indexOf(level);
  const allows = (asked: LoggingLevel | null | undefined) =>
    asked != null && LEVELS.indexOf(asked) <= severity;
  if (relatedRequestId !== undefined) return allows(inFlight.get(JSON.stringify(relatedRequestId)));
  for (const asked of inFlight.values()) if (allows(asked)) return true;
  return false;
}

/** Answers request `id` with a JSON-RPC error (a write that fails means the agent is gone). */
function refuse(wire: Transport, id: unknown, code: number, message: string): void {
  wire.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage).catch(() => {});
}

function refuseVersion(wire: Transport, id: unknown, requested: string): void {
  const reply = {
    jsonrpc: "2.0",
    id,
    error: {
      code: UNSUPPORTED_PROTOCOL_VERSION,
      message: `Unsupported protocol version: ${JSON.stringify(requested.slice(0, 40))}; ` +
        `this server supports ${SERVED_PROTOCOL_VERSIONS.join(", ")}`,
      data: { supported: [...SERVED_PROTOCOL_VERSIONS], requested },
    },
  } as unknown as JSONRPCMessage;
  // A write that fails means the agent is gone: nothing to tell.
  wire.send(reply).catch(() => {});
}
