/**
 * Compiling a normalized script into its async main function inside a QuickJS context: the JavaScript
 * wrappers first (expression, then statement body; only the statement body for a script that starts with
 * a statement keyword), then the same forms after stripping TypeScript syntax.
 * A reply with prose around one fenced block compiles the block alone.
 *
 * @module
 */
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import {
  extractFencedBlock,
  javascriptCandidates,
  normalizeScript,
  startsWithStatement,
  type TypeStripper,
} from "./normalize.ts";
import { readThrown, SCRIPT_FILE, syntaxFailure } from "./_guest_errors.ts";
import type { SandboxFailure } from "./types.ts";

/** The script's main function, a non-syntax error thrown while compiling, or the syntax failure. */
export type Compiled = { main: QuickJSHandle } | { error: QuickJSHandle } | { failure: SandboxFailure };

/**
 * Compiles `script` in `ctx`. Evaluating a wrapper only creates the arrow function; no script code runs.
 *
 * @param options.describe The prelude's `describe` handle, to read syntax errors.
 * @param options.stripTypes TypeScript stripper; without it, TypeScript syntax is a syntax error.
 * @returns The caller owns (and disposes) the returned handle.
 */
export async function compileScript(
  ctx: QuickJSContext,
  script: string,
  options: { describe: QuickJSHandle | undefined; stripTypes: TypeStripper | undefined },
): Promise<Compiled> {
  // An agent's reply with prose around one fenced block: the block is the script. Prose such as
  // "Here:" can itself parse as JavaScript (a label followed by a tagged template), so the block is
  // taken first rather than after the whole text failed to compile.
  const fenced = extractFencedBlock(script);
  const isFencedReply = fenced !== undefined && fenced.trim() !== "" &&
    normalizeScript(fenced) !== normalizeScript(script);
  if (isFencedReply && isProseAround(script)) return await compileScript(ctx, fenced, options);
  const code = normalizeScript(script);
  if (code === "") {
    const empty = ctx.evalCode("(async () => null)", SCRIPT_FILE);
    return empty.error ? { error: empty.error } : { main: empty.value };
  }
  let syntaxError: string | undefined;
  const attempt = (source: string): Compiled | undefined => {
    const result = ctx.evalCode(source, SCRIPT_FILE);
    if (!result.error) return { main: result.value };
    const thrown = readThrown(ctx, options.describe, result.error, true);
    if (thrown.name !== "SyntaxError") return { error: result.error };
    syntaxError = thrown.text;
    result.error.dispose();
    return undefined;
  };
  const forms = startsWithStatement(code) ? ["statements"] as const : ["expression", "statements"] as const;
  for (const candidate of javascriptCandidates(code)) {
    if (!(forms as readonly string[]).includes(candidate.form)) continue;
    const compiled = attempt(candidate.source);
    if (compiled) return compiled;
  }
  // Report the statement-body form's error: the expression form's is about a missing ")".
  const jsError = syntaxError ?? "SyntaxError";
  if (options.stripTypes) {
    for (const form of forms) {
      const stripped = await options.stripTypes(code, form);
      if (stripped === undefined) continue;
      const candidate = javascriptCandidates(stripped).find((c) => c.form === form)!;
      const compiled = attempt(candidate.source);
      if (compiled) return compiled;
    }
  }
  if (isFencedReply) {
    const inner = await compileScript(ctx, fenced, options);
    if (!("failure" in inner)) return inner;
  }
  return { failure: syntaxFailure(jsError, code) };
}

/** Code-like tokens: a line outside the fenced block with one of these is code, not an agent's prose. */
const CODE_LINE = /[;{}=()]|^\s*(const|let|var|return|await|function|\/\*|\*\/|\/\/)\b|^\s*(\/\*|\*\/|\/\/)/;

/** True when every non-empty line outside the one fenced block reads as prose (e.g. "Here:"). */
function isProseAround(script: string): boolean {
  const lines = script.split("\n");
  const fences = lines.flatMap((line, i) => /^[ \t]*```[\w+.-]*[ \t]*\r?$/.test(line) ? [i] : []);
  const outside = [...lines.slice(0, fences[0]), ...lines.slice((fences[1] ?? lines.length) + 1)];
  return outside.every((line) => line.trim() === "" || !CODE_LINE.test(line));
}
