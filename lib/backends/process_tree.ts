/**
 * A backing server's whole process tree, including descendants that left its process group
 * (`setsid`, a daemonizing double fork). While the server runs, the process table is read every
 * {@link DESCENDANT_SCAN_INTERVAL_MS} (and when the server writes to stderr) and each descendant is
 * recorded with its start time, so that at shutdown the ones still alive are signalled even after
 * their parent exited and they were reparented, and a recycled pid is never signalled.
 *
 * The table comes from `ps -A -o pid=,ppid=,stat=,lstart=` (Linux procps, macOS, the BSDs): Deno refuses
 * `/proc` without `--allow-all`, which the permission set does not grant, and a sub-reaper
 * (`PR_SET_CHILD_SUBREAPER`) would need FFI. Where `ps` is missing or lacks `lstart` (BusyBox) and
 * on Windows, only the process group is reachable: a descendant that called `setsid` survives
 * shutdown there (on Windows `Deno.kill` ends the direct child only).
 *
 * @module
 */

/** How often the descendants of a running server are looked up, in ms. */
export const DESCENDANT_SCAN_INTERVAL_MS = 2_000;
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
   * Every process now: pid -> parent and start time; `undefined` when the table cannot be read.
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
 * A `ps` that fails once makes the table unsupported for the rest of the process.
 */
export class PsProcessTable implements ProcessTable {
  #isSupported: boolean;
  #last: { atMs: number; table: Promise<Map<number, ProcessEntry> | undefined> } | undefined;

  constructor(options: { os?: typeof Deno.build.os } = {}) {
    this.#isSupported = (options.os ?? Deno.build.os) !== "windows";
  }

  get isSupported(): boolean {
    return this.#isSupported;
  }

  snapshot(options: { fresh?: boolean } = {}): Promise<Map<number, ProcessEntry> | undefined> {
    if (!this.#isSupported) return Promise.resolve(undefined);
    const nowMs = performance.now();
    if (!options.fresh && this.#last && nowMs - this.#last.atMs < TABLE_REUSE_MS) return this.#last.table;
    const table = this.#read();
    this.#last = { atMs: nowMs, table };
    return table;
  }

  async #read(): Promise<Map<number, ProcessEntry> | undefined> {
    try {
      const out = await new Deno.Command("ps", {
        args: ["-A", "-o", "pid=,ppid=,stat=,lstart="],
        env: { LC_ALL: "C" },
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).output();
      if (!out.success) throw new Error(`ps exited with code ${out.code}`);
      return parsePsTable(new TextDecoder().decode(out.stdout));
    } catch {
      this.#isSupported = false; // No usable `ps` here: only the process group can be reached.
      return undefined;
    }
  }
}

/** The table every backing server shares. */
export const SYSTEM_PROCESS_TABLE: ProcessTable = new PsProcessTable();

/**
 * Records the descendants of one process while it runs, and signals the recorded ones that are
 * still the same processes.
 */
export class DescendantTracker {
  readonly #root: number;
  readonly #table: ProcessTable;
  readonly #tracked = new Map<number, string>();

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

  /** The recorded descendants' pids, in the order found. */
  recorded(): number[] {
    return [...this.#tracked.keys()];
  }

  /**
   * Reads the process table and records every new descendant of the root and of the recorded
   * processes still alive (so children of a reparented descendant are found too).
   *
   * @param options.fresh Do not reuse a recent snapshot. @default false
   */
  async refresh(options: { fresh?: boolean } = {}): Promise<void> {
    const table = await this.#table.snapshot(options);
    if (!table) return;
    const children = new Map<number, number[]>();
    for (const [pid, entry] of table) {
      const list = children.get(entry.ppid) ?? [];
      list.push(pid);
      children.set(entry.ppid, list);
    }
    const alive = [...this.#tracked].filter(([pid, start]) => table.get(pid)?.start === start);
    const queue = [this.#root, ...alive.map(([pid]) => pid)];
    const seen = new Set(queue);
    while (queue.length > 0 && this.#tracked.size < MAX_TRACKED_DESCENDANTS) {
      for (const pid of children.get(queue.shift()!) ?? []) {
        if (seen.has(pid)) continue;
        seen.add(pid);
        queue.push(pid);
        if (!this.#tracked.has(pid)) this.#tracked.set(pid, table.get(pid)!.start);
      }
    }
  }

  /**
   * Sends `signal` to every recorded descendant that is still the process recorded (same start
   * time, from a fresh snapshot); gone ones are forgotten.
   *
   * @returns How many were signalled.
   */
  async signal(signal: Deno.Signal): Promise<number> {
    if (this.#tracked.size === 0) return 0;
    const table = await this.#table.snapshot({ fresh: true });
    if (!table) return 0;
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
