/**
 * The stream helpers of a stdio backing server (private to `lib/backends/`): a bounded tail of its
 * stderr, and the two reading loops: stdout (one JSON-RPC message per line under
 * the message budget, handled as it arrives so the pipe is the buffer) and stderr (read as fast as
 * the child writes, into a bounded tail and a bounded queue to the log; what the log cannot take is
 * counted and said in one line).
 *
 * @module
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import type { Logger } from "../log.ts";
import {
  isResponseKeys,
  type LineEvent,
  LineReader,
  MessageTooLargeError,
  sniffMessage,
  type TooLargeData,
} from "../jsonrpc/mod.ts";

/**
 * Longest stretch of line handling (logging, message dispatch) between two reads of a child's
 * pipe, in ms: past it the pump yields so the pipe keeps draining.
 */
export const LINE_SLICE_MS = 4;
/**
 * Bytes read from a child's stdout at most per read, into one buffer reused from read to read (a
 * default reader allocated a fresh 64 KiB buffer for every read: most of the reading cost per call).
 */
export const STDOUT_READ_BYTES = 64 * 1024;
/** Bytes of the buffer a child's stdin messages are encoded into, reused from message to message (16 KiB). */
export const STDIN_WRITE_BYTES = 16 * 1024;
/** Longest stderr line logged whole, bytes; a longer one is logged cut, with its size. */
export const STDERR_LINE_BYTES = 16 * 1024;
/**
 * Stderr waiting for the log at most, UTF-16 code units (1 Mi). Stderr is read as fast as the child
 * writes; lines past this are dropped (the tail still has them) and a marker line counts them.
 */
export const STDERR_QUEUE_CHARS = 1024 * 1024;
/** Non-JSON stdout lines logged one by one per process; later ones are counted in one line at the end. */
export const MAX_NOISE_WARNINGS = 20;
/** JSON-RPC error code of the answer we make up for a request whose real answer was too large. */
export const ANSWER_TOO_LARGE_CODE = -32603;

/**
 * What to do about a stdout message over the budget (skipped unread): the line to log, and, when
 * it was an answer (its head shows `result` or `error`, and an `id`), a made-up error answer for
 * the request it answers, so that request fails at once as too large instead of at its timeout.
 * A request or notification from the server is only logged.
 */
export function oversizeAnswer(
  event: Extract<LineEvent, { kind: "oversize" }>,
  budget: { server: string | undefined; maxBytes: number },
): { logLine: string; message?: JSONRPCMessage } {
  const { id, keys } = sniffMessage(event.head, event.tail);
  const error = new MessageTooLargeError("an answer", {
    server: budget.server,
    bytes: event.bytes,
    maxBytes: budget.maxBytes,
    exact: true,
  });
  const logLine = `${error.message} (id ${JSON.stringify(id)})`;
  if (id === null || !isResponseKeys(keys)) return { logLine };
  const data: TooLargeData = { tooLarge: { bytes: event.bytes, maxBytes: budget.maxBytes, exact: true } };
  return {
    logLine,
    message: { jsonrpc: "2.0", id, error: { code: ANSWER_TOO_LARGE_CODE, message: error.message, data } },
  };
}

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

/** Options of {@link pumpStdout}. */
export interface StdoutPumpOptions {
  /** Longest line kept, bytes. */
  maxMessageBytes: number;
  /** Receives each non-empty line. */
  onLine(line: string): void;
  /** Receives each line over the budget (not held: its size and first/last KiB). */
  onOversize(event: Extract<LineEvent, { kind: "oversize" }>): void;
  /** Told of each notification over {@link MAX_NOTIFICATION_LINE_CHARS}, dropped unread (and logged). */
  onDroppedNotification?: (() => void) | undefined;
  logger: Logger;
}

/**
 * Reads stdout to EOF, one message per line under the message budget, through a BYOB reader into one
 * reused buffer of {@link STDOUT_READ_BYTES} (a fresh one only while a line spans reads). Lines are handled as they
 * arrive (the pipe waits meanwhile, so memory stays bounded), yielding every {@link LINE_SLICE_MS}
 * so a burst of messages never holds the event loop. Resolves at EOF (or a broken pipe).
 */
