/**
 * The read-only file-system seam used by everything that reads the user's files (config, plugin
 * manifests, Cargo workspaces), so tests can pass an in-memory tree. {@link denoFileSystem} is the
 * real one.
 *
 * @module
 */
import { UserError } from "./diagnostics.ts";

/** What {@link FileSystem.stat} knows about a path (symlinks followed). */
export interface FileInfo {
  isFile: boolean;
  isDirectory: boolean;
  /** Last modification, milliseconds since the epoch (fractional when the platform has finer times); `null` when unknown. */
  mtimeMs: number | null;
  /** Size in bytes, when known (the real file system always knows). */
  size?: number | undefined;
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
  /**
   * Reads a whole UTF-8 file. @throws {Deno.errors.NotFound} when it does not exist.
   * @throws {InvalidUtf8Error} when it is not valid UTF-8 (the real one; fakes hold text already).
   */
  readTextFile(path: string): Promise<string>;
  /** Describes a path, following symlinks; `null` when nothing is there. */
  stat(path: string): Promise<FileInfo | null>;
  /** Lists a directory in no particular order. @throws {Deno.errors.NotFound} when it does not exist. */
  readDir(path: string): Promise<DirEntry[]>;
  /** The canonical absolute path (symlinks resolved). @throws {Deno.errors.NotFound} when it does not exist. */
  realPath(path: string): Promise<string>;
}

/**
 * A file that is not valid UTF-8. `code: "FILE_NOT_UTF8"`, located at the first invalid byte
 * (1-based line, and column in UTF-16 code units of the valid text before it).
 */
export class InvalidUtf8Error extends UserError {
  override name = "InvalidUtf8Error";
  /** 0-based offset of the first invalid byte. */
  readonly byteOffset: number;
  constructor(path: string, bytes: Uint8Array) {
    const offset = Math.max(0, firstInvalidUtf8(bytes));
    const before = new TextDecoder().decode(bytes.subarray(0, offset));
    const lineStart = before.lastIndexOf("\n") + 1;
    const line = before.split("\n").length;
    const byte = bytes[offset]?.toString(16).toUpperCase().padStart(2, "0") ?? "end of file";
    super("FILE_NOT_UTF8", `Cannot read "${path}": it is not valid UTF-8 (byte 0x${byte})`, {
      hint: "save the file as UTF-8 (the invalid byte is at the position shown)",
      location: { file: path, line, column: before.length - lineStart + 1 },
    });
    this.byteOffset = offset;
  }
}

/**
 * Decodes UTF-8 strictly: a leading byte-order mark is kept (as `Deno.readTextFile` does), an
 * invalid sequence is an error instead of U+FFFD.
 *
 * @param path Named in the error.
 * @throws {InvalidUtf8Error} at the first invalid byte.
 */
export function decodeUtf8Strict(bytes: Uint8Array, path: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    throw new InvalidUtf8Error(path, bytes);
  }
}

/** Offset of the first byte that does not start a well-formed UTF-8 sequence; -1 when all are valid. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    const len = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (len === 0 || i + len > bytes.length) return i;
    for (let k = 1; k < len; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    const next = bytes[i + 1]!;
    // Overlong forms, UTF-16 surrogates and code points above U+10FFFF.
    if ((b === 0xe0 && next < 0xa0) || (b === 0xed && next > 0x9f)) return i;
    if ((b === 0xf0 && next < 0x90) || (b === 0xf4 && next > 0x8f)) return i;
    i += len;
  }
  return -1;
}

/**
 * The real {@link FileSystem}, over `Deno`'s file APIs. Needs `--allow-read`. Text is decoded
 * strictly: a file that is not UTF-8 rejects with {@link InvalidUtf8Error}.
 */
export const denoFileSystem: FileSystem = Object.freeze({
  readTextFile: async (path: string): Promise<string> => decodeUtf8Strict(await Deno.readFile(path), path),
  async stat(path: string): Promise<FileInfo | null> {
    try {
      const info = await Deno.stat(path);
      return {
        isFile: info.isFile,
        isDirectory: info.isDirectory,
        mtimeMs: info.mtime?.getTime() ?? null,
        size: info.size,
      };
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

/**
 * A one-clause account of a file-system failure for a user message, e.g. `it is a folder, not a
 * file` or `permission denied`; falls back to the error's own message.
 */
export function describeFsError(error: unknown): string {
  if (error instanceof Deno.errors.IsADirectory) return "it is a folder, not a file";
  if (error instanceof Deno.errors.NotADirectory) return "a part of the path is a file, not a folder";
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (error instanceof Deno.errors.NotFound) return "it does not exist";
  return error instanceof Error ? error.message : String(error);
}
