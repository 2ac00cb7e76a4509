/**
 * The session logger: one line per event, to stderr (never stdout, which belongs to MCP) and to a
 * per-session file under `<config>/logs/` (a private folder: created 0700, refused when it is a
 * symbolic link or another user's; the file is 0600 and created with its first line; the newest
 * {@link MAX_SESSION_LOGS} sessions are kept). Every line is masked by the secret registry
 * (registered values and credential shapes, `lib/secrets/`) before anything is written.
 *
 * @module
 */
import { maskSecrets } from "./secrets/mod.ts";
import {
  createPrivateFileSync,
  ensurePrivateDir,
  listOwnFiles,
  PrivateDirError,
} from "./secrets/private_dir.ts";

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
}

/** Session log files kept in the log directory: older ones are deleted when a new one is created. */
export const MAX_SESSION_LOGS = 20;

/** A {@link Logger} that owns a file: call `close()` once at the end of the session. */
export interface SessionLogger extends Logger {
  /**
   * Absolute path of the session's log file, or `undefined` when logging to stderr only (no
   * `logDir`, or the file could not be created). The file is created with the first line written:
   * a session that logs nothing leaves no file.
   */
  readonly filePath: string | undefined;
  /** Flushes and closes the file. Idempotent. */
  close(): void;
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
  /** Longest line written, in UTF-16 code units; longer lines are cut with `…`. @default 4096 */
  maxLineChars?: number | undefined;
  /** Clock for timestamps, ms since the epoch. @default Date.now */
  now?: (() => number) | undefined;
}

/**
 * Names of the session files we create (`2025-01-31T12-00-00-000Z-4242.log`, a `-<n>` suffix when
 * two sessions of one process start in the same millisecond): the only files pruning removes.
 */
export const SESSION_LOG_NAME = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z-\d+(?:-\d+)?\.log$/;

/**
 * Creates the session logger. File problems (no permission, full disk) never fail the caller:
 * the logger falls back to stderr only and says so once.
 *
 * @returns A {@link SessionLogger}; close it at the end of the session.
 */
export function createLogger(options: LoggerOptions = {}): SessionLogger {
  const maxLineChars = options.maxLineChars ?? 4096;
  const now = options.now ?? Date.now;
  const stderrRank = LEVEL_RANK[options.stderrLevel ?? "info"];
  const encoder = new TextEncoder();
  let file: { handle: Deno.FsFile; name: string } | undefined;
  let filePath: string | undefined;
  let closed = false;
  const logDir = options.logDir;
  if (logDir !== undefined) {
    const stamp = new Date(now()).toISOString().replace(/[:.]/g, "-");
    filePath = `${logDir}/${options.sessionName ?? `${stamp}-${Deno.pid}.log`}`;
  }

  /** Creates the file on the first line (and prunes old sessions); `false` when there is none. */
  function ensureFile(): boolean {
    if (file !== undefined) return true;
    if (logDir === undefined || filePath === undefined || closed) return false;
    try {
      const state = ensurePrivateDir(logDir);
      if (state.looseMode !== undefined) {
        options.writeErr?.(
          `[warn] ${
            maskSecrets(logDir)
          } is readable by other users (mode ${state.looseMode}); run \`chmod 700 ${maskSecrets(logDir)}\`\n`,
        );
      }
      file = openSessionFile(logDir, filePath.slice(logDir.length + 1));
      filePath = `${logDir}/${file.name}`;
    } catch (error) {
      filePath = undefined;
      const why = error instanceof PrivateDirError
        ? `${error.message}; ${error.hint}`
        : `cannot open the session log in ${logDir}: ${String(error)}`;
      options.writeErr?.(`[warn] ${maskSecrets(why)}; logging to stderr only\n`);
      return false;
    }
    pruneSessionLogs(logDir, options.keepLogs ?? MAX_SESSION_LOGS, filePath);
    return true;
  }

  function write(level: LogLevel, scope: string, message: string): void {
    let text = maskSecrets(message).replace(/\r?\n/g, "\\n");
    if (text.length > maxLineChars) text = `${text.slice(0, maxLineChars)}…`;
    const line = `${scope ? `[${scope}] ` : ""}${text}`;
    if (!closed && ensureFile() && file !== undefined) {
      try {
        file.handle.writeSync(
          encoder.encode(`${new Date(now()).toISOString()} ${level.toUpperCase()} ${line}\n`),
        );
      } catch {
        // A log file that stops accepting writes must not take the session down; stderr remains.
        file = undefined;
      }
    }
    if (LEVEL_RANK[level] >= stderrRank) options.writeErr?.(`[${level}] ${line}\n`);
  }

  function make(scope: string): Logger {
    return {
      debug: (m) => write("debug", scope, m),
      info: (m) => write("info", scope, m),
      warn: (m) => write("warn", scope, m),
      error: (m) => write("error", scope, m),
      child: (s) => make(scope ? `${scope}:${s}` : s),
    };
  }

  const root = make("");
  return {
    ...root,
    get filePath() {
      return filePath;
    },
    close() {
      if (closed) return;
      closed = true;
      try {
        file?.handle.close();
      } catch {
        // Already closed by the runtime at exit; nothing to flush.
      }
    },
  };
}

/**
 * Creates the session file `name` in `logDir` (0600, never through an existing file or link); when
 * the name is taken, `-1` … `-9` is added before `.log`.
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

/**
 * Deletes the oldest session files of `logDir` so that at most `keep` remain (by modification
 * time, `current` always kept). Only regular files of this user named as we name them
 * ({@link SESSION_LOG_NAME}) are considered, judged with `lstat`: a link, a folder or any other
 * file is never removed. Failures are ignored: pruning must never fail a session.
 */
export function pruneSessionLogs(logDir: string, keep: number, current?: string): void {
  const logs = listOwnFiles(logDir, SESSION_LOG_NAME).filter((f) => f.path !== current);
  logs.sort((a, b) => b.mtimeMs - a.mtimeMs || b.path.localeCompare(a.path));
  for (const old of logs.slice(Math.max(0, keep - (current === undefined ? 0 : 1)))) {
    try {
      Deno.removeSync(old.path);
    } catch {
      // Another session removed it, or it is not ours to remove: keep going.
    }
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
