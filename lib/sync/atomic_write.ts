/**
 * Replaces a file so that a reader (or a crash) only ever sees the old or the new content: the
 * new text goes to a temporary file in the same folder, is flushed, then renamed over the target.
 * The previous content is kept as `<file>.bak`, and the file's permission bits are kept.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { UserError } from "../diagnostics.ts";
import { denoWritableFileSystem, type WritableFileSystem } from "./writable_file_system.ts";

/** Suffix of the one backup kept of a replaced file: `settings.json` → `settings.json.bak`. */
export const BACKUP_SUFFIX = ".bak";

/** Permission bits of a file that did not exist before (before the umask): `0o644`. */
export const NEW_FILE_MODE = 0o644;

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** The file system. @default denoWritableFileSystem */
  fs?: WritableFileSystem;
  /**
   * The content the file had when it was read (`null`: it did not exist). Checked again right
   * before the rename; when the file changed meanwhile (another program wrote it), nothing is
   * replaced. `undefined` skips the check.
   */
  expected?: string | null;
  /** Keep the previous content as `<file>.bak`. @default true */
  backup?: boolean;
  /**
   * Test hook: awaited after the temporary file is written and flushed, before the rename (the
   * crash-injection test stops the process here).
   */
  beforeRename?: (tempPath: string) => Promise<void>;
}

/** What {@link writeFileAtomic} did. */
export interface AtomicWriteResult {
  /** The file actually replaced: `path` with symlinks resolved, so a link stays a link. */
  path: string;
  /** The backup of the previous content, when there was one. */
  backupPath: string | undefined;
  /** The file did not exist before. */
  created: boolean;
}

/**
 * Writes `text` to `path` atomically, creating missing folders.
 *
 * A symlinked target is followed and its target replaced. An existing file keeps its permission
 * bits; its previous content is written (also atomically) to `<real path>.bak` first.
 *
 * @param path Absolute path of the file.
 * @param text The complete new content (UTF-8).
 * @throws {UserError} `code: "SYNC_CONFIG_CHANGED"` when `options.expected` is given and the file
 *   changed since it was read (nothing was replaced); `"SYNC_WRITE_FAILED"` when the file system
 *   refuses (permissions, full disk), with the error as `cause`. The temporary file is removed in
 *   both cases; the original is never touched.
 * @example
 * ```ts ignore
 * await writeFileAtomic("/home/me/.cursor/mcp.json", text, { expected: before });
 * ```
 */
export async function writeFileAtomic(
  path: string,
  text: string,
  options: AtomicWriteOptions = {},
): Promise<AtomicWriteResult> {
  const fs = options.fs ?? denoWritableFileSystem;
  let target = path;
  let temp: string | undefined;
  try {
    const existing = await fs.stat(path);
    target = existing === null ? path : await fs.realPath(path);
    const dir = dirname(target);
    if (existing === null) await fs.mkdirAll(dir);
    const mode = existing === null ? null : await fs.mode(target);
    const fileMode = mode ?? NEW_FILE_MODE;
    let backupPath: string | undefined;
    if (existing !== null && (options.backup ?? true)) {
      const previous = await fs.readTextFile(target);
      backupPath = target + BACKUP_SUFFIX;
      await replaceViaTemp(fs, dir, backupPath, previous, fileMode, mode !== null);
    }
    temp = tempPathFor(dir, target);
    await fs.writeNewFile(temp, text, { mode: fileMode });
    if (mode !== null) await fs.chmod(temp, mode);
    await options.beforeRename?.(temp);
    if (options.expected !== undefined) await assertUnchanged(fs, target, options.expected);
    await fs.rename(temp, target);
    temp = undefined;
    await fs.syncDir(dir);
    return { path: target, backupPath, created: existing === null };
  } catch (error) {
    if (temp !== undefined) {
      await fs.remove(temp).catch(() => {
        // The temp file may not exist (the write itself failed); the original error matters.
      });
    }
    if (error instanceof UserError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new UserError("SYNC_WRITE_FAILED", `Cannot write "${target}": ${reason}`, {
      cause: error,
      hint: "check the permissions of the file and its folder; the original file was left untouched",
    });
  }
}

async function replaceViaTemp(
  fs: WritableFileSystem,
  dir: string,
  path: string,
  text: string,
  mode: number,
  hasMode: boolean,
): Promise<void> {
  const temp = tempPathFor(dir, path);
  try {
    await fs.writeNewFile(temp, text, { mode });
    if (hasMode) await fs.chmod(temp, mode);
    await fs.rename(temp, path);
  } catch (error) {
    await fs.remove(temp).catch(() => {
      // Best effort: the original error is rethrown below.
    });
    throw error;
  }
}

async function assertUnchanged(fs: WritableFileSystem, path: string, expected: string | null): Promise<void> {
  let now: string | null;
  try {
    now = await fs.readTextFile(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    now = null;
  }
  if (now !== expected) {
    throw new UserError(
      "SYNC_CONFIG_CHANGED",
      `Cannot write "${path}": another program changed it meanwhile`,
      {
        hint: "run `cargo-agents sync` again (nothing was written)",
      },
    );
  }
}

/** A fresh temporary name next to `target`: `.<name>.<16 hex>.tmp`. */
function tempPathFor(dir: string, target: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return join(dir, `.${basename(target)}.${hex}.tmp`);
}
