/**
 * The folders we own under the config dir (`logs/`, `cache/`, `credentials/`) hold secrets or
 * traces of them, so they cannot be turned against the user: a folder that is a symbolic link or
 * belongs to another user is refused (naming the path), a folder we create is 0700, files we write
 * are 0600 and replace the target by rename (never written through a link), and pruning removes
 * only regular files we created, judged with `lstat`. A folder we did not create is never chmod'ed.
 * On Windows, modes and owners do not apply; the link check still does.
 *
 * @module
 */
import { UserError } from "../diagnostics.ts";

/** Mode of a folder we create. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of a file we write. */
export const PRIVATE_FILE_MODE = 0o600;

/** What {@link ensurePrivateDir} found or did. */
export interface PrivateDirState {
  /** The folder was created now (and given {@link PRIVATE_DIR_MODE}). */
  created: boolean;
  /**
   * An existing folder that others can read or enter (group/other permission bits), as octal
   * text, e.g. `"755"`; `undefined` when private (or on Windows). It is left as it is.
   */
  looseMode?: string | undefined;
}

const isWindows = () => Deno.build.os === "windows";

/**
 * A folder of ours that cannot be used safely. Codes: `PRIVATE_DIR_SYMLINK` (it is a symbolic
 * link), `PRIVATE_DIR_NOT_OWNED` (another user owns it), `PRIVATE_DIR_NOT_A_FOLDER` (a file is
 * there), `PRIVATE_DIR_UNUSABLE` (it cannot be examined or created).
 */
export class PrivateDirError extends UserError {
  override name = "PrivateDirError";
  /** The folder. */
  readonly path: string;
  constructor(code: string, path: string, state: string, hint: string, cause?: unknown) {
    super(code, `Cannot use "${path}": ${state}`, { hint, cause });
    this.path = path;
  }
}

/**
 * Makes sure `path` is a folder we may keep private files in, creating it (and missing parents)
 * when absent. The last component is examined with `lstat`: a symbolic link there is refused, not
 * followed (a link would let pruning delete, or chmod change, whatever it points to).
 *
 * @param path Absolute path of the folder, e.g. `<config>/logs`.
 * @returns Whether it was created now, and its mode when others can read it (it is not changed).
 * @throws {PrivateDirError} `PRIVATE_DIR_SYMLINK`, `PRIVATE_DIR_NOT_OWNED`,
 *   `PRIVATE_DIR_NOT_A_FOLDER`, `PRIVATE_DIR_UNUSABLE`.
 * @example
 * ```ts ignore
 * ensurePrivateDir(`${configDir}/logs`); // { created: true }
 * ```
 */
export function ensurePrivateDir(path: string): PrivateDirState {
  let info = lstatOrNull(path);
  let created = false;
  if (info === null) {
    const parent = path.replace(/[\\/][^\\/]+[\\/]*$/, "");
    try {
      if (parent && parent !== path) Deno.mkdirSync(parent, { recursive: true });
      Deno.mkdirSync(path, { mode: PRIVATE_DIR_MODE });
      created = true;
    } catch (error) {
      // Another process created it meanwhile: examine what is there now.
      if (!(error instanceof Deno.errors.AlreadyExists)) {
        throw new PrivateDirError(
          "PRIVATE_DIR_UNUSABLE",
          path,
          `it cannot be created (${describe(error)})`,
          "check the permissions of the configuration folder",
          error,
        );
      }
    }
    info = lstatOrNull(path);
    if (info === null) {
      throw new PrivateDirError("PRIVATE_DIR_UNUSABLE", path, "it vanished while being created", "run again");
    }
  }
  checkPrivateDir(path, info);
  if (created && !isWindows()) {
    Deno.chmodSync(path, PRIVATE_DIR_MODE); // Ours, just made: the umask may have widened it.
    return { created };
  }
  const mode = info.mode;
  const loose = !isWindows() && mode !== null && (mode & 0o077) !== 0;
  return loose ? { created, looseMode: (mode & 0o777).toString(8) } : { created };
}

/**
 * Examines an existing folder of ours without creating anything (for `status`).
 *
 * @returns `null` when nothing is there; else what {@link ensurePrivateDir} would return.
 * @throws {PrivateDirError} As {@link ensurePrivateDir}, except `PRIVATE_DIR_UNUSABLE` for absence.
 */
export function inspectPrivateDir(path: string): PrivateDirState | null {
  const info = lstatOrNull(path);
  if (info === null) return null;
  checkPrivateDir(path, info);
  const mode = info.mode;
  const loose = !isWindows() && mode !== null && (mode & 0o077) !== 0;
  return loose ? { created: false, looseMode: (mode & 0o777).toString(8) } : { created: false };
}

