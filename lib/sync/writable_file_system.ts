/**
 * The file-system seam of `sync`: the shared read-only {@link FileSystem} plus the few writes an
 * atomic replace needs. {@link denoWritableFileSystem} is the real one.
 *
 * @module
 */
import { denoFileSystem, type FileSystem } from "../file_system.ts";

/**
 * Reads and writes for `sync`. Paths are absolute. Missing paths behave as in {@link FileSystem}.
 */
export interface WritableFileSystem extends FileSystem {
  /** Permission bits (`mode & 0o7777`) of an existing path, symlinks followed; `null` where the platform has none. */
  mode(path: string): Promise<number | null>;
  /** Creates a directory and its missing parents; no error when it exists. */
  mkdirAll(path: string): Promise<void>;
  /**
   * Creates `path`, which must not exist, writes `text` as UTF-8 and flushes it to disk (fsync)
   * before closing.
   *
   * @param options.mode Permission bits for the new file (the umask applies).
   * @throws {Deno.errors.AlreadyExists} when `path` exists.
   */
  writeNewFile(path: string, text: string, options: { mode: number }): Promise<void>;
  /** Sets permission bits (no-op where the platform has none). */
  chmod(path: string, mode: number): Promise<void>;
  /** Renames `from` to `to` in one step, replacing `to`. Both are in the same folder. */
  rename(from: string, to: string): Promise<void>;
  /** Removes a file. @throws {Deno.errors.NotFound} when it does not exist. */
  remove(path: string): Promise<void>;
  /** Flushes a directory's entries to disk, so a rename survives a power loss (best effort). */
  syncDir(path: string): Promise<void>;
}

/** The real {@link WritableFileSystem}, over `Deno`'s file APIs. Needs `--allow-read --allow-write`. */
export const denoWritableFileSystem: WritableFileSystem = Object.freeze({
  ...denoFileSystem,
  async mode(path: string): Promise<number | null> {
    const info = await Deno.stat(path);
    return info.mode === null ? null : info.mode & 0o7777;
  },
  mkdirAll: (path: string): Promise<void> => Deno.mkdir(path, { recursive: true }),
  async writeNewFile(path: string, text: string, options: { mode: number }): Promise<void> {
    const file = await Deno.open(path, { write: true, createNew: true, mode: options.mode });
    try {
      const bytes = new TextEncoder().encode(text);
      let written = 0;
      while (written < bytes.length) written += await file.write(bytes.subarray(written));
      await file.sync();
    } finally {
      file.close();
    }
  },
  async chmod(path: string, mode: number): Promise<void> {
    if (Deno.build.os === "windows") return;
    await Deno.chmod(path, mode);
  },
  rename: (from: string, to: string): Promise<void> => Deno.rename(from, to),
  remove: (path: string): Promise<void> => Deno.remove(path),
  async syncDir(path: string): Promise<void> {
    if (Deno.build.os === "windows") return; // Directories cannot be opened for fsync there.
    const dir = await Deno.open(path, { read: true });
    try {
      await dir.sync();
    } finally {
      dir.close();
    }
  },
});
