/**
 * Glob matching without a backtracking engine, for patterns that come from untrusted text (the
 * agent's `list_tools` `pattern`, `workspace.members` of a cloned repository's `Cargo.toml`). A
 * glob becomes a list of segments separated by `*`; each segment is found at its leftmost place
 * after the previous one, which is exact for `*` globs and needs at most O(n·m) character
 * comparisons (n: text, m: pattern), never the exponential time a `.*.*.*` RegExp can take
 * (`"************!"` against a tool name froze the host for 27 s).
 *
 * @module
 */

/** Longest glob accepted, in characters (code points). Longer ones are refused with {@link GlobError}. */
export const MAX_GLOB_CHARS = 256;

/** A glob that cannot be used: too long, or (with classes) a malformed `[...]`. Code `GLOB_TOO_LONG`. */
export class GlobError extends RangeError {
  override name = "GlobError";
  readonly code = "GLOB_TOO_LONG";
}

/** One character position of a segment: a literal, `?` (any one character) or a `[...]` class. */
type Token =
  | { kind: "char"; char: string }
  | { kind: "any" }
  | { kind: "class"; negated: boolean; ranges: [string, string][] };

/** A compiled glob. */
export interface GlobMatcher {
  /** Whether `text` matches the whole glob. */
  test(text: string): boolean;
}

/** Options of {@link compileGlob}. */
export interface GlobOptions {
  /** Treat `[abc]`, `[a-z]`, `[!a]` / `[^a]` as character classes (an unclosed `[` is literal). @default false */
  classes?: boolean;
  /** Treat `?` as "any one character". @default true */
  question?: boolean;
}

/**
 * Compiles `glob` (`*` = any run of characters, `?` = one character, optional `[...]` classes;
 * everything else literal, case-sensitive, over code points).
 *
 * @param glob The pattern, at most {@link MAX_GLOB_CHARS} code points.
 * @throws {GlobError} When the glob is longer than {@link MAX_GLOB_CHARS}.
 * @example
 * ```ts
 * import { compileGlob } from "./glob.ts";
 * compileGlob("read_*").test("read_file"); // true
 * compileGlob("************!").test("list_directory_with_sizes"); // false, at once
 * ```
 */
export function compileGlob(glob: string, options: GlobOptions = {}): GlobMatcher {
  const chars = [...glob];
  if (chars.length > MAX_GLOB_CHARS) {
    throw new GlobError(
      `Cannot use the glob: it is ${chars.length} characters long, more than ${MAX_GLOB_CHARS}`,
    );
  }
  const segments = parseSegments(chars, options.classes ?? false, options.question ?? true);
  return { test: (text) => matchSegments(segments, [...text]) };
}

function parseSegments(chars: string[], classes: boolean, question: boolean): Token[][] {
  const segments: Token[][] = [[]];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    const current = segments[segments.length - 1]!;
    if (c === "*") {
      if (current.length > 0 || segments.length === 1) segments.push([]);
      continue;
    }
    if (c === "?" && question) {
      current.push({ kind: "any" });
      continue;
    }
    if (c === "[" && classes) {
      const parsed = parseClass(chars, i);
      if (parsed) {
        current.push(parsed.token);
        i = parsed.end;
        continue;
      }
    }
    current.push({ kind: "char", char: c });
  }
  return segments;
}

/** A `[...]` class starting at `start`, or `undefined` when it is not closed (then `[` is literal). */
function parseClass(chars: string[], start: number): { token: Token; end: number } | undefined {
  let i = start + 1;
  const negated = chars[i] === "!" || chars[i] === "^";
  if (negated) i++;
  const ranges: [string, string][] = [];
  let first = true;
  for (; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === "]" && !first) return { token: { kind: "class", negated, ranges }, end: i };
    first = false;
    if (chars[i + 1] === "-" && chars[i + 2] !== undefined && chars[i + 2] !== "]") {
      ranges.push([c, chars[i + 2]!]);
      i += 2;
    } else ranges.push([c, c]);
  }
  return undefined;
}

function tokenMatches(token: Token, c: string): boolean {
  if (token.kind === "any") return true;
  if (token.kind === "char") return token.char === c;
  const inside = token.ranges.some(([lo, hi]) => c >= lo && c <= hi);
  return inside !== token.negated;
}

function segmentAt(segment: Token[], text: string[], at: number): boolean {
  if (at + segment.length > text.length) return false;
  for (let j = 0; j < segment.length; j++) if (!tokenMatches(segment[j]!, text[at + j]!)) return false;
  return true;
}

/**
 * `segments[0]` is anchored at the start, the last one at the end (when the glob has a `*`), the
 * ones between are found leftmost-first in order: a later place never leaves more room.
 */
function matchSegments(segments: Token[][], text: string[]): boolean {
  const first = segments[0]!;
  if (segments.length === 1) return first.length === text.length && segmentAt(first, text, 0);
  if (!segmentAt(first, text, 0)) return false;
  const last = segments[segments.length - 1]!;
  const end = text.length - last.length;
  if (end < first.length || !segmentAt(last, text, end)) return false;
  let at = first.length;
  for (let s = 1; s < segments.length - 1; s++) {
    const segment = segments[s]!;
    let found = -1;
    for (let i = at; i + segment.length <= end; i++) {
      if (segmentAt(segment, text, i)) {
        found = i;
        break;
      }
    }
    if (found < 0) return false;
    at = found + segment.length;
  }
  return true;
}
