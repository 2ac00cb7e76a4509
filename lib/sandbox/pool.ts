/**
 * A bounded pool of warm sandbox Workers. Each run gets a Worker to itself; the host enforces the deadline
 * and cancellation from outside (shared stop flags for a busy script, a stop message and aborted host calls
 * for a waiting one) and kills a Worker that has not answered `hardKillGraceMs` later, because QuickJS
 * polls its interrupt handler only between interpreter steps and a native built-in can run for minutes.
 * A Worker whose WASM module failed is replaced too. Workers are created and killed by a spawner Worker,
 * so the host thread only ever passes messages.
 *
 * @module
 */
import type { EngineOutcome, HostReply, StopReason } from "./engine.ts";
import {
  encodeStopReason,
  type FromSandbox,
  type FromSpawner,
  STOP_FLAGS_BYTES,
  STOP_REASON,
  STOP_RUN_ID,
  type ToSandbox,
  type ToSpawner,
} from "./_protocol.ts";
import type { RunOptions, SandboxFailure, SandboxResult } from "./types.ts";

/** Workers kept by default. */
export const DEFAULT_POOL_SIZE = 2;
/** Time a stopped run gets to end by itself before its Worker is terminated, milliseconds. */
export const DEFAULT_HARD_KILL_GRACE_MS = 500;
/** Longest wait for a new Worker to load QuickJS, milliseconds. */
export const DEFAULT_SPAWN_TIMEOUT_MS = 30_000;

const DEFAULT_HEAP_HINT_BYTES = 64 * 1024 * 1024;

/** Options of {@link SandboxPool}. */
export interface SandboxPoolOptions {
  /** Most Workers alive at once, i.e. most runs in parallel; more runs wait in FIFO order. @default 2 */
  size?: number;
  /** Time a stopped (timed-out or cancelled) run gets before its Worker is killed, milliseconds. @default 500 */
  hardKillGraceMs?: number;
  /** Longest wait for a Worker to start, milliseconds. @default 30_000 */
  spawnTimeoutMs?: number;
  /** The Worker module; a seam for tests. @default `./worker.ts` next to this file */
  workerUrl?: URL | string;
}

/**
 * Runs scripts in QuickJS inside Workers that the host can kill. `run()` never throws. The constructor
 * starts the spawner Worker (its creation blocks the calling thread once, tens of milliseconds) and `size`
 * sandbox Workers in the background, so the first run finds them warm.
 *
 * @example
 * ```ts ignore
 * const pool = new SandboxPool();
 * const result = await pool.run({ script: "return await github.search({ q: 'x' })", namespaces: ["github"],
 *   limits: limitsFromConfig(config), hostCall: (req, signal) => catalog.call(req, signal) });
 * await pool.close();
 * ```
 */
export class SandboxPool {
  readonly #size: number;
  readonly #graceMs: number;
  readonly #spawnTimeoutMs: number;
  readonly #workerUrl: URL | string;
  readonly #slots = new Set<WorkerSlot>();
  readonly #idle: WorkerSlot[] = [];
  readonly #waiters: Array<{ grant(slot: WorkerSlot): void }> = [];
  readonly #sessions = new Set<RunSession>();
  #spawner: Spawner | undefined;
  #heapHintBytes = DEFAULT_HEAP_HINT_BYTES;
  #nextRunId = 1;
  #nextSlotId = 1;
  #closed = false;