export async function pumpStdout(
  stream: ReadableStream<Uint8Array>,
  options: StdoutPumpOptions,
): Promise<void> {
  const lines = new LineReader(options.maxMessageBytes);
  const reader = stream.getReader({ mode: "byob" });
  let dropped = 0;
  const handle = (event: LineEvent) => {
    if (event.kind === "oversize") options.onOversize(event);
    else if (isOversizeNotification(event.text)) {
      options.onDroppedNotification?.();
      if (dropped++ % 100 === 0) {
        options.logger.warn(
          `stdout line of ${event.text.length} characters without an id dropped unread (over MAX_NOTIFICATION_LINE_CHARS; ${dropped} so far)`,
        );
      }
    } else if (event.text.length > 0) options.onLine(event.text);
  };
  let buffer = new ArrayBuffer(STDOUT_READ_BYTES);
  try {
    for (;;) {
      const { value, done } = await reader.read(new Uint8Array(buffer));
      if (done || value === undefined) break;
      // A slice starts at each read: waiting for the pipe is no line handling (counting it made every
      // answer after a pause wait a timer turn before the next read).
      let sliceStart = performance.now();
      const events = lines.push(value);
      // The next read reuses this memory, unless the reader still holds part of a line in it.
      buffer = lines.pendingBytes > 0 ? new ArrayBuffer(STDOUT_READ_BYTES) : value.buffer as ArrayBuffer;
      for (const event of events) {
        handle(event);
        if (performance.now() - sliceStart > LINE_SLICE_MS) {
          await new Promise((resolve) => setTimeout(resolve, 0));
          sliceStart = performance.now();
        }
      }
    }
    for (const event of lines.end()) handle(event);
  } catch (error) {
    // The pipe broke (the child died mid-write); the exit watcher reports the end.
    options.logger.debug(`stdout ended: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    reader.releaseLock();
  }
}

/** Options of {@link pumpStderr}. */
export interface StderrPumpOptions {
  /** Receives every chunk as decoded text, as soon as it is read (the tail, signs of life). */
  onChunk(text: string): void;
  /** Where lines go, at debug level as `stderr: <line>`. */
  logger: Logger;
}

/**
 * Reads stderr to EOF without ever waiting for the log: each chunk goes to `onChunk` and its lines
 * to a queue of at most {@link STDERR_QUEUE_CHARS}, which a separate loop logs in slices; lines
 * that find the queue full are counted, and a marker line says how many once the log catches up.
 * Resolves once every queued line is logged.
 */
export async function pumpStderr(
  stream: ReadableStream<Uint8Array>,
  options: StderrPumpOptions,
): Promise<void> {
  const logger = options.logger;
  let lines = new LineReader(STDERR_LINE_BYTES);
  const decoder = new TextDecoder();
  const queue: string[] = [];
  let queueChars = 0;
  let dropped = { lines: 0, bytes: 0 };
  let eof = false;
  let wake: (() => void) | undefined;
  const take = (events: LineEvent[]) => {
    for (const event of events) {
      const line = event.kind === "line"
        ? event.text
        : `${event.head.slice(0, 1024)}\u2026 (a line of ${event.bytes} bytes, cut)`;
      if (line.length === 0) continue;
      if (queueChars + line.length > STDERR_QUEUE_CHARS) {
        dropped.lines++;
        dropped.bytes += event.bytes;
        continue;
      }
      queue.push(line);
      queueChars += line.length;
    }
    wake?.();
  };
  const reading = (async () => {
    const reader = stream.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        options.onChunk(decoder.decode(value, { stream: true }));
        // Lines are split only while the log takes them (not once the session log is full).
        if (logger.enabled?.("debug") ?? true) take(lines.push(value));
        else if (lines.pendingBytes > 0) lines = new LineReader(STDERR_LINE_BYTES);
      }
      take(lines.end());
    } catch (error) {
      // The pipe broke (the child died mid-write); the exit watcher reports the end.
      logger.debug(`stderr ended: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      reader.releaseLock();
      eof = true;
      wake?.();
    }
  })();
  let sliceStart = performance.now();
  for (;;) {
    const line = queue.shift();
    if (line === undefined) {
      if (dropped.lines > 0) {
        logger.warn(
          `stderr: \u2026 ${dropped.lines} line(s) (${dropped.bytes} bytes) not logged: the server wrote ` +
            "faster than the log could take them",
        );
        dropped = { lines: 0, bytes: 0 };
      }
      if (eof) break;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      sliceStart = performance.now();
      continue;
    }
    queueChars -= line.length;
    logger.debug(`stderr: ${line}`);
    if (performance.now() - sliceStart > LINE_SLICE_MS) {
      await new Promise((resolve) => setTimeout(resolve, 0)); // let the pending read complete
      sliceStart = performance.now();
    }
  }
  await reading;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** One message waiting for a child's stdin. */
interface QueuedWrite {
  message: JSONRPCMessage;
  /** The request's id (requests only): a `notifications/cancelled` for it drops it unsent. */
  id: string | number | undefined;
  settle(error?: Error): void;
}

