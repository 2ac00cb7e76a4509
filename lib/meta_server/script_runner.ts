/**
 * The runner `execute` uses (`ScriptRunner`): the seam between the meta-server and the QuickJS sandbox
 * (`lib/sandbox/`, through its face). It reads the limits from `[mcp]` at every run (a changed
 * `config.toml` applies to the next script), turns image/audio values a script returns into real content
 * blocks (not base64 inside the text), cuts the rest at `max-result-bytes`, and renders the sandbox's
 * output format.
 *
 * @module
 */
import type { McpConfig } from "../plugins/mod.ts";
import type { Logger } from "../log.ts";
import {
  DEFAULT_POOL_SIZE,
  limitsFromConfig,
  mayHoldMediaBlocks,
  renderExecuteText,
  SandboxPool,
  type SandboxResult,
  truncateJsonString,
  utf8ByteLength,
} from "../sandbox/mod.ts";
import { extractMedia, type MediaBlock, type ScriptRunner } from "./execute.ts";

/**
 * Scripts that run at once (one sandbox process each) when `[mcp] max-concurrent-scripts` is not set.
 * More wait their turn in order, and the wait counts toward their `script-timeout-secs`: a script that
 * waited 50 s of a 120 s limit gets 70 s to run, and one whose whole limit passed while waiting ends as
 * `script_timeout` with `never_ran: true` and a message saying so and how to fix it.
 */
export const CONCURRENT_SCRIPTS = DEFAULT_POOL_SIZE;

/**
 * Largest return value that may hold image or audio blocks carried out of the sandbox whole, in UTF-8
 * bytes (16 MiB). Those blocks are moved out of it first; only what is left is cut at
 * `max-result-bytes`, so a 1 MB screenshot reaches the agent as an image instead of as 32 KB of cut
 * base64. A value larger than this is cut as text (media inside it are not extracted); a value without
 * media is cut at `max-result-bytes` inside the sandbox process already.
 */
export const MAX_RESULT_TRANSFER_BYTES = 16 * 1024 * 1024;

/**
 * Creates the runner `execute` uses; `close()` kills the sandbox processes.
 *
 * @param config The current `[mcp]` settings, read at the start of every run.
 */
export function createSandboxRunner(
  config: () => McpConfig,
  logger: Logger,
): ScriptRunner & { close(): Promise<void> } {
  const size = config().maxConcurrentScripts ?? CONCURRENT_SCRIPTS;
  // Under its own scope: a chunk of the sandbox's stderr can never read as another scope's line (`[trace]`).
  const guestLog = logger.child("sandbox");
  const pool = new SandboxPool({ size, onGuestStderr: (text) => guestLog.debug(text) });
  return {
    async run({ script, namespaces, hostCall, notices, signal, onCallReplied }) {
      const mcp = config();
      const limits = {
        ...limitsFromConfig(mcp),
        // Only a value that may hold media crosses larger than `max-result-bytes`, for its blocks to be moved out.
        maxMediaResultBytes: Math.max(mcp.maxResultBytes, MAX_RESULT_TRANSFER_BYTES),
      };
      // The pool's queue counts the wait for a free process toward the deadline.
      const result = await pool.run({ script, namespaces, limits, hostCall, signal, onCallReplied });
      if (!result.ok && result.failure.error === "script_timeout" && result.failure.never_ran) {
        result.failure.message =
          `${result.failure.message}: run fewer execute calls at once (a script that ` +
          `waits for a tool or never ends holds its process until its own timeout), or raise ` +
          `[mcp] max-concurrent-scripts in config.toml (now ${size}; a new session uses the new value)`;
      }
      const { shown, blocks } = shapeResult(result, mcp.maxResultBytes);
      const { text, isError, structured } = renderExecuteText(shown, notices());
      // The kind only: a failure's message may quote values (a server's error echoing its arguments, a
      // script's own `throw`), and the log holds no argument or result value.
      if (isError) {
        const kind = /^\{"error":"([a-z_]{1,40})"/.exec(text)?.[1] ?? "error";
        logger.debug(`execute failed: {"error":"${kind}"} (${text.length} characters of answer, not logged)`);
      }
      return { text, isError, extraContent: blocks, structured };
    },
    async close() {
      await pool.close();
    },
  };
}

/**
 * Moves image/audio blocks out of a successful result's value (see `extractMedia`; an invalid
 * block turns the result into a `script_error` naming it and how to fix it), then cuts a value whose JSON
 * passes `maxResultBytes` on a character boundary so that the cut text, as the JSON string the agent
 * receives it in (`{"result":"..."}`, quotes and escapes counted), is at most `maxResultBytes`. The size in
 * the truncation marker is that of the value without its media. A value already cut by the sandbox (over
 * {@link MAX_RESULT_TRANSFER_BYTES}) is only cut further, keeping its original size.
 */
function shapeResult(
  result: SandboxResult,
  maxResultBytes: number,
): { shown: SandboxResult; blocks: MediaBlock[] } {
  if (!result.ok) return { shown: result, blocks: [] };
  if (result.truncated) {
    return {
      shown: { ...result, valueJson: truncateJsonString(result.valueJson, maxResultBytes).text },
      blocks: [],
    };
  }
  let valueJson = result.valueJson;
  let blocks: MediaBlock[] = [];
  if (mayHoldMediaBlocks(valueJson)) {
    const media = extractMedia(JSON.parse(valueJson));
    if (media.problem !== undefined) {
      // A block the agent's client would render (or forward as a header) must be what it claims.
      const { console, consoleDropped, consoleDroppedAmount, toolCalls, durationMs } = result;
      const failure = {
        error: "script_error" as const,
        message: `Cannot return the result: ${media.problem}`,
      };
      return {
        shown: { ok: false, failure, console, consoleDropped, consoleDroppedAmount, toolCalls, durationMs },
        blocks: [],
      };
    }
    if (media.blocks.length > 0) {
      valueJson = JSON.stringify(media.value);
      blocks = media.blocks;
    }
  }
  const originalBytes = utf8ByteLength(valueJson);
  if (originalBytes <= maxResultBytes) return { shown: { ...result, valueJson, originalBytes }, blocks };
  // Cut, the value is sent as a string: what is bounded is that string as serialized.
  const cut = truncateJsonString(valueJson, maxResultBytes);
  return { shown: { ...result, valueJson: cut.text, originalBytes, truncated: true }, blocks };
}
