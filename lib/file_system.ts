/**
 * The read-only file-system seam used by everything that reads the user's files (config, plugin
 * manifests, Cargo workspaces), so tests can pass an in-memory tree. {@link denoFileSystem} is the
 * real one.
 *
 * @module
 */

/** What {@link FileSystem.stat} knows about a path (symlinks followed). */
export interface FileInfo {
  isFile: boolean;
  isDirectory: boolean;
  /** Last modification, milliseconds since the epoch (fractional when the platform has finer times); `null` when unknown. */
  mtimeMs: number | null;
}

/** One entry of a directory listing. */
export interface DirEntry {
  /** Base name, e.g. `"Cargo.toml"`. */
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  /** The entry itself is a symlink (its target may be a file or a directory: use `stat`). */
  isSymlink: boolean;
}

/**
 * The file operations the loaders need. Paths are absolute, in the platform's syntax.
 *
 * Missing paths: {@link FileSystem.stat} resolves to `null`; {@link FileSystem.readTextFile} and
 * {@link FileSystem.readDir} reject with `Deno.errors.NotFound` (fakes must do the same).
 */
export interface FileSystem {
  /** Reads a whole UTF-8 file. @throws {Deno.errors.NotFound} when it does not exist. */
  readTextFile(path: string): Promise<string>;
  /** Describes a path, following symlinks; `null` when nothing is there. */
  stat(path: string): Promise<FileInfo | null>;
  /** Lists a directory in no particular order. @throws {Deno.errors.NotFound} when it does not exist. */
  readDir(path: string): Promise<DirEntry[]>;
  /** The canonical absolute path (symlinks resolved). @throws {Deno.errors.NotFound} when it does not exist. */
  realPath(path: string): Promise<string>;
}

/** The real {@link FileSystem}, over `Deno`'s file APIs. Needs `--allow-read`. */
export const denoFileSystem: FileSystem = Object.freeze({
  readTextFile: (path: string): Promise<string> => Deno.readTextFile(path),
  async stat(path: string): Promise<FileInfo | null> {
    try {
      const info = await Deno.stat(path);
      return { isFile: info.isFile, isDirectory: info.isDirectory, mtimeMs: info.mtime?.getTime() ?? null };
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
  },
  async readDir(path: string): Promise<DirEntry[]> {
    const entries: DirEntry[] = [];
    for await (const e of Deno.readDir(path)) {
      entries.push({ name: e.name, isFile: e.isFile, isDirectory: e.isDirectory, isSymlink: e.isSymlink });
    }
    return entries;
  },
  realPath: (path: string): Promise<string> => Deno.realPath(path),
});

/**
 * Reads a file, or resolves to `null` when it does not exist (any other failure still rejects).
 *
 * @example
 * ```ts ignore
 * const text = await readTextFileIfExists(denoFileSystem, "/home/me/.symposium/config.toml");
 * ```
 */
export async function readTextFileIfExists(fs: FileSystem, path: string): Promise<string | null> {
  try {
    return await fs.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}
