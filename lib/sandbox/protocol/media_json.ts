/**
 * Whether the JSON of a return value may hold image or audio content blocks, decided on the text alone: the
 * sandbox process carries such a value out whole (the host moves the blocks out before it cuts the rest at
 * `max-result-bytes`), and cuts any other value at `max-result-bytes` itself, so that a large value without
 * media never crosses the process boundary.
 *
 * @module
 */

/** A `"type":"image"` or `"type":"audio"` member, as compact JSON writes it (never inside a string). */
const MEDIA_TYPE_MEMBER = /"type":"(?:image|audio)"/;

/**
 * Whether compact JSON text (as `JSON.stringify` writes it) has a member `"type": "image"` or
 * `"type": "audio"`: the mark of a media content block. Text inside strings never matches, since a quote
 * there is escaped. `false` means there is no media block; `true` means there may be one.
 *
 * @param json Compact JSON text of a value.
 * @returns Whether a media block may be in it.
 * @example
 * ```ts
 * import { mayHoldMediaBlocks } from "./media_json.ts";
 * mayHoldMediaBlocks('[{"type":"image","data":"iVBO","mimeType":"image/png"}]'); // true
 * mayHoldMediaBlocks(JSON.stringify('{"type":"image"}')); // false: inside a string
 * ```
 */
export function mayHoldMediaBlocks(json: string): boolean {
  return MEDIA_TYPE_MEMBER.test(json);
}
