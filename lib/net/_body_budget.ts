/**
 * Counts the bytes of a response body as they arrive and fails the stream past the message
 * budget: the whole body for a single answer, each event for an SSE stream (a stream may live
 * long; each event is one message). Nothing past the budget is buffered: the reader gets a
 * {@link MessageTooLargeError} naming the server, the budget and its key, and the connection is
 * closed under it (an endless body grew the process to 7.8 GB in 24 s before this).
 *
 * @module
 */
import { MessageTooLargeError } from "../jsonrpc/mod.ts";

const LF = 10;
const CR = 13;

/** Options of {@link budgetedBody}. */
export interface BodyBudget {
  /** Largest body (or SSE event), bytes. */
  maxBytes: number;
  /** Count per SSE event (`text/event-stream`) instead of the whole body. */
  isEventStream: boolean;
  /** Server name for the message. */
  server?: string | undefined;
}

/**
 * Wraps `source`: the same bytes, or a {@link MessageTooLargeError} once the budget is passed
 * (then `source` is cancelled, which closes the connection). Work is linear: one `indexOf` per line
 * break for an SSE stream, a length sum otherwise.
 */
export function budgetedBody(
  source: ReadableStream<Uint8Array>,
  budget: BodyBudget,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let total = 0;
  /** Bytes of the current SSE event so far (complete lines). */
  let eventBytes = 0;
  /** Bytes of the current line so far (it has not ended yet). */
  let lineBytes = 0;
  /** The last byte of the previous chunk, to see a `\r\n` split across chunks. */
  let lastByte = -1;
  const countEvents = (chunk: Uint8Array): number => {
    let start = 0;
    for (;;) {
      const lf = chunk.indexOf(LF, start);
      if (lf === -1) break;
      const length = lineBytes + (lf - start);
      const before = lf > 0 ? chunk[lf - 1] : lastByte;
      // An empty line (`\n` or `\r\n` alone) ends the event.
      if (length === 0 || (length === 1 && before === CR)) eventBytes = 0;
      else eventBytes += length + 1;
      lineBytes = 0;
      start = lf + 1;
    }
    lineBytes += chunk.length - start;
    lastByte = chunk.length > 0 ? chunk[chunk.length - 1]! : lastByte;
    return eventBytes + lineBytes;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        controller.error(error);
        return;
      }
      if (next.done) {
        controller.close();
        return;
      }
      const chunk = next.value;
      total += chunk.length;
      const counted = budget.isEventStream ? countEvents(chunk) : total;
      if (counted > budget.maxBytes) {
        const error = new MessageTooLargeError(
          budget.isEventStream ? "an event of the response stream" : "the response body",
          { server: budget.server, bytes: counted, maxBytes: budget.maxBytes },
        );
        controller.error(error);
        reader.cancel(error).catch(() => {}); // Closes the connection; the reader already has the error.
        return;
      }
      controller.enqueue(chunk);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
