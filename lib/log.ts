/**
 * The session logger: one line per event, to stderr (never stdout, which belongs to MCP) and to a
 * per-session file under `<config>/logs/` (a private folder: created 0700, refused when it is a
 * symbolic link or another user's; the file is 0600 and created with its first line; the newest
 * {@link MAX_SESSION_LOGS} sessions are kept, at most {@link MAX_LOG_DIR_BYTES} in all). Every line
 * is masked by the secret registry (registered values and credential shapes, `lib/secrets/`) before
 * anything is written.
 *
 * The file is written asynchronously from a bounded buffer: a caller never waits for the disk.
 * When the disk cannot keep up, lines past {@link LOG_BUFFER_BYTES} are dropped and a marker says
 * how many; past {@link MAX_SESSION_LOG_BYTES} the file ends with a marker and later lines go to
 * stderr only (at its level).
 *
 * @module
 */
import { maskSecrets, processSecrets } from "./secrets/mod.ts";
import { createPrivateFileSync, ensurePrivateDir, listOwnFiles, PrivateDirError } from "./secrets/mod.ts";

/** Severity, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error";

const LEVEL_RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Where log lines go. Every method takes one message line (newlines are kept but escaped). */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /** A logger whose lines start with `[scope]`, e.g. `child("filesystem")`. */
  child(scope: string): Logger;
  /**
   * Whether a line at `level` would go anywhere now (so a caller can skip preparing it). Absent:
   * assume it would.
   */
  enabled?(level: LogLevel): boolean;
}

/** Session log files kept in the log directory: older ones are deleted when a new one is created. */
export const MAX_SESSION_LOGS = 20;

/** Largest session log file, bytes (10 MiB): past it a marker line ends the file. */
export const MAX_SESSION_LOG_BYTES = 10 * 1024 * 1024;

/**
 * Largest total of the session log files in the log directory, bytes (100 MiB): when a session
 * creates its file, the oldest others are deleted until they leave room for a full session log.
 */
export const MAX_LOG_DIR_BYTES = 100 * 1024 * 1024;

/** Bytes of log lines waiting for the disk at most (1 MiB); lines past it are dropped and counted. */
export const LOG_BUFFER_BYTES = 1024 * 1024;

/**
 * How long a line waits for others before the file write starts, in milliseconds (10): a session
 * logging a line per request pays one write per burst instead of one (a thread hop) per line.
 * `flush()` and `close()` write at once.
 */
export const LOG_COALESCE_MS = 10;

/** A {@link Logger} that owns a file: call `close()` once at the end of the session. */
export interface SessionLogger extends Logger {
  /**
   * Absolute path of the session's log file, or `undefined` when logging to stderr only (no
   * `logDir`, or the file could not be created). The file is created with the first line written:
   * a session that logs nothing leaves no file.
   */
  readonly filePath: string | undefined;
  /** Lines that did not reach the file because the disk could not keep up (the marker says so too). */
  readonly droppedLines: number;
  /** Resolves once every line written so far is on disk (or dropped). */
  flush(): Promise<void>;
  /** Flushes and closes the file. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Writes to stderr. Default: nothing is written to stderr. */
  writeErr?: ((text: string) => void) | undefined;
  /** Lowest level written to stderr. @default "info" ("debug" with `--verbose`) */
  stderrLevel?: LogLevel | undefined;
  /** Directory for the session file (created when missing), e.g. `<config>/logs`. Default: no file. */
  logDir?: string | undefined;
  /**
   * Session file name without directory. @default `<UTC timestamp>-<pid>.log` (only names of that
   * form, {@link SESSION_LOG_NAME}, are ever pruned)
   */
  sessionName?: string | undefined;
  /** Session files kept in `logDir` (this one included); older ones of ours are deleted. @default MAX_SESSION_LOGS */
  keepLogs?: number | undefined;
  /** Longest line written, in UTF-16 code units; longer lines are cut with `...`. @default 4096 */
  maxLineChars?: number | undefined;
  /** Largest session file, bytes. @default MAX_SESSION_LOG_BYTES */
  maxFileBytes?: number | undefined;
  /** Largest total of the log directory's session files, bytes. @default MAX_LOG_DIR_BYTES */
  maxDirBytes?: number | undefined;
  /** Bytes waiting for the disk at most. @default LOG_BUFFER_BYTES */
  bufferBytes?: number | undefined;
  /** Clock for timestamps, ms since the epoch. @default Date.now */
  now?: (() => number) | undefined;
  /** Wait before a write starts, ms; `0` writes at once. @default LOG_COALESCE_MS */
  coalesceMs?: number | undefined;
}

