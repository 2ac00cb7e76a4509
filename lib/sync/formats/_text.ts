/**
 * Text helpers shared by the sync format editors: offsets to 1-based positions, line bounds,
 * line endings and indentation. Private to `lib/sync/`.
 *
 * @module
 */

/** A 1-based line and column (UTF-16 code units). */
export interface LineColumn {
  line: number;
  column: number;
}

/**
 * Converts a 0-based UTF-16 offset into a 1-based line and column. `\n`, `\r\n` and a lone `\r`
 * each end a line.
 *
 * @param text The whole document.
 * @param offset 0-based offset; clamped to `[0, text.length]`.
 */
export function offsetToLineColumn(text: string, offset: number): LineColumn {
  const end = Math.max(0, Math.min(offset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 /* \n */) {
      line++;
      lineStart = i + 1;
    } else if (c === 13 /* \r */) {
      if (text.charCodeAt(i + 1) === 10 && i + 1 < end) continue;
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/** The line ending the document mostly uses: `"\r\n"` when it has any, else `"\n"`. */
export function detectEol(text: string): string {
  return text.includes("\r\n") ? "\r\n" : "\n";
}

/** Offset of the first character of the line that holds `offset`. */
export function lineStartOf(text: string, offset: number): number {
  let i = offset;
  while (i > 0 && text[i - 1] !== "\n" && text[i - 1] !== "\r") i--;
  return i;
}

/** Offset of the line break (or the end of the text) that ends the line holding `offset`. */
export function lineEndOf(text: string, offset: number): number {
  let i = offset;
  while (i < text.length && text[i] !== "\n" && text[i] !== "\r") i++;
  return i;
}

/** Offset just past the line break at `offset` (`\r\n`, `\n` or `\r`); `offset` itself at the end. */
export function skipLineBreak(text: string, offset: number): number {
  if (text[offset] === "\r") return text[offset + 1] === "\n" ? offset + 2 : offset + 1;
  if (text[offset] === "\n") return offset + 1;
  return offset;
}

/** The run of spaces and tabs that starts the line holding `offset`. */
export function lineIndentOf(text: string, offset: number): string {
  const start = lineStartOf(text, offset);
  let i = start;
  while (text[i] === " " || text[i] === "\t") i++;
  return text.slice(start, i);
}

/** Whether only spaces and tabs stand between the start of its line and `offset`. */
export function startsItsLine(text: string, offset: number): boolean {
  return /^[ \t]*$/.test(text.slice(lineStartOf(text, offset), offset));
}

/** Offset of the first character at or after `offset` that is not a space or a tab. */
export function skipBlanks(text: string, offset: number): number {
  let i = offset;
  while (text[i] === " " || text[i] === "\t") i++;
  return i;
}

/** A text edit: replace `[start, end)` with `text`. */
export interface TextEdit {
  start: number;
  end: number;
  text: string;
}

/**
 * Applies non-overlapping edits to `text`.
 *
 * @throws {RangeError} when two edits overlap (a bug in the caller).
 */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  // Array.prototype.sort is stable: edits at the same offset apply in the order given.
  const sorted = [...edits].sort((a, b) => a.start - b.start || a.end - b.end);
  let out = "";
  let at = 0;
  for (const edit of sorted) {
    if (edit.start < at) throw new RangeError(`Cannot apply overlapping edits at offset ${edit.start}`);
    out += text.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + text.slice(at);
}

/** Splits a leading byte-order mark off, so editors see the text without it. */
export function splitBom(text: string): { bom: string; body: string } {
  return text.startsWith("\uFEFF") ? { bom: "\uFEFF", body: text.slice(1) } : { bom: "", body: text };
}
