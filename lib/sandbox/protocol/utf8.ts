/**
 * UTF-8 byte counting and cutting on a character boundary, shared by the console budget and the result cap.
 * Lone surrogates count as U+FFFD (3 bytes), as `TextEncoder` writes them.
 *
 * @module
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 length of `text`, bytes. */
export function utf8ByteLength(text: string): number {
  // Fast path: a string of single-byte characters has as many bytes as code units.
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character.
 *
 * @param text Any string.
 * @param maxBytes Budget, bytes (>= 0).
 * @returns The longest prefix that fits, its original byte length, and whether it was cut.
 */
export function truncateUtf8(
  text: string,
  maxBytes: number,
): { text: string; originalBytes: number; truncated: boolean } {
  const originalBytes = utf8ByteLength(text);
  if (originalBytes <= maxBytes) return { text, originalBytes, truncated: false };
  const bytes = encoder.encode(text);
  let cut = Math.max(0, Math.floor(maxBytes));
  // A continuation byte (10xxxxxx) at the cut means the cut would split a character: move back to its start.
  while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--;
  return { text: decoder.decode(bytes.subarray(0, cut)), originalBytes, truncated: true };
}

/** UTF-8 bytes the JSON string escape (`JSON.stringify`) writes for the UTF-16 unit `c` (not a surrogate). */
function escapedBytes(c: number): number {
  if (c === 0x22 || c === 0x5c) return 2; // \" and \\
  if (c < 0x20) return c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
  return c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
}

/**
 * Cuts `text` so that it, as a JSON string (`JSON.stringify(text)`, quotes included), is at most `maxBytes`
 * UTF-8 bytes, without splitting a character or an escape: a cut result is sent to the agent as a string
 * inside `{"result":"..."}`, where `"` and `\` take two bytes and control characters up to six, so a cut
 * measured on the raw text reached twice its budget and more.
 *
 * @param text Any string.
 * @param maxBytes Budget of the serialized string, bytes (>= 2 for anything to fit).
 * @returns The longest prefix whose JSON string fits, the UTF-8 length of the whole `text`, and whether it
 *   was cut (`false` when `JSON.stringify(text)` fits whole).
 * @example
 * ```ts
 * import { truncateJsonString } from "./utf8.ts";
 * const cut = truncateJsonString('"'.repeat(100), 22);
 * if (JSON.stringify(cut.text).length > 22 || cut.text.length !== 10) throw new Error(cut.text);
 * ```
 */
export function truncateJsonString(
  text: string,
  maxBytes: number,
): { text: string; originalBytes: number; truncated: boolean } {
  const originalBytes = utf8ByteLength(text);
  let bytes = 2; // the quotes
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let cost: number;
    let units = 1;
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      const isPair = c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
      cost = isPair ? 4 : 6; // a pair as its 4 bytes; a lone surrogate as \udxxx
      if (isPair) units = 2;
    } else cost = escapedBytes(c);
    if (bytes + cost > maxBytes) return { text: text.slice(0, i), originalBytes, truncated: true };
    bytes += cost;
    i += units - 1;
  }
  return { text, originalBytes, truncated: false };
}
