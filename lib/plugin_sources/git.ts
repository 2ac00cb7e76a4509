/**
 * Git registries' local copies: cloned shallow by the real `git` into
 * `<config>/cache/plugin-sources/<name>` and swapped in whole (a new clone beside the old copy, then a
 * rename), so a force-pushed history, a changed URL or an interrupted fetch never leaves a mixed tree,
 * and a fetch that fails (offline, the repository gone, a timeout) keeps the last copy. Each attempt is
 * recorded in `<name>.fetch.json` beside it. Only `plugin sync` and the daily auto-update run this:
 * never `mcp-serve`'s request path. Every `git` run is bounded as a process group (killed whole at its
 * timeout, with git's http low-speed limit set too), so a server that accepts and never answers costs
 * one timeout: the failure is recorded and the lock released.
 *
 * @module
 */
import { join } from "node:path";
import { ensurePrivateDir, writePrivateFile } from "../secrets/mod.ts";
import { type RegistryConfig } from "./sources_config.ts";

/** Auto-update fetches a registry at most this often, in ms (a day). */
export const AUTO_UPDATE_INTERVAL_MS = 24 * 3600 * 1000;
/** Longest one `git` run may take, in ms, before it is killed and the fetch counts as failed. */
export const DEFAULT_GIT_TIMEOUT_MS = 120_000;
/** A lock older than this, in ms, is from a sync that died: it is taken over. */
export const STALE_LOCK_MS = 10 * 60_000;
/** Longest error text kept from git's stderr, in characters. */
const MAX_GIT_ERROR_CHARS = 2000;

/** The last fetch of a git registry (`<name>.fetch.json`). Times in ms since the epoch. */
export interface FetchRecord {
  /** The URL fetched. */
  url: string;
  /** When the last attempt started. */
  attemptedAtMs: number;
  /** When a fetch last succeeded (the copy is from then). */
  fetchedAtMs?: number | undefined;
  /** The last attempt's failure, when it failed (git's stderr tail or the timeout). */
  error?: string | undefined;
  /** The copy's commit. */
  commit?: string | undefined;
}

/** What {@link syncGitRegistry} did. */
export interface SyncResult {
  name: string;
  /** The fetch succeeded (the copy is current). */
  ok: boolean;
  /** The copy's commit changed (or it was cloned for the first time). */
  changed: boolean;
  commit?: string | undefined;
  /** Why it failed; the last copy, if any, is kept. */
  error?: string | undefined;
  /** Another sync of this registry was running: nothing was done. */
  busy?: boolean | undefined;
}

/** The folder holding every git registry's copy. */
export function pluginSourcesCacheDir(configDir: string): string {
  return join(configDir, "cache", "plugin-sources");
}

/** Where the copy of git registry `name` lives. */
export function gitCopyDir(configDir: string, name: string): string {
  return join(pluginSourcesCacheDir(configDir), name);
}

/** Reads `<name>.fetch.json`; `null` when there is none (or it cannot be read: then a fetch is due). */
export async function readFetchRecord(configDir: string, name: string): Promise<FetchRecord | null> {
  try {
    const value = JSON.parse(
      await Deno.readTextFile(join(pluginSourcesCacheDir(configDir), `${name}.fetch.json`)),
    );
    return typeof value?.attemptedAtMs === "number" && typeof value?.url === "string"
      ? value as FetchRecord
      : null;
  } catch {
    return null; // Never fetched, or a record we cannot read: treated as never fetched.
  }
}

/** Whether auto-update should fetch now: never attempted, or the last attempt is a day old. */
export function isFetchDue(record: FetchRecord | null, nowMs: number): boolean {
  return record === null || nowMs - record.attemptedAtMs >= AUTO_UPDATE_INTERVAL_MS;
}

/** Options of {@link syncGitRegistry}. */
export interface SyncOptions {
  configDir: string;
  /** Longest one `git` run may take, in ms. @default DEFAULT_GIT_TIMEOUT_MS */
  timeoutMs?: number | undefined;
  /** The `git` program. @default "git" */
  git?: string | undefined;
  /** Aborts the running `git` (the fetch then fails and the copy is kept). */
  signal?: AbortSignal | undefined;
  /** The current time, ms since the epoch. @default Date.now() */
  nowMs?: number | undefined;
}

