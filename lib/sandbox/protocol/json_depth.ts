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
