/**
 * The file-system seam of `sync`: the shared read-only {@link FileSystem} plus what a safe atomic
 * replace needs (link-aware status, hard links, renames). {@link denoWritableFileSystem} is the real one.
 *
 * @module
 */
import { denoFileSystem, type FileSystem } from "../file_system.ts";

/** What a path is, as `lstat` tells it. */
export type PathKind =
  | "file"
  | "directory"
  | "symlink"
  | "fifo"
  | "socket"
  | "char-device"
  | "block-device"
  | "other";

/** The status of a path itself (a symlink is reported as `"symlink"`, not followed). */
export interface PathStatus {
  kind: PathKind;
  /** Size in bytes (of the link itself for a symlink). */
  sizeBytes: number;
  /** Permission bits (`mode & 0o7777`); `null` where the platform has none (Windows). */
  mode: number | null;
  /** Last modification, milliseconds since the epoch; `null` when unknown. */
  mtimeMs: number | null;
  /**
   * Last change of the content or of the entry (the later of mtime and ctime: a rename moves
   * ctime, not mtime), milliseconds since the epoch; `null` when unknown.
   */
  changedMs: number | null;
  /** The file's inode number (which file it is, whatever its name); `null` where the platform has none. */
  ino: number | null;
}

/**
 * Reads and writes for `sync`. Paths are absolute. Missing paths behave as in {@link FileSystem}.
 */
export interface WritableFileSystem extends FileSystem {
  /** Permission bits (`mode & 0o7777`) of an existing path, symlinks followed; `null` where the platform has none. */
  mode(path: string): Promise<number | null>;
  /** The status of `path` itself, without following a final symlink; `null` when nothing is there. */
  lstat(path: string): Promise<PathStatus | null>;
  /** The target a symlink stores, as written (possibly relative). @throws when `path` is not a symlink. */
  readLink(path: string): Promise<string>;
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
  /** Reads a whole file as bytes (for the content hash). */
  readBytes(path: string): Promise<Uint8Array>;
  /** Sets permission bits (no-op where the platform has none). */
  chmod(path: string, mode: number): Promise<void>;
  /** Renames `from` to `to` in one step, replacing `to`. Both are in the same folder. */
  rename(from: string, to: string): Promise<void>;
  /**
   * Renames `from` over `to` only when `to` is still the file described by `expected` (same inode,
   * size, modification and change times); the check and the rename run back to back, a few
   * microseconds apart, with nothing else of ours in between.
   *
   * @returns `false` (nothing renamed) when `to` changed, was replaced or is gone.
   */
  renameIfUnchanged(from: string, to: string, expected: PathStatus): Promise<boolean>;
  /**
   * Gives the file `existing` a second name `newPath` (a hard link) in one step.
   *
   * @throws {Deno.errors.AlreadyExists} when `newPath` exists: it is never replaced.
   */
  link(existing: string, newPath: string): Promise<void>;
  /** Removes a file. @throws {Deno.errors.NotFound} when it does not exist. */
  remove(path: string): Promise<void>;
  /** Flushes a directory's entries to disk, so a rename survives a power loss (best effort). */
  syncDir(path: string): Promise<void>;
  /** Whether a process with this id is running; `undefined` when the platform cannot tell (Windows). */
  isProcessAlive(pid: number): Promise<boolean | undefined>;
}

function kindOf(info: Deno.FileInfo): PathKind {
  if (info.isSymlink) return "symlink";
  if (info.isFile) return "file";
  if (info.isDirectory) return "directory";
  if (info.isFifo) return "fifo";
  if (info.isSocket) return "socket";
  if (info.isCharDevice) return "char-device";
  if (info.isBlockDevice) return "block-device";
  return "other";
}

function statusOf(info: Deno.FileInfo): PathStatus {
  return {
    kind: kindOf(info),
    sizeBytes: info.size,
    mode: info.mode === null ? null : info.mode & 0o7777,
    mtimeMs: info.mtime?.getTime() ?? null,
    changedMs: Math.max(info.mtime?.getTime() ?? 0, info.ctime?.getTime() ?? 0) || null,
    ino: info.ino,
  };
}

/**
 * Whether two statuses describe the same, unchanged file: same kind, inode, size, modification
 * and change times (a rewrite in place moves the times; a replacement changes the inode).
 */
export function sameFile(a: PathStatus, b: PathStatus): boolean {
  return a.kind === b.kind && a.ino === b.ino && a.sizeBytes === b.sizeBytes && a.mtimeMs === b.mtimeMs &&
    a.changedMs === b.changedMs;
}

/** The real {@link WritableFileSystem}, over `Deno`'s file APIs. Needs `--allow-read --allow-write`. */
export const denoWritableFileSystem: WritableFileSystem = Object.freeze({
  ...denoFileSystem,
  async mode(path: string): Promise<number | null> {
    const info = await Deno.stat(path);
    return info.mode === null ? null : info.mode & 0o7777;
  },
  async lstat(path: string): Promise<PathStatus | null> {
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) return null;
      throw error;
    }
    return statusOf(info);
  },
  readLink: (path: string): Promise<string> => Deno.readLink(path),
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
  readBytes: (path: string): Promise<Uint8Array> => Deno.readFile(path),
  async chmod(path: string, mode: number): Promise<void> {
    if (Deno.build.os === "windows") return;
    await Deno.chmod(path, mode);
  },
  rename: (from: string, to: string): Promise<void> => Deno.rename(from, to),
  renameIfUnchanged(from: string, to: string, expected: PathStatus): Promise<boolean> {
    // Synchronous on purpose: no await (no other task) between the check and the rename.
    let now: PathStatus;
    try {
      now = statusOf(Deno.lstatSync(to));
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return Promise.resolve(false);
      return Promise.reject(error);
    }
    if (!sameFile(now, expected)) return Promise.resolve(false);
    try {
      Deno.renameSync(from, to);
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.resolve(true);
  },
  link: (existing: string, newPath: string): Promise<void> => Deno.link(existing, newPath),
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
  async isProcessAlive(pid: number): Promise<boolean | undefined> {
    if (Deno.build.os === "windows") return undefined;
    try {
      // `kill -0` sends no signal; it only asks whether the process exists (the shell's builtin,
      // so no separate `kill` program is needed).
      const out = await new Deno.Command("sh", {
        args: ["-c", 'kill -0 "$1"', "sh", String(pid)],
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).output();
      if (out.code === 0) return true;
      return /no such process/i.test(new TextDecoder().decode(out.stderr)) ? false : undefined;
    } catch {
      return undefined; // No shell to ask: the age rule decides.
    }
  },
});
