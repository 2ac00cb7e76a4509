/**
 * The folder `sync --project` writes into: the Cargo workspace root around the working directory.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { parse } from "smol-toml";
import type { FileSystem } from "../file_system.ts";

/**
 * Walks up from `cwd` and returns the nearest folder whose `Cargo.toml` has a `[workspace]`
 * table; failing that, the nearest folder with any `Cargo.toml`; failing that, `cwd` itself.
 * A `Cargo.toml` that does not parse counts as a plain package manifest.
 *
 * @param cwd Absolute starting folder.
 */
export async function findProjectRoot(cwd: string, fs: FileSystem): Promise<string> {
  let nearest: string | undefined;
  for (let dir = cwd;; dir = dirname(dir)) {
    const manifest = join(dir, "Cargo.toml");
    const info = await fs.stat(manifest);
    if (info !== null && info.isFile) {
      nearest ??= dir;
      if (await isWorkspaceManifest(fs, manifest)) return dir;
    }
    if (dirname(dir) === dir) break;
  }
  return nearest ?? cwd;
}

async function isWorkspaceManifest(fs: FileSystem, path: string): Promise<boolean> {
  try {
    return Object.hasOwn(parse(await fs.readTextFile(path)), "workspace");
  } catch {
    // Unreadable or invalid TOML: treat it as a package manifest; cargo will report it.
    return false;
  }
}