/** Longest output kept from one `git` run's stdout, in bytes (a commit id is 40). */
const MAX_GIT_STDOUT_BYTES = 64 * 1024;
/** Longest stderr read from one `git` run, in bytes (its tail is kept: {@link MAX_GIT_ERROR_CHARS}). */
const MAX_GIT_STDERR_BYTES = 256 * 1024;
/**
 * git's own low-speed limit over http(s): a transfer slower than this many bytes per second for
 * {@link gitLowSpeedSecs} is abandoned by git itself (`http.lowSpeedLimit`).
 */
const GIT_LOW_SPEED_BYTES_PER_SEC = 1000;

/** `http.lowSpeedTime`, in whole seconds: a third of the run's timeout, between 1 and 30. */
function gitLowSpeedSecs(timeoutMs: number): number {
  return Math.max(1, Math.min(30, Math.floor(timeoutMs / 3000)));
}

/**
 * Reads a stream to its end or until `cancelled` resolves, keeping at most `maxBytes` (the tail when
 * `keepTail`). A cancelled read releases the pipe: a grandchild that still holds its other end no
 * longer keeps us waiting.
 */
async function readBounded(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  cancelled: Promise<void>,
  keepTail: boolean,
): Promise<string> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  void cancelled.then(() => reader.cancel().catch(() => {})); // A released reader: nothing to cancel.
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.length;
      while (bytes > maxBytes && chunks.length > 1 && keepTail) bytes -= chunks.shift()!.length;
      if (bytes > maxBytes && !keepTail) break;
    }
  } catch {
    // Cancelled (the run was killed): what was read so far is all there is.
  }
  reader.releaseLock();
  const all = new Uint8Array(bytes);
  let at = 0;
  for (const c of chunks) {
    all.set(c.subarray(0, Math.min(c.length, bytes - at)), at);
    at += c.length;
  }
  return new TextDecoder().decode(all);
}

/**
 * Runs `git` bounded as a whole process group: it gets its own group (`detached`), and at the timeout
 * or `options.signal` the group is killed whole (git's `remote-http` helpers included) and our ends
 * of its pipes are closed, so a server that accepts and never answers cannot keep the run, or the
 * sync holding its lock, alive. Over http(s), git's own low-speed limit applies too.
 */
async function runGit(
  args: string[],
  options: SyncOptions,
): Promise<{ ok: true; stdout: string } | { ok: false; error: string }> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const lowSpeed = [
    "-c",
    `http.lowSpeedLimit=${GIT_LOW_SPEED_BYTES_PER_SEC}`,
    "-c",
    `http.lowSpeedTime=${gitLowSpeedSecs(timeoutMs)}`,
  ];
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(options.git ?? "git", {
      args: ["-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null", ...lowSpeed, ...args],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      detached: true, // its own process group: killed whole at the timeout
      // No password prompt: a registry that needs credentials must get them from a helper.
      env: { GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "", SSH_ASKPASS: "", GCM_INTERACTIVE: "never" },
    }).spawn();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return { ok: false, error: "the `git` program is not installed" };
    }
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  let timedOut = false;
  let exited = false;
  let release!: () => void;
  const cancelled = new Promise<void>((resolve) => (release = resolve));
  const killGroup = () => {
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch {
      // No process of the group is left (or no process groups here, as on Windows: git itself is killed below).
    }
    if (!exited) {
      try {
        child.kill("SIGKILL");
      } catch {
        // git exited meanwhile.
      }
    }
  };
  const stop = () => {
    if (!exited) {
      timedOut = true;
      killGroup();
    }
    release(); // Stop reading: a descendant outside the group must not keep the pipes, and us, waiting.
  };
  const timer = setTimeout(stop, timeoutMs);
  options.signal?.addEventListener("abort", stop, { once: true });
  if (options.signal?.aborted) stop();
  try {
    const [status, stdout, stderr] = await Promise.all([
      child.status.then((s) => {
        exited = true;
        killGroup(); // git is gone: a helper it left in the group must not hold the pipes open.
        return s;
      }),
      readBounded(child.stdout, MAX_GIT_STDOUT_BYTES, cancelled, false),
      readBounded(child.stderr, MAX_GIT_STDERR_BYTES, cancelled, true),
    ]);
    if (timedOut) {
      return {
        ok: false,
        error: options.signal?.aborted
          ? `git ${args[0]} was stopped`
          : `git ${args[0]} did not finish within ${timeoutMs} ms`,
      };
    }
    if (status.success) return { ok: true, stdout: stdout.trim() };
    return {
      ok: false,
      error: stderr.trim().slice(-MAX_GIT_ERROR_CHARS) || `git ${args[0]} exited with code ${status.code}`,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", stop);
    release();
  }
}

