/**
 * The SDK server `Transport` the meta-server speaks to the agent over: newline-delimited JSON-RPC
 * on stdin/stdout, read with a byte budget per message instead of the SDK's 10 MiB buffer (whose
 * overflow closed the session and shut every backing server down). An oversize line is skipped
 * without being held in memory and answered `-32600` naming the budget; an unparseable line gets
 * `-32700`, an invalid message `-32600` (see `classify.ts`); the session goes on in every case.
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

/** Options of {@link LineStdioServerTransport}. */
export interface LineStdioServerTransportOptions {
  /** Where messages come from. @default Deno.stdin.readable */
  input?: ReadableStream<Uint8Array> | undefined;
  /** Where messages go. @default Deno.stdout.writable */
  output?: WritableStream<Uint8Array> | undefined;
  /** Largest message accepted, bytes (without the newline). @default DEFAULT_MAX_MESSAGE_BYTES */
  maxMessageBytes?: number | undefined;
  /** @default NULL_LOGGER */
  logger?: Logger | undefined;
}

/**
 * Longest wait, after stdin ends, for the answers to requests already read, in milliseconds: an agent
 * that writes its requests and closes stdin (`echo … | mcp-serve`) still gets them, and a request
 * that never finishes (a long `execute`) does not hold the process much past the agent's goodbye.
 */
export const DRAIN_AFTER_EOF_MS = 10_000;

/**
 * Reads messages from `input` until EOF, then waits (at most {@link DRAIN_AFTER_EOF_MS}) until every
 * request it passed on has been answered, then `onclose`; writes each sent message as one line.
 * Lines are handled in order; one that fails hygiene is answered here and never reaches the SDK.
 */
export class LineStdioServerTransport implements Transport, ChecksMessages {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;
  /** Every message handed to `onmessage` passed `classifyLine()` (the MCP message schema). */
  readonly checksMessages = true;

  readonly #input: ReadableStream<Uint8Array>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
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
    this.#input = options.input ?? Deno.stdin.readable;
    this.#writer = (options.output ?? Deno.stdout.writable).getWriter();
    this.#maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#logger = options.logger ?? NULL_LOGGER;
  }

  // deno-lint-ignore require-await
  async start(): Promise<void> {
    if (this.#started) throw new Error("LineStdioServerTransport already started");
    this.#started = true;
    this.#reader = this.#input.getReader();
    this.#reading = this.#read(this.#reader);
  }

  async #read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const lines = new LineReader(this.#maxBytes);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const event of lines.push(value)) this.#handle(event);
        if (this.#closed) return;
      }
      for (const event of lines.end()) this.#handle(event);
      await this.#drain();
    } catch (error) {
      if (!this.#closed) this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    } finally {
      reader.releaseLock();
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
      const m = classified.message as { id?: unknown; method?: unknown };
      if (typeof m.method === "string" && m.id !== undefined) this.#unanswered.add(JSON.stringify(m.id));
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

  #reply(reply: ErrorReply): void {
    this.send(reply as unknown as JSONRPCMessage).catch((error) => {
      this.#logger.debug(
        `stdin: could not answer: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) throw new Error("the transport is closed");
    await this.#writer.write(this.#encoder.encode(JSON.stringify(message) + "\n"));
    const m = message as { id?: unknown; method?: unknown };
    if (m.method === undefined && m.id !== undefined && this.#unanswered.delete(JSON.stringify(m.id))) {
      if (this.#unanswered.size === 0) this.#allAnswered?.();
    }
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
      await this.#reader?.cancel();
    } catch {
      // Already released or errored: nothing left to read either way.
    }
    // The writer stays locked: answers already queued still go out, and nothing else writes stdout.
    this.onclose?.();
  }

  /** Resolves when the read loop has ended (after EOF or close). */
  get finished(): Promise<void> {
    return this.#reading ?? Promise.resolve();
  }
}
