/**
 * A bounded pool of sandbox processes. Each run gets a process to itself; the host enforces the deadline
 * and cancellation from outside (a stop message and aborted host calls for a script that waits, the guest's
 * own deadline between interpreter steps for a busy one) and kills a process that has not answered
 * `hardKillGraceMs` later with SIGKILL, because QuickJS polls its interrupt handler only between
 * interpreter steps and a native built-in (`indexOf` on long strings, the default `sort`) can run for
 * hours. A killed process uses no CPU after the kill, whatever it was doing. A process whose WASM module
 * failed is replaced too.
 *
 * Processes are started off the request path: one at construction, a replacement only while no run is
 * going, a second one only when two runs overlap, and none after `idleRetireMs` without a run.
 *
 * @module
 */
import { RunSession } from "./_run_session.ts";
import { GuestProcess } from "./_guest_process.ts";
import { type GuestLaunch, guestLaunch } from "./guest_launch.ts";
import type { RunOptions, SandboxFailure, SandboxResult } from "../protocol/types.ts";

/** Most sandbox processes alive at once by default. */
export const DEFAULT_POOL_SIZE = 2;
/** Time a stopped run gets to end by itself before its process is killed, milliseconds. */
export const DEFAULT_HARD_KILL_GRACE_MS = 200;
/** Longest wait for a new sandbox process to load QuickJS, milliseconds. */
export const DEFAULT_SPAWN_TIMEOUT_MS = 30_000;
/** A process whose WASM memory grew past this is replaced after its run, bytes (16 MiB initial + 32 MiB). */
export const DEFAULT_RECYCLE_WASM_BYTES = 48 * 1024 * 1024;
/**
 * Time without any run after which every sandbox process is killed, milliseconds (30 s). The next run then
 * waits for a new one (about 0.2 s); an agent's scripts in one task come faster than that.
 */
export const DEFAULT_IDLE_RETIRE_MS = 30_000;

const DEFAULT_HEAP_HINT_BYTES = 64 * 1024 * 1024;

/** Options of {@link SandboxPool}. */
export interface SandboxPoolOptions {
  /** Most processes alive at once, i.e. most runs in parallel; more runs wait in FIFO order. @default 2 */
  size?: number;
  /** Time a stopped (timed-out or cancelled) run gets before its process is killed, milliseconds. @default 200 */
  hardKillGraceMs?: number;
  /** Longest wait for a process to start, milliseconds. @default 30_000 */
  spawnTimeoutMs?: number;
  /**
   * A process whose WASM memory (which never shrinks) grew past this during a run is replaced afterwards, so
   * one large run does not pin its memory for the life of the pool, bytes. @default 48 MiB
   */
  recycleWasmBytes?: number;
  /** Time without a run after which all processes are killed, milliseconds. @default 30_000 */
  idleRetireMs?: number;
  /**
   * How a guest is started, for a heap hint in bytes; a seam for tests (a guest that misbehaves).
   * @default `guestLaunch()`: this program's hidden `__sandbox-guest` subcommand, or `deno run` of
   * `guest/main.ts` from source
   */
  launch?: ((heapHintBytes: number) => GuestLaunch) | undefined;
  /** Receives what guests write on stderr (bounded per process). @default written to this process's stderr */
  onGuestStderr?: ((text: string) => void) | undefined;
}

