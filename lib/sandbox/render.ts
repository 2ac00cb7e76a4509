/**
 * The text `execute` answers with (SPEC §5, upstream §4.5): the value, a truncation marker, the console
 * lines and one bracketed line per notice. Unlike upstream, a failure keeps its console output and notices.
 *
 * @module
 */
import type { SandboxResult } from "./types.ts";

/**
 * Renders a sandbox result as the single text block of an `execute` answer.
 *
 * Success: `valueJson`, then (if cut) `\n\n[result truncated from N bytes. Return less data — filter or
 * select fields inside the script.]`, then (if any console output) `\n\nconsole:\n` and each line indented
 * two spaces (plus `  [further output dropped: B bytes in N lines]` when the budget ran out; without the
 * amount when it is unknown), then `\n[<notice>]` per notice.
 * Failure: the tagged JSON object (`{"error":"script_timeout","limit_secs":2}`), then the same console and
 * notice sections.
 *
 * @param result What `SandboxPool.run()` returned.
 * @param notices Problem lines without brackets, e.g. `github.search: result off-shape, treat as unknown`.
 * @returns The text, and whether the answer is an error (`isError: true` on failure).
 * @example
 * ```ts
 * const { text } = renderExecuteText({
 *   ok: true, valueJson: "[1,2]", originalBytes: 5, truncated: false,
 *   console: ["hi"], consoleDropped: false, toolCalls: 0, durationMs: 3,
 * }, []);
 * if (text !== "[1,2]\n\nconsole:\n  hi") throw new Error(text);
 * ```
 */
export function renderExecuteText(
  result: SandboxResult,
  notices: string[],
): { text: string; isError: boolean } {
  let text: string;
  if (result.ok) {
    text = result.valueJson;
    if (result.truncated) {
      text += `\n\n[result truncated from ${result.originalBytes} bytes. ` +
        "Return less data — filter or select fields inside the script.]";
    }
  } else {
    text = JSON.stringify(result.failure);
  }
  if (result.console.length > 0 || result.consoleDropped) {
    const lines = result.console.flatMap((entry) => entry.split("\n")).map((line) => `  ${line}`);
    if (result.consoleDropped) {
      const amount = result.consoleDroppedAmount;
      lines.push(
        amount
          ? `  [further output dropped: ${amount.bytes} bytes in ${amount.lines} ${
            amount.lines === 1 ? "line" : "lines"
          }]`
          : "  [further output dropped]",
      );
    }
    text += `\n\nconsole:\n${lines.join("\n")}`;
  }
  for (const notice of notices) text += `\n[${notice}]`;
  return { text, isError: !result.ok };
}
