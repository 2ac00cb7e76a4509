/**
 * Change detection for re-resolution: modification times and sizes of the Cargo files,
 * `config.toml` and the plugins folder, folded into one fingerprint string (and the files' part alone,
 * which a request checks synchronously).
 *
 * @module
 */
import type { LoadedResolution } from "./resolve.ts";
import { CONFIG_FILE_NAME } from "../plugins/config.ts";
import { MAX_PLUGIN_DEPTH, PLUGIN_MANIFEST_NAME } from "../plugins/mod.ts";

/** The files whose change means re-resolution, besides the plugins folder: Cargo files and `config.toml`. */
export function watchedFiles(loaded: LoadedResolution, cwd: string): string[] {
  const held = WATCHED.get(loaded);
  if (held?.cwd === cwd) return held.files;
  const files = watchedFilesOf(loaded, cwd);
  WATCHED.set(loaded, { cwd, files });
  return files;
}

/** {@link watchedFiles} per resolution (every request's change check asks); the list is never changed. */
const WATCHED = new WeakMap<LoadedResolution, { cwd: string; files: string[] }>();

function watchedFilesOf(loaded: LoadedResolution, cwd: string): string[] {
  const root = loaded.workspace.root;
  const files = new Set<string>(loaded.workspace.manifests);
  if (root) files.add(`${root}/Cargo.lock`);
  else files.add(`${cwd}/Cargo.toml`);
  files.add(`${loaded.configDir}/${CONFIG_FILE_NAME}`);
  // Workspace manifests (present or not), trusted.toml, crate plugins' manifests.
  for (const file of loaded.sources?.watch.files ?? []) files.add(file);
  return [...files].sort();
}

async function statPart(path: string): Promise<string> {
  try {
    const info = await Deno.stat(path);
    return `${path}:${info.mtime?.getTime() ?? 0}:${info.size}`;
  } catch {
    return `${path}:missing`; // A missing file is a state too: its appearance is a change.
  }
}

/** Most watched files a request stats itself; the rest (members' files) are left to the watch. */
export const SYNC_CHECKED_MAX = 64;

/**
 * Time after a folder's last change from which it is settled, ms (2 s: more than any file system's time
 * granularity, FAT's included). A file created in a settled folder gives it a later modification time and a
 * later status change time (which, unlike the former, `touch -d` cannot set back).
 */
export const SETTLED_FOLDER_MS = 2_000;

/**
 * What a request's looks learned about missing files of the top folders (`trusted.toml`, the root
 * `SYMPOSIUM.toml`, ...). Creating, renaming or deleting a file changes its folder's modification time, so a
 * file found missing while its folder was settled ({@link SETTLED_FOLDER_MS}) is missing still while the
 * folder keeps that time: a look stats the folder (a few µs) instead of failing to stat the file (a thrown
 * NotFound, 15-70 µs in `mcp-serve`). A dangling link is not remembered (its target appears elsewhere). One
 * per change detector; paths are absolute.
 */
export class MissingFiles {
  /** Missing file -> its folder's {@link FolderTime} key when it was found missing. */
  readonly #known = new Map<string, string>();

  /** The folder time key a missing `path` was found with, if it is known to be missing. */
  folderTimeOf(path: string): string | undefined {
    return this.#known.get(path);
  }

  /** `path` was found missing while its folder had time `folder` (kept only when settled at `nowMs`). */
  found(path: string, folder: FolderTime | undefined, nowMs: number): void {
    if (folder !== undefined && folder.latestMs <= nowMs - SETTLED_FOLDER_MS) {
      this.#known.set(path, folder.key);
    } else this.#known.delete(path);
  }
}

/** A folder's modification and status change times: `key` tells them apart, `latestMs` is the later one. */
export interface FolderTime {
  key: string;
  latestMs: number;
}

/** The {@link FolderTime} of `folder`; `undefined` when it cannot be stat'ed or has no modification time. */
function folderTimeOf(folder: string): FolderTime | undefined {
  try {
    const info = Deno.statSync(folder);
    const mtimeMs = info.mtime?.getTime(), ctimeMs = info.ctime?.getTime() ?? 0;
    return mtimeMs === undefined
      ? undefined
      : { key: `${mtimeMs}:${ctimeMs}`, latestMs: Math.max(mtimeMs, ctimeMs) };
  } catch {
    return undefined; // no folder: its files are stat'ed (and missing)
  }
}

/**
 * The part of the fingerprint a request checks itself: modification time and size of the watched files
 * in the workspace root, the working directory and the config folder (`Cargo.lock`, the root
 * `Cargo.toml` and `SYMPOSIUM.toml`, `config.toml`, `trusted.toml`), then others, stat'ed synchronously
 * (microseconds each on a local disk): with the top folders themselves, at most {@link SYNC_CHECKED_MAX}
 * stats. A large workspace's thousands of member files are covered by the file-system watch (or an exact
 * look), not stat'ed on every request. The text is the same with or without `missing`.
 *
 * @param missing What earlier looks learned (see {@link MissingFiles}); without it, every file is stat'ed.
 * @param nowMs The current time, ms since the epoch. @default Date.now()
 */
