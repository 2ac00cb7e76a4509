/**
 * A backing server's whole process tree, including descendants that left its process group
 * (`setsid`, a daemonizing double fork). While servers run, the process table is read on one schedule
 * shared by every stdio server of this process ({@link DescendantScanSchedule}: one `ps` per read, each
 * server's tracker walks its own tree in it) and each descendant is recorded with its start time, so
 * that at shutdown the ones still alive are signalled even after their parent exited and they were
 * reparented, and a recycled pid is never signalled.
 *
 * When the table is read: {@link DESCENDANT_SCAN_INTERVAL_MS} (2 s) after activity (a server started, a
 * message sent to or received from any server, a read that found a descendant appear or end), within
 * {@link SCAN_ON_ACTIVITY_MS} of a server writing to stderr (a fresh read; while the reads it prompts find
 * nothing new, the spacing doubles up to 2 s, so a server that logs to stderr all the time costs one read
 * per 2 s, not four a second), and while nothing happens at
 * an interval that doubles after each quiet read up to {@link MAX_DESCENDANT_SCAN_INTERVAL_MS} (30 s); no
 * timer at all while no stdio server runs. At shutdown, and when a server exits, the table is read fresh
 * before each signal, whatever the schedule, and what appeared under the recorded descendants since the
 * last read is recorded and signalled too (under the server as well while it lives; once it is reaped its
 * pid may be another process's).
 *
 * What that guarantees: a descendant that stays under the server (its parent lives) is recorded at the
 * next read, at most 2 s after it appeared when that was within ~2 s of activity, at most 30 s after
 * it appeared while idle; whatever is still under the server at shutdown is found by the fresh read then,
 * whenever it started; a recorded descendant is signalled even once reparented. Not caught, as before:
 * one that leaves the tree (`setsid` and its parent exits, a daemon's double fork) before any read saw it,
 * which no polling can catch; the window is the time to the next read (before: always 2 s; now 2 s
 * around activity, up to 30 s while no server is used nor writes to stderr).
 *
 * Why these numbers: one read costs about 12 ms of CPU (`ps` over a few hundred processes). A read every
 * 2 s per server cost 0.6 % of a core per server, forever; one shared read at the 30 s cap costs 0.04 % of
 * a core per session whatever the number of servers. Doubling from 2 s reaches the cap about 30 s after
 * the last activity (reads at 2, 4, 8, 16 and 32 s, then every 30 s); a longer cap would save under 0.04 %
 * more while widening the idle window, a shorter one would cost more where the saving matters (sessions
 * left open for hours).
 *
 * The table comes from `ps -A -o pid=,ppid=,stat=,lstart=` (Linux procps, macOS, the BSDs): Deno refuses
 * `/proc` without `--allow-all`, which the permission set does not grant, and a sub-reaper
 * (`PR_SET_CHILD_SUBREAPER`) would need FFI. Where `ps` is missing or lacks `lstart` (BusyBox) and
 * on Windows, only the process group is reachable: a descendant that called `setsid` survives
 * shutdown there (on Windows `Deno.kill` ends the direct child only).
 *
 * @module
 */

/** How often the descendants of running servers are looked up around activity, in ms. */
export const DESCENDANT_SCAN_INTERVAL_MS = 2_000;
/** The longest interval between two looks while nothing happens, in ms (see the module header). */
export const MAX_DESCENDANT_SCAN_INTERVAL_MS = 30_000;
/**
 * Shortest time between two looks prompted by a server's stderr output, in ms. It doubles after each such
 * look that found no descendant appear or end, up to {@link DESCENDANT_SCAN_INTERVAL_MS}, and comes back
 * after a look that found one or after {@link STDERR_QUIET_RESET_MS} without stderr output.
 */
export const SCAN_ON_ACTIVITY_MS = 250;
/** Time without stderr output from any server after which its next line is looked at within 250 ms again, ms. */
export const STDERR_QUIET_RESET_MS = 4_000;
/** A process-table snapshot younger than this is reused by every server, in ms. */
export const TABLE_REUSE_MS = 500;
/** Most descendants recorded per server (a fork bomb must not grow our memory without bound). */
export const MAX_TRACKED_DESCENDANTS = 4_096;

