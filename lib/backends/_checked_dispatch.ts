/**
 * Message dispatch for a backing connection whose transport hands on only valid JSON-RPC messages:
 * straight to the SDK client's handlers, without the zod probes its protocol runs over every incoming
 * message to tell its kind (the first of a response's two probes; the three a notification or a
 * request goes through, two of them failing at ~10 µs each).
 *
 * @module
 */
import type { Client, JSONRPCMessage, MessageExtraInfo, Transport } from "@modelcontextprotocol/client";

/** The SDK protocol's own dispatch targets (the SDK's closure calls them after its probes). */
interface ProtocolDispatch {
  _onresponse(response: JSONRPCMessage): void;
  _onrequest(request: JSONRPCMessage, extra?: MessageExtraInfo): void;
  _onnotification(notification: JSONRPCMessage, extra?: MessageExtraInfo): void;
}

/**
 * Replaces the handler `client.connect()` gave `transport` with one that sends a message with a string
 * `method` to the request (with `id`) or notification handler, and one with `result` or `error` to the
 * response handler, as the SDK's closure does once its probes told the kind; anything else still goes
 * through the SDK's closure. Only for a transport whose every message passed the JSON-RPC message
 * schema (the stdio transport's `deserializeMessage`). Call right after `connect()` resolved.
 */
export function dispatchCheckedMessages(client: Client, transport: Transport): void {
  const viaSdk = transport.onmessage;
  const protocol = client as unknown as ProtocolDispatch;
  transport.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
    const m = message as Record<string, unknown>;
    if (typeof m.method === "string") {
      if ("id" in m) protocol._onrequest(message, extra);
      else protocol._onnotification(message, extra);
    } else if ("result" in m || "error" in m) protocol._onresponse(message);
    else viaSdk?.(message, extra);
  };
}
