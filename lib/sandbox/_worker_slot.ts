/**
 * The Workers behind `SandboxPool`: the spawner that creates and kills sandbox Workers off the host thread,
 * and one slot per sandbox Worker (its port, stop flags, start state and current run).
 *
 * @module
 */
import {
  type FromSandbox,
  type FromSpawner,
  STOP_FLAGS_BYTES,
  type ToSandbox,
  type ToSpawner,
} from "./_protocol.ts";

/** The run a slot is serving, as the slot sees it (`RunSession` implements it). */
export interface SlotSession {
  /** Handles a message of the run from the sandbox Worker. */
  receive(message: FromSandbox): void;
  /** Fails the run: the Worker died (`reason` says how). */
  crash(reason: string): void;
}

/** The Worker that creates and kills sandbox Workers, so the host thread never blocks in `new Worker()`. */
export class Spawner {
  readonly #worker: Worker;
  #alive = true;

  /** @param onDied Called with a slot id when that sandbox died, or with `undefined` when all did. */
  constructor(url: URL | string, onDied: (slotId: number | undefined, message: string) => void) {
    this.#worker = new Worker(url, { type: "module" });
    this.#worker.onmessage = (event: MessageEvent<FromSpawner>) =>
      onDied(event.data.slotId, event.data.message);
    this.#worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.terminate();
      onDied(undefined, `the sandbox spawner failed: ${event.message}`);
    };
    this.post({ type: "spawner" });
  }

  get isAlive(): boolean {
    return this.#alive;
  }

  post(message: ToSpawner, transfer: Transferable[] = []): void {
    if (this.#alive) this.#worker.postMessage(message, transfer);
  }

  terminate(): void {
    if (!this.#alive) return;
    this.#alive = false;
    this.#worker.terminate();
  }
}

/** One sandbox Worker: its port, its stop flags and the run it is serving. */
export class WorkerSlot {
  readonly slotId: number;
  readonly stopFlags = new Int32Array(new SharedArrayBuffer(STOP_FLAGS_BYTES));
  /** `true` once the Worker loaded QuickJS, else why it could not. */
  readonly ready: Promise<true | string>;
  session: SlotSession | undefined;
  isReady = false;
  wasReady = false;
  isDead = false;
  readonly #spawner: Spawner;
  readonly #onDead: (slot: WorkerSlot) => void;
  readonly #port: MessagePort;
  readonly #finishSpawn: (value: true | string) => void;
  #terminated = false;

  constructor(
    spawner: Spawner,
    slotId: number,
    heapHintBytes: number,
    spawnTimeoutMs: number,
    onDead: (slot: WorkerSlot) => void,
  ) {
    this.slotId = slotId;
    this.#spawner = spawner;
    this.#onDead = onDead;
    const channel = new MessageChannel();
    this.#port = channel.port1;
    let settleReady: (value: true | string) => void = () => {};
    this.ready = new Promise((resolve) => settleReady = resolve);
    const spawnTimer = setTimeout(() => this.died(`no answer within ${spawnTimeoutMs} ms`), spawnTimeoutMs);
    this.#finishSpawn = (value) => {
      clearTimeout(spawnTimer);
      this.isReady = value === true && !this.isDead;
      if (this.isReady) this.wasReady = true;
      settleReady(value);
    };
    this.#port.onmessage = (event: MessageEvent<FromSandbox>) => {
      const message = event.data;
      if (message.type === "ready") this.#finishSpawn(true);
      else if (message.type === "fatal") this.died(message.message);
      else this.session?.receive(message);
    };
    const init = {
      type: "init" as const,
      port: channel.port2,
      stopFlags: this.stopFlags.buffer as SharedArrayBuffer,
      heapLimitBytes: heapHintBytes,
    };
    spawner.post({ type: "spawn", slotId, init }, [channel.port2]);
  }

  post(message: ToSandbox): void {
    if (!this.#terminated) this.#port.postMessage(message);
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
    this.isDead = true;
    this.#finishSpawn("terminated");
    this.#spawner.post({ type: "kill", slotId: this.slotId });
    this.#port.close();
  }
}
