/**
 * Nesting depth of JSON text, measured on the host before a value crosses into QuickJS: QuickJS parses JSON
 * recursively, and nesting deep enough to overflow the sandbox's native stack would crash the WASM module
 * instead of failing the one tool call.
 *
 * @module
 */

/**
 * Deepest nesting a host-call result may have to be passed into the script, levels of arrays/objects
 * (1000). Far deeper than real tool results; well inside what QuickJS parses, holds and serializes back
 * under the sandbox's stack limits.
 */
export const MAX_RESULT_DEPTH = 1000;

/**
 * The deepest nesting of arrays and objects in `json` (`0` for a scalar, `1` for `[]`). Brackets inside
 * strings do not count. The text is assumed to be valid JSON (it came from `JSON.stringify`).
 *
 * @param json JSON text.
 * @returns Depth, levels.
 */
export function jsonNestingDepth(json: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Skip the string: find the closing quote that is not escaped.
      for (i++; i < json.length; i++) {
        const d = json.charCodeAt(i);
        if (d === 0x5c /* \ */) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) max = depth;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return max;
}

/**
 * Whether `json` nests deeper than `maxDepth` levels of arrays and objects, reading it character by
 * character ({@link jsonNestingDepth}) only when it may: a text of at most `2 × maxDepth` characters (each
 * level takes an opening and a closing bracket) does not, nor one with at most `maxDepth` opening brackets
 * (counted by the engine's native search, inside strings too, so an upper bound). A tool result that is one
 * long text, the most common, is then never walked in JavaScript (~1 µs per KB on the path of each reply).
 *
 * @param json JSON text (from `JSON.stringify`).
 * @param maxDepth Levels allowed.
 */
export function nestsDeeperThan(json: string, maxDepth: number): boolean {
  if (json.length <= 2 * maxDepth) return false;
  let brackets = 0;
  for (const bracket of ["[", "{"]) {
    for (
      let at = json.indexOf(bracket);
      at !== -1 && brackets <= maxDepth;
      at = json.indexOf(bracket, at + 1)
    ) {
      brackets++;
    }
  }
  if (brackets <= maxDepth) return false;
  return jsonNestingDepth(json) > maxDepth;
}
