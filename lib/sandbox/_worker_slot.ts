/**
 * One sandbox Worker behind `SandboxPool`: the Worker itself (created on the host thread), its stop flags,
 * its start state and the run it is serving.
 *
 * @module
 */
import { type FromSandbox, type SandboxInit, STOP_FLAGS_BYTES, type ToSandbox } from "./_protocol.ts";
import {
  type ChannelMessage,
  type ChannelStart,
  ChannelWriter,
  REPLY_CHANNEL_BYTES,
} from "./_reply_channel.ts";

/** The run a slot is serving, as the slot sees it (`RunSession` implements it). */
export interface SlotSession {
  /** Handles a message of the run from the sandbox Worker. */
  receive(message: FromSandbox): void;
  /** Fails the run: the Worker died (`reason` says how). */
  crash(reason: string): void;
}

/**
 * One sandbox Worker: its stop flags, its reply channel (`_reply_channel.ts`, used once the Worker says at
 * `ready` that it can block on it) and the run it is serving. Creating it blocks the calling thread until
 * the Worker's isolate exists (15–40 ms, more on a loaded machine); the pool does that off the request path.
 */
export class WorkerSlot {
  readonly slotId: number;
  readonly stopFlags = new Int32Array(new SharedArrayBuffer(STOP_FLAGS_BYTES));
  /** `true` once the Worker loaded QuickJS, else why it could not. */
  readonly ready: Promise<true | string>;
  session: SlotSession | undefined;
  isReady = false;
  wasReady = false;
  isDead = false;
  readonly #worker: Worker;
  readonly #onDead: (slot: WorkerSlot) => void;
  readonly #finishSpawn: (value: true | string) => void;
  #terminated = false;
  /** The reply channel's writer, once the Worker said it reads the channel. */
  #channel: ChannelWriter | undefined;

  constructor(
    workerUrl: URL | string,
    slotId: number,
    heapHintBytes: number,
    spawnTimeoutMs: number,
    onDead: (slot: WorkerSlot) => void,
  ) {
    this.slotId = slotId;
    this.#onDead = onDead;
    let settleReady: (value: true | string) => void = () => {};
    this.ready = new Promise((resolve) => settleReady = resolve);
    const spawnTimer = setTimeout(() => this.died(`no answer within ${spawnTimeoutMs} ms`), spawnTimeoutMs);
    this.#finishSpawn = (value) => {
      clearTimeout(spawnTimer);
      this.isReady = value === true && !this.isDead;
      if (this.isReady) this.wasReady = true;
      settleReady(value);
    };
    let worker: Worker;
    try {
      worker = this.#worker = new Worker(workerUrl, { type: "module" });
    } catch (error) {
      // No Worker at all (e.g. out of memory): a stand-in that is dead from the start.
      this.#worker = { postMessage() {}, terminate() {} } as unknown as Worker;
      queueMicrotask(() => this.died(error instanceof Error ? error.message : String(error)));
      return;
    }
    const channelBuffer = newChannelBuffer();
    worker.onmessage = (event: MessageEvent<FromSandbox>) => {
      const message = event.data;
      if (message.type === "ready") {
        if (message.replyChannel === true && channelBuffer) this.#channel = new ChannelWriter(channelBuffer);
        this.#finishSpawn(true);
      } else if (message.type === "fatal") this.died(message.message);
      else this.session?.receive(message);
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.died(event.message);
      this.terminate();
    };
    const init: SandboxInit = {
      type: "init",
      stopFlags: this.stopFlags.buffer as SharedArrayBuffer,
      heapLimitBytes: heapHintBytes,
      replyChannel: channelBuffer,
    };
    worker.postMessage(init);
  }

  post(message: ToSandbox): void {
    if (!this.#terminated) this.#worker.postMessage(message);
  }

  /** A run starts: where its messages start in the reply channel, if the Worker reads one. */
  beginRun(): ChannelStart | undefined {
    return this.#channel?.beginRun();
  }

  /**
   * Sends a run's reply or deadline change: through the reply channel when there is one (by message, with
   * its sequence number, when it does not fit), else by message.
   */
  send(message: ChannelMessage): void {
    if (this.#terminated) return;
    if (this.#channel) this.#channel.send(message, (seq) => this.post({ ...message, seq }));
    else this.post(message);
  }

  /** The Worker says how far it read the reply channel (an untrusted number; see `ChannelWriter`). */
  consumed(head: unknown): void {
    this.#channel?.consumed(head);
  }

  /** Wakes the Worker if it blocks on its reply channel (after the stop flags were set). */
  ring(): void {
    this.#channel?.ring();
  }

  /** The Worker cannot serve: fail its run (if any) and its start (if pending). */
  died(message: string): void {
    if (this.isDead) return;
    this.isDead = true;
    this.#finishSpawn(message);
    if (this.session) this.session.crash(message);
    else this.#onDead(this);
  }

  terminate(): void {
    if (this.#terminated) return;
    this.#terminated = true;
    this.#finishSpawn("terminated");
    this.#worker.terminate();
    this.isDead = true;
  }
}

/** A reply channel's buffer, or `undefined` when shared memory cannot be had (replies then go by message). */
function newChannelBuffer(): SharedArrayBuffer | undefined {
  try {
    return new SharedArrayBuffer(REPLY_CHANNEL_BYTES);
  } catch {
    return undefined;
  }
}
