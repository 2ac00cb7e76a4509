/**
 * Splits a byte stream into newline-delimited lines under a byte budget per line. Nothing is
 * buffered past the budget: a longer line is counted and skipped, keeping only its first and last
 * few KiB (enough to find a JSON-RPC `id` to answer), so a 100 MB line costs memory for 8 KiB.
 * Used for every newline-delimited JSON-RPC stream we read: the agent's stdin and the backing
 * servers' stdout (and, with a small budget, their stderr).
 *
 * @module
 */

/** Bytes kept from the start and from the end of a line that is over budget. */
export const OVERSIZE_KEPT_BYTES = 4096;

/** One line as read (without its `\n`, nor a `\r` before it). */
export type LineEvent =
  | { kind: "line"; text: string; bytes: number }
  /** A line longer than the budget: its length, and its first and last {@link OVERSIZE_KEPT_BYTES} as text. */
  | { kind: "oversize"; bytes: number; head: string; tail: string };

const NEWLINE = 10;
const CARRIAGE_RETURN = 13;

function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * A push parser: feed chunks with {@link push}, call {@link end} at EOF. Work is linear in the
 * bytes read; each kept line is copied once (only when it spans chunks) and decoded once.
 *
 * @example
 * ```ts
 * import { LineReader } from "./_line_reader.ts";
 * const reader = new LineReader(8);
 * const events = reader.push(new TextEncoder().encode('{"a":1}\n0123456789\n'));
 * events.map((e) => e.kind); // ["line", "oversize"]
 * ```
 */
export class LineReader {
  readonly #maxLineBytes: number;
  readonly #decoder = new TextDecoder();
  #parts: Uint8Array[] = [];
  #bytes = 0;
  /** Set while skipping a line over budget. */
  #oversize: { head: Uint8Array; tail: Uint8Array } | undefined;

  /** @param maxLineBytes Longest line kept, bytes (without the newline); at least 1. */
  constructor(maxLineBytes: number) {
    this.#maxLineBytes = Math.max(1, Math.floor(maxLineBytes));
  }

  /** Bytes of the line read so far (not yet ended by a newline). */
  get pendingBytes(): number {
    return this.#bytes;
  }

  /** Feeds one chunk; returns the lines it completed, in order. */
  push(chunk: Uint8Array): LineEvent[] {
    const events: LineEvent[] = [];
    let start = 0;
    while (start <= chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (end > start) this.#append(chunk.subarray(start, end));
      if (newline === -1) break;
      events.push(this.#finish());
      start = newline + 1;
    }
    return events;
  }

  /** The last line when the stream ended without a newline, if any. */
  end(): LineEvent[] {
    return this.#bytes > 0 ? [this.#finish()] : [];
  }

  #append(segment: Uint8Array): void {
    const oversize = this.#oversize;
    if (oversize) {
      this.#bytes += segment.length;
      oversize.tail = keepTail(oversize.tail, segment);
      return;
    }
    if (this.#bytes + segment.length <= this.#maxLineBytes) {
      this.#parts.push(segment);
      this.#bytes += segment.length;
      return;
    }
    // Over budget from here on: keep the head and a rolling tail, drop the rest.
    const sofar = concat([...this.#parts, segment], this.#bytes + segment.length);
    this.#oversize = {
      head: sofar.slice(0, OVERSIZE_KEPT_BYTES),
      tail: sofar.slice(Math.max(0, sofar.length - OVERSIZE_KEPT_BYTES)),
    };
    this.#parts = [];
    this.#bytes += segment.length;
  }

  #finish(): LineEvent {
    const bytes = this.#bytes;
    const oversize = this.#oversize;
    const parts = this.#parts;
    this.#parts = [];
    this.#bytes = 0;
    this.#oversize = undefined;
    if (oversize) {
      return {
        kind: "oversize",
        bytes,
        head: this.#decoder.decode(oversize.head),
        tail: this.#decoder.decode(oversize.tail),
      };
    }
    let line = concat(parts, bytes);
    if (line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN) {
      line = line.subarray(0, line.length - 1);
    }
    return { kind: "line", text: parts.length === 0 ? "" : this.#decoder.decode(line), bytes };
  }
}

function keepTail(tail: Uint8Array, segment: Uint8Array): Uint8Array {
  if (segment.length >= OVERSIZE_KEPT_BYTES) return segment.slice(segment.length - OVERSIZE_KEPT_BYTES);
  const keepOld = Math.min(tail.length, OVERSIZE_KEPT_BYTES - segment.length);
  const out = new Uint8Array(keepOld + segment.length);
  out.set(tail.subarray(tail.length - keepOld));
  out.set(segment, keepOld);
  return out;
}
