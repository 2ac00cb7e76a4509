/**
 * Reading an agent's config file safely: symlinks are followed by hand (so a dangling link names
 * the file to create, and a loop is an error), anything but a regular file is refused by name
 * without being opened (a FIFO would block the read forever), and a file past the size budget is
 * refused before it is read.
 *
 * @module
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { UserError } from "../diagnostics.ts";
import { describeFsError } from "../file_system.ts";
import type { PathKind, PathStatus, WritableFileSystem } from "./writable_file_system.ts";

/** Largest config file `sync` reads: 64 MiB (a busy `~/.claude.json` reaches a few MiB). */
export const MAX_CONFIG_FILE_BYTES = 64 * 1024 * 1024;

/** Symlinks followed from a config path before it counts as a loop: 40, as Linux's `ELOOP`. */
export const MAX_SYMLINK_HOPS = 40;

/** Where a config path leads once its symlinks are followed. */
export interface ResolvedPath {
  /** The file itself (the path when it is no symlink); for a dangling link, the file to create. */
  path: string;
  /** Its status; `null` when nothing is there yet. */
  status: PathStatus | null;
  /** The path was a symlink (dangling or not). */
  viaSymlink: boolean;
}

/**
 * Follows the symlinks of `path` (its last component, link after link) without opening anything.
 *
 * @throws {UserError} `SYNC_SYMLINK_LOOP` past {@link MAX_SYMLINK_HOPS} links.
 */
export async function resolveConfigPath(path: string, fs: WritableFileSystem): Promise<ResolvedPath> {
  let current = path;
  for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
    const status = await fs.lstat(current);
    if (status === null || status.kind !== "symlink") return { path: current, status, viaSymlink: hop > 0 };
    const target = await fs.readLink(current);
    current = isAbsolute(target) ? target : resolve(dirname(current), target);
  }
  throw new UserError(
    "SYNC_SYMLINK_LOOP",
    `Cannot read "${path}": more than ${MAX_SYMLINK_HOPS} symlinks in a row (a loop?)`,
    { hint: "point the link at a real file, then run `cargo-agents sync` again" },
  );
}

const KIND_WORDS: Record<PathKind, string> = {
  file: "a file",
  directory: "a folder",
  symlink: "a symlink",
  fifo: "a FIFO (named pipe)",
  socket: "a socket",
  "char-device": "a character device",
  "block-device": "a block device",
  other: "not a regular file",
};

/**
 * Refuses a config path that is not a regular file, naming what it is.
 *
 * @param shown The path as the user knows it (the link, when there is one).
 * @throws {UserError} `SYNC_NOT_A_FILE`.
 */
export function assertRegularFile(shown: string, resolved: ResolvedPath): void {
  const kind = resolved.status?.kind;
  if (kind === undefined || kind === "file") return;
  const where = resolved.path === shown ? "" : ` (the link leads to "${resolved.path}")`;
  throw new UserError(
    "SYNC_NOT_A_FILE",
    `Cannot read "${shown}": it is ${KIND_WORDS[kind]}, not a regular file${where}`,
    {
      hint:
        "replace it with a regular file (sync never opens anything else), then run `cargo-agents sync` again",
    },
  );
}

/**
 * Reads a config file under the budgets: `null` when it does not exist (also through a dangling
 * symlink); a FIFO, device, socket or folder is refused without being opened.
 *
 * @throws {UserError} `SYNC_NOT_A_FILE`, `SYNC_SYMLINK_LOOP`, `SYNC_CONFIG_TOO_BIG` (past
 *   {@link MAX_CONFIG_FILE_BYTES}), `FILE_NOT_UTF8` (with the position), or `SYNC_READ_FAILED`.
 */
export async function readConfigFile(path: string, fs: WritableFileSystem): Promise<string | null> {
  const resolved = await resolveConfigPath(path, fs);
  if (resolved.status === null) return null;
  assertRegularFile(path, resolved);
  if (resolved.status.sizeBytes > MAX_CONFIG_FILE_BYTES) {
    throw new UserError(
      "SYNC_CONFIG_TOO_BIG",
      `Cannot read "${path}": it has ${resolved.status.sizeBytes} bytes, more than the ${MAX_CONFIG_FILE_BYTES} ` +
        "bytes sync reads",
      { hint: "shrink the file (or add the entry by hand); it was left untouched" },
    );
  }
  try {
    return await fs.readTextFile(resolved.path);
  } catch (error) {
    if (error instanceof UserError) throw error; // not UTF-8, with the position: never rewrite it
    if (error instanceof Deno.errors.NotFound) return null; // removed between the lstat and the read
    throw new UserError("SYNC_READ_FAILED", `Cannot read "${path}": ${describeFsError(error)}`, {
      cause: error,
      hint: "check that the path is a readable file",
    });
  }
}
