/**
 * Script text as agents send it -> source QuickJS can compile (as the first implementation did): Markdown fences
 * and `export default` are removed, and the script is wrapped as an async arrow function in two forms,
 * expression first, then statement body (statement body alone when the script starts with a statement
 * keyword). TypeScript syntax is stripped with sucrase only when the plain
 * JavaScript forms do not parse, so JavaScript reaches QuickJS byte for byte.
 *
 * @module
 */

/** Which wrapper made a candidate compile. */
export type ScriptForm = "expression" | "statements";

/** One way to compile the script: `source` evaluates to an async arrow function. Lines match the script's. */
export interface ScriptCandidate {
  form: ScriptForm;
  source: string;
}

/**
 * Strips what agents wrap code in: surrounding whitespace, one Markdown fence (an optional language tag
 * on the opening line; a fence with no line break is empty), a `#!` line at the top (kept as an empty line,
 * so line numbers stay the script's), a leading `export default `, and trailing semicolons.
 *
 * @param script The `execute` argument as sent.
 * @returns The code itself; `""` for an empty script.
 * @example
 * ```ts
 * if (normalizeScript("  export default 1 + 1;\n") !== "1 + 1") throw new Error("not stripped");
 * ```
 */
export function normalizeScript(script: string): string {
  return normalizeScriptWithOrigin(script).code;
}

/** {@link normalizeScript}'s code and where each of its characters came from in the script as sent. */
export interface NormalizedScript {
  code: string;
  /** Index in `code` (UTF-16 units) -> index in the script as sent; `code.length` maps past its last character. */
  origin(index: number): number;
}

/**
 * {@link normalizeScript}, keeping track of where the code lies in the script, so positions QuickJS
 * reports can be given in the script as the agent wrote it.
 *
 * @param options.keepTrailingSemicolons Leave trailing semicolons (a statement body needs no stripping,
 *   and its syntax errors then point at the script's own last token). @default false
 */
export function normalizeScriptWithOrigin(
  script: string,
  options: { keepTrailingSemicolons?: boolean } = {},
): NormalizedScript {
  let start = 0;
  let end = script.length;
  const trimStart = () => {
    while (start < end && /\s/.test(script[start]!)) start++;
  };
  const trimEnd = () => {
    while (end > start && /\s/.test(script[end - 1]!)) end--;
  };
  const empty: NormalizedScript = { code: "", origin: () => script.length };
  trimStart();
  trimEnd();
  if (script.startsWith("```", start)) {
    const newline = script.indexOf("\n", start);
    if (newline === -1 || newline >= end) return empty;
    start = newline + 1;
    trimEnd();
    if (end - start >= 3 && script.startsWith("```", end - 3)) end -= 3;
    trimStart();
    trimEnd();
  }
  if (script.startsWith("#!", start)) {
    const newline = script.indexOf("\n", start);
    if (newline === -1 || newline >= end) return empty;
    start = newline;
    if (script.slice(start, end).trim() === "") return empty;
  }
  // `export default ` after leading whitespace is cut out, with the whitespace that follows it.
  let cutFrom = start;
  let cutTo = start;
  const exported = /^(\s*)export default /.exec(script.slice(start, end));
  if (exported) {
    cutFrom = start + exported[1]!.length;
    cutTo = start + exported[0].length;
    while (cutTo < end && /\s/.test(script[cutTo]!)) cutTo++;
  }
  if (!options.keepTrailingSemicolons) {
    while (end > cutTo && script[end - 1] === ";") {
      end--;
      while (end > cutTo && /\s/.test(script[end - 1]!)) end--;
    }
  }
  // Only whitespace before a cut-out `export default ` with nothing after it: nothing is left.
  if (end <= cutTo && cutTo > cutFrom) return empty;
  const code = script.slice(start, cutFrom) + script.slice(cutTo, end);
  const head = cutFrom - start;
  return {
    code,
    origin: (index) => (index < head ? start + index : cutTo + (index - head)),
  };
}

