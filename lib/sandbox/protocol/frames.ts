/**
 * The framing of the pipes between the host and its sandbox process: each message is one frame, a 4-byte
 * big-endian length followed by that many bytes of UTF-8: the message as JSON, optionally followed by a NUL
 * byte and a text tail (see {@link encodeFrame}). A length prefix lets a reader refuse an oversized frame
 * from its header alone, before it buffers any of it (a guest that writes a 1 GB line, or garbage whose
 * first four bytes read as a huge length, costs the host four bytes). The tail carries the one long text of a
 * message (a tool call's arguments, a tool result, a script's return value, all JSON text already) as it is:
 * nested inside the message's JSON it was escaped on one side and unescaped on the other (an 8 KB result
 * of file paths cost ~30x the time of passing it through).
 *
 * @module
 */

/** Bytes of a frame's length prefix. */
export const FRAME_HEADER_BYTES = 4;

/**
 * Own key of a decoded message under which {@link FrameDecoder.push} puts the frame's text tail (see
 * {@link encodeFrame}); `messages.ts` moves it to its place in each message type.
 */
export const FRAME_TEXT_KEY = "$text";

/** The byte between a frame's JSON and its text tail: JSON text never holds a raw NUL. */
const TEXT_SEPARATOR = 0;

/**
 * Shortest text sent as a tail, UTF-16 code units: a shorter one (a tool call's `{"message":"x"}`) costs
 * less to escape inside the JSON than the tail's extra steps, and goes there.
 */
export const MIN_TAIL_CHARS = 512;

const encoder = new TextEncoder();
/** Messages up to this many UTF-16 units are encoded into a 3x buffer in one step. */
const SMALL_FRAME_UNITS = 64 * 1024;
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Encodes one message as a frame.
 *
 * @param message Any JSON-serializable value; an object when `text` is given.
 * @param text A long text that travels beside the message, not inside its JSON: after a NUL byte, as UTF-8,
 *   unescaped. The decoder gives it back as the message's {@link FRAME_TEXT_KEY} member. A text shorter
 *   than {@link MIN_TAIL_CHARS}, or one that is not well-formed UTF-16 (a lone surrogate, which UTF-8 cannot
 *   carry), is put in the JSON under that key instead, escaped: the decoder gives back the same message
 *   either way.
 * @returns The frame's bytes: the length prefix, then the JSON (then the NUL and the text).
 * @throws {TypeError} When `message` cannot be serialized (a cycle, a BigInt).
 */
export function encodeFrame(message: unknown, text?: string): Uint8Array {
  if (text === undefined) return encodeBody(JSON.stringify(message));
  if (text.length < MIN_TAIL_CHARS || !text.isWellFormed()) {
    return encodeBody(JSON.stringify({ ...message as object, [FRAME_TEXT_KEY]: text }));
  }
  return encodeBody(`${JSON.stringify(message)}\0${text}`);
}

/** The frame of `json` (the message's JSON, maybe with its NUL and text tail). */
function encodeBody(json: string): Uint8Array {
  if (json.length <= SMALL_FRAME_UNITS) {
    // One allocation: the JSON is encoded straight after the prefix (UTF-8 takes at most 3 bytes a unit).
    const frame = new Uint8Array(FRAME_HEADER_BYTES + json.length * 3);
    const { written } = encoder.encodeInto(json, frame.subarray(FRAME_HEADER_BYTES));
    new DataView(frame.buffer).setUint32(0, written);
    return frame.subarray(0, FRAME_HEADER_BYTES + written);
  }
  // A large message: encoded once at its real size, then copied behind the prefix (no 3x reserve).
  const body = encoder.encode(json);
  const frame = new Uint8Array(FRAME_HEADER_BYTES + body.length);
  new DataView(frame.buffer).setUint32(0, body.length);
  frame.set(body, FRAME_HEADER_BYTES);
  return frame;
}

/**
 * A frame's body as its message: the JSON, and the text tail after a NUL (if any) as its
 * {@link FRAME_TEXT_KEY} member.
 *
 * @throws {TypeError} When a part is not UTF-8, or a message with a tail is not a JSON object.
 * @throws {SyntaxError} When the JSON does not parse.
 */
