/**
 * The lock two `sync` runs take on one agent config file, so they never read, merge and replace
 * it at once: an exclusive advisory lock (`flock`) on `.<name>.cargo-agents.lock` beside the file.
 * The kernel drops it when its holder exits, however it ends, so a lock is never stale: a lock
 * file left by a killed run is simply locked again. The holder writes its process id into the
 * file, which names it when another run gives up waiting. The file is removed on release.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { UserError } from "../diagnostics.ts";

/** How long a run waits for another run's lock on the same file before giving up: 60 000 ms (a 64 MiB file takes seconds to merge). */
export const LOCK_WAIT_MS = 60_000;

/** Pause between two tries of a held lock, in ms (randomized ±50 % so waiters spread out): 25. */
export const LOCK_RETRY_MS = 25;

/** The lock file of the config file `target` (symlinks already resolved). */
export function lockPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.cargo-agents.lock`);
}

/** A lock held by this process. */
export interface HeldLock {
  /** The lock file. */
  path: string;
  /** Removes the lock file and lets the lock go. Never throws. */
  release(): Promise<void>;
}

/** Options of {@link lockConfigFile}. */
export interface LockOptions {
  /** How long to wait for another holder, in ms. @default LOCK_WAIT_MS */
  waitMs?: number;
  /** Stops the wait (Ctrl-C). */
  signal?: AbortSignal | undefined;
}

/**
 * Takes the lock of `target` (an absolute path whose folder exists), waiting while another
 * process holds it.
 *
 * @throws {UserError} `SYNC_LOCKED` after `options.waitMs`, naming the holder's process id (read
 *   from the lock file) and how to go on; `SYNC_INTERRUPTED` when `options.signal` aborts the wait;
 *   `SYNC_NOT_A_FILE` when the lock file is a link or has other names; `SYNC_WRITE_FAILED` when the lock file cannot be
 *   created (permissions of the folder).
 */
export async function lockConfigFile(target: string, options: LockOptions = {}): Promise<HeldLock> {
  const path = lockPathFor(target);
  const waitMs = options.waitMs ?? LOCK_WAIT_MS;
  const deadline = performance.now() + waitMs;
  for (;;) {
    const file = await openLockFile(path, target);
    let held = false;
    try {
      held = await file.tryLock(true);
      // The previous holder removes the file as it releases: a lock on a removed file locks nothing.
      if (held && await isStillAt(file, path)) {
        await file.truncate(0);
        await file.write(new TextEncoder().encode(`${Deno.pid}\n`));
        return { path, release: () => release(file, path) };
      }
    } catch (error) {
      file.close();
      throw lockFailed(target, path, error);
    }
    file.close();
    if (held) continue; // It was removed meanwhile: take the new one.
    if (performance.now() >= deadline) throw await lockedError(target, path, waitMs);
    if (options.signal?.aborted) {
      throw new UserError("SYNC_INTERRUPTED", `Stopped waiting for another run's lock on "${target}"`, {
        hint: "the file was left untouched; run `cargo-agents sync` again",
      });
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS * (0.5 + Math.random())));
  }
}

async function openLockFile(path: string, target: string): Promise<Deno.FsFile> {
  const status = await Deno.lstat(path).catch(() => null);
  if (status !== null && (!status.isFile || (status.nlink ?? 1) > 1)) {
    // Never open through a link: a planted `.<name>.cargo-agents.lock` would make us create or
    // truncate the file it points to.
    throw new UserError(
      "SYNC_NOT_A_FILE",
      `Cannot lock "${target}": "${path}" is ${
        status.isSymlink
          ? "a symbolic link"
          : status.isFile
          ? "a file with other names (hard links)"
          : "not a regular file"
      }`,
      { hint: `remove "${path}" (sync makes it as a plain file), then run \`cargo-agents sync\` again` },
    );
  }
  try {
    return await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
  } catch (error) {
    throw lockFailed(target, path, error);
  }
}

/** Whether the open lock file is still the one at `path` (same inode). */
async function isStillAt(file: Deno.FsFile, path: string): Promise<boolean> {
  const [open, named] = await Promise.all([file.stat(), Deno.lstat(path).catch(() => null)]);
  if (named === null) return false;
  return open.ino === null || open.ino === named.ino;
}

async function release(file: Deno.FsFile, path: string): Promise<void> {
  try {
    await Deno.remove(path); // While still holding it, so no one locks a file about to go.
  } catch {
    // Gone already, or the platform cannot remove an open file (Windows): an empty lock file stays.
  }
  try {
    file.close(); // Closing lets the lock go.
  } catch {
    // Closed already.
  }
}

async function lockedError(target: string, path: string, waitMs: number): Promise<UserError> {
  const pid = Number.parseInt(await Deno.readTextFile(path).catch(() => ""), 10);
  const holder = Number.isSafeInteger(pid) && pid > 0
    ? `another cargo-agents sync (process ${pid})`
    : "another cargo-agents sync";
  return new UserError(
    "SYNC_LOCKED",
    `Cannot write "${target}": ${holder} has been writing it for more than ${
      waitMs / 1000
    } s (lock "${path}")`,
    {
      hint: "wait for that run to finish, then run `cargo-agents sync` again; the file was left untouched",
    },
  );
}

function lockFailed(target: string, path: string, error: unknown): UserError {
  const reason = error instanceof Error ? error.message : String(error);
  return new UserError("SYNC_WRITE_FAILED", `Cannot lock "${target}": cannot use "${path}": ${reason}`, {
    cause: error,
    hint: "check the permissions of the file's folder; the file was left untouched",
  });
}
