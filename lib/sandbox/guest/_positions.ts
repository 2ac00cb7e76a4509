/**
 * Positions in the script as the agent sent it. QuickJS compiles a wrapper around the normalized code
 * (`(async () => {` ... `\n})`), so the positions it reports (`script.js:L:C`, 1-based, columns in code
 * points) count the wrapper's opening on line 1 and are lines of the normalized code, not of the script
 * (a Markdown fence line, prose around a fenced block and `export default ` are gone). These helpers
 * turn them back into the script's lines and columns, and say when a position lies in the wrapper.
 *
 * @module
 */

/** 1-based line and column (in code points) of the script as sent, or where the wrapper's text begins. */
export type ScriptPosition = { line: number; column: number } | "end";

/** Maps a position QuickJS reports for the compiled source to the script as sent. */
export type PositionMap = (line: number, column: number) => ScriptPosition;

/** Index (UTF-16) of 1-based `line`, `column` (code points) in `text`; past the line's end clamps to it. */
function indexAt(text: string, line: number, column: number): number {
  let index = 0;
  for (let l = 1; l < line; l++) {
    const newline = text.indexOf("\n", index);
    if (newline < 0) return text.length;
    index = newline + 1;
  }
  const lineEnd = text.indexOf("\n", index);
  const stop = lineEnd < 0 ? text.length : lineEnd;
  for (let c = 1; c < column && index < stop; c++) {
    index += text.codePointAt(index)! > 0xffff ? 2 : 1;
  }
  return index;
}

/** 1-based line and column (code points) of UTF-16 `index` in `text`. */
function positionAt(text: string, index: number): { line: number; column: number } {
  const before = text.slice(0, index);
  const lineStart = before.lastIndexOf("\n") + 1;
  const line = before.split("\n").length;
  return { line, column: [...text.slice(lineStart, index)].length + 1 };
}

/**
 * The map for one compiled candidate: `source` is `prefix + body + suffix`, and `origin` tells where each
 * character of `body` came from in `script`.
 *
 * @param prefixLength UTF-16 length of the wrapper's opening (`(async () => {` is 14).
 * @param bodyLength UTF-16 length of the body inside the wrapper.
 */
export function wrapperPositionMap(
  source: string,
  prefixLength: number,
  bodyLength: number,
  origin: (index: number) => number,
  script: string,
): PositionMap {
  return (line, column) => {
    const index = indexAt(source, line, column) - prefixLength;
    if (index >= bodyLength) return "end";
    return positionAt(script, origin(Math.max(0, index)));
  };
}

/**
 * The map for code whose lines and columns are those of `body` although its text differs (TypeScript
 * with its types stripped): each position is read as the same line and column of `body`, then mapped.
 */
export function sameLayoutPositionMap(
  prefixLength: number,
  body: string,
  origin: (index: number) => number,
  script: string,
): PositionMap {
  const wrapped = " ".repeat(prefixLength) + body;
  return wrapperPositionMap(wrapped, prefixLength, body.length, origin, script);
}

/**
 * Rewrites every `script.js:L:C` in `text` with `map`; a position in the wrapper reads
 * `script.js (at its end)`.
 */
export function relocatePositions(text: string, file: string, map: PositionMap): string {
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`${escaped}:(\\d+):(\\d+)`, "g"), (_all, line: string, column: string) => {
    const at = map(Number(line), Number(column));
    return at === "end" ? `${file} (at its end)` : `${file}:${at.line}:${at.column}`;
  });
}
