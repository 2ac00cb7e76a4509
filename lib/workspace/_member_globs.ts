/**
 * `workspace.members` globs expanded to existing folders (private to `lib/workspace/`), with the
 * backtracking-free matcher: a `Cargo.toml` may come from a cloned repository, and so may the folders
 * it globs over. `**` does not follow symbolic links (a link back up made `loop/**` a tree of
 * thousands of paths, and a deeper one overflowed the stack); `*`, `?` and `[...]` follow them one
 * level, as Cargo's glob does. Every folder is counted once by its real path, and the folders listed
 * are capped ({@link MAX_MEMBER_GLOB_FOLDERS}) across all of a workspace's globs.
 *
 * @module
 */
import { basename, join, parse as parsePath, resolve } from "node:path";
import { compileGlob, MAX_GLOB_CHARS } from "../glob.ts";
import type { FileSystem } from "../file_system.ts";

/** Deepest folder level `**` descends to below where it starts. */
const MAX_GLOB_DEPTH = 16;
/** Most folders listed while expanding one workspace's `members` globs. */
export const MAX_MEMBER_GLOB_FOLDERS = 4000;

/** What one workspace's expansion has used so far (shared by its globs). */
export interface GlobBudget {
  /** Folders that may still be listed. */
  foldersLeft: number;
  /** Real paths of the folders already matched: each is a member candidate once. */
  matched: Set<string>;
  /** Set when a glob stopped at {@link MAX_MEMBER_GLOB_FOLDERS}. */
  exhausted: boolean;
}

/** A fresh budget for one workspace. */
export function globBudget(): GlobBudget {
  return { foldersLeft: MAX_MEMBER_GLOB_FOLDERS, matched: new Set(), exhausted: false };
}

/**
 * Expands one `workspace.members` entry to existing directories (sorted), each real folder at most
 * once per budget (a folder already matched, under any path, is left out).
 */
export async function expandPattern(
  fs: FileSystem,
  rootDir: string,
  pattern: string,
  budget: GlobBudget,
): Promise<string[]> {
  const fsRoot = parsePath(pattern).root;
  let dirs = [fsRoot === "" ? rootDir : fsRoot];
  let globbed = false;
  for (const segment of pattern.slice(fsRoot.length).split(/[\\/]+/).filter((s) => s !== "" && s !== ".")) {
    if (segment === "**") {
      dirs = await descendants(fs, dirs, budget);
      globbed = true;
    } else if (/[*?[]/.test(segment)) {
      globbed = true;
      // No backtracking RegExp for a cloned repository's globs; one longer than MAX_GLOB_CHARS matches
      // nothing (Cargo would find no member there either).
      const re = segment.length > MAX_GLOB_CHARS
        ? { test: () => false }
        : compileGlob(segment, { classes: true });
      const next: string[] = [];
      for (const dir of dirs) {
        const subs = await subdirectories(fs, dir, budget, { followLinks: true });
        next.push(...subs.filter((d) => re.test(basename(d))));
      }
      dirs = next;
    } else if (!globbed) {
      dirs = dirs.map((d) => resolve(d, segment)); // A plain path: a missing one is reported by the caller.
    } else {
      // After a wildcard only what exists matches, as with Cargo's glob.
      const next: string[] = [];
      for (const dir of dirs) {
        if ((await fs.stat(resolve(dir, segment)))?.isDirectory) next.push(resolve(dir, segment));
      }
      dirs = next;
    }
  }
  const out: string[] = [];
  for (const dir of dirs.sort()) {
    const real = await fs.realPath(dir).catch(() => dir); // Not there: reported by the caller as missing.
    if (budget.matched.has(real)) continue;
    budget.matched.add(real);
    out.push(dir);
  }
  return out;
}

/** Subfolders of `dir`, sorted; symbolic links to folders only with `followLinks`. Counts against the budget. */
async function subdirectories(
  fs: FileSystem,
  dir: string,
  budget: GlobBudget,
  options: { followLinks: boolean },
): Promise<string[]> {
  if (budget.foldersLeft <= 0) {
    budget.exhausted = true;
    return [];
  }
  budget.foldersLeft--;
  let entries;
  try {
    entries = await fs.readDir(dir);
  } catch (error) {
    // A glob over a directory that is not there matches nothing, as in Cargo.
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) return [];
    throw error;
  }
  const out: string[] = [];
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory && !e.isSymlink) out.push(path);
    else if (options.followLinks && e.isSymlink && (await fs.stat(path))?.isDirectory) out.push(path);
  }
  return out.sort();
}

/**
 * `dirs` and every folder below them, breadth first, to {@link MAX_GLOB_DEPTH} levels: symbolic links
 * are not followed and each real folder is listed once (a start folder reached through a link is
 * walked from its real path's view once).
 */
async function descendants(fs: FileSystem, dirs: string[], budget: GlobBudget): Promise<string[]> {
  const seen = new Set<string>();
  const out: string[] = [];
  let level: string[] = [];
  for (const dir of dirs) {
    const real = await fs.realPath(dir).catch(() => null);
    if (real === null || seen.has(real)) continue;
    seen.add(real);
    out.push(dir);
    level.push(dir);
  }
  for (let depth = 0; depth < MAX_GLOB_DEPTH && level.length > 0 && !budget.exhausted; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      for (const sub of await subdirectories(fs, dir, budget, { followLinks: false })) {
        out.push(sub);
        next.push(sub);
      }
    }
    level = next;
  }
  return out;
}
