/**
 * Tells whether an agent is installed: one of its config folders/files exists, or one of its
 * programs is on `PATH`. `PATH` comes from the environment snapshot and is searched through the
 * file-system seam; no shell and no child process is involved.
 *
 * @module
 */
import type { FileSystem } from "../file_system.ts";
import type { AgentDefinition, DetectionHints } from "./agents/mod.ts";
import { joinPath, type PathContext } from "./platform_paths.ts";

/** Extensions tried on Windows when `PATHEXT` is unset. */
export const DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD";

/** Where {@link findExecutable} and {@link detectAgent} look. */
export interface LookupOptions {
  /** Platform, home and environment snapshot (`PATH`, `PATHEXT`). */
  paths: PathContext;
  /** Existence checks go through this seam. */
  fs: FileSystem;
}

/**
 * Finds a program on `PATH` the way a shell would: the first directory holding an executable
 * file of that name (on Windows, with one of the `PATHEXT` extensions).
 *
 * @param name Program name without extension, e.g. `"codex"`.
 * @returns The absolute path, or `undefined`.
 */
export async function findExecutable(name: string, options: LookupOptions): Promise<string | undefined> {
  const { paths: p, fs } = options;
  const windows = p.platform === "windows";
  const pathVar = p.env.PATH ?? p.env.Path ?? "";
  const exts = windows
    ? ["", ...(p.env.PATHEXT ?? DEFAULT_PATHEXT).split(";").filter((e) => e !== "")]
    : [""];
  for (const dir of pathVar.split(windows ? ";" : ":")) {
    if (dir === "") continue;
    for (const ext of exts) {
      const candidate = joinPath(p, dir, name + ext.toLowerCase());
      const info = await fs.stat(candidate);
      if (info === null || !info.isFile) continue;
      if (windows || (await isExecutable(fs, candidate))) return candidate;
    }
  }
  return undefined;
}

async function isExecutable(fs: FileSystem, path: string): Promise<boolean> {
  const withMode = fs as FileSystem & { mode?(path: string): Promise<number | null> };
  if (withMode.mode === undefined) return true;
  const mode = await withMode.mode(path);
  return mode === null || (mode & 0o111) !== 0;
}

/** The answer of {@link detectAgent}. */
export interface Detection {
  /** The agent looks installed. */
  isInstalled: boolean;
  /** What gave it away, e.g. `/home/me/.cursor` or `cursor on PATH`. */
  evidence: string | undefined;
  /** Everything looked for, for the "not detected" message. */
  lookedFor: DetectionHints;
}

/** Looks for the signs of `agent` listed in its detection hints. */
export async function detectAgent(agent: AgentDefinition, options: LookupOptions): Promise<Detection> {
  const { paths: p, fs } = options;
  const hints = await agent.detection(p, fs);
  for (const path of hints.paths) {
    if ((await fs.stat(path)) !== null) return { isInstalled: true, evidence: path, lookedFor: hints };
  }
  for (const binary of hints.binaries) {
    const found = await findExecutable(binary, options);
    if (found !== undefined) return { isInstalled: true, evidence: `${binary} on PATH`, lookedFor: hints };
  }
  return { isInstalled: false, evidence: undefined, lookedFor: hints };
}
