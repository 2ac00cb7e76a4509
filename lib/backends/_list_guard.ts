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

/**
 * Largest whole listing, all its pages together, in characters of JSON (UTF-16 units of its items
 * serialized; about bytes): 8 MiB. Past it the page that crossed it is refused before the SDK parses
 * it, so the listing fails and nothing of it is kept or cached. Without a total, 20 pages of 4,980
 * tools of 4 KB each (21 MB a page) took the process tree past 3 GB and held the thread 8.3 s.
 */
export const MAX_LISTING_BYTES = 8 * 1024 * 1024;

/**
 * What an own `"__proto__"` member of a listed item is renamed to on its way through the SDK, whose
 * schema check copies objects by assignment (which would set the prototype and lose the member: a schema
 * property named `__proto__` was declared `unknown`); {@link restoreProtoKeys} names it back.
 */
const PROTO_STAND_IN = "\u0000__proto__";

/** A copy of `value` with every own member named `from` renamed `to` (at any depth, as JSON holds it). */
function renameKeys(value: unknown, from: string, to: string): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => renameKeys(v, from, to));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    Object.defineProperty(out, key === from ? to : key, {
      value: renameKeys(v, from, to),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * `item` (a tool or resource the SDK handed on) with the `__proto__` members {@link guardListAnswers}
 * renamed for the SDK named back; the item itself when it had none.
 */
export function restoreProtoKeys<T>(item: T): T {
  return hasKeyDeep(item, PROTO_STAND_IN) ? renameKeys(item, PROTO_STAND_IN, "__proto__") as T : item;
}

/** Whether `value` has an own member named `key` at any depth (as JSON holds it), without serializing it. */
function hasKeyDeep(value: unknown, key: string): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some((v) => hasKeyDeep(v, key));
  if (Object.hasOwn(value, key)) return true;
  for (const v of Object.values(value)) if (hasKeyDeep(v, key)) return true;
  return false;
}

/** Cursors remembered per connection for the listings in progress (a listing abandoned leaves its own). */
const MAX_TALLIES = 1_000;

/** A listing's size so far: carried from the answer that gave a cursor to the request that sends it. */
interface Tally {
  chars: number;
  pages: number;
}

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

function mebibytes(chars: number): string {
  return `${Math.round(chars / 1024 / 1024 * 10) / 10} MiB`;
}

/**
 * Why `result` (the answer to `method`, page `tally.pages + 1` of its listing) is refused, or
 * `undefined` when the SDK may parse it; then `tally` holds the listing's size with this page.
 */
function refusal(method: string, result: unknown, tally: Tally, maxChars: number): string | undefined {
  const list = LISTS[method]!;
  const items = isObject(result) ? result[list.key] : undefined;
  if (!Array.isArray(items)) return undefined; // one issue at most: the SDK says it
  if (items.length > MAX_LIST_PAGE_ITEMS) {
    return `${method} answered a page of ${items.length} ${list.key}, more than the ${MAX_LIST_PAGE_ITEMS} ` +
      `one page may hold (MAX_LIST_PAGE_ITEMS); the server must paginate`;
  }
  tally.pages++;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const problem = isObject(item) ? list.check(item) : "is not an object";
    if (problem) return `Invalid result for ${method}: ${list.key}[${i}] ${problem}`;
    const json = JSON.stringify(item);
    tally.chars += json.length + 1;
    if (json.includes('"__proto__"')) items[i] = renameKeys(item, "__proto__", PROTO_STAND_IN);
    if (tally.chars > maxChars) {
      return `${method} listed more than the ${mebibytes(maxChars)} one whole listing may be ` +
        `(MAX_LISTING_BYTES, all pages together; passed on page ${tally.pages}, at ${list.key}[${i}]); ` +
        `nothing of the listing was kept: the server must offer fewer or smaller ${list.key}`;
    }
  }
  return undefined;
}

