/**
 * The adapter between `execute` (`ScriptRunner`, in `meta_server.ts`) and the QuickJS sandbox
 * (`lib/sandbox/`): limits from `[mcp]`, the sandbox's output format, and image/audio values a
 * script returns turned into real content blocks (not base64 inside the text).
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

/** Creates the runner `execute` uses; `close()` ends the sandbox workers. */
export function createSandboxRunner(
  config: McpConfig,
  logger: Logger,
): ScriptRunner & { close(): Promise<void> } {
  const pool = new SandboxPool();
  const limits = limitsFromConfig(config);
  return {
    async run({ script, namespaces, hostCall, notices, signal }) {
      const result = await pool.run({ script, namespaces, limits, hostCall, signal });
      const { shown, blocks } = withoutMedia(result);
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
 * Moves image/audio blocks out of a successful result's value (see `extractMedia`). A value cut
 * at `max-result-bytes` is left as it is (its JSON is no longer whole).
 */
function withoutMedia(result: SandboxResult): { shown: SandboxResult; blocks: MediaBlock[] } {
  if (!result.ok || result.truncated || !/"type":"(image|audio)"/.test(result.valueJson)) {
    return { shown: result, blocks: [] };
  }
  const media = extractMedia(JSON.parse(result.valueJson));
  if (media.blocks.length === 0) return { shown: result, blocks: [] };
  const valueJson = JSON.stringify(media.value);
  return {
    shown: { ...result, valueJson, originalBytes: new TextEncoder().encode(valueJson).length },
    blocks: media.blocks,
  };
}