/** The commit a copy is at, or `undefined` when there is no readable copy. */
export async function copyCommit(dir: string, options: SyncOptions): Promise<string | undefined> {
  try {
    if (!Deno.statSync(join(dir, ".git")).isDirectory) return undefined;
  } catch {
    return undefined; // No copy.
  }
  const head = await runGit(["-C", dir, "rev-parse", "HEAD"], { ...options, timeoutMs: 10_000 });
  return head.ok ? head.stdout : undefined;
}

/**
 * Fetches git registry `registry` into its copy: a shallow clone of the default branch into a new
 * folder beside the copy, swapped in when its commit differs. A failure (git missing, offline, the
 * repository gone, a timeout, another user's cache folder) keeps the last copy and is recorded.
 *
 * @throws Never for git's failures (they are in the result); only for bugs.
 */
export async function syncGitRegistry(registry: RegistryConfig, options: SyncOptions): Promise<SyncResult> {
  const name = registry.name;
  const url = registry.git!;
  const cacheDir = pluginSourcesCacheDir(options.configDir);
  const nowMs = options.nowMs ?? Date.now();
  try {
    ensurePrivateDir(join(options.configDir, "cache"));
    ensurePrivateDir(cacheDir);
  } catch (error) {
    return { name, ok: false, changed: false, error: (error as Error).message };
  }
  const lock = join(cacheDir, `${name}.lock`);
  try {
    Deno.writeTextFileSync(lock, String(Deno.pid), { createNew: true, mode: 0o600 });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) {
      return { name, ok: false, changed: false, error: (error as Error).message };
    }
    const age = nowMs - (Deno.statSync(lock).mtime?.getTime() ?? 0);
    if (age < STALE_LOCK_MS) {
      return { name, ok: false, changed: false, busy: true, error: "another sync is running" };
    }
    Deno.writeTextFileSync(lock, String(Deno.pid), { mode: 0o600 });
  }
  const dir = gitCopyDir(options.configDir, name);
  const fresh = `${dir}.new-${crypto.randomUUID().slice(0, 8)}`;
  const previous = await readFetchRecord(options.configDir, name);
  const record: FetchRecord = {
    url,
    attemptedAtMs: nowMs,
    fetchedAtMs: previous?.fetchedAtMs,
    commit: previous?.commit,
  };
  try {
    const before = await copyCommit(dir, options);
    const clone = await runGit(
      ["clone", "--depth", "1", "--no-tags", "--single-branch", "--quiet", "--", url, fresh],
      options,
    );
    if (!clone.ok) {
      record.error = clone.error;
      return { name, ok: false, changed: false, commit: before, error: clone.error };
    }
    const commit = await copyCommit(fresh, options);
    const changed = commit !== before || before === undefined;
    if (changed) {
      const aside = `${dir}.old-${crypto.randomUUID().slice(0, 8)}`;
      const hadCopy = await Deno.lstat(dir).then(() => true, () => false);
      if (hadCopy) await Deno.rename(dir, aside);
      await Deno.rename(fresh, dir);
      if (hadCopy) await Deno.remove(aside, { recursive: true });
    }
    record.fetchedAtMs = nowMs;
    record.commit = commit;
    record.error = undefined;
    return { name, ok: true, changed, commit };
  } finally {
    await Deno.remove(fresh, { recursive: true }).catch(() => {}); // Gone already when it was swapped in.
    const text = JSON.stringify(record, null, 2) + "\n";
    await writePrivateFile(cacheDir, `${name}.fetch.json`, new TextEncoder().encode(text)).catch(() => {
      // A record we cannot write makes the next auto-update try again: no harm.
    });
    Deno.removeSync(lock);
  }
}
