/**
 * The session logger: one line per event, to stderr (never stdout, which belongs to MCP) and to a
 * per-session file under `<config>/logs/` (created with its first line; the newest
 * {@link MAX_SESSION_LOGS} sessions are kept). Secrets (bearer tokens, `token`/`secret`/`authorization`
 * values) are masked before anything is written.
 *
 * @module
 */

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
  /** Session file name without directory. @default `<UTC timestamp>-<pid>.log` */
  sessionName?: string | undefined;
  /** Session files kept in `logDir` (this one included); older `*.log` files are deleted. @default MAX_SESSION_LOGS */
  keepLogs?: number | undefined;
  /** Longest line written, in UTF-16 code units; longer lines are cut with `…`. @default 4096 */
  maxLineChars?: number | undefined;
  /** Clock for timestamps, ms since the epoch. @default Date.now */
  now?: (() => number) | undefined;
}

const SECRET_PATTERNS: RegExp[] = [
  /(bearer\s+)[A-Za-z0-9._~+/=-]+/gi,
  /("?(?:access_token|refresh_token|id_token|client_secret|token|secret|password|authorization|api[_-]?key)"?\s*[:=]\s*"?)([^"\s,}]+)/gi,
];

/**
 * Masks secrets in a log line: bearer tokens and the values of token-, secret-, password- or
 * authorization-like keys become `***`.
 *
 * @example
 * ```ts
 * import { redactSecrets } from "./log.ts";
 * redactSecrets("Authorization: Bearer abc.def"); // "Authorization: Bearer ***"
 * ```
 */
export function redactSecrets(text: string): string {
  let out = text;
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, (_m, head: string) => `${head}***`);
  return out;
}

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
  let file: Deno.FsFile | undefined;
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
      Deno.mkdirSync(logDir, { recursive: true });
      file = Deno.openSync(filePath, { create: true, append: true });
    } catch (error) {
      filePath = undefined;
      options.writeErr?.(`[warn] cannot open the session log in ${logDir}: ${String(error)}\n`);
      return false;
    }
    pruneSessionLogs(logDir, options.keepLogs ?? MAX_SESSION_LOGS, filePath);
    return true;
  }

  function write(level: LogLevel, scope: string, message: string): void {
    let text = redactSecrets(message).replace(/\r?\n/g, "\\n");
    if (text.length > maxLineChars) text = `${text.slice(0, maxLineChars)}…`;
    const line = `${scope ? `[${scope}] ` : ""}${text}`;
    if (!closed && ensureFile() && file !== undefined) {
      try {
        file.writeSync(encoder.encode(`${new Date(now()).toISOString()} ${level.toUpperCase()} ${line}\n`));
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
        file?.close();
      } catch {
        // Already closed by the runtime at exit; nothing to flush.
      }
    },
  };
}

/**
 * Deletes the oldest `*.log` files of `logDir` so that at most `keep` remain (by modification
 * time, `current` always kept). Failures are ignored: pruning must never fail a session.
 */
export function pruneSessionLogs(logDir: string, keep: number, current?: string): void {
  try {
    const logs: { path: string; mtimeMs: number }[] = [];
    for (const entry of Deno.readDirSync(logDir)) {
      if (!entry.isFile || !entry.name.endsWith(".log")) continue;
      const path = `${logDir}/${entry.name}`;
      if (path === current) continue;
      logs.push({ path, mtimeMs: Deno.statSync(path).mtime?.getTime() ?? 0 });
    }
    logs.sort((a, b) => b.mtimeMs - a.mtimeMs || b.path.localeCompare(a.path));
    for (const old of logs.slice(Math.max(0, keep - (current === undefined ? 0 : 1)))) {
      try {
        Deno.removeSync(old.path);
      } catch {
        // Another session removed it, or it is not ours to remove: keep going.
      }
    }
  } catch {
    // No directory listing: nothing to prune.
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