/**
 * Names of the session files we create (`2025-01-31T12-00-00-000Z-4242.log`, a `-<n>` suffix when
 * two sessions of one process start in the same millisecond): the only files pruning removes.
 */
export const SESSION_LOG_NAME = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z-\d+(?:-\d+)?\.log$/;

/** What a log line shows escaped: line breaks, C0 controls but tab, DEL, C1 controls, bidi overrides. */
// deno-lint-ignore no-control-regex -- matching control characters is the point
const UNSAFE_IN_LINE = /\r?\n|[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;

function escapeInLine(c: string): string {
  return c.endsWith("\n") ? "\\n" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/**
 * Creates the session logger. File problems (no permission, full disk) never fail the caller:
 * the logger falls back to stderr only and says so once.
 *
 * @returns A {@link SessionLogger}; close it at the end of the session.
 */
export function createLogger(options: LoggerOptions = {}): SessionLogger {
  const sink = new LogSink(options);
  const flush = () => sink.flush();
  return {
    ...scopedLogger(sink, ""),
    get filePath() {
      return sink.filePath;
    },
    get droppedLines() {
      return sink.droppedLines;
    },
    flush,
    close: () => sink.close(),
  };
}

/** The {@link Logger} of `scope` (`""` for the root; a child's scope is `parent:child`). */
function scopedLogger(sink: LogSink, scope: string): Logger {
  return {
    debug: (m) => sink.write("debug", scope, m),
    info: (m) => sink.write("info", scope, m),
    warn: (m) => sink.write("warn", scope, m),
    error: (m) => sink.write("error", scope, m),
    child: (s) => scopedLogger(sink, scope ? `${scope}:${s}` : s),
    enabled: (level) => sink.isEnabled(level),
  };
}

/**
 * Where the lines of one session go: stderr at or above `stderrLevel`, and the session file, created on
 * the first line. File lines are queued and written in chunks after the coalescing wait, within the file
 * budget (`maxFileBytes`) and the buffer (`bufferBytes`, lines that find it full are counted as dropped).
 */
class LogSink {
  readonly #options: LoggerOptions;
  readonly #maxLineChars: number;
  readonly #maxFileBytes: number;
  readonly #bufferBytes: number;
  readonly #coalesceMs: number;
  readonly #now: () => number;
  readonly #stderrRank: number;
  readonly #logDir: string | undefined;
  readonly #encoder = new TextEncoder();
  #file: { handle: Deno.FsFile; name: string } | undefined;
  #filePath: string | undefined;
  #closed = false;
  /** The file is full, broken or cannot be had: no more lines go there. */
  #isFileDone = false;
  #fileBytes = 0;
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  /**
   * File-only lines not masked, stamped nor encoded yet (see {@link write}), in order, with their UTF-16
   * units (and {@link WAITING_LINE_OVERHEAD_CHARS} each): formatted when the write after the coalescing wait
   * starts, at most {@link #bufferBytes} of them.
   */
  #unformatted: Array<{ level: LogLevel; scope: string; head: string; isCut: boolean; atMs: number }> = [];
  #unformattedChars = 0;
  #dropped = { lines: 0, bytes: 0 };
  #totalDropped = 0;
  #writing: Promise<void> | undefined;
  /** Ends the coalescing wait of the write scheduled (so `flush()` need not wait it out). */
  #wake: (() => void) | undefined;

  constructor(options: LoggerOptions) {
    this.#options = options;
    this.#maxLineChars = options.maxLineChars ?? 4096;
    this.#maxFileBytes = options.maxFileBytes ?? MAX_SESSION_LOG_BYTES;
    this.#bufferBytes = options.bufferBytes ?? LOG_BUFFER_BYTES;
    this.#now = options.now ?? Date.now;
    this.#stderrRank = LEVEL_RANK[options.stderrLevel ?? "info"];
    this.#coalesceMs = options.coalesceMs ?? LOG_COALESCE_MS;
    this.#logDir = options.logDir;
    if (this.#logDir !== undefined) {
      const stamp = new Date(this.#now()).toISOString().replace(/[:.]/g, "-");
      this.#filePath = `${this.#logDir}/${options.sessionName ?? `${stamp}-${Deno.pid}.log`}`;
    }
  }

  get filePath(): string | undefined {
    return this.#filePath;
  }

  get droppedLines(): number {
    return this.#totalDropped;
  }

  /** Whether a line at `level` would be seen anywhere. */
  isEnabled(level: LogLevel): boolean {
    return this.#isStderrLevel(level) || this.#takesFileLines();
  }

  /**
   * A line for stderr (at once) and the file. A line only the file takes (debug, as a rule) is kept as it
   * came (cut) and masked, stamped (with the time it was written) and encoded when the coalesced write starts:
   * an `execute`'s answer does not wait for its log lines (~40-70 µs each, measured in `mcp-serve`). With
   * `coalesceMs` 0, or more than `bufferBytes` UTF-16 units of such lines waiting, they are formatted now.
   */
  write(level: LogLevel, scope: string, message: string): void {
    const toStderr = this.#isStderrLevel(level);
    const toFile = this.#takesFileLines();
    if (!toStderr && !toFile) return; // Nothing would see it: skip the formatting.
    const maxLineChars = this.#maxLineChars;
    // Cut before masking: masking is linear, but a 64 MiB line would still cost time for nothing. The cut
    // leaves room for the longest secret, so that one straddling `maxLineChars` is masked whole, not its prefix.
    const reach = maxLineChars + Math.max(256, processSecrets.longestChars);
    const head = message.length > reach ? message.slice(0, reach) : message;
    const atMs = this.#now();
    if (!toStderr && this.#coalesceMs > 0) {
      if (!this.#ensureFile()) return; // the file is created with the first line, as ever
      this.#unformatted.push({ level, scope, head: detached(head), isCut: head !== message, atMs });
      this.#unformattedChars += head.length + WAITING_LINE_OVERHEAD_CHARS;
      if (this.#unformattedChars > this.#bufferBytes) this.#formatWaiting();
      else this.#writing ??= this.#drainSoon();
      return;
    }
    const line = this.#lineOf(scope, head, head !== message);
    if (toFile) {
      this.#formatWaiting(); // the file keeps the order of the lines
      this.#fileLine(level, line, atMs);
    }
    if (toStderr) this.#options.writeErr!(`[${level}] ${line}\n`);
  }

  /** The line as written: masked, on one line, cut at `maxLineChars` (`...` when cut), with its scope. */
  #lineOf(scope: string, head: string, isCut: boolean): string {
    // One line per message, and no control or bidi character reaches a terminal raw (a forged line, `ESC[2K`).
    let text = maskSecrets(head).replace(UNSAFE_IN_LINE, escapeInLine);
    if (text.length > this.#maxLineChars || isCut) text = `${text.slice(0, this.#maxLineChars)}\u2026`;
    return `${scope ? `[${scope}] ` : ""}${text}`;
  }

  /** Queues a formatted line for the file (created on the first line). */
  #fileLine(level: LogLevel, line: string, atMs: number): void {
    if (this.#isFileDone) return; // full or broken: its end marker was the last line
    if (this.#ensureFile() && this.#file !== undefined) {
      this.#enqueue(this.#encoder.encode(this.#stamped(level, line, atMs)));
    }
  }

  /** Formats the file-only lines waiting (see {@link write}) into the queue, in order. */
  #formatWaiting(): void {
    if (this.#unformatted.length === 0) return;
    const waiting = this.#unformatted;
    this.#unformatted = [];
    this.#unformattedChars = 0;
    for (const { level, scope, head, isCut, atMs } of waiting) {
      this.#fileLine(level, this.#lineOf(scope, head, isCut), atMs);
    }
  }

  async flush(): Promise<void> {
    while (this.#writing !== undefined) {
      this.#wake?.();
      await this.#writing;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#formatWaiting(); // while the file may still be created for them
    this.#closed = true;
    await this.flush();
    try {
      this.#file?.handle.close();
    } catch {
      // Already closed by the runtime at exit; nothing to flush.
    }
    this.#file = undefined;
  }

  #isStderrLevel(level: LogLevel): boolean {
    return LEVEL_RANK[level] >= this.#stderrRank && this.#options.writeErr !== undefined;
  }

  #takesFileLines(): boolean {
    return !this.#closed && !this.#isFileDone && this.#logDir !== undefined;
  }

  #stamped(level: LogLevel, line: string, atMs: number = this.#now()): string {
    return `${new Date(atMs).toISOString()} ${level.toUpperCase()} ${line}\n`;
  }

  /** Creates the file on the first line (and prunes old sessions); `false` when there is none. */
  #ensureFile(): boolean {
    if (this.#file !== undefined) return true;
    const logDir = this.#logDir, options = this.#options;
    if (logDir === undefined || this.#filePath === undefined || this.#closed || this.#isFileDone) {
      return false;
    }
    try {
      const state = ensurePrivateDir(logDir);
      if (state.looseMode !== undefined) {
        options.writeErr?.(
          `[warn] ${
            maskSecrets(logDir)
          } is readable by other users (mode ${state.looseMode}); run \`chmod 700 ${maskSecrets(logDir)}\`\n`,
        );
      }
      this.#file = openSessionFile(logDir, this.#filePath.slice(logDir.length + 1));
      this.#filePath = `${logDir}/${this.#file.name}`;
    } catch (error) {
      this.#filePath = undefined;
      this.#isFileDone = true;
      const why = error instanceof PrivateDirError
        ? `${error.message}; ${error.hint}`
        : `cannot open the session log in ${logDir}: ${String(error)}`;
      options.writeErr?.(`[warn] ${maskSecrets(why)}; logging to stderr only\n`);
      return false;
    }
    pruneSessionLogs(logDir, options.keepLogs ?? MAX_SESSION_LOGS, this.#filePath, {
      maxTotalBytes: Math.max(0, (options.maxDirBytes ?? MAX_LOG_DIR_BYTES) - this.#maxFileBytes),
    });
    return true;
  }

  /**
   * Queues a line for the file: within the file budget (the first line past it is replaced by the
   * end marker) and the buffer (a line that finds it full is counted as dropped).
   */
  #enqueue(bytes: Uint8Array): void {
    if (this.#fileBytes + bytes.length > this.#maxFileBytes) {
      this.#isFileDone = true;
      const marker = this.#encoder.encode(this.#stamped(
        "warn",
        `\u2026 log cut at ${this.#maxFileBytes} bytes (the session log budget); later lines go to stderr only`,
      ));
      this.#pending.push(marker);
      this.#pendingBytes += marker.length;
    } else if (this.#pendingBytes + bytes.length > this.#bufferBytes) {
      this.#dropped.lines++;
      this.#dropped.bytes += bytes.length;
      this.#totalDropped++;
      return;
    } else {
      this.#pending.push(bytes);
      this.#pendingBytes += bytes.length;
      this.#fileBytes += bytes.length;
    }
    this.#writing ??= this.#drainSoon();
  }

  /** The next write, after the coalescing wait (cut short by `wake`). */
  #drainSoon(): Promise<void> {
    if (this.#coalesceMs <= 0) return this.#drain();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        resolve();
      }, this.#coalesceMs);
      this.#wake = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
    }).then(() => this.#drain());
  }

  /** Writes the queue out, one chunk per turn, until it is empty. */
  async #drain(): Promise<void> {
    try {
      this.#formatWaiting();
      while (this.#pending.length > 0 && this.#file !== undefined) {
        const chunk = this.#takePending();
        for (let written = 0; written < chunk.length;) {
          written += await this.#file.handle.write(chunk.subarray(written));
        }
        if (this.#dropped.lines > 0 && !this.#isFileDone) {
          const { lines, bytes } = this.#dropped;
          const marker = this.#stamped(
            "warn",
            `\u2026 ${lines} log line(s) (${bytes} bytes) dropped: the log could not keep up`,
          );
          this.#dropped = { lines: 0, bytes: 0 };
          this.#enqueue(this.#encoder.encode(marker));
        }
        this.#formatWaiting(); // lines written while the chunk was
      }
    } catch {
      // A log file that stops accepting writes must not take the session down; stderr remains.
      this.#isFileDone = true;
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#unformatted = [];
      this.#unformattedChars = 0;
    } finally {
      this.#writing = undefined;
    }
  }

  /** Empties the queue into one chunk. */
  #takePending(): Uint8Array {
    const parts = this.#pending;
    const chunk = new Uint8Array(this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    let at = 0;
    for (const part of parts) {
      chunk.set(part, at);
      at += part.length;
    }
    return chunk;
  }
}

