/**
 * The reply channel of one sandbox Worker: a `SharedArrayBuffer` through which the host hands a run what it
 * waits for (host-call replies, deadline changes), so that a Worker whose script waits only on the host
 * blocks in `Atomics.wait` on a doorbell instead of going idle in its event loop. A Deno Worker woken from
 * idle by `postMessage` burns 16–60 µs of CPU per message (more after a longer gap) plus the structured
 * clone and the `MessageEvent`; one woken by `Atomics.notify` burns 4–12 µs.
 *
 * Layout (all integers Int32 in the platform's byte order; both ends are one process):
 * - header, {@link CHANNEL_HEADER_BYTES}: word 0 the doorbell (the host adds 1 and notifies after every
 *   write and on a stop), word 1 the write position, word 2 the last sequence number the host sent by
 *   `postMessage` instead (a message that did not fit).
 * - the ring, {@link REPLY_RING_BYTES}: records of a {@link RECORD_HEADER_BYTES}-byte header (kind, payload
 *   bytes, run id, sequence number, call id, 0) and a UTF-8 payload, each padded to 8 bytes. A record never
 *   wraps: when it does not fit before the end, a pad record (or, with less than a header left, nothing)
 *   skips to the start.
 *
 * Positions are byte counters modulo 2^32 (the ring size divides 2^32). Only the host writes the buffer:
 * the Worker tells the host how far it has read in its `call` messages, and the host takes such a position
 * only when it lies between the last one it took and its own write position, so it never reads a length or
 * index from the shared memory. The Worker checks every record it reads (kind, lengths within the ring and
 * within what was written, run id, sequence) and reports a bad one as `corrupt`.
 *
 * Every message of a run has a sequence number (per channel, from 1, Int32 wrapping), so the Worker
 * delivers ring records and posted messages in the order the host sent them.
 *
 * @module
 */
import type { HostReply } from "./_run_types.ts";

/**
 * Bytes of the ring (256 KiB): a `{ content: [...] }` result of a few KiB, as typical tools return, fits
 * dozens of times over, so `Promise.all` bursts of small results stay in it; a larger result goes by
 * `postMessage`, whose extra wake cost (tens of µs) is small beside QuickJS parsing that much JSON
 * (milliseconds), and two pooled Workers keep only 0.5 MiB of shared memory.
 */
export const REPLY_RING_BYTES = 256 * 1024;
/** Bytes of the channel header before the ring. */
export const CHANNEL_HEADER_BYTES = 16;
/** Bytes of one record's header. */
export const RECORD_HEADER_BYTES = 24;
/** Bytes of the whole channel buffer. */
export const REPLY_CHANNEL_BYTES = CHANNEL_HEADER_BYTES + REPLY_RING_BYTES;

const W_DOORBELL = 0;
const W_TAIL = 1;
const W_POSTED = 2;
const MASK = REPLY_RING_BYTES - 1;

const KIND_JSON = 1;
const KIND_UNDEFINED = 2;
const KIND_ERROR = 3;
const KIND_HELD = 4;
const KIND_REMAINING = 5;
const KIND_PAD = 6;

/** What the host sends a run through the channel (or by `postMessage` when it does not fit). */
export type ChannelMessage =
  | { type: "reply"; runId: number; callId: number; reply: HostReply }
  | { type: "deadline"; runId: number; remainingMs: number | null };

/** Where a run's messages start: the write position and the next sequence number at the run's start. */
export interface ChannelStart {
  start: number;
  seq: number;
}

/** The next sequence number after `seq` (Int32, wrapping, never 0). */
function nextSeq(seq: number): number {
  return ((seq + 1) | 0) || 1;
}

/** Whether sequence number `a` comes at or after `b` (within 2^30 of each other). */
function seqAtOrAfter(a: number, b: number): boolean {
  const d = (a - b) | 0;
  return d >= 0 && d < 0x40000000;
}

const align8 = (n: number) => (n + 7) & ~7;

