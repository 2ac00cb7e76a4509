/**
 * The `execute` answer: a successful run is an object, `{ result: <value> }` plus
 * the console lines, a truncation note and the notices when there are any, sent both as `structuredContent`
 * and, serialized, as the text block. Some clients (Gemini CLI) refuse a structured result that is not an
 * object and derive one from the text when none is sent; the text being exactly the serialized object is
 * what the MCP specification recommends and what clients that show both (Qwen Code, Copilot CLI) detect,
 * so the model sees the value once. A failure is its tagged JSON object, then its console output and
 * notices as lines (unlike upstream, a failure keeps them), with no structured content.
 *
 * @module
 */
import type { SandboxResult } from "../protocol/types.ts";

/** `structuredContent` of a successful `execute` answer (see {@link renderExecuteText}). */
export interface ExecuteStructured {
  /** The script's return value; absent when it returned `undefined`; when cut, the cut JSON text as a string. */
  result?: unknown;
  /** Present when `result` was cut at `max-result-bytes`: how big the value was and what to do. */
  truncated?: string;
  /** Captured console lines (`[warn] `/`[error] ` prefixed), then a line saying what was dropped. */
  console?: string[];
  /** Problem lines, e.g. `github.search: result off-shape, treat as unknown`. */
  notices?: string[];
  [key: string]: unknown;
}

/**
 * Renders a sandbox result as the `execute` answer.
 *
 * Success: `structured` is `{ result }` (the value parsed from `valueJson`, no `result` for `undefined`; the
 * cut text when it was cut,
 * with `truncated: "cut from N bytes. Return less data - filter or select fields inside the script."`),
 * plus `console` (each line; `[further output dropped: B bytes in N lines]` when the budget ran out,
 * without the amount when it is unknown) and `notices` when not empty; `text` is its compact JSON.
 * Failure: `text` is the tagged JSON object (`{"error":"script_timeout","limit_secs":2}`), then
 * `\n\nconsole:\n` with each line indented two spaces, then `\n[<notice>]` per notice; no `structured`.
 *
 * @param result What `SandboxPool.run()` returned (after media were taken out of the value).
 * @param notices Problem lines without brackets.
 * @returns The text, whether the answer is an error (`isError: true` on failure), and the structured
 *   content (successes only).
 * @example
 * ```ts
 * const { text, structured } = renderExecuteText({
 *   ok: true, valueJson: "[1,2]", originalBytes: 5, truncated: false,
 *   console: ["hi"], consoleDropped: false, toolCalls: 0, durationMs: 3,
 * }, []);
 * if (text !== '{"result":[1,2],"console":["hi"]}') throw new Error(text);
 * if (JSON.stringify(structured) !== text) throw new Error("text is not the structured content");
 * ```
 */
export function renderExecuteText(
  result: SandboxResult,
  notices: string[],
): { text: string; isError: boolean; structured?: ExecuteStructured } {
  const console = consoleLines(result);
  if (result.ok) {
    const structured: ExecuteStructured = result.truncated
      ? {
        result: result.valueJson,
        truncated:
          `cut from ${result.originalBytes} bytes. Return less data \u2014 filter or select fields ` +
          "inside the script.",
      }
      : result.valueJson === "undefined"
      ? {}
      : { result: parseOrText(result.valueJson) };
    if (console.length > 0) structured.console = console;
    if (notices.length > 0) structured.notices = [...notices];
    return { text: JSON.stringify(structured), isError: false, structured };
  }
  let text = JSON.stringify(result.failure);
  if (console.length > 0) text += `\n\nconsole:\n${console.map((line) => `  ${line}`).join("\n")}`;
  for (const notice of notices) text += `\n[${notice}]`;
  return { text, isError: true };
}

/** Console entries split into lines, plus the dropped-output line when the budget ran out. */
function consoleLines(result: SandboxResult): string[] {
  const lines = result.console.flatMap((entry) => entry.split("\n"));
  if (result.consoleDropped) {
    const amount = result.consoleDroppedAmount;
    lines.push(
      amount
        ? `[further output dropped: ${amount.bytes} bytes in ${amount.lines} ${
          amount.lines === 1 ? "line" : "lines"
        }]`
        : "[further output dropped]",
    );
  }
  return lines;
}

/** `valueJson` parsed; the text itself should it not parse (it always does when not cut). */
function parseOrText(valueJson: string): unknown {
  try {
    return JSON.parse(valueJson);
  } catch {
    return valueJson; // Not expected: an uncut valueJson is JSON. The string still carries the value.
  }
}