/**
 * Creates the session file `name` in `logDir` (0600, never through an existing file or link); when
 * the name is taken, `-1` ... `-9` is added before `.log`.
 */
function openSessionFile(logDir: string, name: string): { handle: Deno.FsFile; name: string } {
  for (let attempt = 0;; attempt++) {
    const candidate = attempt === 0 ? name : name.replace(/(\.log)?$/, `-${attempt}$1`);
    try {
      return { handle: createPrivateFileSync(logDir, candidate), name: candidate };
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists) || attempt >= 9) throw error;
    }
  }
}

/** Options of {@link pruneSessionLogs}. */
export interface PruneOptions {
  /** The other session files may total at most this many bytes (oldest deleted first). Default: no size bound. */
  maxTotalBytes?: number | undefined;
}

/**
 * Deletes the oldest session files of `logDir` so that at most `keep` remain and the ones other
 * than `current` total at most `options.maxTotalBytes` (by modification time, `current` always
 * kept). Only regular files of this user named as we name them ({@link SESSION_LOG_NAME}) are
 * considered, judged with `lstat`: a link, a folder or any other file is never removed. Failures
 * are ignored: pruning must never fail a session.
 */
export function pruneSessionLogs(
  logDir: string,
  keep: number,
  current?: string,
  options: PruneOptions = {},
): void {
  const logs = listOwnFiles(logDir, SESSION_LOG_NAME).filter((f) => f.path !== current);
  logs.sort((a, b) => b.mtimeMs - a.mtimeMs || b.path.localeCompare(a.path));
  const keepOthers = Math.max(0, keep - (current === undefined ? 0 : 1));
  const maxTotal = options.maxTotalBytes ?? Infinity;
  let total = 0;
  logs.forEach((old, index) => {
    if (maxTotal !== Infinity) total += sizeOf(old.path);
    if (index < keepOthers && total <= maxTotal) return;
    try {
      Deno.removeSync(old.path);
    } catch {
      // Another session removed it, or it is not ours to remove: keep going.
    }
  });
}