/**
 * The header words, ring bytes and ring words of a channel's buffer (both ends view it alike).
 *
 * @throws RangeError when `buffer` is not {@link REPLY_CHANNEL_BYTES} long.
 */
function channelViews(
  buffer: SharedArrayBuffer,
): { words: Int32Array; bytes: Uint8Array; ring32: Int32Array } {
  if (buffer.byteLength !== REPLY_CHANNEL_BYTES) {
    throw new RangeError(`A reply channel is ${REPLY_CHANNEL_BYTES} bytes, not ${buffer.byteLength}`);
  }
  return {
    words: new Int32Array(buffer, 0, CHANNEL_HEADER_BYTES / 4),
    bytes: new Uint8Array(buffer, CHANNEL_HEADER_BYTES, REPLY_RING_BYTES),
    ring32: new Int32Array(buffer, CHANNEL_HEADER_BYTES, REPLY_RING_BYTES / 4),
  };
}
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The host's end: writes messages into the ring and rings the doorbell. Keeps its own write position and
 * sequence numbers; reads nothing back from the buffer.
 */
export class ChannelWriter {
  readonly #words: Int32Array;
  readonly #bytes: Uint8Array;
  readonly #ring32: Int32Array;
  /** Write position (byte counter mod 2^32). */
  #tail = 0;
  /** Read position the Worker last reported (never past `#tail`). */
  #head = 0;
  #seq = 0;

