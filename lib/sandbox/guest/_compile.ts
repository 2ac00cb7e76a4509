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
  normalizeScriptWithOrigin,
  type ScriptForm,
  startsWithStatement,
  type TypeStripper,
} from "./normalize.ts";
import { readThrown, SCRIPT_FILE, syntaxFailure } from "./_guest_errors.ts";
import { type PositionMap, sameLayoutPositionMap, wrapperPositionMap } from "./_positions.ts";
import type { SandboxFailure } from "../protocol/types.ts";

/**
 * The script's main function (with the map from its compiled source's positions to the script as sent),
 * a non-syntax error thrown while compiling, or the syntax failure.
 */
export type Compiled =
  | { main: QuickJSHandle; positions: PositionMap }
  | { error: QuickJSHandle; positions: PositionMap }
  | { failure: SandboxFailure };

/**
 * Compiles `script` in `ctx`. Evaluating a wrapper only creates the arrow function; no script code runs.
 * A syntax error's position is given in the script as sent; one in the wrapper's closing text is said to
 * be at the end of the script, without the wrapper's token.
 *
 * @param options.describe The prelude's `describe` handle, to read syntax errors.
 * @param options.stripTypes TypeScript stripper; without it, TypeScript syntax is a syntax error.
 * @returns The caller owns (and disposes) the returned handle.
 */
export function compileScript(
  ctx: QuickJSContext,
  script: string,
  options: { describe: QuickJSHandle | undefined; stripTypes: TypeStripper | undefined },
): Promise<Compiled> {
  return compileIn(ctx, script, options, { script, toScript: (index) => index });
}

/** Where the text being compiled lies in the script as sent. */
interface Within {
  script: string;
  /** Index in the text being compiled -> index in `script`. */
  toScript(index: number): number;
}

/** UTF-16 length of a wrapper's opening text, the same for both forms (`(async () => (` / `{`). */
function prefixLength(form: ScriptForm): number {
  return javascriptCandidates("\u0000").find((c) => c.form === form)!.source.indexOf("\u0000");
}

/** The fenced block of `text` as a part of the script: its indices shifted to where it starts. */
function withinBlock(text: string, block: string, within: Within): Within {
  const at = text.indexOf(block);
  return at < 0 ? within : { script: within.script, toScript: (index) => within.toScript(at + index) };
}

