/**
 * Text a backing server sends the agent through us (questions, sampling messages, log lines), made safe
 * to show: control and bidirectional-override characters removed, so a server cannot erase a line
 * (`ESC[2K`, CR, BS), hide text (NUL) or reverse it (U+202E) in the agent's view or a terminal.
 *
 * @module
 */

/**
 * Characters removed from relayed text: C0 controls but tab and line feed, DEL, C1 controls, and the
 * bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A-U+202E,
 * U+2066-U+2069), and the brackets of {@link OWN_QUESTION_MARK}, which only our own questions carry.
 */
const UNSAFE_CHARS =
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u27E6\u27E7]/g;

/**
 * How the meta-server's own questions to the user begin (a confirmation of `confirm-tools`). Its
 * brackets (U+27E6, U+27E7) are removed from everything a backing server relays, whose questions begin
 * `[<server>] ` instead: no server can produce a question that looks like ours.
 */
export const OWN_QUESTION_MARK = "\u27E6symposium\u27E7";

/**
 * `text` without the characters a server could forge or hide text with (see the module doc).
 *
 * @example
 * ```ts
 * import { cleanRelayedText } from "./_relay_text.ts";
 * cleanRelayedText("ok\r\u001b[2Kforged\u202e"); // "ok[2Kforged"
 * ```
 */
export function cleanRelayedText(text: string): string {
  UNSAFE_CHARS.lastIndex = 0;
  return UNSAFE_CHARS.test(text) ? text.replace(UNSAFE_CHARS, "") : text;
}

/** Keys whose string is a base64 payload of a media block or resource, never shown as text. */
const PAYLOAD_KEYS = new Set(["data", "blob"]);

/**
 * A copy of a JSON-like value with every string and object key passed through {@link cleanRelayedText},
 * except the `data` of image/audio blocks and `blob`s. Deeper than `maxDepth` levels a value is replaced
 * by the string `"[nested too deep]"`.
 *
 * @param maxDepth Levels walked. @default 64
 */
export function cleanRelayedValue<T>(value: T, maxDepth = 64): T {
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return cleanRelayedText(v);
    if (typeof v !== "object" || v === null) return v;
    if (depth >= maxDepth) return "[nested too deep]";
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const record = v as Record<string, unknown>;
    const isMedia = record.type === "image" || record.type === "audio" || typeof record.blob === "string";
    const out: Record<string, unknown> = {};
    for (const [key, x] of Object.entries(record)) {
      const k = cleanRelayedText(key);
      if (k === "__proto__") continue;
      out[k] = isMedia && PAYLOAD_KEYS.has(key) ? x : walk(x, depth + 1);
    }
    return out;
  };
  return walk(value, 0) as T;
}
