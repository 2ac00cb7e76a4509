/**
 * Replaces a file so that a reader (or a crash) only ever sees the old or the new content, the file
 * is never absent, and the old content is always kept: the new text goes to a temporary file in
 * the same folder and is flushed; the current file gets a second name (a hard link) that becomes
 * `<file>.bak`; its content hash is compared with what was read; and the new file is renamed over
 * the current one only if that name still holds the very file compared (checked right before the
 * rename). When another program changed or replaced it meanwhile, its version stays and the caller
 * redoes the edit. A file that did not exist is created with a hard link, which fails rather than
 * replaces when another program created it meanwhile. Permission bits are kept; symlinks are
 * followed, so a link stays a link. Runs of `sync` itself also take `config_lock.ts`'s lock.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { UserError } from "../diagnostics.ts";
import { assertRegularFile, resolveConfigPath } from "./config_file.ts";
import { denoWritableFileSystem, type PathStatus, type WritableFileSystem } from "./writable_file_system.ts";

/** Suffix of the one backup kept of a replaced file: `settings.json` -> `settings.json.bak`. */
export const BACKUP_SUFFIX = ".bak";

/** Permission bits of a file that did not exist before (before the umask): `0o644`. */
export const NEW_FILE_MODE = 0o644;

/**
 * Age past which a temporary file of ours is stale even when its writer's process id cannot be
 * checked (or was reused): 60 000 ms. A live write holds one for milliseconds.
 */
export const STALE_TEMP_AGE_MS = 60_000;

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** The file system. @default denoWritableFileSystem */
  fs?: WritableFileSystem;
  /**
   * The content the file had when it was read (`null`: it did not exist). Compared (by SHA-256)
   * with the file actually displaced; when another program changed it meanwhile, its version is
   * kept and nothing of ours is written. `undefined` skips the check.
   */
  expected?: string | null;
  /** Keep the previous content as `<file>.bak`. @default true */
  backup?: boolean;
  /** Replace a file whose owner-write bit is off (it stays read-only). @default false */
  force?: boolean;
  /**
   * Test hook: awaited after the temporary file is written and flushed, before the swap (the
   * crash-injection and race tests stop or delay the process here).
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
 * Writes `text` to `path` atomically, creating missing folders (also the target of a dangling
 * symlink, so the link stays a link).
 *
 * @param path Absolute path of the file.
 * @param text The complete new content (UTF-8).
 * @throws {UserError} `code: "SYNC_CONFIG_CHANGED"` when `options.expected` is given and another
 *   program changed (or created, or deleted) the file since it was read: its version was kept;
 *   `"SYNC_READ_ONLY"` for a file without owner-write permission and no `force`;
 *   `"SYNC_NOT_A_FILE"` when the path leads to something other than a regular file;
 *   `"SYNC_WRITE_FAILED"` when the file system refuses (permissions, full disk), with the error as
 *   `cause`. The temporary file is removed in every case; the original is never lost.
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
  const resolved = await resolveConfigPath(path, fs);
  assertRegularFile(path, resolved);
  const target = resolved.path;
  const existing = resolved.status;
  if (
    existing !== null && existing.mode !== null && (existing.mode & 0o200) === 0 && options.force !== true
  ) {
    throw new UserError("SYNC_READ_ONLY", `Cannot write "${target}": the file is read-only`, {
      hint: "make it writable (chmod u+w), or run `cargo-agents sync --force` to replace it anyway " +
        "(it stays read-only)",
    });
  }
  const dir = dirname(target);
  const temps: string[] = [];
  try {
    if (existing === null) await fs.mkdirAll(dir);
    const fileMode = existing?.mode ?? NEW_FILE_MODE;
    const temp = tempPathFor(dir, target, "tmp");
    temps.push(temp);
    await fs.writeNewFile(temp, text, { mode: fileMode });
    if (existing !== null && existing.mode !== null) await fs.chmod(temp, existing.mode);
    await options.beforeRename?.(temp);
    const backup = options.backup ?? true;
    let backupPath: string | undefined;
    if (options.expected === undefined) {
      if (existing !== null && backup) backupPath = await copyToBackup(fs, dir, target, fileMode, temps);
      await fs.rename(temp, target);
    } else if (existing === null || options.expected === null) {
      // The file did not exist when read: take the name only if it is still free.
      await claimName(fs, temp, target, options.expected, path);
    } else {
      backupPath = await swapChecked(fs, {
        temp,
        target,
        expected: options.expected,
        backup,
        shown: path,
        temps,
      });
    }
    await fs.syncDir(dir);
    return { path: target, backupPath, created: existing === null };
  } catch (error) {
    if (error instanceof UserError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new UserError("SYNC_WRITE_FAILED", `Cannot write "${target}": ${reason}`, {
      cause: error,
      hint: "check the permissions of the file and its folder; the original file was left untouched",
    });
  } finally {
    for (const t of temps) {
      await fs.remove(t).catch(() => {
        // Most are gone already (renamed or linked and removed); the outcome is what matters.
      });
    }
  }
}

/** The file did not exist when read: link the temp in, unless another program created it since. */
async function claimName(
  fs: WritableFileSystem,
  temp: string,
  target: string,
  expected: string | null,
  shown: string,
): Promise<void> {
  if (expected !== null) throw changed(shown, "deleted it meanwhile");
  try {
    await linkOrRename(fs, temp, target);
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) throw changed(shown, "created it meanwhile");
    throw error;
  }
}