/**
 * The writes to a child's stdin, one message at a time in order. A message is only encoded when
 * its turn comes (the pipe is the buffer), so what waits can still be dropped:
 * - a `notifications/cancelled` for a request not yet written drops both (the server never hears
 *   of a call its script abandoned, and never parses its arguments);
 * - {@link StdinQueue.end} drops everything not yet written and does not wait for a write the child
 *   is not reading: shutdown is bounded by the grace, not by how fast the child reads.
 */
export class StdinQueue {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #logger: Logger;
  readonly #encoder = new TextEncoder();
  readonly #buffer = new Uint8Array(STDIN_WRITE_BYTES);
  #queue: QueuedWrite[] = [];
  #writing = false;
  #ended: Error | undefined;

  constructor(writer: WritableStreamDefaultWriter<Uint8Array>, logger: Logger) {
    this.#writer = writer;
    this.#logger = logger;
  }

  /** Messages queued or being written. */
  get pending(): number {
    return this.#queue.length + (this.#writing ? 1 : 0);
  }

  /**
   * Queues `message`; resolves once it is written (or dropped as cancelled before it was written).
   *
   * @throws Error (rejects) when stdin has ended or broke, or the queue was ended before its turn.
   */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.#ended) return Promise.reject(this.#ended);
    if ("method" in message && message.method === "notifications/cancelled") {
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      const at = this.#queue.findIndex((q) => q.id !== undefined && q.id === requestId);
      if (at !== -1) {
        this.#queue.splice(at, 1)[0]!.settle();
        this.#logger.debug(`request ${JSON.stringify(requestId)} cancelled before it was written: not sent`);
        return Promise.resolve();
      }
    }
    const id = "method" in message && "id" in message ? message.id as string | number : undefined;
    return new Promise((resolve, reject) => {
      this.#queue.push({ message, id, settle: (error) => error ? reject(error) : resolve() });
      if (!this.#writing) void this.#pump();
    });
  }

  /**
   * `text` as UTF-8: in the reused {@link STDIN_WRITE_BYTES} buffer when it surely fits (3 bytes per
   * UTF-16 code unit at most), else in a fresh one. The buffer is free again once the write resolved
   * (writes go one at a time).
   */
  #encode(text: string): Uint8Array {
    if (text.length * 3 > STDIN_WRITE_BYTES) return this.#encoder.encode(text);
    const { written } = this.#encoder.encodeInto(text, this.#buffer);
    return this.#buffer.subarray(0, written);
  }

  async #pump(): Promise<void> {
    this.#writing = true;
    try {
      for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift()) {
        try {
          await this.#writer.write(this.#encode(JSON.stringify(next.message) + "\n"));
          next.settle();
        } catch (error) {
          next.settle(error instanceof Error ? error : new Error(String(error)));
        }
      }
    } finally {
      this.#writing = false;
    }
  }

  /**
   * Ends stdin for shutdown. With nothing pending, closes it (the child sees EOF), waiting at most
   * `maxWaitMs`. Otherwise drops every queued message (their `send` rejects) and aborts the stream
   * without waiting: the write in progress ends when the child reads it or dies.
   *
   * @returns How many queued messages were dropped.
   */
  async end(maxWaitMs: number): Promise<number> {
    if (this.#ended) return 0;
    this.#ended = new Error("the server is being shut down: the message was not sent");
    const dropped = this.#queue.splice(0);
    for (const q of dropped) q.settle(this.#ended);
    if (dropped.length > 0) this.#logger.debug(`shutdown: ${dropped.length} message(s) dropped unsent`);
    const ending = this.#writing ? this.#writer.abort(this.#ended) : this.#writer.close();
    ending.catch(() => {}); // stdin already broken: the child is gone or going
    if (!this.#writing) await Promise.race([ending.catch(() => {}), sleep(maxWaitMs)]);
    return dropped.length;
  }
}

/**
 * Longest stdout line without a top-level `id` (a notification) that is parsed, in characters (1 MiB):
 * longer ones are dropped unread. No notification a client needs is that large, and parsing 20 lines of
 * 20 MB each held the thread for seconds.
 */
export const MAX_NOTIFICATION_LINE_CHARS = 1024 * 1024;

/**
 * Whether `line` (a stdout line) is a notification too large to parse: over
 * {@link MAX_NOTIFICATION_LINE_CHARS} and no top-level `id` at either end (requests and answers have one).
 */
export function isOversizeNotification(line: string): boolean {
  return line.length > MAX_NOTIFICATION_LINE_CHARS &&
    sniffMessage(line.slice(0, 4_096), line.slice(-4_096)).id === null;
}