/** One process of a snapshot. */
export interface ProcessEntry {
  ppid: number;
  /** A zombie (ended, waiting to be reaped): nothing to signal. */
  isZombie: boolean;
  /** When it started, as `ps` prints it (`Mon Dec  1 10:41:02 2025`): tells a recycled pid apart. */
  start: string;
}

/** A source of process-table snapshots (`ps` in production; a seam for tests). */
export interface ProcessTable {
  /** Whether the table can be read on this platform. */
  readonly isSupported: boolean;
  /**
   * Every process now: pid -> parent and start time; `undefined` when the table cannot be read
   * (never rejects).
   *
   * @param options.fresh Read the table now, never a reused snapshot. @default false
   */
  snapshot(options?: { fresh?: boolean }): Promise<Map<number, ProcessEntry> | undefined>;
}

/**
 * Parses `ps -A -o pid=,ppid=,stat=,lstart=` output (C locale).
 *
 * @example
 * ```ts
 * import { parsePsTable } from "./process_tree.ts";
 * parsePsTable("  42     1 Ss   Mon Dec  1 10:41:02 2025\n").get(42);
 * // { ppid: 1, isZombie: false, start: "Mon Dec 1 10:41:02 2025" }
 * ```
 */
export function parsePsTable(text: string): Map<number, ProcessEntry> {
  const table = new Map<number, ProcessEntry>();
  for (const line of text.split("\n")) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.+?)\s*$/.exec(line);
    if (m) {
      table.set(Number(m[1]), {
        ppid: Number(m[2]),
        isZombie: m[3]!.startsWith("Z"),
        start: m[4]!.replace(/\s+/g, " "),
      });
    }
  }
  return table;
}

/**
 * The process table read with `ps`; one snapshot serves every caller for {@link TABLE_REUSE_MS}.
 * Snapshots resolve in the order their reads started (a read that finishes first waits for the one
 * started before it): a tracker never applies an older table after a newer one, which would forget a
 * descendant only the newer one shows. A `ps` that fails once makes the table unsupported for the rest
 * of the process.
 */
export class PsProcessTable implements ProcessTable {
  #isSupported: boolean;
  #last: { atMs: number; table: Promise<Map<number, ProcessEntry> | undefined> } | undefined;
  readonly #runPs: () => Promise<Uint8Array>;

  /**
   * @param options.os @default Deno.build.os
   * @param options.runPs Runs `ps -A -o pid=,ppid=,stat=,lstart=` and returns its stdout, rejecting when it
   *   fails (a seam for tests). @default the real `ps`
   */
  constructor(options: { os?: typeof Deno.build.os; runPs?: () => Promise<Uint8Array> } = {}) {
    this.#isSupported = (options.os ?? Deno.build.os) !== "windows";
    this.#runPs = options.runPs ?? runPs;
  }

  get isSupported(): boolean {
    return this.#isSupported;
  }

