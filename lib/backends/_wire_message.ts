/**
 * Reading one line a stdio server wrote as a JSON-RPC message, with a fast path for the message a
 * tool call gets back most: a plain result response. The SDK's `deserializeMessage` runs the zod
 * union of the four JSON-RPC message schemas over every line, and for a response it first fails the
 * request and notification branches: it was the largest part of the host's own time per call.
 *
 * @module
 */
import { deserializeMessage as sdkDeserializeMessage } from "@modelcontextprotocol/client";
import type { JSONRPCMessage } from "@modelcontextprotocol/client";

/**
 * Parses one stdout line into a JSON-RPC message, exactly as the SDK's `deserializeMessage` would
 * accept it. A line of the form `{"jsonrpc":"2.0","id":<string or safe integer>,"result":{...}}` with
 * no other member and no `_meta` in the result is taken as it is (the SDK's schema for it is a strict
 * envelope around a loose object, so it would accept the same message unchanged); every other line
 * (requests, notifications, errors, a result carrying `_meta`, a `"__proto__"` member anywhere, a `\u` escape
 * anywhere, which could spell either) goes
 * through the SDK's own parse.
 *
 * @param line One line without its newline.
 * @returns The message.
 * @throws SyntaxError when the line is not JSON; the SDK's ZodError when it is not a JSON-RPC message.
 * @example
 * ```ts
 * import { deserializeMessage } from "./_wire_message.ts";
 * deserializeMessage('{"jsonrpc":"2.0","id":3,"result":{"content":[]}}'); // { jsonrpc, id: 3, result }
 * ```
 */
export function deserializeMessage(line: string): JSONRPCMessage {
  // A JSON escape can spell `__proto__` without its letters (`"\u005f_proto__"`): such lines take the SDK's path.
  if (line.includes('"__proto__"') || line.includes("\\u")) return sdkDeserializeMessage(line);
  const value: unknown = JSON.parse(line);
  if (isPlainResultResponse(value)) return value as JSONRPCMessage;
  return sdkDeserializeMessage(line);
}

/** `{ jsonrpc: "2.0", id, result }` and nothing else, `id` a string or safe integer, `result` an object without `_meta`. */
function isPlainResultResponse(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return false;
  const id = m.id;
  if (typeof id !== "string" && !(typeof id === "number" && Number.isSafeInteger(id))) return false;
  const result = m.result;
  if (typeof result !== "object" || result === null || Array.isArray(result)) return false;
  if (Object.getPrototypeOf(result) !== Object.prototype || "_meta" in result) return false;
  let keys = 0;
  for (const key in m) {
    if (key !== "jsonrpc" && key !== "id" && key !== "result") return false;
    keys++;
  }
  return keys === 3;
}
