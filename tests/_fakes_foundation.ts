/**
 * Test fakes for the foundation modules: an in-memory {@link FileSystem}.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { DirEntry, FileInfo, FileSystem } from "../lib/file_system.ts";
import { sourceRunArgs } from "../lib/self_command.ts";
import { main, type MainDeps } from "../main.ts";

/** An in-memory file tree; directories exist implicitly above every file. */
export interface MemoryFileSystem extends FileSystem {
  /** Paths read with `readTextFile`, in order (to assert what was, or was not, read). */
  readonly reads: string[];
}

/**
 * Builds a read-only file system from absolute POSIX paths to contents. `mtimeMs` of every file is
 * `0`. Missing paths reject with `Deno.errors.NotFound`, like the real one.
 *
 * @example
 * ```ts ignore
 * const fs = memoryFileSystem({ "/home/me/.symposium/config.toml": "[mcp]\n" });
 * ```
 */
export function memoryFileSystem(files: Record<string, string>): MemoryFileSystem {
  const dirs = new Set<string>();
  for (const path of Object.keys(files)) {
    for (let d = dirname(path); !dirs.has(d); d = dirname(d)) {
      dirs.add(d);
      if (dirname(d) === d) break;
    }
  }
  const reads: string[] = [];
  const notFound = (path: string) => new Deno.errors.NotFound(`No such file or directory: ${path}`);
  return {
    reads,
    readTextFile(path: string): Promise<string> {
      reads.push(path);
      const text = files[path];
      return text === undefined ? Promise.reject(notFound(path)) : Promise.resolve(text);
    },
    stat(path: string): Promise<FileInfo | null> {
      if (files[path] !== undefined) return Promise.resolve({ isFile: true, isDirectory: false, mtimeMs: 0 });
      if (dirs.has(path)) return Promise.resolve({ isFile: false, isDirectory: true, mtimeMs: 0 });
      return Promise.resolve(null);
    },
    readDir(path: string): Promise<DirEntry[]> {
      if (!dirs.has(path)) return Promise.reject(notFound(path));
      const names = new Map<string, boolean>();
      for (const p of [...Object.keys(files), ...dirs]) {
        if (p !== path && dirname(p) === path) {
          names.set(p.slice(path.length).replace(/^\//, ""), dirs.has(p));
        }
      }
      return Promise.resolve(
        [...names].map(([name, isDirectory]) => ({
          name,
          isFile: !isDirectory,
          isDirectory,
          isSymlink: false,
        })),
      );
    },
    realPath(path: string): Promise<string> {
      return files[path] !== undefined || dirs.has(path)
        ? Promise.resolve(path)
        : Promise.reject(notFound(path));
    },
  };
}

/** `join` re-exported for fixtures written as path segments. */
export { join };

/** The repository root (where `deno.json` and `main.ts` are), found from this file. */
export const REPO_ROOT: string = fileURLToPath(new URL("..", import.meta.url)).replace(/[\\/]$/, "");

/** What {@link runMain} observed. */
export interface ProcessOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `deno run -P --config <repo>/deno.json <repo>/main.ts ...args` as a real process, the way
 * the compiled binary would run: `cwd` is the user's workspace, and the environment holds only
 * `env` plus what Deno needs to find its cache (`PATH`, `HOME`, `DENO_DIR`, `XDG_CACHE_HOME`).
 */
export async function runMain(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<ProcessOutput> {
  const inherited: Record<string, string> = { NO_COLOR: "1" };
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME", "SYSTEMROOT", "USERPROFILE"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) inherited[name] = value;
  }
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...sourceRunArgs(REPO_ROOT).slice(1), ...args],
    cwd: options.cwd,
    env: { ...inherited, ...options.env },
    clearEnv: true,
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: output.code, stdout: dec.decode(output.stdout), stderr: dec.decode(output.stderr) };
}

/**
 * Runs `main(argv)` in this process with its output captured, in a world where nothing exists (`cwd` and
 * home `/nonexistent`, no environment): for commands that touch no file and no process (help, usage errors).
 */
export async function runMainInProcess(
  argv: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const deps: MainDeps = {
    env: {},
    cwd: "/nonexistent",
    homeDir: "/nonexistent",
    execPath: "/bin/cargo-agents",
    selfCommand: { command: "/bin/cargo-agents", args: [] },
    writeOut: (t) => void (stdout += t),
    writeErr: (t) => void (stderr += t),
    signal: new AbortController().signal,
  };
  const code = await main(argv, deps);
  return { code, stdout, stderr };
}
