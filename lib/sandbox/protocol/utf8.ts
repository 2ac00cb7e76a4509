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
 * @param maxBytes Budget, bytes (≥ 0).
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
