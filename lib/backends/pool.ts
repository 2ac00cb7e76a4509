/**
 * The running backing servers of a session: each one started on first use (never before),
 * reused afterwards, and restarted on the next use after a crash or a failed start, with backoff
 * (1 s doubling to 60 s) and at most `max-server-restarts` attempts. A call lost to a crash is
 * never repeated here: the caller gets the error, the next use starts a fresh server.
 *
 * Transport-neutral: a {@link ConnectFn} per transport turns a spec into a connection
 * (`connectStdio` by default; `http.ts` plugs in the same way).
 *
 * @module
 */
import { type ServerSpec, spawnKey } from "../plugins/mod.ts";
import { type Logger, NULL_LOGGER } from "../log.ts";
import {
  type BackendConnection,
  BackendError,
  type BackendPeer,
  closedDuringProbe,
  type ProtocolEra,
  type Root,
} from "./connection.ts";
import { type ConnectContext, connectStdio } from "./stdio.ts";

export type { ConnectContext };

/** Time, as the pool sees it (a seam for tests). */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: `Date.now` and `setTimeout`. */
export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};

/** Turns a spec into a live connection (one per transport kind). */
export type ConnectFn = (spec: ServerSpec, ctx: ConnectContext) => Promise<BackendConnection>;

/** First restart delay, in ms. */
export const BASE_BACKOFF_MS = 1_000;
/** Longest restart delay, in ms. */
export const MAX_BACKOFF_MS = 60_000;
/**
 * Most calls in flight at once per backing server (`[mcp] max-calls-in-flight-per-server`); more wait
 * their turn in order, so a slow server is never flooded while 20 parallel 1 s calls take one round.
 */
export const MAX_CALLS_IN_FLIGHT_PER_SERVER = 32;

/**
 * The default connector: stdio specs spawn a child; http specs are refused until the http
 * backend registers itself through {@link PoolOptions.connect}.
 */
export const connectBySpec: ConnectFn = (spec, ctx) => {
  if (spec.transport === "stdio") return connectStdio(spec, ctx);
  return Promise.reject(
    new BackendError(
      "START_FAILED",
      spec.name,
      `${spec.name} failed to start: remote servers are not supported yet`,
    ),
  );
};

/** Options of {@link ServerPool}. */
export interface PoolOptions {
  /** Connector. @default connectBySpec */
  connect?: ConnectFn | undefined;
  /** Restart attempts before a server is given up for the session. @default 5 */
  maxRestarts?: number | undefined;
  /** A connection that lived this long resets the failure count when it breaks, in ms. @default 300_000 */
  restartStableResetMs?: number | undefined;
  /** Grace for a server to exit on shutdown before it is killed, in ms. @default 5_000 */
  shutdownGraceMs?: number | undefined;
  /** @default SYSTEM_CLOCK */
  clock?: Clock | undefined;
  /** @default NULL_LOGGER */
  logger?: Logger | undefined;
  /** Roots announced to a server. Default: no roots capability. */
  roots?: ((spec: ServerSpec) => Root[]) | undefined;
  /** Called when a running server says its tool list changed. */
  onToolListChanged?: ((spec: ServerSpec) => void) | undefined;
  /** The agent-side relays offered to a server at its start (read at every start). Default: none. */
  peer?: ((spec: ServerSpec) => BackendPeer | undefined) | undefined;
  /**
   * The era the server spoke last time (e.g. from the tool cache), read at every start: a `"legacy"`
   * verdict skips the `server/discover` probe; when that start then fails, the server is started again
   * with a probe (the server may have moved to the modern era). Default: always probe.
   */
  priorEra?: ((spec: ServerSpec) => Promise<ProtocolEra | undefined>) | undefined;
  /** Called after each successful start (e.g. to refresh the tool cache). */
  onStarted?: ((spec: ServerSpec, connection: BackendConnection) => void) | undefined;
  /** Most calls in flight per server; more wait in FIFO order. @default MAX_CALLS_IN_FLIGHT_PER_SERVER */
  maxCallsInFlight?: number | undefined;
}

/** The pool settings `[mcp]` controls; {@link ServerPool.configure} changes them mid-session. */
export type PoolLimits = Pick<
  PoolOptions,
  "maxRestarts" | "restartStableResetMs" | "shutdownGraceMs" | "maxCallsInFlight"
>;

/** What a server is doing, for `list_tools` Problems and `status`. */
export interface ServerState {
  status: "idle" | "starting" | "running" | "backoff" | "failed";
  /** Consecutive failures (failed starts and crashes) counted toward the restart limit. */
  failures: number;
  /** Successful starts in this session. */
  starts: number;
  /** The last failure's message (includes the stderr tail for stdio servers). */
  lastError?: string | undefined;
  /** When the next start may happen, ms since the epoch (status `backoff`). */
  nextAttemptAtMs?: number | undefined;
}