function sizeOf(path: string): number {
  try {
    return Deno.lstatSync(path).size;
  } catch {
    return 0; // Gone meanwhile: it takes no room.
  }
}

/** A logger that drops everything (for tests and library callers without a session). */
export const NULL_LOGGER: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => NULL_LOGGER,
};

/** A logger that keeps lines in memory, as `"<level> [scope] message"` (for tests). */
export interface MemoryLogger extends Logger {
  readonly lines: string[];
}

/** Creates a {@link MemoryLogger}. */
export function createMemoryLogger(lines: string[] = [], scope = ""): MemoryLogger {
  const push = (level: LogLevel) => (m: string) =>
    void lines.push(`${level} ${scope ? `[${scope}] ` : ""}${m}`);
  return {
    lines,
    debug: push("debug"),
    info: push("info"),
    warn: push("warn"),
    error: push("error"),
    child: (s) => createMemoryLogger(lines, scope ? `${scope}:${s}` : s),
  };
}

/**
 * What a file-only line waiting to be formatted costs besides its text, counted in UTF-16 units against the
 * buffer (its record, its time, its slot: ~100 bytes): a burst of millions of empty lines held 266 MiB.
 */
const WAITING_LINE_OVERHEAD_CHARS = 64;

/**
 * A copy of `text` that keeps no larger string alive: V8 makes a slice (or a template's part) of a long
 * string a view that holds the whole of it, so a line cut from a 64 MiB message, kept until the coalesced
 * write, would keep the 64 MiB (measured: 40 waiting debug lines of 16 MiB held 640 MiB). Slicing a
 * concatenation copies it flat (linear in `text`, a few µs for a cut line).
 */
function detached(text: string): string {
  return ` ${text}`.slice(1);
}