/**
 * The compare-and-swap. The current file is never absent and never deleted: it gets a second name
 * first (a hard link, or a copy where links are unsupported), which becomes `<file>.bak` (or is
 * dropped without `backup`); its content is compared with what was read; and the new file is
 * renamed over it only if the name still holds that very file (inode, size and times, checked
 * right before the rename). Else the other program's version stays and the caller redoes the edit.
 *
 * @returns The backup path, when one was kept.
 */
async function swapChecked(
  fs: WritableFileSystem,
  o: { temp: string; target: string; expected: string; backup: boolean; shown: string; temps: string[] },
): Promise<string | undefined> {
  const aside = tempPathFor(dirname(o.target), o.target, "aside");
  o.temps.push(aside);
  const copied = await keepSecondName(fs, o.target, aside, o.shown);
  const kept = o.backup ? o.target + BACKUP_SUFFIX : aside;
  if (o.backup) await fs.rename(aside, kept); // The previous backup goes; this file has two names.
  // For a link, its status now (a link and a rename move the change time); for a copy, the original's.
  const before = copied === "linked" ? await fs.lstat(kept) : copied;
  if (before === null) throw changed(o.shown, "deleted it meanwhile");
  const keptHash = await sha256(await fs.readBytes(kept));
  if (keptHash !== await sha256(new TextEncoder().encode(o.expected))) {
    throw changed(o.shown, "changed it meanwhile");
  }
  if (!await fs.renameIfUnchanged(o.temp, o.target, before)) throw changed(o.shown, "changed it meanwhile");
  return o.backup ? kept : undefined;
}

/**
 * Gives the file at `target` the second name `aside`: a hard link (the same file), or where the
 * file system has none, a copy.
 *
 * @returns `"linked"`, or for a copy the status `target` had before it was copied.
 */
async function keepSecondName(
  fs: WritableFileSystem,
  target: string,
  aside: string,
  shown: string,
): Promise<"linked" | PathStatus> {
  try {
    await fs.link(target, aside);
    return "linked";
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw changed(shown, "deleted it meanwhile");
    if (!(error instanceof Deno.errors.NotSupported || error instanceof Deno.errors.PermissionDenied)) {
      throw error;
    }
  }
  const status = await fs.lstat(target);
  if (status === null) throw changed(shown, "deleted it meanwhile");
  const bytes = await fs.readBytes(target);
  await fs.writeNewFile(aside, new TextDecoder().decode(bytes), { mode: status.mode ?? NEW_FILE_MODE });
  return status;
}

/** `link` (never replaces); where hard links are unsupported, a plain rename. */
async function linkOrRename(fs: WritableFileSystem, from: string, to: string): Promise<void> {
  try {
    await fs.link(from, to);
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) throw error;
    if (!(error instanceof Deno.errors.NotSupported || error instanceof Deno.errors.PermissionDenied)) {
      throw error;
    }
    // No hard links on this file system (FAT, some network mounts): the name is free (we checked
    // or moved the file aside), so a rename is the same step with a window of microseconds.
    await fs.rename(from, to);
  }
}

async function copyToBackup(
  fs: WritableFileSystem,
  dir: string,
  target: string,
  mode: number,
  temps: string[],
): Promise<string> {
  const previous = await fs.readTextFile(target);
  const backupPath = target + BACKUP_SUFFIX;
  const temp = tempPathFor(dir, backupPath, "tmp");
  temps.push(temp);
  await fs.writeNewFile(temp, previous, { mode });
  await fs.chmod(temp, mode);
  await fs.rename(temp, backupPath);
  return backupPath;
}

function changed(path: string, what: string): UserError {
  return new UserError("SYNC_CONFIG_CHANGED", `Cannot write "${path}": another program ${what}`, {
    hint: "its version was kept; run `cargo-agents sync` again",
  });
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The kinds of file of ours that sit beside a target: a new version, or a displaced one. */
export type OwnFileKind = "tmp" | "aside";

const OWN_FILE = /^\.(.+)\.(\d+)-([0-9a-f]{16})\.(tmp|aside)$/;

/** A fresh name next to `target`: `.<name>.<pid>-<16 hex>.tmp` (or `.aside`). */
function tempPathFor(dir: string, target: string, kind: OwnFileKind): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return join(dir, `.${basename(target)}.${Deno.pid}-${hex}.${kind}`);
}

/** A file of ours found beside a target. */
export interface OwnFile {
  path: string;
  kind: OwnFileKind;
  /** Process id of the `sync` that made it. */
  pid: number;
  /** The file it belongs to: the target, or the target's `.bak`. */
  of: string;
}

/** Parses a name made by {@link writeFileAtomic} in `dir`; `undefined` for any other name. */
export function parseOwnFileName(dir: string, name: string): OwnFile | undefined {
  const m = OWN_FILE.exec(name);
  if (m === null) return undefined;
  return { path: join(dir, name), kind: m[4] as OwnFileKind, pid: Number(m[2]), of: join(dir, m[1]!) };
}