interface Supervisor {
  spec: ServerSpec;
  key: string;
  connection?: BackendConnection | undefined;
  starting?: Promise<BackendConnection> | undefined;
  /** Aborts the start in progress when the server is stopped (shutdown, no longer applicable). */
  startAbort?: AbortController | undefined;
  failures: number;
  starts: number;
  isFailed: boolean;
  lastError?: BackendError | undefined;
  nextAttemptAtMs: number;
  logger: Logger;
  /** Calls holding a slot now. */
  callsInFlight: number;
  /** Calls waiting for a slot, oldest first. */
  callQueue: (() => void)[];
}

/** Options of {@link ServerPool.acquire}. */
export interface AcquireOptions {
  /** Aborts a wait or a start. */
  signal?: AbortSignal | undefined;
  /**
   * Wait out a restart backoff (`true`, for calls) or fail at once with `RESTART_PENDING`
   * (`false`, for listings). @default true
   */
  waitForRestart?: boolean | undefined;
}

/** The session's backing servers, keyed by {@link spawnKey}. */
export class ServerPool {
  readonly #connect: ConnectFn;
  #maxRestarts: number;
  #stableResetMs: number;
  #graceMs: number;
  #maxCallsInFlight: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #options: PoolOptions;
  readonly #supervisors = new Map<string, Supervisor>();
  readonly #keys = new WeakMap<ServerSpec, string>(); // a spec never changes; every call needs its key
  #closed = false;

  constructor(options: PoolOptions = {}) {
    this.#options = options;
    this.#connect = options.connect ?? connectBySpec;
    this.#maxRestarts = options.maxRestarts ?? 5;
    this.#stableResetMs = options.restartStableResetMs ?? 300_000;
    this.#graceMs = options.shutdownGraceMs ?? 5_000;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#logger = options.logger ?? NULL_LOGGER;
    this.#maxCallsInFlight = Math.max(1, options.maxCallsInFlight ?? MAX_CALLS_IN_FLIGHT_PER_SERVER);
  }

  /**
   * Applies new restart, shutdown and call-bound settings (after `config.toml` changed); unset fields
   * stay. A raised call bound starts waiting calls at once; a lowered one lets calls in flight finish.
   */
  configure(limits: PoolLimits): void {
    this.#maxRestarts = limits.maxRestarts ?? this.#maxRestarts;
    this.#stableResetMs = limits.restartStableResetMs ?? this.#stableResetMs;
    this.#graceMs = limits.shutdownGraceMs ?? this.#graceMs;
    this.#maxCallsInFlight = Math.max(1, limits.maxCallsInFlight ?? this.#maxCallsInFlight);
    for (const sup of this.#supervisors.values()) {
      while (sup.callsInFlight < this.#maxCallsInFlight && sup.callQueue.length > 0) {
        sup.callsInFlight++;
        sup.callQueue.shift()!();
      }
    }
  }

