/**
 * A direct tool's result is what the backing server returned, bounded as an `execute` result is: its
 * JSON (image and audio data aside) at most `[mcp] max-result-bytes`, image and audio data at most
 * {@link DIRECT_MEDIA_MAX_BYTES} in all. Past either, the content is cut and a last text block says so.
 *
 * @module
 */
import type { CallToolResult } from "@modelcontextprotocol/server";

/**
 * Most image and audio data one direct result carries, in bytes of base64 (16 MiB): what an `execute`
 * result may carry (`MAX_RESULT_TRANSFER_BYTES` of `script_runner.ts`, which loads the sandbox, so the
 * value is repeated here; a test keeps them equal).
 */
export const DIRECT_MEDIA_MAX_BYTES = 16 * 1024 * 1024;

/** Bytes kept for the closing note of a cut result (out of `maxResultBytes`). */
const NOTE_RESERVE_BYTES = 400;
/** A text block cut shorter than this is left out instead, in bytes. */
const MIN_CUT_TEXT_BYTES = 64;

const encoder = new TextEncoder();
const jsonBytes = (value: unknown) => encoder.encode(JSON.stringify(value) ?? "null").length;

type Block = CallToolResult["content"][number];
const isMedia = (b: Block): b is Block & { type: "image" | "audio"; data: string } =>
  (b.type === "image" || b.type === "audio") && typeof (b as { data?: unknown }).data === "string";

/** Sizes of `result`: its JSON with every media block's `data` emptied, and the media data. */
function sizesOf(result: CallToolResult): { textBytes: number; mediaBytes: number } {
  let mediaBytes = 0;
  const content = (result.content ?? []).map((b) => {
    if (!isMedia(b)) return b;
    mediaBytes += b.data.length;
    return { ...b, data: "" };
  });
  return { textBytes: jsonBytes({ ...result, content }), mediaBytes };
}

/** `text` cut so that its JSON string form takes at most `maxBytes` (on a character boundary). */
function cutText(text: string, maxBytes: number): string {
  let keep = Math.min(text.length, maxBytes);
  let cut = text.slice(0, keep);
  for (let over = jsonBytes(cut) - maxBytes; over > 0 && keep > 0; over = jsonBytes(cut) - maxBytes) {
    keep = Math.max(0, keep - Math.ceil(over / 2) - 1);
    if (/[\uD800-\uDBFF]/.test(text[keep - 1] ?? "")) keep--; // never half a surrogate pair
    cut = text.slice(0, keep);
  }
  return cut;
}

/** Options of {@link boundDirectResult}. */
export interface BoundOptions {
  /** `[mcp] max-result-bytes`: the result's JSON, media data aside, in UTF-8 bytes. */
  maxResultBytes: number;
  /** Image and audio data in all, in bytes of base64. */
  maxMediaBytes: number;
  /** The tool declares an `outputSchema` (a cut result, without `structuredContent`, is then an error). */
  hasOutputSchema: boolean;
  /** How the agent would call it from a script, e.g. `memory.read_graph`, named in the note. */
  label: string;
}

/**
 * `result` itself when within both bounds; else its content blocks in order while they fit (a text block
 * that passes the rest of the budget is cut), no `structuredContent` (a cut one would not be valid), and a
 * last text block saying what was cut and how to get less. A cut result of a tool with an `outputSchema`
 * is marked `isError` (an agent's client refuses a successful result without `structuredContent`).
 */
export function boundDirectResult(result: CallToolResult, options: BoundOptions): CallToolResult {
  const { textBytes, mediaBytes } = sizesOf(result);
  if (textBytes <= options.maxResultBytes && mediaBytes <= options.maxMediaBytes) return result;
  let room = Math.max(0, options.maxResultBytes - NOTE_RESERVE_BYTES);
  let mediaRoom = options.maxMediaBytes;
  const kept: Block[] = [];
  let leftOut = 0;
  for (const block of result.content ?? []) {
    if (isMedia(block)) {
      const cost = jsonBytes({ ...block, data: "" });
      if (block.data.length <= mediaRoom && cost <= room) {
        kept.push(block);
        mediaRoom -= block.data.length;
        room -= cost;
      } else leftOut++;
      continue;
    }
    const cost = jsonBytes(block);
    if (cost <= room) {
      kept.push(block);
      room -= cost;
    } else if (block.type === "text" && room - jsonBytes({ ...block, text: "" }) >= MIN_CUT_TEXT_BYTES) {
      kept.push({ ...block, text: cutText(block.text, room - jsonBytes({ ...block, text: "" })) });
      room = 0;
    } else leftOut++;
  }
  const isError = result.isError === true || options.hasOutputSchema;
  const parts = [
    `cut: this result is ${textBytes} bytes${
      mediaBytes > 0 ? ` and ${mediaBytes} bytes of media` : ""
    }, over ` +
    `[mcp] max-result-bytes (${options.maxResultBytes})`,
    ...(leftOut > 0 ? [`${leftOut} content block${leftOut === 1 ? "" : "s"} left out`] : []),
    ...(result.structuredContent !== undefined ? ["structuredContent left out"] : []),
    ...(options.hasOutputSchema && result.isError !== true
      ? ["marked an error since a cut result cannot match the tool's outputSchema"]
      : []),
  ];
  const note =
    `[${parts.join("; ")}. Call ${options.label}(\u2026) from execute and return only what you need, ` +
    `or raise max-result-bytes in config.toml]`;
  return { content: [...kept, { type: "text", text: note }], ...(isError ? { isError: true } : {}) };
}
