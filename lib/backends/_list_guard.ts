/**
 * A cheap look at each `tools/list` and `resources/list` answer before the SDK parses it. The SDK checks an
 * answer with zod, which collects one issue per bad field of every item and then pretty-prints them all
 * into the error message: 1,000,000 tools named by a number (an 11 MB answer, within the message budget)
 * took 3.2 GB and held the meta-server's thread for 19 s. An answer refused here becomes a JSON-RPC error
 * naming the first bad item, so the SDK sees only that.
 *
 * @module
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport } from "@modelcontextprotocol/client";

/** Most items one `tools/list` or `resources/list` page may hold (5,000): past it the page is refused. */
export const MAX_LIST_PAGE_ITEMS = 5_000;

/** The list each guarded method answers with, and what each item needs before zod looks at it. */
const LISTS: Record<string, { key: string; check(item: Record<string, unknown>): string | undefined }> = {
  "tools/list": {
    key: "tools",
    check: (tool) =>
      typeof tool.name !== "string"
        ? "has no string name"
        : !isObject(tool.inputSchema) || tool.inputSchema.type !== "object"
        ? `(${JSON.stringify(tool.name.slice(0, 80))}) has no inputSchema of type "object"`
        : undefined,
  },
  "resources/list": {
    key: "resources",
    check: (resource) =>
      typeof resource.uri !== "string" || typeof resource.name !== "string"
        ? "has no string uri and name"
        : undefined,
  },
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Why `result` (the answer to `method`) is refused, or `undefined` when the SDK may parse it. */
function refusal(method: string, result: unknown): string | undefined {
  const list = LISTS[method]!;
  const items = isObject(result) ? result[list.key] : undefined;
  if (!Array.isArray(items)) return undefined; // one issue at most: the SDK says it
  if (items.length > MAX_LIST_PAGE_ITEMS) {
    return `${method} answered a page of ${items.length} ${list.key}, more than the ${MAX_LIST_PAGE_ITEMS} ` +
      `one page may hold (MAX_LIST_PAGE_ITEMS); the server must paginate`;
  }
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const problem = isObject(item) ? list.check(item) : "is not an object";
    if (problem) return `Invalid result for ${method}: ${list.key}[${i}] ${problem}`;
  }
  return undefined;
}

/**
 * Makes `transport` hand the SDK a JSON-RPC error (`-32603`, naming the first bad item or the page size)
 * in place of a `tools/list` or `resources/list` answer that has more than {@link MAX_LIST_PAGE_ITEMS}
 * items or an item without the fields the MCP schema requires. Call after the SDK connected (and after
 * anything else that replaces `transport.onmessage`). Never throws.
 */
export function guardListAnswers(transport: Transport): void {
  const listIds = new Map<string | number, string>();
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const m = message as { id?: string | number; method?: unknown };
    if (m.id !== undefined && typeof m.method === "string" && m.method in LISTS) {
      // A request never answered (timed out, cancelled) leaves its id: the oldest go past 1,000.
      if (listIds.size >= 1_000) listIds.delete(listIds.keys().next().value!);
      listIds.set(m.id, m.method);
    }
    return send(message, options);
  };
  const deliver = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
    const m = message as { id?: string | number; method?: unknown; result?: unknown };
    const method = m.id !== undefined && m.method === undefined ? listIds.get(m.id) : undefined;
    if (method !== undefined) {
      listIds.delete(m.id!);
      const why = "result" in m ? refusal(method, m.result) : undefined;
      if (why) message = { jsonrpc: "2.0", id: m.id!, error: { code: -32603, message: why } };
    }
    deliver?.(message, extra);
  };
}
