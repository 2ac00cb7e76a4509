/**
 * Which MCP era one request of the agent speaks: a request of MCP 2026-07-28 carries its protocol version
 * and the client's capabilities in `_meta` (no `initialize` came before it); any other is legacy.
 *
 * @module
 */
import type { ClientCapabilities } from "@modelcontextprotocol/server";

/** The `_meta` key of a modern request's protocol version. */
export const PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion";
/** The `_meta` key of a modern request's client capabilities. */
export const CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities";

/** The era of a request, and for a modern one what its `_meta` declares. */
export type RequestEra =
  | { era: "modern"; protocolVersion: string; capabilities: ClientCapabilities }
  | { era: "legacy" };

/**
 * The era of a request (`_meta[PROTOCOL_VERSION_META_KEY]` a string → modern; which versions are served is
 * checked where the request is received). Capabilities that are not an object count as none.
 *
 * @param request.envelope The reserved `_meta` keys as the SDK lifts them out of the params
 *   (`ctx.mcpReq.envelope`), read first.
 * @param request._meta The request's `params._meta`, read when there is no envelope.
 */
export function requestEra(
  request: { envelope?: Record<string, unknown> | undefined; _meta?: Record<string, unknown> | undefined },
): RequestEra {
  const meta = request.envelope ?? request._meta;
  const version = meta?.[PROTOCOL_VERSION_META_KEY];
  if (typeof version !== "string") return { era: "legacy" };
  const declared = meta?.[CLIENT_CAPABILITIES_META_KEY];
  const capabilities = typeof declared === "object" && declared !== null && !Array.isArray(declared)
    ? declared as ClientCapabilities
    : {};
  return { era: "modern", protocolVersion: version, capabilities };
}
