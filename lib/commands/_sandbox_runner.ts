/**
 * The adapter between `execute` (`ScriptRunner`, in `meta_server.ts`) and the QuickJS sandbox
 * (`lib/sandbox/`): limits from `[mcp]` (read at every run, so a changed `config.toml` applies to
 * the next script), the sandbox's output format, and image/audio values a script returns turned
 * into real content blocks (not base64 inside the text), before the text is cut at
 * `max-result-bytes`.
 *
 * @module
 */
import type { McpConfig } from "../plugins/config_types.ts";
import type { Logger } from "../log.ts";
import { extractMedia, type MediaBlock, type ScriptRunner } from "../meta_server/mod.ts";
import { limitsFromConfig } from "../sandbox/limits.ts";
import { DEFAULT_POOL_SIZE, SandboxPool } from "../sandbox/pool.ts";
import { renderExecuteText } from "../sandbox/render.ts";
import type { SandboxFailure, SandboxResult } from "../sandbox/types.ts";

/**
 * Scripts that run at once (one sandbox Worker each). More wait their turn in order, and the wait
 * counts toward their `script-timeout-secs`: a script that waited 50 s of a 120 s limit gets
 * 70 s to run, and one whose whole limit passed while waiting ends as `script_timeout` unrun.
 */
export const CONCURRENT_SCRIPTS = DEFAULT_POOL_SIZE;

/**
 * Largest return value carried out of the sandbox whole, in UTF-8 bytes (16 MiB). Image and audio
 * blocks are moved out of it first; only what is left is cut at `max-result-bytes`, so a 1 MB
 * screenshot reaches the agent as an image instead of as 32 KB of cut base64. A value larger than
 * this is cut as text (media inside it are not extracted).
 */
export const MAX_RESULT_TRANSFER_BYTES = 16 * 1024 * 1024;

/**
 * Creates the runner `execute` uses; `close()` ends the sandbox workers.
 *
 * @param config The current `[mcp]` settings, read at the start of every run.
 */
export function createSandboxRunner(
  config: () => McpConfig,
  logger: Logger,
): ScriptRunner & { close(): Promise<void> } {
  const pool = new SandboxPool({ size: CONCURRENT_SCRIPTS });
  const turns = new Turns(CONCURRENT_SCRIPTS);
  return {
    async run({ script, namespaces, hostCall, notices, signal }) {
      const mcp = config();
      const limits = {
        ...limitsFromConfig(mcp),
        maxResultBytes: Math.max(mcp.maxResultBytes, MAX_RESULT_TRANSFER_BYTES),
      };
      const startedAt = performance.now();
      const turn = await turns.take(limits.timeoutMs, signal);
      let result: SandboxResult;
      if (turn !== "granted") {
        const failure: SandboxFailure = turn === "timeout"
          ? { error: "script_timeout", limit_secs: limits.timeoutMs / 1000 }
          : { error: "cancelled" };
        const durationMs = performance.now() - startedAt;
        result = { ok: false, failure, console: [], consoleDropped: false, toolCalls: 0, durationMs };
      } else {
        try {
          const leftMs = Math.max(1, limits.timeoutMs - (performance.now() - startedAt));
          result = await pool.run({
            script,
            namespaces,
            limits: { ...limits, timeoutMs: leftMs },
            hostCall,
            signal,
          });
        } finally {
          turns.release();
        }
        if (!result.ok && result.failure.error === "script_timeout") {
          result = { ...result, failure: { error: "script_timeout", limit_secs: limits.timeoutMs / 1000 } };
        }
      }
      const { shown, blocks } = shapeResult(result, mcp.maxResultBytes);
      const { text, isError, structured } = renderExecuteText(shown, notices());
      if (isError) logger.debug(`execute failed: ${text.slice(0, 200)}`);
      return { text, isError, extraContent: blocks, structured };
    },
    async close() {
      await pool.close();
    },
  };
}

/** A FIFO of turns: at most `size` holders at once. */
class Turns {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  constructor(size: number) {
    this.#free = size;
  }

  /** Waits for a turn, at most `timeoutMs`; `"timeout"`/`"cancelled"` leave the queue unserved. */
  take(timeoutMs: number, signal: AbortSignal | undefined): Promise<"granted" | "timeout" | "cancelled"> {
    if (signal?.aborted) return Promise.resolve("cancelled");
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve("granted");
    }
    return new Promise((resolve) => {
      const settle = (outcome: "granted" | "timeout" | "cancelled") => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (outcome !== "granted") {
          const index = this.#waiting.indexOf(grant);
          if (index >= 0) this.#waiting.splice(index, 1);
        }
        resolve(outcome);
      };
      const grant = () => settle("granted");
      const onAbort = () => settle("cancelled");
      const timer = setTimeout(() => settle("timeout"), timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(grant);
    });
  }

  /** Ends a turn: the oldest waiter gets it. */
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}

/**
 * Moves image/audio blocks out of a successful result's value (see `extractMedia`; an invalid
 * block turns the result into a `script_error` naming it and how to fix it), then cuts
 * the rest at `maxResultBytes` on a character boundary. The size in the truncation marker is that
 * of the value without its media. A value already cut by the sandbox (over
 * {@link MAX_RESULT_TRANSFER_BYTES}) is only cut further, keeping its original size.
 */
function shapeResult(
  result: SandboxResult,
  maxResultBytes: number,
): { shown: SandboxResult; blocks: MediaBlock[] } {
  if (!result.ok) return { shown: result, blocks: [] };
  if (result.truncated) {
    return { shown: { ...result, valueJson: cutUtf8(result.valueJson, maxResultBytes).text }, blocks: [] };
  }
  let valueJson = result.valueJson;
  let blocks: MediaBlock[] = [];
  if (/"type":"(image|audio)"/.test(valueJson)) {
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
  const cut = cutUtf8(valueJson, maxResultBytes);
  return {
    shown: { ...result, valueJson: cut.text, originalBytes: cut.originalBytes, truncated: cut.truncated },
    blocks,
  };
}

const UTF8 = new TextEncoder();

/** The longest prefix of `text` within `maxBytes` UTF-8 bytes that does not split a character. */
function cutUtf8(
  text: string,
  maxBytes: number,
): { text: string; originalBytes: number; truncated: boolean } {
  const bytes = UTF8.encode(text);
  if (bytes.length <= maxBytes) return { text, originalBytes: bytes.length, truncated: false };
  let cut = Math.max(0, Math.floor(maxBytes));
  while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--; // a continuation byte: back to the character's start
  return {
    text: new TextDecoder().decode(bytes.subarray(0, cut)), // rare: a cut result
    originalBytes: bytes.length,
    truncated: true,
  };
}
