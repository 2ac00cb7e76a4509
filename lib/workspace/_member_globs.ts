/**
 * `workspace.members` globs expanded to existing folders (private to `lib/workspace/`), with the
 * backtracking-free matcher: a `Cargo.toml` may come from a cloned repository.
 *
 * @module
 */
import { basename, join, parse as parsePath, resolve } from "node:path";
import { compileGlob, MAX_GLOB_CHARS } from "../glob.ts";
import type { FileSystem } from "../file_system.ts";

const MAX_GLOB_DEPTH = 16;

/** Expands one `workspace.members` entry to existing directories (sorted). */
export async function expandPattern(fs: FileSystem, rootDir: string, pattern: string): Promise<string[]> {
  const fsRoot = parsePath(pattern).root;
  let dirs = [fsRoot === "" ? rootDir : fsRoot];
  for (const segment of pattern.slice(fsRoot.length).split(/[\\/]+/).filter((s) => s !== "" && s !== ".")) {
    if (segment === "**") {
      const all: string[] = [];
      for (const dir of dirs) all.push(dir, ...(await descendants(fs, dir, MAX_GLOB_DEPTH)));
      dirs = [...new Set(all)];
    } else if (/[*?[]/.test(segment)) {
      // Cargo.toml may come from a cloned repository: no backtracking RegExp for its globs; one
      // longer than MAX_GLOB_CHARS matches nothing (Cargo would find no member there either).
      const re = segment.length > MAX_GLOB_CHARS
        ? { test: () => false }
        : compileGlob(segment, { classes: true });
      const next: string[] = [];
      for (const dir of dirs) {
        next.push(...(await subdirectories(fs, dir)).filter((d) => re.test(basename(d))));
      }
      dirs = next;
    } else {
      dirs = dirs.map((d) => resolve(d, segment));
    }
  }
  return dirs.sort();
}

async function subdirectories(fs: FileSystem, dir: string): Promise<string[]> {
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
    if (e.isDirectory || (e.isSymlink && (await fs.stat(path))?.isDirectory)) out.push(path);
  }
  return out.sort();
}

async function descendants(fs: FileSystem, dir: string, depth: number): Promise<string[]> {
  if (depth === 0) return [];
  const out: string[] = [];
  for (const sub of await subdirectories(fs, dir)) out.push(sub, ...(await descendants(fs, sub, depth - 1)));
  return out;
}
