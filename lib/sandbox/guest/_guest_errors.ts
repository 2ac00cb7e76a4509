/**
 * Turning what a script threw into text the agent can act on: `Name: message` plus the script's own stack
 * lines (repeats folded), thrown non-Errors shown as `Uncaught <json>`, and the message for a WASM crash.
 *
 * @module
 */
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import type { SandboxFailure } from "../protocol/types.ts";

/** File name scripts are compiled under; stack lines that mention it are shown to the agent. */
export const SCRIPT_FILE = "script.js";

/**
 * Longest error message (or thrown value's text) shown, in UTF-16 code units; past it the text is cut with
 * a marker saying how much was left out. A script's error is untrusted text: without a cap a
 * `throw new Error("m".repeat(5e6))` would put 5 MB into the agent's context.
 */
export const MAX_ERROR_MESSAGE_CHARS = 4096;

/** `text` cut to `max` code units with a marker naming how many were left out. */
function cutMessage(text: string, max = MAX_ERROR_MESSAGE_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\u2026 [error message cut: ${text.length - max} more characters]`;
}

/** A thrown value as read out of QuickJS. `name`/`message` are set for Error-like values only. */
export interface ThrownValue {
  name: string | undefined;
  message: string | undefined;
  /** `Name: message` and stack lines, or `Uncaught <value>`; a compile error ends in ` at script.js:L:C`. */
  text: string;
  /** The value was `null` or `undefined` (QuickJS throws `null` when it cannot even allocate the error). */
  isNullish: boolean;
}

/**
 * Reads a thrown value through the prelude's `describe()` (a guest function returning JSON), falling back to
 * the value's type when even that fails.
 *
 * @param describe Handle of the prelude's `describe`, or `undefined` before the prelude exists.
 * @param isCompile Format a compile error: its only frame is its position, appended as ` at script.js:L:C`.
 */
export function readThrown(
  ctx: QuickJSContext,
  describe: QuickJSHandle | undefined,
  error: QuickJSHandle,
  isCompile: boolean,
): ThrownValue {
  const type = ctx.typeof(error);
  const isNullish = type === "undefined" || (type === "object" && ctx.sameValue(error, ctx.null));
  const opaque = (text: string) => ({ name: undefined, message: undefined, text, isNullish });
  if (!describe) return opaque(`Uncaught ${type}`);
  const result = ctx.callFunction(describe, ctx.undefined, error);
  if (result.error) {
    result.error.dispose();
    return opaque("Uncaught exception (it could not be read)");
  }
  const raw = ctx.getString(result.value);
  result.value.dispose();
  const parsed = JSON.parse(raw) as {
    name?: string;
    message?: string;
    stack?: string;
    text?: string;
    head?: string;
    tool?: string;
  };
  if (parsed.text !== undefined) return opaque(`Uncaught ${cutMessage(parsed.text)}`);
  if (parsed.message !== undefined) parsed.message = cutMessage(parsed.message);
  if (parsed.head !== undefined) parsed.head = cutMessage(parsed.head);
  const frames = compactFrames((parsed.stack ?? "").split("\n").filter((line) => line.includes(SCRIPT_FILE)));
  // A custom toString speaks for its error; a failed tool call's error names the tool unless it already does.
  const named = parsed.tool !== undefined && !(parsed.message ?? "").includes(parsed.tool);
  const head = parsed.head ??
    (named ? `${parsed.name} from ${parsed.tool}: ${parsed.message}` : `${parsed.name}: ${parsed.message}`);
  const text = isCompile
    ? head + frames.map((frame) => frame.replace(/^\s*at\s+/, " at ")).join("")
    : [head, ...frames].join("\n");
  return { name: parsed.name, message: parsed.message, text, isNullish };
}

/**
 * The failure for a script that parses neither as JavaScript nor as TypeScript.
 *
 * @param syntaxError The syntax error of the statement-body form, its position already in the script as
 *   sent (`SyntaxError: ... at script.js:2:7`, or `... at the end of the script`).
 */
export function syntaxFailure(syntaxError: string): SandboxFailure {
  return {
    error: "script_error",
    message:
      `${syntaxError}\nThe script did not parse as JavaScript or TypeScript. Send an expression, a statement ` +
      "body that returns a value, or an async arrow function.",
  };
}

/** The failure reported when the WASM module itself failed (the run's sandbox process is then replaced). */
export function crashFailure(error: unknown): SandboxFailure {
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return {
      error: "script_error",
      message:
        "InternalError: stack overflow (the script nests too deeply: deep recursion, or deeply nested " +
        "source or JSON)",
    };
  }
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { error: "internal", message: `The sandbox engine failed: ${text}` };
}

/** At most 6 stack lines, a run of identical lines (recursion) shown once with its count. */
export function compactFrames(lines: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length && out.length < 6;) {
    let j = i;
    while (j + 1 < lines.length && lines[j + 1] === lines[i]) j++;
    const count = j - i + 1;
    out.push(count > 1 ? `${lines[i]} (×${count})` : lines[i]!);
    i = j + 1;
  }
  return out;
}
