/**
 * The adapter between `execute` (`ScriptRunner`, in `meta_server.ts`) and the QuickJS sandbox
 * (`lib/sandbox/`): limits from `[mcp]` (read at every run, so a changed `config.toml` applies to
 * the next script), the sandbox's output format, and image/audio values a script returns turned
 * into real content blocks (not base64 inside the text), before the text is cut at
 * `max-result-bytes`.
 *
 * @module
 */
import type { McpConfig } from "../config_types.ts";
import type { Logger } from "../log.ts";
import { extractMedia, type MediaBlock, type ScriptRunner } from "../meta_server.ts";
import { limitsFromConfig } from "../sandbox/limits.ts";
import { SandboxPool } from "../sandbox/pool.ts";
import { renderExecuteText } from "../sandbox/render.ts";
import type { SandboxResult } from "../sandbox/types.ts";

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
  const pool = new SandboxPool();
  return {
    async run({ script, namespaces, hostCall, notices, signal }) {
      const mcp = config();
      const limits = {
        ...limitsFromConfig(mcp),
        maxResultBytes: Math.max(mcp.maxResultBytes, MAX_RESULT_TRANSFER_BYTES),
      };
      const result = await pool.run({ script, namespaces, limits, hostCall, signal });
      const { shown, blocks } = shapeResult(result, mcp.maxResultBytes);
      const { text, isError } = renderExecuteText(shown, notices());
      if (isError) logger.debug(`execute failed: ${text.slice(0, 200)}`);
      return { text, isError, extraContent: blocks };
    },
    async close() {
      await pool.close();
    },
  };
}

/**
 * Moves image/audio blocks out of a successful result's value (see `extractMedia`), then cuts
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

/** The longest prefix of `text` within `maxBytes` UTF-8 bytes that does not split a character. */
function cutUtf8(
  text: string,
  maxBytes: number,
): { text: string; originalBytes: number; truncated: boolean } {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return { text, originalBytes: bytes.length, truncated: false };
  let cut = Math.max(0, Math.floor(maxBytes));
  while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--; // a continuation byte: back to the character's start
  return {
    text: new TextDecoder().decode(bytes.subarray(0, cut)),
    originalBytes: bytes.length,
    truncated: true,
  };
}
