/**
 * Message dispatch for a transport that hands on only valid JSON-RPC messages, for either end of the MCP
 * SDK's protocol (the meta-server's `Server` on the agent's stdin, a backing server's `Client`): straight to
 * the protocol's request, notification and response handlers, without the zod probes the SDK runs over
 * every incoming message to tell its kind (three for a request or a notification, two of which fail at
 * ~10 µs each; one for a response). Both ends' transports (`LineStdioServerTransport` here, the backing
 * `StdioProcessTransport`) check every message before handing it on, and say so with {@link ChecksMessages}.
 *
 * @module
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport } from "@modelcontextprotocol/server";

/**
 * A transport whose every message passed the JSON-RPC message schema before `onmessage` (requests and
 * notifications against the MCP schema on the agent side, every backing stdout line through the SDK's
 * `deserializeMessage` or its exact fast path).
 */
export interface ChecksMessages {
  readonly checksMessages: true;
}

/** The SDK protocol's own dispatch targets (its `onmessage` closure calls them once its probes told the kind). */
interface ProtocolDispatch {
  _onresponse(response: JSONRPCMessage): void;
  _onrequest(request: JSONRPCMessage, extra?: MessageExtraInfo): void;
  _onnotification(notification: JSONRPCMessage, extra?: MessageExtraInfo): void;
}

/**
 * After `protocol.connect(transport)` resolved, and only when `transport` says {@link ChecksMessages}:
 * replaces the handler `connect()` gave it with one that sends a message with a string `method` to the
 * request (with `id`) or notification handler and one with `result` or `error` to the response handler, as
 * the SDK's closure does after its probes; anything else still goes through the SDK's closure.
 *
 * @param protocol An SDK `Client` or `Server` (anything extending its `Protocol`), connected to `transport`.
 * @param options.checked Install it although `transport` does not say {@link ChecksMessages}: it only
 *   relays messages another transport that does checked (the SDK's `serveStdio` channel in front of the
 *   agent's stdin). @default false
 * @returns Whether the fast dispatch was installed (`false` for a transport that does not check messages).
 */
export function dispatchCheckedMessages(
  protocol: object,
  transport: Transport,
  options: { checked?: boolean } = {},
): boolean {
  if (options.checked !== true && (transport as Partial<ChecksMessages>).checksMessages !== true) {
    return false;
  }
  const viaSdk = transport.onmessage;
  const target = protocol as ProtocolDispatch;
  transport.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
    const m = message as Record<string, unknown>;
    if (typeof m.method === "string") {
      if ("id" in m) target._onrequest(message, extra);
      else target._onnotification(message, extra);
    } else if ("result" in m || "error" in m) target._onresponse(message);
    else viaSdk?.(message, extra);
  };
  return true;
}
