/**
 * Cleans up after a `sync` that was killed mid-write (kill -9, power loss): its temporary files
 * (`.<name>.<pid>-<hex>.tmp`) are removed, and a file it had moved aside for the swap
 * (`.<name>.<pid>-<hex>.aside`) is put back when the config file itself is missing. Only names of
 * our own pattern are touched, only regular files, and only when their writer is gone.
 *
 * @module
 */
import { dirname } from "node:path";
import { resolveConfigPath } from "./config_file.ts";
import { type OwnFile, parseOwnFileName, STALE_TEMP_AGE_MS } from "./atomic_write.ts";
import type { WritableFileSystem } from "./writable_file_system.ts";

/** What {@link cleanUpKilledWrites} did. */
export interface Cleanup {
  /** Stale files of ours that were removed. */
  removed: string[];
  /** The file put back from a killed swap, when the config file was missing. */
  restored: string | undefined;
}

/** Options of {@link cleanUpKilledWrites}. */
export interface CleanupOptions {
  fs: WritableFileSystem;
  /** Now, in milliseconds since the epoch. @default Date.now() */
  nowMs?: number;
  /** Age past which a file of ours is stale when its writer cannot be checked, in ms. @default STALE_TEMP_AGE_MS */
  staleAgeMs?: number;
}

/**
 * Removes the stale files of ours beside `path` (symlinks followed) and restores a displaced file
 * when `path` itself is gone. A file is stale when the process that made it is no longer running
 * (checked with `kill -0` where there is a POSIX shell) or it has not changed for `staleAgeMs`.
 *
 * Never throws for a file it cannot remove: that one is simply kept.
 */
export async function cleanUpKilledWrites(path: string, options: CleanupOptions): Promise<Cleanup> {
  const { fs } = options;
  const nowMs = options.nowMs ?? Date.now();
  const staleAgeMs = options.staleAgeMs ?? STALE_TEMP_AGE_MS;
  const resolved = await resolveConfigPath(path, fs);
  const target = resolved.path;
  const dir = dirname(target);
  const entries = await fs.readDir(dir).catch(() => []);
  const stale: (OwnFile & { mtimeMs: number })[] = [];
  for (const entry of entries) {
    if (!entry.isFile || entry.isSymlink) continue;
    const own = parseOwnFileName(dir, entry.name);
    if (own === undefined || (own.of !== target && own.of !== `${target}.bak`)) continue;
    const status = await fs.lstat(own.path);
    if (status === null || status.kind !== "file") continue;
    const mtimeMs = status.changedMs ?? status.mtimeMs ?? nowMs;
    const alive = own.pid === Deno.pid ? true : await fs.isProcessAlive(own.pid);
    if (alive === false || nowMs - mtimeMs > staleAgeMs) stale.push({ ...own, mtimeMs });
  }
  let restored: string | undefined;
  if (resolved.status === null) {
    const asides = stale.filter((f) => f.kind === "aside" && f.of === target).sort((a, b) =>
      b.mtimeMs - a.mtimeMs
    );
    const newest = asides[0];
    if (newest !== undefined) {
      try {
        await fs.link(newest.path, target);
        restored = target;
      } catch {
        // Taken meanwhile, or no hard links here: leave the file where it is rather than guess.
        stale.splice(stale.indexOf(newest), 1);
      }
    }
  }
  const removed: string[] = [];
  for (const f of stale) {
    try {
      await fs.remove(f.path);
      removed.push(f.path);
    } catch {
      // Gone already, or not ours to remove after all: kept, and nothing else depends on it.
    }
  }
  return { removed, restored };
}
