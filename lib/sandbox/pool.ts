/**
 * A bounded pool of sandbox Workers. Each run gets a Worker to itself; the host enforces the deadline and
 * cancellation from outside (shared stop flags for a busy script, a stop message and aborted host calls for
 * a waiting one) and kills a Worker that has not answered `hardKillGraceMs` later, because QuickJS polls its
 * interrupt handler only between interpreter steps and a native built-in can run for minutes. A Worker
 * whose WASM module failed is replaced too. Host-call replies reach a Worker whose script waits on them
 * through its reply channel (`_reply_channel.ts`, 256 KiB of shared memory per Worker), on which the Worker
 * blocks in `Atomics.wait` instead of idling in its event loop; a stop rings the channel's doorbell.
 *
 * Workers are created on the host thread (a Worker created inside another Worker starts about 1 s late on
 * Deno 2.9), which blocks it for the 15–40 ms a new isolate takes, so the pool does that off the request
 * path: one Worker at construction, a replacement only while no run is going, a second Worker only when
 * two runs overlap, and none after `idleRetireMs` without a run.
 *
 * @module
 */
import { RunSession } from "./_run_session.ts";
import { WorkerSlot } from "./_worker_slot.ts";
import type { RunOptions, SandboxFailure, SandboxResult } from "./types.ts";

/** Most Workers alive at once by default. */
export const DEFAULT_POOL_SIZE = 2;
/** Time a stopped run gets to end by itself before its Worker is terminated, milliseconds. */
export const DEFAULT_HARD_KILL_GRACE_MS = 500;
/** Longest wait for a new Worker to load QuickJS, milliseconds. */
export const DEFAULT_SPAWN_TIMEOUT_MS = 30_000;
/** A Worker whose WASM memory grew past this is replaced after its run, bytes (16 MiB initial + 32 MiB). */
export const DEFAULT_RECYCLE_WASM_BYTES = 48 * 1024 * 1024;
/**
 * Time without any run after which every Worker is terminated, milliseconds (30 s). The next run then waits
 * for a new Worker (about 0.1 s); an agent's scripts in one task come faster than that.
 */
export const DEFAULT_IDLE_RETIRE_MS = 30_000;

const DEFAULT_HEAP_HINT_BYTES = 64 * 1024 * 1024;

/** Options of {@link SandboxPool}. */
export interface SandboxPoolOptions {
  /** Most Workers alive at once, i.e. most runs in parallel; more runs wait in FIFO order. @default 2 */
  size?: number;
  /** Time a stopped (timed-out or cancelled) run gets before its Worker is killed, milliseconds. @default 500 */
  hardKillGraceMs?: number;
  /** Longest wait for a Worker to start, milliseconds. @default 30_000 */
  spawnTimeoutMs?: number;
  /**
   * A Worker whose WASM memory (which never shrinks) grew past this during a run is replaced afterwards, so
   * one large run does not pin its memory for the life of the pool, bytes. @default 48 MiB
   */
  recycleWasmBytes?: number;
  /** Time without a run after which all Workers are terminated, milliseconds. @default 30_000 */
  idleRetireMs?: number;
  /** The Worker module; a seam for tests. @default `./worker.ts` next to this file */
  workerUrl?: URL | string;
}