function decodeBody(body: Uint8Array): unknown {
  const separator = body.indexOf(TEXT_SEPARATOR);
  if (separator < 0) return JSON.parse(decoder.decode(body));
  const message: unknown = JSON.parse(decoder.decode(body.subarray(0, separator)));
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    throw new TypeError("a text tail after a message that is not an object");
  }
  (message as Record<string, unknown>)[FRAME_TEXT_KEY] = decoder.decode(body.subarray(separator + 1));
  return message;
}

/** What {@link FrameDecoder.push} found wrong: the stream cannot be trusted from there on. */
export class FrameError extends Error {
  override name = "FrameError";
  /** `"oversized"` (a length past the bound) or `"malformed"` (not UTF-8 JSON). */
  readonly code: "oversized" | "malformed";
  constructor(code: "oversized" | "malformed", message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * Reassembles frames from the chunks a pipe delivers. Holds at most one partial frame, never more than
 * `maxFrameBytes` plus one chunk.
 */
export class FrameDecoder {
  readonly #maxFrameBytes: number;
  #buffer = new Uint8Array(0);
  #length = 0;

  /** @param maxFrameBytes Largest frame accepted, bytes of JSON (the prefix not counted). */
  constructor(maxFrameBytes: number) {
    this.#maxFrameBytes = maxFrameBytes;
  }

  /** Bytes held that do not yet make a whole frame. */
  get pendingBytes(): number {
    return this.#length;
  }

  /**
   * Adds a chunk and returns the messages it completes, in order.
   *
   * @throws {FrameError} On a length past `maxFrameBytes` (read from the prefix, before the body arrives)
   *   or a body that is not UTF-8 JSON. Messages completed before the bad frame are lost with it; the
   *   decoder must not be used again.
   */
  push(chunk: Uint8Array): unknown[] {
    this.#append(chunk);
    const messages: unknown[] = [];
    let offset = 0;
    const view = new DataView(this.#buffer.buffer, this.#buffer.byteOffset, this.#length);
    while (this.#length - offset >= FRAME_HEADER_BYTES) {
      const bodyBytes = view.getUint32(offset);
      if (bodyBytes > this.#maxFrameBytes) {
        throw new FrameError(
          "oversized",
          `a frame of ${bodyBytes} bytes, more than the ${this.#maxFrameBytes} bytes allowed`,
        );
      }
      const end = offset + FRAME_HEADER_BYTES + bodyBytes;
      if (end > this.#length) break;
      const body = this.#buffer.subarray(offset + FRAME_HEADER_BYTES, end);
      try {
        messages.push(decodeBody(body));
      } catch (error) {
        throw new FrameError("malformed", `a frame that is not UTF-8 JSON (${(error as Error).message})`);
      }
      offset = end;
    }
    if (offset > 0) {
      this.#buffer.copyWithin(0, offset, this.#length);
      this.#length -= offset;
      // A large frame's buffer is given back once it is consumed.
      if (this.#length === 0 && this.#buffer.length > 1 << 20) this.#buffer = new Uint8Array(0);
    }
    return messages;
  }

  /**
   * Appends `chunk`. A buffer that must grow grows at once to the whole frame being read when its prefix is
   * in (a 32 MiB frame arriving in 64 KiB pipe reads is copied once, not once per MiB: that cost the host's
   * thread 250 ms), else to twice its size, at most 1 MiB past what is needed.
   */
  #append(chunk: Uint8Array): void {
    const needed = this.#length + chunk.length;
    if (needed > this.#buffer.length) {
      const doubled = Math.min(this.#buffer.length * 2, needed + (1 << 20));
      const grown = new Uint8Array(Math.max(needed, doubled, this.#frameAheadBytes()));
      grown.set(this.#buffer.subarray(0, this.#length));
      this.#buffer = grown;
    }
    this.#buffer.set(chunk, this.#length);
    this.#length = needed;
  }

  /** Size of the frame the held bytes start, prefix included, once its prefix is in and allowed; else 0. */
  #frameAheadBytes(): number {
    if (this.#length < FRAME_HEADER_BYTES) return 0;
    const bodyBytes = new DataView(this.#buffer.buffer, this.#buffer.byteOffset).getUint32(0);
    return bodyBytes <= this.#maxFrameBytes ? FRAME_HEADER_BYTES + bodyBytes : 0;
  }
}
