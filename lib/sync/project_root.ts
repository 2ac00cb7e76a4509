/**
 * The folder `sync --project` writes into: the Cargo workspace root around the working directory.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { parse } from "smol-toml";
import { UserError } from "../diagnostics.ts";
import type { FileSystem } from "../file_system.ts";

/**
 * Walks up from `cwd` and returns the nearest folder whose `Cargo.toml` has a `[workspace]`
 * table; failing that, the nearest folder with any `Cargo.toml`. A `Cargo.toml` that does not
 * parse counts as a plain package manifest.
 *
 * @param cwd Absolute starting folder.
 * @throws {UserError} `code: "SYNC_NO_WORKSPACE"` when neither `cwd` nor any folder above it has
 *   a `Cargo.toml` (project files would land in an unrelated folder).
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
  if (nearest !== undefined) return nearest;
  throw new UserError(
    "SYNC_NO_WORKSPACE",
    `Cannot write project-level agent configs: "${cwd}" is not inside a Cargo workspace ` +
      "(no Cargo.toml in it or any folder above it)",
    {
      hint: "run `cargo-agents sync --project` inside the Rust workspace, or drop --project to " +
        "register for every project",
    },
  );
}

async function isWorkspaceManifest(fs: FileSystem, path: string): Promise<boolean> {
  try {
    return Object.hasOwn(parse(await fs.readTextFile(path)), "workspace");
  } catch {
    // Unreadable or invalid TOML: treat it as a package manifest; cargo will report it.
    return false;
  }
}