export function filesFingerprintSync(
  loaded: LoadedResolution,
  cwd: string,
  missing?: MissingFiles,
  nowMs: number = Date.now(),
): string {
  const { files, topCount } = syncChecked(loaded, cwd);
  const folderTimes = new Map<string, FolderTime | undefined>();
  const folderTime = (folder: string): FolderTime | undefined => {
    if (!folderTimes.has(folder)) folderTimes.set(folder, folderTimeOf(folder));
    return folderTimes.get(folder);
  };
  return files.map((path, index) => {
    const folder = index < topCount && missing ? path.slice(0, path.lastIndexOf("/")) : undefined;
    if (folder !== undefined) {
      const known = missing!.folderTimeOf(path);
      if (known !== undefined && folderTime(folder)?.key === known) return `${path}:missing`;
    }
    try {
      const info = Deno.statSync(path);
      if (folder !== undefined) missing!.found(path, undefined, nowMs);
      return `${path}:${info.mtime?.getTime() ?? 0}:${info.size}`;
    } catch (error) {
      // Only a name with no entry at all is remembered: a dangling link's target (or a file behind a folder
      // that cannot be searched) appears without a change to this folder's time.
      if (folder !== undefined) {
        missing!.found(path, hasNoEntry(path, error) ? folderTime(folder) : undefined, nowMs);
      }
      return `${path}:missing`; // A missing file is a state too: its appearance is a change.
    }
  }).join("|");
}

/** Whether `path`, which `stat` failed on with `error`, has no directory entry (not a dangling link, say). */
function hasNoEntry(path: string, error: unknown): boolean {
  if (!(error instanceof Deno.errors.NotFound)) return false;
  try {
    Deno.lstatSync(path);
    return false;
  } catch (lstatError) {
    return lstatError instanceof Deno.errors.NotFound;
  }
}

/**
 * {@link filesFingerprintSync}'s files per resolution: the top folders' first (`topCount` of them), then
 * others, as many as leave room for a stat of each top folder within {@link SYNC_CHECKED_MAX}.
 */
function syncChecked(loaded: LoadedResolution, cwd: string): { files: string[]; topCount: number } {
  const held = SYNC_CHECKED.get(loaded);
  if (held?.cwd === cwd) return held;
  const all = watchedFiles(loaded, cwd);
  const top = new Set([loaded.workspace.root ?? cwd, cwd, loaded.configDir]);
  const isTop = (file: string) => top.has(file.slice(0, file.lastIndexOf("/")));
  const tops = all.filter(isTop);
  const files = [...tops, ...all.filter((f) => !isTop(f))].slice(0, SYNC_CHECKED_MAX - top.size);
  const checked = { cwd, files, topCount: Math.min(tops.length, files.length) };
  SYNC_CHECKED.set(loaded, checked);
  return checked;
}

const SYNC_CHECKED = new WeakMap<LoadedResolution, { cwd: string; files: string[]; topCount: number }>();

/**
 * The plugins folder as `loadPlugins()` walks it: every folder's modification time (a plugin
 * folder added, removed or renamed changes its parent's) and every manifest's time and size.
 * Plugin folders are not descended into, dot-folders are skipped, symlinks are followed once.
 * Siblings are looked at concurrently; the parts come out in a fixed order.
 */
async function pluginTreeParts(dir: string, depth: number, visited: Set<string>): Promise<string[]> {
  let real: string;
  try {
    real = await Deno.realPath(dir);
  } catch {
    return [`${dir}:missing`];
  }
  if (visited.has(real)) return [];
  visited.add(real);
  const [dirPart, manifestPart] = await Promise.all([
    statPart(dir),
    statPart(`${dir}/${PLUGIN_MANIFEST_NAME}`),
  ]);
  const isPlugin = !manifestPart.endsWith(":missing");
  if (depth > 0 && isPlugin) return [dirPart, manifestPart];
  // `plugins/SYMPOSIUM.toml` itself is reported as a problem: its appearance is a change too.
  const parts = depth === 0 ? [dirPart, manifestPart] : [dirPart];
  if (depth > 0 && depth >= MAX_PLUGIN_DEPTH) return parts;
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.name.startsWith(".") && !entry.isFile) names.push(entry.name);
    }
  } catch (error) {
    return [...parts, `${dir}:unreadable:${String(error)}`];
  }
  const children = await Promise.all(
    names.sort().map(async (name) => {
      const path = `${dir}/${name}`;
      const info = await Deno.stat(path).catch(() => undefined); // a dangling symlink is no folder
      return info?.isDirectory ? await pluginTreeParts(path, depth + 1, visited) : [];
    }),
  );
  return [...parts, ...children.flat()];
}

/**
 * Modification times and sizes of the files whose change means re-resolution: the watched files, the
 * plugins folder and path registries' folders (walked), and the folder of git registries' copies
 * (a sync swaps a copy in by rename and rewrites its record there, which changes the folder's time).
 */
export async function fingerprintOf(loaded: LoadedResolution, cwd: string): Promise<string> {
  const watch = loaded.sources?.watch;
  const [files, plugins, registries, copies] = await Promise.all([
    Promise.all(watchedFiles(loaded, cwd).map(statPart)),
    pluginTreeParts(`${loaded.configDir}/plugins`, 0, new Set()),
    Promise.all((watch?.deep ?? []).map((dir) => pluginTreeParts(dir, 0, new Set()))),
    Promise.all((watch?.flat ?? []).map(statPart)),
  ]);
  return [...files, ...plugins, ...registries.flat(), ...copies].join("|");
}
