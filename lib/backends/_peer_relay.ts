/**
 * The handlers through which one backing server's requests and notifications for the agent reach the
 * peer (`lib/meta_server/`'s relay): `elicitation/create` and `sampling/createMessage` only as the
 * agent declared them, each admitted first by a {@link RelayAdmission} (on the raw message, before the
 * SDK holds it), log lines and URL-elicitation completions as they come. A modern (2026-07-28) server's
 * input requests, embedded in `input_required` results, reach the same handlers (the SDK's multi-round-trip
 * driver dispatches them there and retries the request with the answers and the server's `requestState`),
 * each admitted with the same bounds, so both eras look the same to the peer.
 *
 * @module
 */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/client";
import type { Client, ClientCapabilities } from "@modelcontextprotocol/client";
import type { BackendPeer } from "./connection_types.ts";
import { RelayAdmission } from "./_relay_admission.ts";

/**
 * Sets `client`'s handlers for what server `server` asks of the agent through `peer` (none without a
 * peer). Install the returned admission's `guard` on the transport once connected, `begin()` around every
 * tool call, and `releaseAll()` when the connection ends.
 *
 * @param offered What was offered to the server in `initialize` (from the agent's capabilities).
 */
export function relayToPeer(
  client: Client,
  server: string,
  peer: BackendPeer | undefined,
  offered: Pick<ClientCapabilities, "elicitation" | "sampling">,
): RelayAdmission {
  // Requests for the agent are relayed only inside our tool calls, bounded (`_relay_admission.ts`): the
  // verdict is taken on the raw message; a handler runs only for an admitted request, under its ticket.
  const admission = new RelayAdmission(server, {
    methods: [
      ...(peer && offered.elicitation ? ["elicitation/create"] : []),
      ...(peer && offered.sampling ? ["sampling/createMessage"] : []),
    ],
    reserve: peer?.reserveRelay?.bind(peer),
  });
  const relayed = async <T>(
    request: { method: string; params?: unknown },
    id: string | number,
    signal: AbortSignal,
    run: (signal: AbortSignal) => Promise<T>,
  ) => {
    // A modern server's input request (in an `input_required` result) is admitted here, a wire request by
    // the transport guard before the SDK saw it.
    const ticket = client.getProtocolEra() === "modern"
      ? admission.admitInline(request.method, request.params)
      : admission.take(id);
    if (typeof ticket === "string" || !ticket) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `Cannot relay to the user: ${typeof ticket === "string" ? ticket : "not admitted"}`,
      );
    }
    try {
      return await run(AbortSignal.any([signal, ticket.signal]));
    } finally {
      ticket.release();
    }
  };
  if (peer) {
    if (offered.elicitation) {
      client.setRequestHandler(
        "elicitation/create",
        (request, ctx) =>
          relayed(request, ctx.mcpReq.id, ctx.mcpReq.signal, (signal) => peer.elicit(request.params, signal)),
      );
    }
    if (offered.sampling) {
      client.setRequestHandler(
        "sampling/createMessage",
        (request, ctx) =>
          relayed(request, ctx.mcpReq.id, ctx.mcpReq.signal, (signal) => peer.sample(request.params, signal)),
      );
    }
    client.setNotificationHandler("notifications/message", (notification) => peer.log(notification.params));
    if (offered.elicitation?.url) {
      client.setNotificationHandler(
        "notifications/elicitation/complete",
        (notification) => peer.elicitationComplete(notification.params.elicitationId),
      );
    }
  }
  return admission;
}