async function compileIn(
  ctx: QuickJSContext,
  text: string,
  options: { describe: QuickJSHandle | undefined; stripTypes: TypeStripper | undefined },
  within: Within,
): Promise<Compiled> {
  // An agent's reply with prose around one fenced block: the block is the script. Prose such as
  // "Here:" can itself parse as JavaScript (a label followed by a tagged template), so the block is
  // taken first rather than after the whole text failed to compile.
  const fenced = extractFencedBlock(text);
  const isFencedReply = fenced !== undefined && fenced.trim() !== "" &&
    normalizeScript(fenced) !== normalizeScript(text);
  if (isFencedReply && isProseAround(text)) {
    return await compileIn(ctx, fenced, options, withinBlock(text, fenced, within));
  }
  // The expression form needs trailing semicolons stripped; the statement body keeps them, so that its
  // syntax errors point at the script's own last token rather than at the wrapper's closing brace.
  const expression = normalizeScriptWithOrigin(text);
  const statements = normalizeScriptWithOrigin(text, { keepTrailingSemicolons: true });
  const code = expression.code;
  const parts = { expression, statements };
  const mapFor = (form: ScriptForm, source: string): PositionMap => {
    const part = parts[form];
    return wrapperPositionMap(
      source,
      prefixLength(form),
      part.code.length,
      (index) => within.toScript(part.origin(index)),
      within.script,
    );
  };
  if (code === "") {
    const source = "(async () => null)";
    const empty = ctx.evalCode(source, SCRIPT_FILE);
    const positions: PositionMap = () => "end";
    return empty.error ? { error: empty.error, positions } : { main: empty.value, positions };
  }
  // Only the syntax error of the statement body's JavaScript form is ever shown (see below); any other
  // attempt only needs to know whether it failed on syntax, which the error's name says without the
  // prelude's describe (no script code ran yet, so the error is QuickJS's own, unpatched).
  let syntaxError: { text: string; positions: PositionMap } | undefined;
  const attempt = (source: string, positions: PositionMap, shown: boolean): Compiled | undefined => {
    const result = ctx.evalCode(source, SCRIPT_FILE);
    if (!result.error) return { main: result.value, positions };
    if (!shown && isSyntaxError(ctx, result.error)) {
      result.error.dispose();
      return undefined;
    }
    const thrown = readThrown(ctx, options.describe, result.error, true);
    if (thrown.name !== "SyntaxError") return { error: result.error, positions };
    if (shown) syntaxError = { text: thrown.text, positions };
    result.error.dispose();
    return undefined;
  };
  const forms: readonly ScriptForm[] = startsWithStatement(code)
    ? ["statements"]
    : ["expression", "statements"];
  for (const form of forms) {
    const source = javascriptCandidates(parts[form].code).find((c) => c.form === form)!.source;
    const compiled = attempt(source, mapFor(form, source), form === "statements");
    if (compiled) return compiled;
  }
  // Report the statement-body form's error: the expression form's is about a missing ")".
  const jsError = syntaxError;
  if (options.stripTypes) {
    for (const form of forms) {
      const body = parts[form].code;
      const stripped = await options.stripTypes(body, form);
      if (stripped === undefined) continue;
      const source = javascriptCandidates(stripped).find((c) => c.form === form)!.source;
      // Sucrase keeps the lines of the code (and most columns): positions are read on the TypeScript text.
      const positions = sameLayoutPositionMap(
        prefixLength(form),
        body,
        (index) => within.toScript(parts[form].origin(index)),
        within.script,
      );
      const compiled = attempt(source, positions, false);
      if (compiled) return compiled;
    }
  }
  if (isFencedReply) {
    const inner = await compileIn(ctx, fenced, options, withinBlock(text, fenced, within));
    if (!("failure" in inner)) return inner;
  }
  return {
    failure: syntaxFailure(jsError ? describeSyntaxError(jsError.text, jsError.positions) : "SyntaxError"),
  };
}

/** Whether QuickJS's compile error is a `SyntaxError`, read straight from the error object (no guest code). */
function isSyntaxError(ctx: QuickJSContext, error: QuickJSHandle): boolean {
  if (ctx.typeof(error) !== "object" || ctx.sameValue(error, ctx.null)) return false;
  const name = ctx.getProp(error, "name");
  try {
    return ctx.typeof(name) === "string" && ctx.getString(name) === "SyntaxError";
  } finally {
    name.dispose();
  }
}

/**
 * QuickJS's `SyntaxError: ... at script.js:L:C` with the position in the script as sent. A position in the
 * wrapper's closing text means the script ended early: the wrapper's own token is not named.
 */
function describeSyntaxError(text: string, positions: PositionMap): string {
  const found = /^(.*) at script\.js:(\d+):(\d+)$/s.exec(text);
  if (!found) return text;
  const at = positions(Number(found[2]), Number(found[3]));
  const what = found[1]!;
  if (at !== "end") return `${what} at ${SCRIPT_FILE}:${at.line}:${at.column}`;
  // `(async () => {...\n})`: an unexpected `}`/`)` there is the wrapper's; an expected `)` means a `}` of
  // the script closed the function body early.
  if (/: unexpected token in expression: '[)}]'$/.test(what)) {
    return what.replace(/: unexpected token in expression: '[)}]'$/, ": unexpected end of the script");
  }
  if (/: expecting '\)'$/.test(what)) {
    return what.replace(/: expecting '\)'$/, ": a '}' closes more blocks than the script opens");
  }
  return `${what} at the end of the script`;
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
