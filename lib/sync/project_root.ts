/**
 * The folder `sync --project` writes into: the Cargo workspace root around the working directory,
 * and the rule that a project-level write never leaves it (a cloned repository's symlinks are its
 * author's, not the user's).
 *
 * @module
 */
import { basename, dirname, join, relative, sep } from "node:path";
import { parse } from "smol-toml";
import { UserError } from "../diagnostics.ts";
import type { FileSystem } from "../file_system.ts";
import { resolveConfigPath } from "./config_file.ts";
import type { WritableFileSystem } from "./writable_file_system.ts";

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

/**
 * Refuses a project-level config path whose write would land outside the project: the file's
 * symlinks are followed (as the write follows them), then every folder above the file it leads
 * to is resolved to its real path, up to the first that exists; the result must be the real
 * project root or inside it. Nothing is read or written. The lock, temporary and backup files
 * sit beside the file, so they stay inside too.
 *
 * @param path Absolute path of the project-level file (under `projectRoot`).
 * @param projectRoot The workspace root from {@link findProjectRoot}.
 * @throws {UserError} `SYNC_OUTSIDE_PROJECT` naming the link, where it leads and how to fix it;
 *   `SYNC_SYMLINK_LOOP` for a loop.
 */
export async function assertInsideProject(
  path: string,
  projectRoot: string,
  fs: WritableFileSystem,
): Promise<void> {
  let realRoot: string;
  let destination: string;
  try {
    realRoot = await fs.realPath(projectRoot);
    destination = await realDestination(path, fs);
  } catch (error) {
    if (error instanceof UserError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new UserError("SYNC_READ_FAILED", `Cannot write "${path}": cannot resolve its folders: ${reason}`, {
      cause: error,
      hint: "check the links and permissions of the project's folders; nothing was written",
    });
  }
  if (isInside(destination, realRoot)) return;
  const link = await firstSymlink(projectRoot, path, fs);
  const shown = relative(projectRoot, link ?? path) || basename(path);
  const what = link === path || link === undefined
    ? `"${shown}" is a symbolic link`
    : `the folder "${shown}" is a symbolic link`;
  throw new UserError(
    "SYNC_OUTSIDE_PROJECT",
    `Cannot write "${path}": ${what} that leads outside the project "${projectRoot}" (to ` +
      `"${destination}"); sync --project writes only inside the project`,
    {
      hint: `look at why the repository has that link, remove it (\`rm ${shown}\`), then run ` +
        "`cargo-agents sync --project` again; nothing was written",
    },
  );
}

/** Where a write to `path` lands: its symlinks followed, its folders' real paths. */
async function realDestination(path: string, fs: WritableFileSystem): Promise<string> {
  const file = (await resolveConfigPath(path, fs)).path;
  const missing: string[] = [basename(file)];
  for (let dir = dirname(file);; dir = dirname(dir)) {
    try {
      return join(await fs.realPath(dir), ...missing);
    } catch (error) {
      // A folder sync would create, or a dangling link: go up until something exists.
      if (!(error instanceof Deno.errors.NotFound) || dirname(dir) === dir) throw error;
      const status = await fs.lstat(dir);
      if (status?.kind === "symlink") return join(await realDestination(dir, fs), ...missing);
      missing.unshift(basename(dir));
    }
  }
}

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The first symlink on the way from `root` down to `path` (`path` itself included). */
async function firstSymlink(root: string, path: string, fs: WritableFileSystem): Promise<string | undefined> {
  let current = root;
  for (const part of relative(root, path).split(sep)) {
    current = join(current, part);
    if ((await fs.lstat(current))?.kind === "symlink") return current;
  }
  return undefined;
}