function checkPrivateDir(path: string, info: Deno.FileInfo): void {
  if (info.isSymlink) {
    throw new PrivateDirError(
      "PRIVATE_DIR_SYMLINK",
      path,
      "it is a symbolic link; cargo-agents keeps secrets there and does not follow links out of its folder",
      `remove the link (\`rm ${shellQuote(path)}\`); the next run creates a private folder there`,
    );
  }
  if (!info.isDirectory) {
    throw new PrivateDirError(
      "PRIVATE_DIR_NOT_A_FOLDER",
      path,
      "it is not a folder",
      `move the file away; the next run creates a private folder there`,
    );
  }
  const uid = isWindows() ? null : Deno.uid();
  if (uid !== null && info.uid !== null && info.uid !== uid) {
    throw new PrivateDirError(
      "PRIVATE_DIR_NOT_OWNED",
      path,
      `it belongs to another user (uid ${info.uid}, this process runs as uid ${uid})`,
      `remove it or give it to this user (\`chown -R ${uid} ${shellQuote(path)}\`)`,
    );
  }
}

/**
 * Writes `bytes` to `dir/name` privately: a new temporary file in `dir` created with
 * {@link PRIVATE_FILE_MODE} (`O_EXCL`, so never through a link), synced, then renamed over the
 * target (a link at the target is replaced, not followed). The temporary file is removed on failure.
 *
 * @param dir A folder checked with {@link ensurePrivateDir}.
 * @param name File name without folder.
 * @throws Whatever the file system throws.
 */
export async function writePrivateFile(dir: string, name: string, bytes: Uint8Array): Promise<void> {
  const path = `${dir}/${name}`;
  const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  // A umask only removes permission bits: the file is 0600 or narrower, never wider.
  const file = await Deno.open(tmp, { createNew: true, write: true, mode: PRIVATE_FILE_MODE });
  try {
    let written = 0;
    while (written < bytes.length) written += await file.write(bytes.subarray(written));
    await file.syncData();
    file.close();
    await Deno.rename(tmp, path);
  } catch (error) {
    try {
      file.close();
    } catch {
      // Already closed before the rename failed.
    }
    await Deno.remove(tmp).catch(() => {}); // Best effort: the write already failed.
    throw error;
  }
}

/**
 * Opens a new file `dir/name` for appending, created with {@link PRIVATE_FILE_MODE} and `O_EXCL`
 * (an existing file or link of that name is an error, never opened).
 *
 * @throws {Deno.errors.AlreadyExists} when something is already at the path; other file-system errors.
 */
export function createPrivateFileSync(dir: string, name: string): Deno.FsFile {
  // A umask only removes permission bits: the file is 0600 or narrower, never wider.
  return Deno.openSync(`${dir}/${name}`, { createNew: true, append: true, mode: PRIVATE_FILE_MODE });
}

/** One regular file of ours found by {@link listOwnFiles}. */
export interface OwnFile {
  name: string;
  path: string;
  /** Last modification, ms since the epoch (0 when unknown). */
  mtimeMs: number;
}

/**
 * The regular files directly in `dir` whose name matches `pattern` and that belong to this user,
 * judged with `lstat` (links, folders and other users' files are never listed, so never pruned).
 *
 * @returns Files in no particular order; `[]` when `dir` cannot be listed.
 */
export function listOwnFiles(dir: string, pattern: RegExp): OwnFile[] {
  const uid = isWindows() ? null : Deno.uid();
  const files: OwnFile[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return []; // Nothing to list: nothing of ours.
  }
  for (const entry of entries) {
    if (!pattern.test(entry.name)) continue;
    const path = `${dir}/${entry.name}`;
    const info = lstatOrNull(path);
    if (info === null || !info.isFile || info.isSymlink) continue;
    if (uid !== null && info.uid !== null && info.uid !== uid) continue;
    files.push({ name: entry.name, path, mtimeMs: info.mtime?.getTime() ?? 0 });
  }
  return files;
}

function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw new PrivateDirError(
      "PRIVATE_DIR_UNUSABLE",
      path,
      `it cannot be examined (${describe(error)})`,
      "check the permissions of the configuration folder",
      error,
    );
  }
}

function describe(error: unknown): string {
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (error instanceof Deno.errors.NotADirectory) return "a part of the path is a file, not a folder";
  return error instanceof Error ? error.message : String(error);
}

function shellQuote(path: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}