/**
 * Runs scripts in QuickJS inside child processes that the host can always kill. `run()` never throws. The
 * constructor starts one process (a fork and exec on this thread, about a millisecond), which loads QuickJS
 * on its own, so the first run finds it warm.
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
  readonly #launch: (heapHintBytes: number) => GuestLaunch;
  readonly #onGuestStderr: (text: string) => void;
  readonly #slots = new Set<GuestProcess>();
  readonly #idle: GuestProcess[] = [];
  readonly #waiters: Array<{ grant(slot: GuestProcess): void }> = [];
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
    this.#launch = options.launch ?? ((heapLimitBytes) => guestLaunch({ heapLimitBytes }));
    this.#onGuestStderr = options.onGuestStderr ?? ((text) => console.error(text.trimEnd()));
    this.#idle.push(this.#spawn());
    this.#armIdleTimer();
  }

  /** Sandbox processes alive now (starting, idle or running), for tests and status. */
  get processCount(): number {
    return this.#slots.size;
  }

  /**
   * Runs one script in a sandbox process of its own.
   *
   * @param options Script, namespaces, limits, host-call seam and an optional cancel signal.
   * @returns The result; failures (timeout, memory, script error, tool-call limit, cancellation, a crashed
   *   or killed process) are results too. Console output gathered before a failure is kept.
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
      const { timeoutMs } = options.limits;
      // The whole limit spent waiting for a process: say so, or it reads as a script that ran too long.
      const neverRan = (): SandboxResult =>
        fail({
          error: "script_timeout",
          limit_secs: timeoutMs / 1000,
          never_ran: true,
          message:
            `The script waited all of its ${
              timeoutMs / 1000
            } s for a free sandbox process (all ${this.#size} ` +
            `were running other scripts) and never ran`,
        });
      const slot = await this.#acquire(options.signal, timeoutMs);
      const queuedUntil = performance.now();
      if (slot === "timeout") return neverRan();
      if (slot === "cancelled" || slot === "closed") return fail({ error: "cancelled" });
      const ready = await slot.ready;
      if (this.#closed) return fail({ error: "cancelled" });
      if (ready !== true || slot.isDead) {
        this.#retire(slot, false);
        return fail({
          error: "internal",
          message: `Cannot start a sandbox process: ${ready === true ? "it died" : ready}`,
        });
      }
      if (options.signal?.aborted) {
        this.#release(slot);
        return fail({ error: "cancelled" });
      }
      // The wait for a free process counts toward the deadline (a process still starting does not: that is
      // the sandbox's own cost, tens to hundreds of milliseconds).
      const leftMs = timeoutMs - (queuedUntil - startedAt);
      if (leftMs <= 0) {
        this.#release(slot);
        return neverRan();
      }
      const session = new RunSession(slot, this.#nextRunId++, options, {
        graceMs: this.#graceMs,
        startedAt,
        timeoutMs: leftMs,
      });
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
   * Kills every sandbox process. Runs in progress or waiting end as `cancelled`; later runs fail with an
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

  /**
   * A process for a run: a warm idle one, else one still starting, else a new one if the size allows, else
   * the next one released (FIFO), waiting at most `waitMs`.
   */
  #acquire(
    signal: AbortSignal | undefined,
    waitMs: number,
  ): Promise<GuestProcess | "cancelled" | "closed" | "timeout"> {
    const readyIndex = this.#idle.findIndex((slot) => slot.isReady);
    const idle = readyIndex >= 0 ? this.#idle.splice(readyIndex, 1)[0] : this.#idle.shift();
    if (idle) return Promise.resolve(idle);
    if (this.#slots.size < this.#size) return Promise.resolve(this.#spawn());
    return new Promise((resolve) => {
      const settle = (outcome: GuestProcess | "cancelled" | "closed" | "timeout") => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (typeof outcome === "string") {
          const index = this.#waiters.indexOf(waiter);
          if (index >= 0) this.#waiters.splice(index, 1);
        }
        resolve(outcome);
      };
      const waiter = { grant: (slot: GuestProcess) => settle(slot === CLOSED_SLOT ? "closed" : slot) };
      const onAbort = () => settle("cancelled");
      const timer = setTimeout(() => settle("timeout"), waitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  #release(slot: GuestProcess): void {
    if (this.#closed) return slot.terminate();
    const waiter = this.#waiters.shift();
    if (waiter) waiter.grant(slot);
    else this.#idle.push(slot);
  }

  /**
   * Drops a process. A run waiting for one gets a new process at once; otherwise, with `replace`, the
   * successor is created once no run is going, so creating it never delays a run in progress.
   */
  #retire(slot: GuestProcess, replace: boolean): void {
    slot.terminate();
    this.#slots.delete(slot);
    const index = this.#idle.indexOf(slot);
    if (index >= 0) this.#idle.splice(index, 1);
    if (this.#closed) return;
    const waiter = this.#waiters.shift();
    if (waiter) waiter.grant(this.#spawn());
    else if (replace && this.#runsGoing === 0) this.#scheduleRefill();
  }

  /** Starts one process soon (a macrotask later) if none is idle and no run is going by then. */
  #scheduleRefill(): void {
    if (this.#refillTimer !== undefined) return;
    this.#refillTimer = setTimeout(() => {
      this.#refillTimer = undefined;
      if (this.#closed || this.#runsGoing > 0 || this.#idle.length > 0) return;
      if (this.#slots.size < this.#size) this.#idle.push(this.#spawn());
    }, 0);
  }

  /** After `idleRetireMs` without a run, kills every process (the next run starts one). */
  #armIdleTimer(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      if (this.#closed || this.#runsGoing > 0) return;
      for (const slot of [...this.#idle]) this.#retire(slot, false);
    }, this.#idleRetireMs);
    // An idle pool must not keep a process (or a test) alive.
    Deno.unrefTimer(this.#idleTimer);
  }

  #spawn(): GuestProcess {
    const slot = new GuestProcess(this.#launch(this.#heapHintBytes), {
      processId: this.#nextSlotId++,
      heapHintBytes: this.#heapHintBytes,
      spawnTimeoutMs: this.#spawnTimeoutMs,
      onStderr: this.#onGuestStderr,
      onDead: (dead) => {
        // An idle process died: replace it only if it had been warm, so that a guest that cannot start does
        // not respawn in a loop.
        if (this.#idle.includes(dead)) this.#retire(dead, dead.wasReady);
      },
    });
    this.#slots.add(slot);
    return slot;
  }
}

const CLOSED_SLOT = Symbol("closed") as unknown as GuestProcess;
