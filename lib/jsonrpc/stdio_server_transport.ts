/**
 * The SDK server `Transport` the meta-server speaks to the agent over: newline-delimited JSON-RPC
 * on stdin/stdout, read with a byte budget per message instead of the SDK's 10 MiB buffer (whose
 * overflow closed the session and shut every backing server down). An oversize line is skipped
 * without being held in memory and answered `-32600` naming the budget; an unparseable line gets
 * `-32700`, an invalid message `-32600` (see `_classify.ts`); the session goes on in every case.
 *
 * @module
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import type { Logger } from "../log.ts";
import { NULL_LOGGER } from "../log.ts";
import type { ChecksMessages } from "./checked_dispatch.ts";
import { classifyLine, type ErrorReply, errorReply, INVALID_REQUEST } from "./_classify.ts";
import { LineReader } from "./_line_reader.ts";
import { isResponseKeys, sniffMessage } from "./_sniff_id.ts";
import { DEFAULT_MAX_MESSAGE_BYTES, formatBytes, MESSAGE_BUDGET_KEY } from "./message_budget.ts";

/**
 * A byte source read by pulls, as `Deno.stdin` is: `read()` fills `p` and resolves to the bytes read,
 * or `null` at EOF; `close()` ends a pending read.
 */
export interface PullSource {
  read(p: Uint8Array): Promise<number | null>;
  close(): void;
}

/**
 * A byte sink that can be written synchronously, as `Deno.stdout` is: `writeSync()` returns the bytes
 * written (possibly fewer than given) and throws `Deno.errors.WouldBlock` when the pipe is non-blocking
 * and full; `write()` is its asynchronous twin (which, as `Deno.stdout.write`, throws `WouldBlock` too on
 * a full non-blocking pipe instead of waiting).
 */
export interface SyncSink {
  writeSync(p: Uint8Array): number;
  write(p: Uint8Array): Promise<number>;
}

/**
 * Largest message written to a {@link SyncSink} synchronously, bytes: a larger one (a big result) is
 * written asynchronously, so that a slowly reading agent never holds the host thread for more than one
 * pipe buffer (64 KiB on Linux). Messages queue behind a pending asynchronous write, in order.
 */
export const SYNC_WRITE_MAX_BYTES = 64 * 1024;

/**
 * Longest pause between two tries to write to a full non-blocking stdout, in milliseconds (pauses double
 * from 1 ms up to this while the agent does not read).
 */
const WOULD_BLOCK_MAX_WAIT_MS = 50;

/** Bytes of the line buffer of Rust's stdout, through which `Deno.stdout` writes (std's `LineWriter`). */
const STDOUT_LINE_BUFFER_BYTES = 1024;

/**
 * The next piece of `message` (one line, ending in its only newline) to write from byte `at`. On a full
 * non-blocking pipe `Deno.stdout` throws `WouldBlock` from the flush it does after each write even when
 * the write took bytes (into Rust's line buffer, or partly sent), so neither retrying (bytes twice) nor
 * giving up (a cut line) would be right. Pieces that cannot take that path: the rest of the text without
 * its newline while that is at least the line buffer (written around the buffer: a partial write says
 * what it wrote, a `WouldBlock` that it wrote nothing), then the last at most 1 KiB with the newline (at
 * most `PIPE_BUF`: all or nothing on a pipe).
 */
function nextPiece(message: Uint8Array, at: number): Uint8Array {
  return message.length - 1 - at >= STDOUT_LINE_BUFFER_BYTES
    ? message.subarray(at, message.length - 1)
    : message.subarray(at);
}

/**
 * Bytes of answers waiting for the agent to read stdout (written asynchronously, behind a full pipe or a
 * slow reader) past which stdin is not read until they are written (8 MiB): an agent that sends requests
 * and does not read the answers makes its own stdin wait instead of growing our memory. Requests already
 * read are still answered, so the queue can pass this by their answers.
 */
export const QUEUED_WRITE_MAX_BYTES = 8 * 1024 * 1024;

/** Bytes asked of a {@link PullSource} per read. */
const READ_CHUNK_BYTES = 64 * 1024;

/** Options of {@link LineStdioServerTransport}. */
export interface LineStdioServerTransportOptions {
  /**
   * Where messages come from. @default Deno.stdin, read by pulls: one read per chunk instead of the
   * ReadableStream's layers (on a pipe, ~35 µs less of the host thread per message).
   */
  input?: ReadableStream<Uint8Array> | PullSource | undefined;
  /**
   * Where messages go. @default Deno.stdout, written synchronously (up to {@link SYNC_WRITE_MAX_BYTES}
   * per message), as Node writes `process.stdout` to a pipe on Linux: Deno's asynchronous stdout write
   * hands each message to a blocking thread and back (50-80 µs per message on this 2-core machine;
   * `writeSync` takes 2-6 µs).
   */
  output?: WritableStream<Uint8Array> | SyncSink | undefined;
  /** Largest message accepted, bytes (without the newline). @default DEFAULT_MAX_MESSAGE_BYTES */
  maxMessageBytes?: number | undefined;
  /** @default NULL_LOGGER */
  logger?: Logger | undefined;
}

