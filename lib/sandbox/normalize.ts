/**
 * Script text as agents send it → source QuickJS can compile (upstream §5 `normalize.rs`): Markdown fences
 * and `export default` are removed, and the script is wrapped as an async arrow function in two forms,
 * expression first, then statement body. TypeScript syntax is stripped with sucrase only when the plain
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
  let text = script.trim();
  if (text.startsWith("```")) {
    const newline = text.indexOf("\n");
    text = newline === -1 ? "" : text.slice(newline + 1);
    text = text.trimEnd();
    if (text.endsWith("```")) text = text.slice(0, -3);
    text = text.trim();
  }
  if (text.startsWith("#!")) {
    const newline = text.indexOf("\n");
    text = newline === -1 ? "" : text.slice(newline);
    if (text.trim() === "") text = "";
  }
  const exported = /^(\s*)export default /.exec(text);
  if (exported) text = exported[1] + text.slice(exported[0].length).trimStart();
  while (text.endsWith(";")) text = text.slice(0, -1).trimEnd();
  return text;
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
