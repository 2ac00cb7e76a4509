/**
 * One-line summaries of tool descriptions for the index and search results: descriptions run to
 * hundreds of characters (server-filesystem's first lines are 400+), and an index of many
 * servers must stay small enough to read.
 *
 * @module
 */

/** Longest summary {@link firstSentence} returns by default, in UTF-16 units (the marker included). */
export const SUMMARY_MAX_CHARS = 120;

/** Words whose trailing period does not end a sentence. */
const ABBREVIATIONS: ReadonlySet<string> = new Set(["e.g", "i.e", "etc", "vs", "approx", "incl", "cf"]);

/**
 * The first sentence of a description: its first non-empty line, up to the first `.`, `!` or `?`
 * followed by a space (not after `e.g.`, `i.e.`, `etc.`...), whitespace runs collapsed, and cut on a
 * word boundary with `...` when still longer than `maxChars`. `""` for no description.
 *
 * @param description The tool's description (anything: a non-string gives `""`).
 * @param maxChars Longest result in UTF-16 units, `...` included. @default SUMMARY_MAX_CHARS
 * @example
 * ```ts
 * import { firstSentence } from "./summary.ts";
 * firstSentence("Read a file. Use read_text_file instead."); // "Read a file."
 * ```
 */
export function firstSentence(description: unknown, maxChars = SUMMARY_MAX_CHARS): string {
  if (typeof description !== "string") return "";
  const line = description.split(/\r\n|[\r\n\u2028\u2029]/).map((l) => l.trim()).find((l) => l !== "") ?? "";
  const text = line.replace(/\s+/g, " ");
  let end = text.length;
  const stop = /[.!?](?=\s)/g;
  for (let m = stop.exec(text); m !== null; m = stop.exec(text)) {
    const before = text.slice(0, m.index).split(" ").pop()!.toLowerCase();
    if (m[0] === "." && ABBREVIATIONS.has(before)) continue;
    end = m.index + 1;
    break;
  }
  return cutAtWord(text.slice(0, end), maxChars);
}

/**
 * `text` if it fits in `maxChars` UTF-16 units, else its longest prefix ending at a word boundary
 * (a cut mid-word when the first word alone is too long) followed by `...`, within `maxChars`.
 */
export function cutAtWord(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const room = Math.max(0, maxChars - 1);
  let cut = text.lastIndexOf(" ", room);
  if (cut < room / 2) cut = room;
  // Never split a surrogate pair.
  if (cut > 0 && /[\uD800-\uDBFF]/.test(text[cut - 1]!)) cut--;
  return `${text.slice(0, cut).trimEnd()}\u2026`;
}