/**
 * Longest wait, after stdin ends, for the answers to requests already read, in milliseconds: an agent
 * that writes its requests and closes stdin (`echo ... | mcp-serve`) still gets them, and a request
 * that never finishes (a long `execute`) does not hold the process much past the agent's goodbye.
 */
export const DRAIN_AFTER_EOF_MS = 10_000;

/** MCP 2026-07-28: a request whose answer ends a subscription (sent when the connection ends). */
const LISTEN_METHOD = "subscriptions/listen";

/**
 * Reads messages from `input` until EOF, then waits (at most {@link DRAIN_AFTER_EOF_MS}) until every
 * request it passed on has been answered (but `subscriptions/listen`, answered at the close), then `onclose`; writes each sent message as one line.
 * Lines are handled in order; one that fails hygiene is answered here and never reaches the SDK.
 */
export class LineStdioServerTransport implements Transport, ChecksMessages {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;
  /** Every message handed to `onmessage` passed `classifyLine()` (the MCP message schema). */
  readonly checksMessages = true;

  readonly #input: ReadableStream<Uint8Array> | PullSource;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  readonly #sink: SyncSink | undefined;
  /** The asynchronous writes still going to {@link #sink}, in order (later messages wait behind them). */
  #sinkQueue: Promise<void> | undefined;
  /** Bytes of the messages in {@link #sinkQueue} not written yet. */
  #queuedBytes = 0;
  readonly #maxBytes: number;
  readonly #logger: Logger;
  readonly #encoder = new TextEncoder();
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #started = false;
  #closed = false;
  #reading: Promise<void> | undefined;
  /** Ids (as JSON) of requests passed on and not answered yet. */
  readonly #unanswered = new Set<string>();
  #allAnswered: (() => void) | undefined;

  constructor(options: LineStdioServerTransportOptions = {}) {
    this.#input = options.input ?? Deno.stdin;
    const output = options.output ?? Deno.stdout;
    if (output instanceof WritableStream) this.#writer = output.getWriter();
    else this.#sink = output;
    this.#maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#logger = options.logger ?? NULL_LOGGER;
  }

