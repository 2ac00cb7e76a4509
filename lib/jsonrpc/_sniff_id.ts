/**
 * Finds the JSON-RPC `id` of a message we cannot parse whole (it was over budget and only its
 * first and last few KiB were kept), so the error answer can carry it: JSON-RPC 2.0 §5 wants the
 * request's id, and `null` only when it cannot be told. A linear scan of the head for a top-level
 * `"id"` key, else a look at the very end of the tail (serializers that write `id` last).
 *
 * @module
 */

/** A JSON-RPC id as MCP allows it: a string or an integer. */
export type RequestId = string | number;

const MAX_ID_CHARS = 512;

/**
 * The top-level `id` of the JSON object whose text starts with `head` and ends with `tail`, or
 * `null` when neither shows one (a nested `"id"` is never taken for it).
 *
 * @param head The first bytes of the message as text (may end mid-token).
 * @param tail The last bytes of the message as text (may start mid-token). Default: none.
 * @example
 * ```ts
 * import { sniffRequestId } from "./_sniff_id.ts";
 * sniffRequestId('{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"xxxx'); // 7
 * sniffRequestId('{"result":{"x":1', '"x"}]},"jsonrpc":"2.0","id":"a1"}'); // "a1"
 * ```
 */
export function sniffRequestId(head: string, tail = ""): RequestId | null {
  return sniffMessage(head, tail).id;
}

/** What can be told of a message from its ends. */
export interface SniffedMessage {
  /** Its top-level `id`, or `null`. */
  id: RequestId | null;
  /** The top-level keys seen in the head (a response has `result` or `error` and no `method`). */
  keys: string[];
}

/**
 * The top-level `id` and the top-level keys seen in `head` (see {@link sniffRequestId}).
 *
 * @example
 * ```ts
 * import { sniffMessage } from "./_sniff_id.ts";
 * sniffMessage('{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"xx').keys; // ["jsonrpc", "id", "result"]
 * ```
 */
export function sniffMessage(head: string, tail = ""): SniffedMessage {
  const scanned = scanHead(head);
  return { id: scanned.id ?? idFromTail(tail), keys: scanned.keys };
}

/** Whether the sniffed keys are those of a response (an answer to a request), not of a request. */
export function isResponseKeys(keys: readonly string[]): boolean {
  return !keys.includes("method") && (keys.includes("result") || keys.includes("error"));
}

/** Walks the head tracking depth and strings; collects depth-1 keys and reads the `"id"` value. */
function scanHead(text: string): { id: RequestId | null; keys: string[] } {
  const keys: string[] = [];
  let id: RequestId | null = null;
  let depth = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      if (end < 0) break;
      if (depth === 1) {
        let j = end + 1;
        while (j < n && isSpace(text[j]!)) j++;
        if (text[j] === ":") {
          const key = text.slice(i + 1, end);
          if (keys.length < 32 && key.length <= 64) keys.push(key);
          if (key === "id" && id === null) id = readValue(text, j + 1);
        }
      }
      i = end + 1;
      continue;
    }
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    i++;
  }
  return { id, keys };
}

/** Index of the closing quote of the string opening at `start`, or -1 when the text ends first. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\") i++;
    else if (c === '"') return i;
  }
  return -1;
}

function isSpace(c: string): boolean {
  return c === " " || c === "\t" || c === "\n" || c === "\r";
}

/** A string or integer JSON value starting at `from` (after spaces), else `null`. */
function readValue(text: string, from: number): RequestId | null {
  let i = from;
  while (i < text.length && isSpace(text[i]!)) i++;
  if (text[i] === '"') {
    const end = stringEnd(text, i);
    if (end < 0 || end - i > MAX_ID_CHARS) return null;
    try {
      return JSON.parse(text.slice(i, end + 1)) as string;
    } catch {
      return null; // A broken escape: no id we could echo faithfully.
    }
  }
  let j = i;
  if (text[j] === "-") j++;
  while (j < text.length && j - i < 20 && text[j]! >= "0" && text[j]! <= "9") j++;
  const digits = text.slice(i, j);
  if (!/^-?\d+$/.test(digits)) return null;
  const next = text[j];
  if (next !== undefined && !isSpace(next) && next !== "," && next !== "}") return null; // 1.5, 1e3
  const value = Number(digits);
  return Number.isSafeInteger(value) ? value : null;
}

/** `..."id":<value>}` at the very end: the object's last key, at depth 1 (one closing brace). */
function idFromTail(text: string): RequestId | null {
  let end = text.length - 1;
  while (end >= 0 && isSpace(text[end]!)) end--;
  if (text[end] !== "}") return null;
  end--;
  while (end >= 0 && isSpace(text[end]!)) end--;
  // The value ends at `end`: a string (find its opening quote) or digits.
  let start: number;
  if (text[end] === '"') {
    start = end - 1;
    while (start >= 0 && !(text[start] === '"' && !isEscaped(text, start))) start--;
    if (start < 0 || end - start > MAX_ID_CHARS) return null;
  } else {
    start = end;
    while (start >= 0 && text[start]! >= "0" && text[start]! <= "9") start--;
    if (text[start] === "-") start--;
    start++;
    if (start > end) return null;
  }
  let colon = start - 1;
  while (colon >= 0 && isSpace(text[colon]!)) colon--;
  if (text[colon] !== ":") return null;
  let keyEnd = colon - 1;
  while (keyEnd >= 0 && isSpace(text[keyEnd]!)) keyEnd--;
  if (text.slice(keyEnd - 3, keyEnd + 1) !== '"id"' || isEscaped(text, keyEnd - 3)) return null;
  let before = keyEnd - 4;
  while (before >= 0 && isSpace(text[before]!)) before--;
  if (before >= 0 && text[before] !== "," && text[before] !== "{") return null;
  return readValue(text, start);
}

/** Whether the quote at `index` is escaped (an odd number of backslashes before it). */
function isEscaped(text: string, index: number): boolean {
  let slashes = 0;
  for (let i = index - 1; i >= 0 && text[i] === "\\"; i--) slashes++;
  return slashes % 2 === 1;
}