  #keyOf(spec: ServerSpec): string {
    return this.#keys.get(spec) ?? this.#keys.set(spec, spawnKey(spec)).get(spec)!;
  }

  #supervisor(spec: ServerSpec): Supervisor {
    const key = this.#keyOf(spec);
    let sup = this.#supervisors.get(key);
    if (!sup) {
      sup = {
        spec,
        key,
        failures: 0,
        starts: 0,
        isFailed: false,
        nextAttemptAtMs: 0,
        logger: this.#logger.child(spec.name),
        callsInFlight: 0,
        callQueue: [],
      };
      this.#supervisors.set(key, sup);
    } else sup.spec = spec; // same process identity; timeouts and filters may have changed
    return sup;
  }

  /**
   * The running connection for `spec`, starting it when needed. Concurrent callers share one start.
   *
   * @throws {BackendError} `START_FAILED`/`STARTUP_TIMEOUT` (this start failed), `SERVER_FAILED`
   *   (failed more than `maxRestarts` times), `RESTART_PENDING` (in backoff and
   *   `waitForRestart: false`), `CANCELLED`.
   */
  async acquire(spec: ServerSpec, options: AcquireOptions = {}): Promise<BackendConnection> {
    if (this.#closed) {
      throw new BackendError("CANCELLED", spec.name, `${spec.name}: the session is shutting down`);
    }
    const sup = this.#supervisor(spec);
    if (sup.connection && !sup.connection.isClosed) return sup.connection;
    if (sup.starting) return await sup.starting;
    if (sup.isFailed) {
      throw new BackendError(
        "SERVER_FAILED",
        spec.name,
        `${spec.name} failed ${sup.failures} times and is not restarted in this session: ${
          sup.lastError?.message ?? "unknown error"
        }`,
        { cause: sup.lastError },
      );
    }
    const waitMs = sup.nextAttemptAtMs - this.#clock.now();
    if (waitMs > 0) {
      if (options.waitForRestart === false) {
        throw new BackendError(
          "RESTART_PENDING",
          spec.name,
          `${spec.name} restarts in ${Math.ceil(waitMs / 1000)}s after: ${
            sup.lastError?.message ?? "a failure"
          }`,
          { cause: sup.lastError },
        );
      }
      sup.logger.info(`waiting ${waitMs} ms before restarting`);
      try {
        await this.#clock.sleep(waitMs, options.signal);
      } catch (error) {
        throw new BackendError("CANCELLED", spec.name, `${spec.name}: start cancelled`, { cause: error });
      }
      return await this.acquire(spec, options); // state may have changed while we slept
    }
    const startAbort = new AbortController();
    sup.startAbort = startAbort;
    const signal = options.signal ? AbortSignal.any([options.signal, startAbort.signal]) : startAbort.signal;
    sup.starting = this.#start(sup, signal);
    try {
      return await sup.starting;
    } finally {
      sup.starting = undefined;
      sup.startAbort = undefined;
    }
  }

  /**
   * Runs `call` once one of `spec`'s call slots is free: at most `maxCallsInFlight` calls per server
   * run at once, the others wait in the order they asked. The slot is released when `call` settles.
   *
   * @param call The work done while holding the slot (typically acquire, then `callTool`).
   * @param options.signal Aborts the wait: the call leaves the queue and is never run.
   * @returns What `call` returned.
   * @throws {BackendError} `CANCELLED` when `signal` aborts while waiting; whatever `call` throws.
   */
  async withCallSlot<T>(
    spec: ServerSpec,
    call: () => Promise<T>,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<T> {
    const sup = this.#supervisor(spec);
    const waiting = this.#takeSlot(sup, options.signal);
    if (waiting) await waiting; // a free slot is taken at once, not a turn of the event loop later
    try {
      return await call();
    } finally {
      // The slot passes straight to the oldest waiter, unless a lowered bound leaves no room for it.
      const next = sup.callsInFlight <= this.#maxCallsInFlight ? sup.callQueue.shift() : undefined;
      if (next) next();
      else sup.callsInFlight--;
    }
  }

  #takeSlot(sup: Supervisor, signal: AbortSignal | undefined): Promise<void> | undefined {
    const cancelled = () =>
      new BackendError("CANCELLED", sup.spec.name, `${sup.spec.name}: call cancelled`, {
        cause: signal?.reason,
      });
    if (signal?.aborted) return Promise.reject(cancelled());
    if (sup.callsInFlight < this.#maxCallsInFlight) {
      sup.callsInFlight++;
      return undefined;
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        const index = sup.callQueue.indexOf(grant);
        if (index >= 0) sup.callQueue.splice(index, 1);
        reject(cancelled());
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      sup.callQueue.push(grant);
    });
  }

  /** Calls of `spec` holding a slot and waiting for one (see {@link withCallSlot}). */
  callLoad(spec: ServerSpec): { inFlight: number; queued: number } {
    const sup = this.#supervisors.get(this.#keyOf(spec));
    return { inFlight: sup?.callsInFlight ?? 0, queued: sup?.callQueue.length ?? 0 };
  }

  async #start(sup: Supervisor, signal: AbortSignal | undefined): Promise<BackendConnection> {
    const spec = sup.spec;
    sup.logger.info(`starting (attempt ${sup.failures + 1})`);
    let connection: BackendConnection;
    try {
      const ctx: ConnectContext = {
        roots: this.#options.roots ? () => this.#options.roots!(sup.spec) : undefined,
        onToolListChanged: () => this.#options.onToolListChanged?.(sup.spec),
        peer: this.#options.peer?.(spec),
        shutdownGraceMs: this.#graceMs,
        // Awaited only when there is a source: a start otherwise begins in this turn, as it always did.
        priorEra: this.#options.priorEra
          ? await this.#options.priorEra(spec).catch(() => undefined)
          : undefined,
        signal,
        logger: sup.logger,
        now: () => this.#clock.now(),
      };
      connection = await this.#connect(spec, ctx).catch((error) => {
        if (!(error instanceof BackendError) || error.code !== "START_FAILED" || signal?.aborted) throw error;
        if (ctx.priorEra === "legacy") {
          // The cached assumption failed: probe (a modern-only server refuses `initialize`).
          sup.logger.info(`start as a legacy server failed (${error.message}); probing its era`);
          return this.#connect(spec, { ...ctx, priorEra: undefined });
        }
        if (ctx.priorEra === undefined && spec.transport === "stdio" && closedDuringProbe(error)) {
          // Some legacy stdio servers exit on any request before `initialize`, the probe included: start
          // it once more as a legacy server (no probe) before counting the start as failed.
          sup.logger.info(`start with the server/discover probe failed (${error.message}); trying legacy`);
          return this.#connect(spec, { ...ctx, priorEra: "legacy" });
        }
        throw error;
      });
    } catch (error) {
      const err = error instanceof BackendError
        ? error
        : new BackendError("START_FAILED", spec.name, `${spec.name} failed to start: ${String(error)}`, {
          cause: error,
        });
      if (err.code === "NEEDS_SIGN_IN") {
        // Not a crash: the user signs in with `mcp login` in a terminal, and the next use tries again
        // with the new credentials, without a backoff wait and without spending the restart budget.
        sup.lastError = err;
      } else if (err.code !== "CANCELLED") this.#recordFailure(sup, err);
      throw err;
    }
    if (this.#closed || this.#supervisors.get(sup.key) !== sup) {
      await connection.close();
      throw new BackendError("CANCELLED", spec.name, `${spec.name}: the server was stopped while starting`);
    }
    sup.connection = connection;
    sup.starts++;
    void connection.ended.then((end) => {
      if (sup.connection !== connection) return;
      sup.connection = undefined;
      if (end.isExpected) return;
      const livedMs = this.#clock.now() - connection.connectedAtMs;
      if (livedMs >= this.#stableResetMs) sup.failures = 0;
      this.#recordFailure(
        sup,
        new BackendError("CONNECTION_LOST", spec.name, `${spec.name} stopped: ${end.reason}`),
      );
    });
    this.#options.onStarted?.(spec, connection);
    return connection;
  }

  #recordFailure(sup: Supervisor, error: BackendError): void {
    sup.failures++;
    sup.lastError = error;
    if (sup.failures > this.#maxRestarts) {
      sup.isFailed = true;
      sup.logger.error(`giving up after ${sup.failures} failures: ${error.message}`);
      return;
    }
    const delayMs = Math.min(BASE_BACKOFF_MS * 2 ** (sup.failures - 1), MAX_BACKOFF_MS);
    sup.nextAttemptAtMs = this.#clock.now() + delayMs;
    sup.logger.warn(`${error.message} (restart allowed in ${delayMs} ms)`);
  }

  /** The state of `spec`'s server (`idle` when it was never used). */
  state(spec: ServerSpec): ServerState {
    const sup = this.#supervisors.get(this.#keyOf(spec));
    if (!sup) return { status: "idle", failures: 0, starts: 0 };
    const base = { failures: sup.failures, starts: sup.starts, lastError: sup.lastError?.message };
    if (sup.isFailed) return { status: "failed", ...base };
    if (sup.connection && !sup.connection.isClosed) return { status: "running", ...base };
    if (sup.starting) return { status: "starting", ...base };
    if (sup.nextAttemptAtMs > this.#clock.now()) {
      return { status: "backoff", ...base, nextAttemptAtMs: sup.nextAttemptAtMs };
    }
    return { status: "idle", ...base };
  }

  /** The running connection of `spec`, if any (never starts anything). */
  running(spec: ServerSpec): BackendConnection | undefined {
    const conn = this.#supervisors.get(this.#keyOf(spec))?.connection;
    return conn && !conn.isClosed ? conn : undefined;
  }

  /** Names of the servers running now. */
  runningNames(): string[] {
    return [...this.#supervisors.values()].filter((s) => s.connection && !s.connection.isClosed).map((s) =>
      s.spec.name
    );
  }

  /**
   * Keeps only the servers whose spawn key is in `keep` (carry-over across re-resolution) and
   * shuts down the others.
   */
  async retain(keep: ReadonlySet<string>): Promise<void> {
    const dropped = [...this.#supervisors.values()].filter((s) => !keep.has(s.key));
    for (const sup of dropped) this.#supervisors.delete(sup.key);
    await Promise.all(dropped.map((sup) => this.#stop(sup)));
  }

  async #stop(sup: Supervisor): Promise<void> {
    // A server still starting (e.g. hung before `initialize`) is not waited for: its start is aborted,
    // which ends its process, so shutdown never waits out a startup timeout.
    sup.startAbort?.abort(new Error("the server is being shut down"));
    const starting = sup.starting;
    if (starting) await starting.catch(() => {}); // its own caller reports a start failure
    const conn = sup.connection;
    sup.connection = undefined;
    if (conn) {
      sup.logger.info("shutting down");
      await conn.close();
    }
  }

  /** Shuts every server down (graceful, then killed after the grace). Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#supervisors.values()];
    this.#supervisors.clear();
    await Promise.all(all.map((sup) => this.#stop(sup)));
  }
}
