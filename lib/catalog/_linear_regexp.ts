/**
 * The regular-expression engine ajv uses for `pattern` and `patternProperties` of a server's
 * `outputSchema`: RE2 (the `re2js` port), which matches in time linear in the input, so no
 * pattern can stall the host thread (`^(a|a)*$` against 28 characters froze the meta-server for
 * 21 s with V8's backtracking engine). RE2 has no lookaround and no backreferences: a pattern
 * using them does not compile, and its schema is then not checked (never refused).
 *
 * @module
 */
import { RE2JS } from "re2js";

/** What ajv's `code.regExp` option wants back per pattern (its `RegExpLike`). */
export interface RegExpLike {
  test(text: string): boolean;
  /** ajv's cache key for the compiled pattern. */
  toString(): string;
}

/** ajv's `code.regExp` engine shape: a factory plus the name standalone code would call it by. */
export type RegExpEngine = ((pattern: string, flags: string) => RegExpLike) & { code: string };

/** Longest pattern compiled, characters; a longer one does not compile (its schema is not checked). */
export const MAX_PATTERN_CHARS = 4096;

/**
 * Compiles `pattern` (JSON Schema: ECMA-262 syntax, unanchored search) with RE2. `u` (ajv's
 * `unicodeRegExp`) is accepted and ignored: RE2 always matches code points.
 *
 * @throws {SyntaxError} When RE2 cannot compile it (lookaround, backreferences) or it is longer
 *   than {@link MAX_PATTERN_CHARS}; ajv then fails to compile the schema.
 * @example
 * ```ts
 * import { linearRegExp } from "./_linear_regexp.ts";
 * linearRegExp("^(a|a)*$", "u").test("a".repeat(100_000) + "!"); // false, in milliseconds
 * ```
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, _flags: string): RegExpLike => {
    if (pattern.length > MAX_PATTERN_CHARS) {
      throw new SyntaxError(`pattern of ${pattern.length} characters is longer than ${MAX_PATTERN_CHARS}`);
    }
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(pattern);
    } catch (error) {
      throw new SyntaxError(
        `RE2 cannot compile the pattern: ${error instanceof Error ? error.message : error}`,
      );
    }
    return { test: (text: string) => compiled.matcher(text).find(), toString: () => `re2:${pattern}` };
  },
  { code: "linearRegExp" },
);