  constructor(options: SandboxPoolOptions = {}) {
    this.#size = Math.max(1, Math.floor(options.size ?? DEFAULT_POOL_SIZE));
    this.#graceMs = Math.max(0, options.hardKillGraceMs ?? DEFAULT_HARD_KILL_GRACE_MS);
    this.#spawnTimeoutMs = options.spawnTimeoutMs ?? DEFAULT_SPAWN_TIMEOUT_MS;
    this.#workerUrl = options.workerUrl ?? new URL("./worker.ts", import.meta.url);
    for (let i = 0; i < this.#size; i++) this.#idle.push(this.#spawn());
  }

  /**
   * Runs one script in a Worker of its own.
   *
   * @param options Script, namespaces, limits, host-call seam and an optional cancel signal.
   * @returns The result; failures (timeout, memory, script error, tool-call limit, cancellation, a crashed
   *   Worker) are results too. Console output gathered before a failure is kept.
   */
  async run(options: RunOptions): Promise<SandboxResult> {
    const startedAt = performance.now();
    const fail = (failure: SandboxFailure): SandboxResult => ({
      ok: false,
      failure,
      console: [],
      consoleDropped: false,
      toolCalls: 0,
      durationMs: performance.now() - startedAt,
    });
    try {
      if (this.#closed) return fail({ error: "internal", message: "The sandbox pool is closed" });
      if (options.signal?.aborted) return fail({ error: "cancelled" });
      this.#heapHintBytes = options.limits.memoryLimitBytes;
      const slot = await this.#acquire(options.signal);
      if (slot === "cancelled") return fail({ error: "cancelled" });
      if (slot === "closed") return fail({ error: "internal", message: "The sandbox pool is closed" });
      const ready = await slot.ready;
      if (ready !== true || slot.isDead) {
        this.#retire(slot, false);
        return fail({ error: "internal", message: `Cannot start a sandbox worker: ${ready === true ? "it died" : ready}` });
      }
      if (options.signal?.aborted || this.#closed) {
        this.#release(slot);
        return fail(this.#closed ? { error: "internal", message: "The sandbox pool is closed" } : { error: "cancelled" });
      }
      const session = new RunSession(slot, this.#nextRunId++, options, this.#graceMs, startedAt);
      this.#sessions.add(session);
      const ended = await session.result;
      this.#sessions.delete(session);
      if (ended.slotUsable) this.#release(slot);
      else this.#retire(slot, true);
      return ended.result;
    } catch (error) {
      // A bug here must not take the meta-server down: report it as the run's failure.
      return fail({ error: "internal", message: error instanceof Error ? error.message : String(error) });
    }
  }

  /** Ends every run (as cancelled) and terminates every Worker. Runs still waiting get an internal failure. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const session of this.#sessions) session.abandon();
    for (const waiter of this.#waiters.splice(0)) waiter.grant(CLOSED_SLOT);
    for (const slot of this.#slots) slot.terminate();
    this.#slots.clear();
    this.#idle.length = 0;
    this.#spawner?.terminate();
    this.#spawner = undefined;
    await Promise.resolve();
  }

  #acquire(signal: AbortSignal | undefined): Promise<WorkerSlot | "cancelled" | "closed"> {
    // Prefer a Worker that is already warm.
    const readyIndex = this.#idle.findIndex((slot) => slot.isReady);
    const idle = readyIndex >= 0 ? this.#idle.splice(readyIndex, 1)[0] : this.#idle.shift();
    if (idle) return Promise.resolve(idle);
    if (this.#slots.size < this.#size) return Promise.resolve(this.#spawn());
    return new Promise((resolve) => {
      const waiter = {
        grant: (slot: WorkerSlot) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(slot === CLOSED_SLOT ? "closed" : slot);
        },
      };
      const onAbort = () => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        resolve("cancelled");
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  #release(slot: WorkerSlot): void {
    if (this.#closed) return slot.terminate();
    const waiter = this.#waiters.shift();
    if (waiter) waiter.grant(slot);
    else this.#idle.push(slot);
  }

  /** Drops a Worker; with `replace`, starts its successor now so the pool stays warm. */
  #retire(slot: WorkerSlot, replace: boolean): void {
    slot.terminate();
    this.#slots.delete(slot);
    const index = this.#idle.indexOf(slot);
    if (index >= 0) this.#idle.splice(index, 1);
    if (this.#closed) return;
    const waiter = this.#waiters.shift();
    if (waiter) waiter.grant(this.#spawn());
    else if (replace) this.#idle.push(this.#spawn());
  }

  #spawn(): WorkerSlot {
    if (!this.#spawner?.isAlive) {
      this.#spawner = new Spawner(this.#workerUrl, (slotId, message) => {
        for (const slot of this.#slots) if (slotId === undefined || slot.slotId === slotId) slot.died(message);
      });
    }
    const slot = new WorkerSlot(this.#spawner, this.#nextSlotId++, this.#heapHintBytes, this.#spawnTimeoutMs, (dead) => {
      // An idle Worker died (e.g. the spawner failed): replace it only if it had been warm, so that a Worker
      // that cannot start does not respawn in a loop.
      if (this.#idle.includes(dead)) this.#retire(dead, dead.wasReady);
    });
    this.#slots.add(slot);
    return slot;
  }
}

/** The Worker that creates and kills sandbox Workers, so the host thread never blocks in `new Worker()`. */
class Spawner {
  readonly #worker: Worker;
  #alive = true;

  /** @param onDied Called with a slot id when that sandbox died, or with `undefined` when all did. */
  constructor(url: URL | string, onDied: (slotId: number | undefined, message: string) => void) {
    this.#worker = new Worker(url, { type: "module" });
    this.#worker.onmessage = (event: MessageEvent<FromSpawner>) => onDied(event.data.slotId, event.data.message);
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
class WorkerSlot {
  readonly slotId: number;
  readonly stopFlags = new Int32Array(new SharedArrayBuffer(STOP_FLAGS_BYTES));
  /** `true` once the Worker loaded QuickJS, else why it could not. */
  readonly ready: Promise<true | string>;
  session: RunSession | undefined;
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

const CLOSED_SLOT = Symbol("closed") as unknown as WorkerSlot;

/** One run on one Worker: deadline, cancellation, host calls, console, and the kill if the Worker hangs. */
class RunSession {
  readonly result: Promise<{ result: SandboxResult; slotUsable: boolean }>;
  readonly #slot: WorkerSlot;
  readonly #runId: number;
  readonly #options: RunOptions;
  readonly #graceMs: number;
  readonly #startedAt: number;
  readonly #calls = new AbortController();
  readonly #console: string[] = [];
  #consoleDropped = false;
  #toolCalls = 0;
  #stopping: StopReason | undefined;
  #finished = false;
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  #killTimer: ReturnType<typeof setTimeout> | undefined;
  #resolve: (value: { result: SandboxResult; slotUsable: boolean }) => void = () => {};
  readonly #onAbort = () => this.#stop("cancelled");

  constructor(slot: WorkerSlot, runId: number, options: RunOptions, graceMs: number, startedAt: number) {
    this.#slot = slot;
    this.#runId = runId;
    this.#options = options;
    this.#graceMs = graceMs;
    this.#startedAt = startedAt;
    this.result = new Promise((resolve) => this.#resolve = resolve);
    slot.session = this;
    const { script, namespaces, limits } = options;
    slot.post({ type: "run", runId, script, namespaces, limits });
    this.#deadlineTimer = setTimeout(() => this.#stop("timeout"), limits.timeoutMs);
    options.signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  receive(message: FromSandbox): void {
    if (this.#finished || !("runId" in message) || message.runId !== this.#runId) return;
    switch (message.type) {
      case "call":
        this.#call(message.callId, message.namespace, message.key, message.argsJson);
        break;
      case "console":
        this.#console.push(message.line);
        break;
      case "consoleDropped":
        this.#consoleDropped = true;
        break;
      case "done":
        this.#finishWith(message.outcome);
        break;
    }
  }

  /** The Worker died or cannot run: the run fails and the Worker is replaced. */
  crash(reason: string): void {
    if (this.#finished) return;
    const failure: SandboxFailure = this.#stopping
      ? this.#stopFailure(this.#stopping)
      : { error: "internal", message: `The sandbox worker failed: ${reason}` };
    this.#end(failure, false);
  }

  /** The pool is closing: end now as cancelled. */
  abandon(): void {
    if (!this.#finished) this.#end({ error: "cancelled" }, false);
  }

  #call(callId: number, namespace: string, key: string, argsJson: string | undefined): void {
    this.#toolCalls++;
    const reply = (value: HostReply) => {
      if (!this.#finished) this.#slot.post({ type: "reply", runId: this.#runId, callId, reply: value });
    };
    let args: unknown;
    try {
      args = argsJson === undefined ? undefined : JSON.parse(argsJson);
    } catch (error) {
      return reply({ ok: false, message: `Cannot read the tool arguments: ${messageOf(error)}` });
    }
    const signal = this.#calls.signal;
    Promise.resolve()
      .then(() => this.#options.hostCall({ namespace, key, args }, signal))
      .then((value) => {
        let json: string | undefined;
        try {
          json = value === undefined ? undefined : JSON.stringify(value);
        } catch (error) {
          return reply({ ok: false, message: `The tool result cannot be represented as JSON: ${messageOf(error)}` });
        }
        reply({ ok: true, json });
      }, (error: unknown) => reply({ ok: false, message: messageOf(error) }));
  }

  #stop(reason: StopReason): void {
    if (this.#finished || this.#stopping) return;
    this.#stopping = reason;
    // The flags reach a script that is busy (polled by QuickJS's interrupt handler); the message and the
    // aborted host calls reach one that waits on a promise.
    Atomics.store(this.#slot.stopFlags, STOP_REASON, encodeStopReason(reason));
    Atomics.store(this.#slot.stopFlags, STOP_RUN_ID, this.#runId);
    this.#slot.post({ type: "stop", runId: this.#runId, reason });
    this.#calls.abort(reason);
    this.#killTimer = setTimeout(() => {
      if (this.#stopping) this.#end(this.#stopFailure(this.#stopping), false);
    }, this.#graceMs);
  }

  #finishWith(outcome: EngineOutcome): void {
    if (outcome.ok) {
      this.#resolveWith({
        ok: true,
        valueJson: outcome.valueJson,
        originalBytes: outcome.originalBytes,
        truncated: outcome.truncated,
        ...this.#common(),
      }, !outcome.poisoned);
      return;
    }
    const { failure } = outcome;
    const stoppedByWorker = failure.error === "script_timeout" || failure.error === "cancelled";
    // The host's reason wins when both ends stopped the run (e.g. cancelled just as the deadline passed).
    this.#end(stoppedByWorker && this.#stopping ? this.#stopFailure(this.#stopping) : failure, !outcome.poisoned);
  }

  #stopFailure(reason: StopReason): SandboxFailure {
    return reason === "timeout"
      ? { error: "script_timeout", limit_secs: this.#options.limits.timeoutMs / 1000 }
      : { error: "cancelled" };
  }

  #end(failure: SandboxFailure, slotUsable: boolean): void {
    this.#resolveWith({ ok: false, failure, ...this.#common() }, slotUsable);
  }

  #common() {
    return {
      console: this.#console,
      consoleDropped: this.#consoleDropped,
      toolCalls: this.#toolCalls,
      durationMs: performance.now() - this.#startedAt,
    };
  }

  #resolveWith(result: SandboxResult, slotUsable: boolean): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#deadlineTimer);
    clearTimeout(this.#killTimer);
    this.#options.signal?.removeEventListener("abort", this.#onAbort);
    // Calls still pending when the script ended are abandoned: tell their owners.
    this.#calls.abort("finished");
    if (this.#slot.session === this) this.#slot.session = undefined;
    this.#resolve({ result, slotUsable });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