/**
 * Runs scripts in QuickJS inside Workers that the host can kill. `run()` never throws. The constructor
 * creates one Worker (blocking the calling thread for its isolate, tens of milliseconds), which loads
 * QuickJS in the background, so the first run finds it warm.
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
  readonly #recycleWasmBytes: number;
  readonly #idleRetireMs: number;
  readonly #workerUrl: URL | string;
  readonly #slots = new Set<WorkerSlot>();
  readonly #idle: WorkerSlot[] = [];
  readonly #waiters: Array<{ grant(slot: WorkerSlot): void }> = [];
  readonly #sessions = new Set<RunSession>();
  #heapHintBytes = DEFAULT_HEAP_HINT_BYTES;
  #nextRunId = 1;
  #nextSlotId = 1;
  #runsGoing = 0;
  #refillTimer: ReturnType<typeof setTimeout> | undefined;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(options: SandboxPoolOptions = {}) {
    this.#size = Math.max(1, Math.floor(options.size ?? DEFAULT_POOL_SIZE));
    this.#graceMs = Math.max(0, options.hardKillGraceMs ?? DEFAULT_HARD_KILL_GRACE_MS);
    this.#spawnTimeoutMs = options.spawnTimeoutMs ?? DEFAULT_SPAWN_TIMEOUT_MS;
    this.#recycleWasmBytes = options.recycleWasmBytes ?? DEFAULT_RECYCLE_WASM_BYTES;
    this.#idleRetireMs = Math.max(0, options.idleRetireMs ?? DEFAULT_IDLE_RETIRE_MS);
    this.#workerUrl = options.workerUrl ?? new URL("./worker.ts", import.meta.url);
    this.#idle.push(this.#spawn());
    this.#armIdleTimer();
  }

  /** Workers alive now (starting, idle or running), for tests and status. */
  get workerCount(): number {
    return this.#slots.size;
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
    this.#runsGoing++;
    clearTimeout(this.#idleTimer);
    try {
      if (this.#closed) return fail({ error: "internal", message: "The sandbox pool is closed" });
      if (options.signal?.aborted) return fail({ error: "cancelled" });
      this.#heapHintBytes = options.limits.memoryLimitBytes;
      const slot = await this.#acquire(options.signal);
      if (slot === "cancelled" || slot === "closed") return fail({ error: "cancelled" });
      const ready = await slot.ready;
      if (this.#closed) return fail({ error: "cancelled" });
      if (ready !== true || slot.isDead) {
        this.#retire(slot, false);
        return fail({
          error: "internal",
          message: `Cannot start a sandbox worker: ${ready === true ? "it died" : ready}`,
        });
      }
      if (options.signal?.aborted) {
        this.#release(slot);
        return fail({ error: "cancelled" });
      }
      const session = new RunSession(slot, this.#nextRunId++, options, this.#graceMs, startedAt);
      this.#sessions.add(session);
      const ended = await session.result;
      this.#sessions.delete(session);
      if (ended.slotUsable && (ended.wasmBytes ?? 0) <= this.#recycleWasmBytes) this.#release(slot);
      else this.#retire(slot, true);
      return ended.result;
    } catch (error) {
      // A bug here must not take the meta-server down: report it as the run's failure.
      return fail({ error: "internal", message: error instanceof Error ? error.message : String(error) });
    } finally {
      this.#runsGoing--;
      if (this.#runsGoing === 0 && !this.#closed) {
        this.#scheduleRefill();
        this.#armIdleTimer();
      }
    }
  }

  /**
   * Terminates every Worker. Runs in progress or waiting end as `cancelled`; later runs fail with an
   * `internal` "The sandbox pool is closed".
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#refillTimer);
    clearTimeout(this.#idleTimer);
    for (const session of this.#sessions) session.abandon();
    for (const waiter of this.#waiters.splice(0)) waiter.grant(CLOSED_SLOT);
    for (const slot of this.#slots) slot.terminate();
    this.#slots.clear();
    this.#idle.length = 0;
    await Promise.resolve();
  }

  #acquire(signal: AbortSignal | undefined): Promise<WorkerSlot | "cancelled" | "closed"> {
    // Prefer a Worker that is already warm, then one still starting, then a new one if the size allows.
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

  /**
   * Drops a Worker. A run waiting for one gets a new Worker at once; otherwise, with `replace`, the
   * successor is created once no run is going, so creating it never delays a run in progress.
   */
  #retire(slot: WorkerSlot, replace: boolean): void {
    slot.terminate();
    this.#slots.delete(slot);
    const index = this.#idle.indexOf(slot);
    if (index >= 0) this.#idle.splice(index, 1);
    if (this.#closed) return;
    const waiter = this.#waiters.shift();
    if (waiter) waiter.grant(this.#spawn());
    else if (replace && this.#runsGoing === 0) this.#scheduleRefill();
  }

  /** Creates one Worker soon (a macrotask later) if none is idle and no run is going by then. */
  #scheduleRefill(): void {
    if (this.#refillTimer !== undefined) return;
    this.#refillTimer = setTimeout(() => {
      this.#refillTimer = undefined;
      if (this.#closed || this.#runsGoing > 0 || this.#idle.length > 0) return;
      if (this.#slots.size < this.#size) this.#idle.push(this.#spawn());
    }, 0);
  }

  /** After `idleRetireMs` without a run, terminates every Worker (the next run creates one). */
  #armIdleTimer(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      if (this.#closed || this.#runsGoing > 0) return;
      for (const slot of [...this.#idle]) this.#retire(slot, false);
    }, this.#idleRetireMs);
    // An idle pool must not keep a process (or a test) alive.
    Deno.unrefTimer(this.#idleTimer);
  }

  #spawn(): WorkerSlot {
    const slot = new WorkerSlot(
      this.#workerUrl,
      this.#nextSlotId++,
      this.#heapHintBytes,
      this.#spawnTimeoutMs,
      (dead) => {
        // An idle Worker died: replace it only if it had been warm, so that a Worker that cannot start does
        // not respawn in a loop.
        if (this.#idle.includes(dead)) this.#retire(dead, dead.wasReady);
      },
    );
    this.#slots.add(slot);
    return slot;
  }
}

const CLOSED_SLOT = Symbol("closed") as unknown as WorkerSlot;