  snapshot(options: { fresh?: boolean } = {}): Promise<Map<number, ProcessEntry> | undefined> {
    if (!this.#isSupported) return Promise.resolve(undefined);
    const nowMs = performance.now();
    if (!options.fresh && this.#last && nowMs - this.#last.atMs < TABLE_REUSE_MS) return this.#last.table;
    const read = this.#read();
    const previous = this.#last?.table;
    const table = previous ? previous.then(() => read) : read; // never before an older read
    this.#last = { atMs: nowMs, table };
    return table;
  }

  async #read(): Promise<Map<number, ProcessEntry> | undefined> {
    try {
      return parsePsTable(new TextDecoder().decode(await this.#runPs()));
    } catch {
      this.#isSupported = false; // No usable `ps` here: only the process group can be reached.
      return undefined;
    }
  }
}

/** Runs the real `ps` (C locale); resolves with its stdout, rejects when it cannot run or fails. */
async function runPs(): Promise<Uint8Array> {
  const out = await new Deno.Command("ps", {
    args: ["-A", "-o", "pid=,ppid=,stat=,lstart="],
    env: { LC_ALL: "C" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  if (!out.success) throw new Error(`ps exited with code ${out.code}`);
  return out.stdout;
}

/** The table every backing server shares. */
export const SYSTEM_PROCESS_TABLE: ProcessTable = new PsProcessTable();

/**
 * Records the descendants of one process while it runs, and signals the recorded ones that are
 * still the same processes.
 */
export class DescendantTracker {
  readonly #root: number;
  /** The root ended and was reaped: its pid may be another process's now, never a parent of ours. */
  #isRootGone = false;
  readonly #table: ProcessTable;
  readonly #tracked = new Map<number, string>();
  /** The recorded descendants alive (not zombies) at the last look. */
  #live = new Set<number>();

  /**
   * @param rootPid The backing server's pid (itself never recorded: the caller owns it).
   * @param table @default SYSTEM_PROCESS_TABLE
   */
  constructor(rootPid: number, table: ProcessTable = SYSTEM_PROCESS_TABLE) {
    this.#root = rootPid;
    this.#table = table;
  }

  /** Whether descendants outside the process group can be found here. */
  get isSupported(): boolean {
    return this.#table.isSupported;
  }

  /**
   * The root ended (its exit status was read, so its pid may be reused): from now on descendants are
   * found only under the recorded ones still alive, never under a process that took the root's pid.
   */
  rootExited(): void {
    this.#isRootGone = true;
  }

  /** The recorded descendants' pids, in the order found. */
  recorded(): number[] {
    return [...this.#tracked.keys()];
  }

  /**
   * Reads the process table and records every new descendant of the root and of the recorded
   * processes still alive (so children of a reparented descendant are found too).
   *
   * @param options.fresh Do not reuse a recent snapshot. @default false
   * @returns Whether a descendant appeared or ended since the last look (see {@link record}).
   */
  async refresh(options: { fresh?: boolean } = {}): Promise<boolean> {
    const table = await this.#table.snapshot(options);
    return table ? this.record(table) : false;
  }

  /**
   * Records, from a snapshot already read, every new descendant of the root and of the recorded
   * processes still alive (what {@link refresh} does after reading the table), and forgets the recorded
   * ones that are gone from it (their pid absent, or another process's now): they can never be signalled,
   * and {@link MAX_TRACKED_DESCENDANTS} counts only the others, so a server that starts a short-lived helper
   * per call is still tracked after thousands of calls.
   *
   * @param table A snapshot of {@link ProcessTable.snapshot}.
   * @returns Whether a descendant appeared or one alive at the last look ended (or became a zombie).
   */
  record(table: ReadonlyMap<number, ProcessEntry>): boolean {
    const children = new Map<number, number[]>();
    for (const [pid, entry] of table) {
      const list = children.get(entry.ppid) ?? [];
      list.push(pid);
      children.set(entry.ppid, list);
    }
    for (const [pid, start] of [...this.#tracked]) {
      if (table.get(pid)?.start !== start) this.#tracked.delete(pid);
    }
    const queue = [...(this.#isRootGone ? [] : [this.#root]), ...this.#tracked.keys()];
    const seen = new Set(queue);
    let isChanged = false;
    while (queue.length > 0 && this.#tracked.size < MAX_TRACKED_DESCENDANTS) {
      for (const pid of children.get(queue.shift()!) ?? []) {
        if (seen.has(pid)) continue;
        seen.add(pid);
        queue.push(pid);
        if (!this.#tracked.has(pid)) {
          this.#tracked.set(pid, table.get(pid)!.start);
          isChanged = true;
        }
      }
    }
    const live = new Set<number>();
    for (const [pid, start] of this.#tracked) {
      const entry = table.get(pid);
      if (entry?.start === start && !entry.isZombie) live.add(pid);
    }
    for (const pid of this.#live) if (!live.has(pid)) isChanged = true;
    this.#live = live;
    return isChanged;
  }

  /**
   * Sends `signal` to every recorded descendant that is still the process recorded (same start
   * time, from a fresh snapshot), after recording from that snapshot what appeared under them (and
   * under the root, until {@link rootExited}) since the last look: a child a recorded helper started
   * while the schedule was idle is signalled before its parent's end reparents it out of reach. Gone
   * ones are forgotten.
   *
   * @returns How many were signalled.
   */
  async signal(signal: Deno.Signal): Promise<number> {
    if (this.#tracked.size === 0 && this.#isRootGone) return 0;
    const table = await this.#table.snapshot({ fresh: true });
    if (!table) return 0;
    this.record(table);
    let count = 0;
    for (const [pid, start] of [...this.#tracked]) {
      const entry = table.get(pid);
      if (entry?.start !== start || entry.isZombie) {
        this.#tracked.delete(pid);
        continue;
      }
      try {
        Deno.kill(pid, signal);
        count++;
      } catch {
        this.#tracked.delete(pid); // ESRCH: it ended between the snapshot and the signal.
      }
    }
    return count;
  }
}

/** Timers and time as the scan schedule sees them (a seam for tests). */
export interface ScanTimers {
  /** A monotonic time, in ms. */
  now(): number;
  /** Calls `callback` once after `delayMs` ms; returns the function that cancels it. */
  schedule(callback: () => void, delayMs: number): () => void;
}

/** The real timers: `performance.now` and `setTimeout`. */
export const SYSTEM_SCAN_TIMERS: ScanTimers = {
  now: () => performance.now(),
  schedule: (callback, delayMs) => {
    const id = setTimeout(callback, delayMs);
    return () => clearTimeout(id);
  },
};

/**
 * When the process table is read for the running servers: one schedule per process, one snapshot
 * per look for every tracker that joined (see the module header for the intervals and what they
 * guarantee). One timer at most, none while no tracker is joined.
 */
export class DescendantScanSchedule {
  readonly table: ProcessTable;
  readonly #timers: ScanTimers;
  readonly #trackers = new Set<DescendantTracker>();
  #intervalMs = DESCENDANT_SCAN_INTERVAL_MS;
  #cancelTimer: (() => void) | undefined;
  #dueAtMs = Infinity;
  #isFreshDue = false;
  #hasActivity = false;
  #lastLookMs = -Infinity;
  /** The spacing of looks prompted by stderr now (see {@link SCAN_ON_ACTIVITY_MS}), and the last prompt. */
  #stderrSpacingMs = SCAN_ON_ACTIVITY_MS;
  #lastStderrMs = -Infinity;
  #looking: Promise<void> | undefined;

  /**
   * @param options.table @default SYSTEM_PROCESS_TABLE
   * @param options.timers @default SYSTEM_SCAN_TIMERS
   */
  constructor(options: { table?: ProcessTable; timers?: ScanTimers } = {}) {
    this.table = options.table ?? SYSTEM_PROCESS_TABLE;
    this.#timers = options.timers ?? SYSTEM_SCAN_TIMERS;
  }

  /** The interval after the next quiet look, in ms (for tests and diagnostics). */
  get intervalMs(): number {
    return this.#intervalMs;
  }

  /** Whether a look is scheduled (no timer while no tracker is joined). */
  get isScheduled(): boolean {
    return this.#cancelTimer !== undefined;
  }

  /** Resolves once the look under way, if any, is done (its trackers updated, the next look armed). */
  settled(): Promise<void> {
    return this.#looking ?? Promise.resolve();
  }

  /**
   * Adds `tracker` to every look from now on; counts as activity (a server started).
   *
   * @returns `leave`: removes it; resolves once a look under way is done (no `ps` outlives its last server).
   */
  join(tracker: DescendantTracker): () => Promise<void> {
    this.#trackers.add(tracker);
    this.noteActivity();
    return () => {
      this.#trackers.delete(tracker);
      if (this.#trackers.size === 0) {
        this.#cancelTimer?.();
        this.#cancelTimer = undefined;
        this.#dueAtMs = Infinity;
        this.#intervalMs = DESCENDANT_SCAN_INTERVAL_MS;
      }
      return this.settled();
    };
  }

  /** Something happened (a message to or from a server): the next look is at most 2 s away. Cheap. */
  noteActivity(): void {
    this.#hasActivity = true;
    this.#intervalMs = DESCENDANT_SCAN_INTERVAL_MS;
    this.#arm(this.#timers.now() + DESCENDANT_SCAN_INTERVAL_MS);
  }

  /**
   * A server wrote to stderr (npx starting node, a daemon forking): a fresh look soon, at most one per
   * {@link SCAN_ON_ACTIVITY_MS} (doubling up to 2 s while those looks find nothing new), the last request
   * always served.
   */
  scanSoon(): void {
    const nowMs = this.#timers.now();
    if (nowMs - this.#lastStderrMs >= STDERR_QUIET_RESET_MS) this.#stderrSpacingMs = SCAN_ON_ACTIVITY_MS;
    this.#lastStderrMs = nowMs;
    this.#hasActivity = true;
    this.#intervalMs = DESCENDANT_SCAN_INTERVAL_MS;
    this.#isFreshDue = true;
    this.#arm(Math.max(nowMs, this.#lastLookMs + this.#stderrSpacingMs));
  }

  /** Sets the timer for `atMs` unless one is due sooner, or a look is under way (it arms the next). */
  #arm(atMs: number): void {
    if (this.#trackers.size === 0 || this.#looking || !this.table.isSupported) return;
    if (this.#cancelTimer !== undefined) {
      if (this.#dueAtMs <= atMs) return;
      this.#cancelTimer();
    }
    this.#dueAtMs = atMs;
    this.#cancelTimer = this.#timers.schedule(() => this.#fire(), Math.max(0, atMs - this.#timers.now()));
  }

  #fire(): void {
    this.#cancelTimer = undefined;
    this.#dueAtMs = Infinity;
    const isFresh = this.#isFreshDue;
    this.#isFreshDue = false;
    this.#looking = this.#look(isFresh).finally(() => {
      this.#looking = undefined;
      if (this.#isFreshDue) this.#arm(Math.max(this.#timers.now(), this.#lastLookMs + this.#stderrSpacingMs));
      else this.#arm(this.#timers.now() + this.#intervalMs);
    });
  }

  /** One snapshot for every tracker; the interval doubles unless something happened since the last look. */
  async #look(isFresh: boolean): Promise<void> {
    let hasActivity = this.#hasActivity;
    this.#hasActivity = false;
    this.#lastLookMs = this.#timers.now();
    const table = await this.table.snapshot({ fresh: isFresh });
    let isChanged = false;
    if (table) {
      for (const tracker of this.#trackers) isChanged = tracker.record(table) || isChanged;
    }
    hasActivity ||= isChanged;
    if (isFresh) {
      this.#stderrSpacingMs = isChanged
        ? SCAN_ON_ACTIVITY_MS
        : Math.min(this.#stderrSpacingMs * 2, DESCENDANT_SCAN_INTERVAL_MS);
    }
    this.#intervalMs = hasActivity || this.#hasActivity
      ? DESCENDANT_SCAN_INTERVAL_MS
      : Math.min(this.#intervalMs * 2, MAX_DESCENDANT_SCAN_INTERVAL_MS);
  }
}

/**
 * The schedule every stdio server of this process joins: one per process on purpose (one `ps` per look
 * serves every server), its only state its timer and its trackers.
 */
export const SYSTEM_SCAN_SCHEDULE: DescendantScanSchedule = new DescendantScanSchedule();

/** Sends `signal` to every process of the group led by `pgid`; `false` when the group is empty. */
export function signalGroup(pgid: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(-pgid, signal);
    return true;
  } catch {
    // ESRCH: nothing left in the group (or it never existed); that is the goal of every caller.
    return false;
  }
}