  /** @throws RangeError when `buffer` is not {@link REPLY_CHANNEL_BYTES} long. */
  constructor(buffer: SharedArrayBuffer) {
    ({ words: this.#words, bytes: this.#bytes, ring32: this.#ring32 } = channelViews(buffer));
  }

  /**
   * A run starts (the Worker is between runs): whatever the ring still holds belongs to older runs and is
   * free, and no message of the new run was posted yet.
   */
  beginRun(): ChannelStart {
    this.#head = this.#tail;
    Atomics.store(this.#words, W_POSTED, this.#seq);
    return { start: this.#tail, seq: nextSeq(this.#seq) };
  }

  /**
   * The Worker says it has read up to `head`. Taken only when it lies between the last position taken and
   * the write position; anything else (not a number, outside that span) is ignored.
   */
  consumed(head: unknown): void {
    if (typeof head !== "number" || !Number.isInteger(head)) return;
    const h = head >>> 0;
    if (((h - this.#head) >>> 0) <= ((this.#tail - this.#head) >>> 0)) this.#head = h;
  }

  /**
   * Sends `message`: into the ring when it fits, else through `post` with its sequence number (the word the
   * Worker checks says so first). Rings the doorbell either way. Never throws (unless `post` does).
   */
  send(message: ChannelMessage, post: (seq: number) => void): void {
    const seq = this.#seq = nextSeq(this.#seq);
    if (!this.#write(message, seq)) {
      Atomics.store(this.#words, W_POSTED, seq);
      post(seq);
    }
    this.ring();
  }

  /** Wakes the Worker if it waits (after a write, or to make it look at its stop flags). */
  ring(): void {
    Atomics.add(this.#words, W_DOORBELL, 1);
    Atomics.notify(this.#words, W_DOORBELL);
  }

  #write(message: ChannelMessage, seq: number): boolean {
    let kind: number;
    let text = "";
    let callId = 0;
    if (message.type === "reply") {
      callId = message.callId;
      const { reply } = message;
      if (!reply.ok) [kind, text] = [KIND_ERROR, reply.message];
      else if (reply.json === undefined) kind = KIND_UNDEFINED;
      else [kind, text] = [KIND_JSON, reply.json];
    } else if (message.remainingMs === null) kind = KIND_HELD;
    else [kind, text] = [KIND_REMAINING, String(message.remainingMs)];

    const free = REPLY_RING_BYTES - ((this.#tail - this.#head) >>> 0);
    const offset = this.#tail & MASK;
    const toEnd = REPLY_RING_BYTES - offset;
    let written = this.#encode(offset, Math.min(toEnd, free), text);
    let at = offset;
    let skip = 0;
    if (written < 0 && free > toEnd) {
      // Not before the end: skip to the start (a pad record tells the Worker, when a header fits).
      written = this.#encode(0, free - toEnd, text);
      if (written < 0) return false;
      if (toEnd >= RECORD_HEADER_BYTES) this.#header(offset, KIND_PAD, 0, 0, 0, 0);
      at = 0;
      skip = toEnd;
    }
    if (written < 0) return false;
    this.#header(at, kind, written, message.runId, seq, callId);
    this.#tail = (this.#tail + skip + align8(RECORD_HEADER_BYTES + written)) >>> 0;
    Atomics.store(this.#words, W_TAIL, this.#tail | 0);
    return true;
  }

  /** Encodes `text` after a header at `offset` within `space` bytes; returns its bytes, or -1. */
  #encode(offset: number, space: number, text: string): number {
    const room = space - RECORD_HEADER_BYTES;
    // Each UTF-16 code unit takes at least one byte: a longer text cannot fit (no encoding tried).
    if (room < 0 || text.length > room) return -1;
    if (text.length === 0) return 0;
    const start = offset + RECORD_HEADER_BYTES;
    const { read, written } = encoder.encodeInto(text, this.#bytes.subarray(start, start + room));
    return read === text.length ? written : -1;
  }

  #header(offset: number, kind: number, bytes: number, runId: number, seq: number, callId: number): void {
    const at = offset >> 2;
    const words = this.#ring32;
    words[at] = kind;
    words[at + 1] = bytes;
    words[at + 2] = runId;
    words[at + 3] = seq;
    words[at + 4] = callId;
    words[at + 5] = 0;
  }
}

/** What {@link ChannelReader.take} found. */
export type Taken =
  | { type: "message"; message: ChannelMessage }
  /** Nothing now; wait on the doorbell. */
  | { type: "empty" }
  /** The next message comes by `postMessage`: return to the event loop and hand it to `posted()`. */
  | { type: "mailbox" }
  /** A record failed a check (`why`); the channel cannot be trusted. */
  | { type: "corrupt"; why: string };

/** The Worker's end: reads a run's messages in order, from the ring and from posted messages. */
export class ChannelReader {
  readonly #words: Int32Array;
  readonly #bytes: Uint8Array;
  readonly #ring32: Int32Array;
  #head = 0;
  #seq = 1;
  #runId = 0;
  readonly #posted = new Map<number, ChannelMessage>();

  /** @throws RangeError when `buffer` is not {@link REPLY_CHANNEL_BYTES} long. */
  constructor(buffer: SharedArrayBuffer) {
    ({ words: this.#words, bytes: this.#bytes, ring32: this.#ring32 } = channelViews(buffer));
  }

  /** How far the Worker has read (sent to the host so it can reuse the space). */
  get head(): number {
    return this.#head;
  }

  /** A run starts at `start` (from its `run` message); messages of other runs are dropped. */
  beginRun(runId: number, start: ChannelStart): void {
    this.#runId = runId;
    this.#head = start.start >>> 0;
    this.#seq = start.seq;
    this.#posted.clear();
  }

  /** The doorbell's value, read before `take()` and given to `wait()`, so that no ring is missed. */
  doorbell(): number {
    return Atomics.load(this.#words, W_DOORBELL);
  }

  /**
   * Blocks until the doorbell moves from `seen` or `timeoutMs` passes (≥ 0, may be `Infinity`).
   * @returns `Atomics.wait`'s answer.
   */
  wait(seen: number, timeoutMs: number): "ok" | "not-equal" | "timed-out" {
    return Atomics.wait(this.#words, W_DOORBELL, seen, Math.max(0, timeoutMs));
  }

  /** A message of this run that came by `postMessage` with sequence number `seq`; kept until its turn. */
  posted(seq: number, message: ChannelMessage): void {
    if (message.runId !== this.#runId || !Number.isInteger(seq) || !seqAtOrAfter(seq, this.#seq)) return;
    this.#posted.set(seq, message);
  }

  /** The next message in order, if it is here. */
  take(): Taken {
    const posted = this.#posted.get(this.#seq);
    if (posted) {
      this.#posted.delete(this.#seq);
      this.#seq = nextSeq(this.#seq);
      return { type: "message", message: posted };
    }
    const tail = Atomics.load(this.#words, W_TAIL) >>> 0;
    // At most two skips (pad, then short end) precede a record.
    for (let step = 0; step < 3; step++) {
      const available = (tail - this.#head) >>> 0;
      if (available === 0) break;
      if (available > REPLY_RING_BYTES || available % 8 !== 0) return corrupt("write position out of range");
      const offset = this.#head & MASK;
      const toEnd = REPLY_RING_BYTES - offset;
      if (toEnd < RECORD_HEADER_BYTES) {
        if (available < toEnd) return corrupt("short end past the write position");
        this.#head = (this.#head + toEnd) >>> 0;
        continue;
      }
      const words = this.#ring32;
      const at = offset >> 2;
      const kind = words[at]!;
      if (kind === KIND_PAD) {
        if (available < toEnd) return corrupt("pad past the write position");
        this.#head = (this.#head + toEnd) >>> 0;
        continue;
      }
      const bytes = words[at + 1]!;
      const size = align8(RECORD_HEADER_BYTES + bytes);
      if (kind < KIND_JSON || kind > KIND_REMAINING) return corrupt(`unknown record kind ${kind}`);
      if (bytes < 0 || RECORD_HEADER_BYTES + bytes > toEnd || size > available) {
        return corrupt(`record of ${bytes} bytes does not fit`);
      }
      const runId = words[at + 2]!;
      const seq = words[at + 3]!;
      if (runId !== this.#runId) return corrupt(`record of run ${runId} in run ${this.#runId}`);
      if (seq !== this.#seq) {
        // A later one: the messages between came by postMessage. An earlier one cannot be.
        if (seqAtOrAfter(seq, this.#seq)) return { type: "mailbox" };
        return corrupt(`record ${seq} when ${this.#seq} is due`);
      }
      const start = offset + RECORD_HEADER_BYTES;
      // TextDecoder reads shared memory; the copy keeps the text stable while it is decoded.
      const text = bytes === 0 ? "" : decoder.decode(this.#bytes.slice(start, start + bytes));
      const message = decodeRecord(kind, text, runId, words[at + 4]!);
      if (!message) return corrupt(`bad deadline "${text.slice(0, 40)}"`);
      this.#head = (this.#head + size) >>> 0;
      this.#seq = nextSeq(this.#seq);
      return { type: "message", message };
    }
    if (tail !== this.#head) return corrupt("three skips in a row");
    return seqAtOrAfter(Atomics.load(this.#words, W_POSTED), this.#seq)
      ? { type: "mailbox" }
      : { type: "empty" };
  }
}

function decodeRecord(kind: number, text: string, runId: number, callId: number): ChannelMessage | undefined {
  switch (kind) {
    case KIND_JSON:
      return { type: "reply", runId, callId, reply: { ok: true, json: text } };
    case KIND_UNDEFINED:
      return { type: "reply", runId, callId, reply: { ok: true, json: undefined } };
    case KIND_ERROR:
      return { type: "reply", runId, callId, reply: { ok: false, message: text } };
    case KIND_HELD:
      return { type: "deadline", runId, remainingMs: null };
    default: {
      const remainingMs = Number(text);
      return text !== "" && Number.isFinite(remainingMs) && remainingMs >= 0
        ? { type: "deadline", runId, remainingMs }
        : undefined;
    }
  }
}

function corrupt(why: string): Taken {
  return { type: "corrupt", why: `The reply channel is corrupt: ${why}` };
}
