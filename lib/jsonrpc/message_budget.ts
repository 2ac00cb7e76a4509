/**
 * The one byte budget of a JSON-RPC message, wherever it comes from: a line of the agent's stdin,
 * a line of a backing server's stdout, an HTTP response body or one event of an SSE stream. The
 * same number everywhere (`[mcp] max-message-mb`), so nothing accepted on one side is refused on
 * the other; past it the message is never held whole, and the request it answers fails with
 * {@link MessageTooLargeError}'s message instead of "did not answer".
 *
 * @module
 */

/** Default of `[mcp] max-message-mb`, bytes (64 MiB). */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** How messages name the budget, so the user knows what to raise. */
export const MESSAGE_BUDGET_KEY = "[mcp] max-message-mb";

const MIB = 1024 * 1024;

/**
 * A byte count for messages: `64 MiB`, `1.5 KiB`, `300 bytes`.
 *
 * @example
 * ```ts
 * import { formatBytes } from "./message_budget.ts";
 * formatBytes(64 * 1024 * 1024); // "64 MiB"
 * ```
 */
export function formatBytes(bytes: number): string {
  if (bytes >= MIB) return `${Math.round((bytes / MIB) * 10) / 10} MiB`;
  if (bytes >= 1024) return `${Math.round((bytes / 1024) * 10) / 10} KiB`;
  return `${bytes} bytes`;
}

/** What the `data` of a synthesized JSON-RPC error says about an answer that was too large. */
export interface TooLargeData {
  /** `exact`: `bytes` is the whole size (read to its end), else how much had arrived when reading stopped. */
  tooLarge: { bytes: number; maxBytes: number; exact?: boolean };
}

/** Whether a JSON-RPC error's `data` is {@link TooLargeData}. */
export function isTooLargeData(data: unknown): data is TooLargeData {
  const tooLarge = (data as { tooLarge?: { bytes?: unknown; maxBytes?: unknown } } | undefined)?.tooLarge;
  return typeof tooLarge === "object" && tooLarge !== null && typeof tooLarge.bytes === "number" &&
    typeof tooLarge.maxBytes === "number";
}

/**
 * A message passed the budget; it was not read whole. Code `MESSAGE_TOO_LARGE`.
 * `bytes` is how much had arrived when reading stopped (at least `maxBytes + 1`); the message
 * names the server, the budget and its key.
 */
export class MessageTooLargeError extends RangeError {
  override name = "MessageTooLargeError";
  readonly code = "MESSAGE_TOO_LARGE";
  readonly server: string | undefined;
  readonly bytes: number;
  readonly maxBytes: number;

  /**
   * @param what What passed the budget, e.g. `"the response body"`, `"an event of the response stream"`.
   * @param details.exact Whether `bytes` is the whole size (a line read to its end) or only a lower bound.
   */
  constructor(
    what: string,
    details: { server?: string | undefined; bytes: number; maxBytes: number; exact?: boolean },
  ) {
    const from = details.server === undefined ? "" : ` from "${details.server}"`;
    const size = details.exact
      ? `is ${formatBytes(details.bytes)}`
      : `passed ${formatBytes(details.maxBytes)}`;
    super(
      `Cannot read ${what}${from}: it ${size}, more than the ${
        formatBytes(details.maxBytes)
      } one message may ` +
        `be (${MESSAGE_BUDGET_KEY}); it was dropped unread`,
    );
    this.server = details.server;
    this.bytes = details.bytes;
    this.maxBytes = details.maxBytes;
  }
}
