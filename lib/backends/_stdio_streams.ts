/**
 * The two stream helpers of a stdio backing server (private to `lib/backends/`): a bounded tail of
 * its stderr, and a pump that reads a pipe to the end without ever waiting for line handling.
 *
 * @module
 */
import type { Logger } from "../log.ts";

/** Longest stdout line accepted as one JSON-RPC message, in UTF-16 code units (a bigger one is dropped). */
export const MAX_MESSAGE_CHARS = 64 * 1024 * 1024;
/**
 * Longest stretch of line handling (logging, message dispatch) between two reads of a child's
 * pipe, in ms: past it the pump yields so the pipe keeps draining.
 */
export const LINE_SLICE_MS = 4;

/** Keeps the last `maxChars` characters (UTF-16 code units) of a text stream. */
export class TailBuffer {
  #parts: string[] = [];
  #chars = 0;
  constructor(readonly maxChars: number) {}
  /** Appends a chunk, dropping the oldest text past `maxChars`. */
  push(text: string): void {
    this.#parts.push(text);
    this.#chars += text.length;
    while (this.#chars > this.maxChars && this.#parts.length > 1) this.#chars -= this.#parts.shift()!.length;
    if (this.#chars > this.maxChars) {
      const only = this.#parts[0]!.slice(-this.maxChars);
      this.#parts = [only];
      this.#chars = only.length;
    }
  }
  /**
   * The last `chars` characters at most, starting at a line boundary: a partial first line is
   * dropped (unless the whole tail is one line, which is then cut).
   */
  tail(chars: number): string {
    const all = this.#parts.join("");
    if (all.length <= chars) return all;
    const cut = all.slice(-chars);
    if (all[all.length - chars - 1] === "\n") return cut;
    const newline = cut.indexOf("\n");
    return newline === -1 || newline === cut.length - 1 ? cut : cut.slice(newline + 1);
  }
}

/**
 * Reads `stream` to EOF, handing each complete line to `onLine` (and each decoded chunk to
 * `onChunk`). Reading never waits for line handling: chunks are queued as they arrive and lines
 * are handled in slices of at most {@link LINE_SLICE_MS}, so the pipe keeps draining while a slow
 * logger works (a child that writes asynchronously, like node, loses what is still queued on its
 * side when it exits on a full pipe). Resolves once every line read has been handled.
 *
 * @param logger Receives a debug line when the pipe breaks, a warning for a line over {@link MAX_MESSAGE_CHARS}.
 */
export async function pumpLines(
  stream: ReadableStream<Uint8Array>,
  logger: Logger,
  onLine: (line: string) => void,
  onChunk?: (chunk: string) => void,
): Promise<void> {
  const queue: string[] = [];
  let eof = false;
  let wake: (() => void) | undefined;
  const reading = (async () => {
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    const take = (text: string) => {
      if (text.length === 0) return;
      onChunk?.(text);
      queue.push(text);
      wake?.();
    };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        take(decoder.decode(value, { stream: true }));
      }
      take(decoder.decode());
    } catch (error) {
      // The pipe broke (the child died mid-write); the exit watcher reports the end.
      logger.debug(`stream ended: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      reader.releaseLock();
      eof = true;
      wake?.();
    }
  })();
  let pending: string[] = [];
  let pendingChars = 0;
  let sliceStart = performance.now();
  for (;;) {
    const chunk = queue.shift();
    if (chunk === undefined) {
      if (eof) break;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      sliceStart = performance.now();
      continue;
    }
    let start = 0;
    let index: number;
    while ((index = chunk.indexOf("\n", start)) !== -1) {
      pending.push(chunk.slice(start, index));
      const line = pending.join("").replace(/\r$/, "");
      pending = [];
      pendingChars = 0;
      start = index + 1;
      if (line.length > 0) onLine(line);
      if (performance.now() - sliceStart > LINE_SLICE_MS) {
        await new Promise((resolve) => setTimeout(resolve, 0)); // let the pending read complete
        sliceStart = performance.now();
      }
    }
    if (start < chunk.length) {
      pending.push(chunk.slice(start));
      pendingChars += chunk.length - start;
      if (pendingChars > MAX_MESSAGE_CHARS) {
        logger.warn(`dropped an output line longer than ${MAX_MESSAGE_CHARS} characters`);
        pending = [];
        pendingChars = 0;
      }
    }
  }
  await reading;
  if (pending.length > 0) onLine(pending.join(""));
}