/** A line that opens or closes a Markdown code fence: three backticks, optionally a language tag. */
const FENCE_LINE = /^[ \t]*```[\w+.-]*[ \t]*$/;

/**
 * The code of the one Markdown fenced block in an agent's reply that has prose before or after it. Only
 * used when the script as sent does not compile.
 *
 * @param script The `execute` argument as sent.
 * @returns The block's lines, or `undefined` unless the text has exactly two fence lines (one block).
 * @example
 * ```ts
 * const fence = "`".repeat(3);
 * const code = extractFencedBlock(`Here:\n${fence}js\nreturn 1\n${fence}\nDone.`);
 * if (code !== "return 1") throw new Error(String(code));
 * ```
 */
export function extractFencedBlock(script: string): string | undefined {
  const lines = script.split("\n");
  const fences: number[] = [];
  for (let i = 0; i < lines.length; i++) if (FENCE_LINE.test(lines[i]!.replace(/\r$/, ""))) fences.push(i);
  if (fences.length !== 2) return undefined;
  return lines.slice(fences[0]! + 1, fences[1]).join("\n");
}

/**
 * The two JavaScript wrappers of `code`, in the order to try them. Each keeps the script on line 1 so that
 * line numbers in errors are the script's own.
 *
 * @param code Output of {@link normalizeScript} (or of a TypeScript strip).
 */
export function javascriptCandidates(code: string): ScriptCandidate[] {
  return [
    { form: "expression", source: `(async () => (${code}\n))` },
    { form: "statements", source: `(async () => {${code}\n})` },
  ];
}

/**
 * Keywords that can only start a statement: a script beginning with one of them cannot be an expression,
 * so its expression wrapper is not even tried. `let` counts only before a name or a destructuring pattern
 * (`let[x] = 1` alone is an assignment in sloppy mode, and then the statement reading is the one meant).
 */
const STATEMENT_START =
  /^(?:(?:return|const|var|if|for|while|do|try|throw|switch)(?![\p{ID_Continue}$\u200c\u200d])|let\s*[[{]|let\s+[\p{ID_Start}$_\\])/u;

/**
 * Whether `code` starts with a statement keyword (after whitespace and comments), so that only its
 * statement-body wrapper can compile. Exact: it never says so of code that compiles as an expression.
 *
 * @param code Output of {@link normalizeScript}.
 * @example
 * ```ts
 * if (!startsWithStatement("// total\nconst n = 1; return n")) throw new Error("missed");
 * if (startsWithStatement("1 + 1")) throw new Error("not a statement");
 * ```
 */
export function startsWithStatement(code: string): boolean {
  let i = 0;
  for (;;) {
    while (i < code.length && /\s/.test(code[i]!)) i++;
    if (code.startsWith("//", i)) {
      const end = code.indexOf("\n", i);
      if (end < 0) return false;
      i = end + 1;
    } else if (code.startsWith("/*", i)) {
      const end = code.indexOf("*/", i + 2);
      if (end < 0) return false;
      i = end + 2;
    } else break;
  }
  return STATEMENT_START.test(code.slice(i, i + 64));
}

/** Strips TypeScript syntax from a script in one form; `undefined` when it does not parse as TypeScript. */
export type TypeStripper = (code: string, form: ScriptForm) => Promise<string | undefined>;

const WRAP_HEAD = "async function __sandboxScript() {\n";
const EXPRESSION_HEAD = "return (\n";
const EXPRESSION_TAIL = "\n);";
const WRAP_TAIL = "\n}";

/**
 * A {@link TypeStripper} over sucrase's `typescript` transform (no other transforms, so modern syntax
 * passes through). Sucrase is imported on first use (about 90 ms), or ahead of time with `preload()`.
 *
 * @returns The stripper and a `preload()` that starts the import without waiting for it.
 */
export function createTypeStripper(): { strip: TypeStripper; preload(): void } {
  let loading: Promise<typeof import("sucrase")> | undefined;
  const load = () => loading ??= import("sucrase");
  const strip: TypeStripper = async (code, form) => {
    const { transform } = await load();
    const head = form === "expression" ? WRAP_HEAD + EXPRESSION_HEAD : WRAP_HEAD;
    const tail = form === "expression" ? EXPRESSION_TAIL + WRAP_TAIL : WRAP_TAIL;
    let out: string;
    try {
      out = transform(head + code + tail, { transforms: ["typescript"], disableESTransforms: true }).code;
    } catch {
      // Not TypeScript in this form either; the caller reports the JavaScript syntax error.
      return undefined;
    }
    if (!out.startsWith(head) || !out.endsWith(tail)) return undefined;
    return out.slice(head.length, out.length - tail.length);
  };
  return {
    strip,
    preload() {
      load().catch(() => {
        // A failed preload is retried by the first strip(), which then reports the error.
        loading = undefined;
      });
    },
  };
}