  // deno-lint-ignore require-await
  async start(): Promise<void> {
    if (this.#started) throw new Error("LineStdioServerTransport already started");
    this.#started = true;
    if (this.#input instanceof ReadableStream) {
      const reader = this.#reader = this.#input.getReader();
      this.#reading = this.#read(async () => {
        const { value, done } = await reader.read();
        return done ? null : value;
      }, () => reader.releaseLock());
    } else {
      const source = this.#input;
      const buffer = new Uint8Array(READ_CHUNK_BYTES);
      // The line reader keeps pieces of a chunk (a line that spans chunks): each chunk is a copy.
      this.#reading = this.#read(async () => {
        const n = await source.read(buffer);
        return n === null ? null : buffer.slice(0, n);
      }, () => {});
    }
  }

  async #read(next: () => Promise<Uint8Array | null>, release: () => void): Promise<void> {
    const lines = new LineReader(this.#maxBytes);
    try {
      for (;;) {
        const chunk = await next();
        if (chunk === null) break;
        for (const event of lines.push(chunk)) this.#handle(event);
        if (this.#closed) return;
        // Answers waiting for an agent that does not read stdout: read no more requests until they are out.
        while (this.#queuedBytes > QUEUED_WRITE_MAX_BYTES && this.#sinkQueue && !this.#closed) {
          await this.#sinkQueue;
        }
      }
      for (const event of lines.end()) this.#handle(event);
      await this.#drain();
    } catch (error) {
      if (!this.#closed) this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    } finally {
      release();
    }
    await this.close();
  }

  #handle(event: ReturnType<LineReader["push"]>[number]): void {
    if (this.#closed) return;
    if (event.kind === "oversize") {
      const { id, keys } = sniffMessage(event.head, event.tail);
      this.#logger.warn(`stdin: refused a message of ${event.bytes} bytes (id ${JSON.stringify(id)})`);
      // An answer to one of our requests is never answered; that request fails on its own timeout.
      if (isResponseKeys(keys)) return;
      const message = `Invalid Request: the message is ${formatBytes(event.bytes)}, more than the ` +
        `${formatBytes(this.#maxBytes)} one message may be (${MESSAGE_BUDGET_KEY}); it was not read`;
      this.#reply(errorReply(id, INVALID_REQUEST, message));
      return;
    }
    if (event.text.trim() === "") return;
    const classified = classifyLine(event.text);
    if (classified.kind === "message") {
      const m = classified.message as { id?: unknown; method?: unknown; params?: unknown };
      // A `subscriptions/listen` is answered only when the connection ends: not a request to wait for.
      if (typeof m.method === "string" && m.id !== undefined && m.method !== LISTEN_METHOD) {
        this.#unanswered.add(JSON.stringify(m.id));
      }
      // Nor is a request the agent cancelled: it gets no answer.
      if (m.method === "notifications/cancelled" && m.id === undefined) this.#forget(m);
      try {
        this.onmessage?.(classified.message);
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
      return;
    }
    this.#logger.warn(`stdin: ${classified.reason}`);
    if (classified.kind === "reply") this.#reply(classified.reply);
  }

  /** Stops waiting for the answer to the request a `notifications/cancelled` names. */
  #forget(notification: { params?: unknown }): void {
    const requestId = (notification.params as { requestId?: unknown } | undefined)?.requestId;
    if (requestId === undefined || !this.#unanswered.delete(JSON.stringify(requestId))) return;
    if (this.#unanswered.size === 0) this.#allAnswered?.();
  }

  #reply(reply: ErrorReply): void {
    this.send(reply as unknown as JSONRPCMessage).catch((error) => {
      this.#logger.debug(
        `stdin: could not answer: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) throw new Error("the transport is closed");
    const bytes = this.#encoder.encode(JSON.stringify(message) + "\n");
    try {
      if (this.#writer) await this.#writer.write(bytes);
      else await this.#writeToSink(this.#sink!, bytes);
    } finally {
      // An answer that could not be written (the agent closed stdout) is not waited for after EOF either.
      const m = message as { id?: unknown; method?: unknown };
      if (m.method === undefined && m.id !== undefined && this.#unanswered.delete(JSON.stringify(m.id))) {
        if (this.#unanswered.size === 0) this.#allAnswered?.();
      }
    }
  }

  /**
   * Writes `bytes` to the sink: synchronously when nothing is queued and the message is small, else (or
   * from where a non-blocking pipe said it is full) behind the queue, waiting for room while the sink
   * says `WouldBlock`. Each write is one {@link nextPiece}, so that a `WouldBlock` means nothing of it was
   * taken. Resolves once written.
   *
   * @throws What the sink throws but `WouldBlock` (e.g. `Deno.errors.BrokenPipe` when the agent is gone).
   */
  #writeToSink(sink: SyncSink, bytes: Uint8Array): Promise<void> | void {
    let at = 0;
    if (this.#sinkQueue === undefined && bytes.length <= SYNC_WRITE_MAX_BYTES) {
      try {
        for (let n = -1; at < bytes.length && n !== 0; at += n) n = sink.writeSync(nextPiece(bytes, at));
        if (at === bytes.length) return;
      } catch (error) {
        if (!(error instanceof Deno.errors.WouldBlock)) throw error;
      }
    }
    const queuedBytes = bytes.length - at;
    this.#queuedBytes += queuedBytes;
    const write = async () => {
      for (let waitMs = 1; at < bytes.length;) {
        let n = 0;
        try {
          n = await sink.write(nextPiece(bytes, at));
        } catch (error) {
          // A full non-blocking pipe (the agent made it so): Deno's write fails instead of waiting.
          if (!(error instanceof Deno.errors.WouldBlock)) throw error;
        }
        if (n > 0) {
          at += n;
          waitMs = 1;
          continue;
        }
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        waitMs = Math.min(waitMs * 2, WOULD_BLOCK_MAX_WAIT_MS);
      }
    };
    const queued = (this.#sinkQueue ?? Promise.resolve()).then(write).finally(() => {
      this.#queuedBytes -= queuedBytes;
    });
    // The queue goes on after a failed write (the next message tries again); this message's send fails.
    const tail = this.#sinkQueue = queued.catch(() => {}).then(() => {
      if (this.#sinkQueue === tail) this.#sinkQueue = undefined;
    });
    return queued;
  }

  /** After EOF: resolves once every request read has been answered, or after {@link DRAIN_AFTER_EOF_MS}. */
  async #drain(): Promise<void> {
    if (this.#unanswered.size === 0 || this.#closed) return;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#allAnswered = resolve;
    const timer = setTimeout(resolve, DRAIN_AFTER_EOF_MS);
    try {
      await promise;
    } finally {
      clearTimeout(timer);
      if (this.#unanswered.size > 0) {
        this.#logger.info(`stdin ended; ${this.#unanswered.size} request(s) still unanswered are dropped`);
      }
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      if (this.#input instanceof ReadableStream) await this.#reader?.cancel();
      else this.#input.close();
    } catch {
      // Already released, closed or errored: nothing left to read either way.
    }
    // The writer stays locked: answers already queued still go out, and nothing else writes stdout.
    this.onclose?.();
  }

  /** Resolves when the read loop has ended (after EOF or close). */
  get finished(): Promise<void> {
    return this.#reading ?? Promise.resolve();
  }
}