/**
 * Makes `transport` hand the SDK a JSON-RPC error (`-32603`, naming the first bad item, the page size
 * or the listing's total) in place of a `tools/list` or `resources/list` answer that has more than
 * {@link MAX_LIST_PAGE_ITEMS} items, an item without the fields the MCP schema requires, or that takes
 * its listing (this page and the earlier ones reached by following `nextCursor`) past `maxListingChars`.
 * A page of more than {@link LARGE_PAGE_ITEMS} items reaches the SDK a macrotask later (what comes after it,
 * the close included, waits behind it). Call after the SDK connected (and after anything else that replaces
 * `transport.onmessage` or `transport.onclose`). Never throws.
 *
 * @param options.maxListingChars Largest listing, characters of JSON. @default MAX_LISTING_BYTES
 */
export function guardListAnswers(transport: Transport, options: { maxListingChars?: number } = {}): void {
  const maxChars = options.maxListingChars ?? MAX_LISTING_BYTES;
  const listIds = new Map<string | number, { method: string; tally: Tally }>();
  /** Keyed by method and the cursor an answer gave: the size of the listing up to that answer. */
  const tallies = new Map<string, Tally>();
  const remember = <K, V>(map: Map<K, V>, key: K, value: V) => {
    // A request never answered (timed out, cancelled) leaves its entry: the oldest go past the bound.
    if (map.size >= MAX_TALLIES) map.delete(map.keys().next().value!);
    map.set(key, value);
  };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const m = message as { id?: string | number; method?: unknown; params?: { cursor?: unknown } };
    if (m.id !== undefined && typeof m.method === "string" && m.method in LISTS) {
      const cursor = m.params?.cursor;
      const key = typeof cursor === "string" ? `${m.method}\u0000${cursor}` : undefined;
      const carried = key === undefined ? undefined : tallies.get(key);
      if (key !== undefined) tallies.delete(key);
      remember(listIds, m.id, { method: m.method, tally: carried ?? { chars: 0, pages: 0 } });
    }
    return send(message, options);
  };
  const deliver = transport.onmessage;
  const later = new LaterDelivery();
  const close = transport.onclose;
  // The end of the connection comes after the messages read before it.
  if (close) transport.onclose = () => later.run(() => close(), false);
  transport.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
    const m = message as { id?: string | number; method?: unknown; result?: unknown };
    const sent = m.id !== undefined && m.method === undefined ? listIds.get(m.id) : undefined;
    let isLarge = false;
    if (sent !== undefined) {
      listIds.delete(m.id!);
      const why = "result" in m ? refusal(sent.method, m.result, sent.tally, maxChars) : undefined;
      if (why) message = { jsonrpc: "2.0", id: m.id!, error: { code: -32603, message: why } };
      else {
        const next = isObject(m.result) ? m.result.nextCursor : undefined;
        if (typeof next === "string") remember(tallies, `${sent.method}\u0000${next}`, sent.tally);
        const items = isObject(m.result) ? m.result[LISTS[sent.method]!.key] : undefined;
        isLarge = Array.isArray(items) && items.length > LARGE_PAGE_ITEMS;
      }
    }
    later.run(() => deliver?.(message, extra), isLarge);
  };
}

/**
 * Items past which a listing page reaches the SDK a macrotask after it was read: parsing a page of
 * 5,000 tools, looking at it here, and the SDK's schema check of it were one turn of the event loop
 * (100-250 ms of mcp-serve's thread per page of a 50,000-tool server, pings waiting); split, each
 * turn is about half that.
 */
export const LARGE_PAGE_ITEMS = 500;

/**
 * Hands messages on in the order they came, a large listing page at the start of a macrotask of its
 * own; messages that come while one waits wait behind it (order is kept), and so does the close.
 */
class LaterDelivery {
  readonly #queue: { run: () => void; isLarge: boolean }[] = [];

  /** Runs `run` now when nothing waits and it is not large, else in order after what waits. */
  run(run: () => void, isLarge: boolean): void {
    if (this.#queue.length === 0 && !isLarge) return run();
    this.#queue.push({ run, isLarge });
    if (this.#queue.length === 1) setTimeout(() => this.#drain(), 0);
  }

  /** Runs what waits, up to the next large page after the first (which gets a macrotask of its own). */
  #drain(): void {
    for (let first = true; this.#queue.length > 0; first = false) {
      const next = this.#queue[0]!;
      if (next.isLarge && !first) {
        setTimeout(() => this.#drain(), 0);
        return;
      }
      this.#queue.shift();
      next.run();
    }
  }
}
