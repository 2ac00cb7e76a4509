/**
 * Area `plugins/`: the user's files (`config.toml`, `SYMPOSIUM.toml`) → validated settings and server
 * specs. Parsing starts nothing (no process, no network); it imports only `workspace/` and the top level.
 *
 * Finds and loads every plugin under `<config>/plugins`. A broken plugin is reported as a
 * {@link Refusal} and never hides the others (SPEC §3).
 *
 * @module
 */
import { join, relative } from "node:path";
import { UserError } from "../diagnostics.ts";
import { denoFileSystem, describeFsError, type FileSystem } from "../file_system.ts";
import { ManifestError, parseManifest, type PluginManifest } from "./manifest.ts";
import type { Refusal } from "./server_spec.ts";

/** The file that makes a folder a plugin. */
export const PLUGIN_MANIFEST_NAME = "SYMPOSIUM.toml";

/** How deep below `<config>/plugins` folders are searched. */
export const MAX_PLUGIN_DEPTH = 8;

/** A plugin whose manifest is valid. */
export interface LoadedPlugin {
  /** From the manifest's `name`. */
  name: string;
  /** Absolute folder holding `SYMPOSIUM.toml`. */
  dir: string;
  /** Absolute path of its `SYMPOSIUM.toml` (the file named in its servers' locations). */
  file: string;
  manifest: PluginManifest;
}

/** What {@link loadPlugins} found. */
export interface LoadedPlugins {
  /** Sorted by name. */
  plugins: LoadedPlugin[];
  /**
   * Plugins that could not be loaded, sorted by folder: code `PLUGIN_INVALID` (bad or unreadable
   * manifest; `server` and `plugin` are the folder relative to `<config>/plugins`, `reason`,
   * `hint` and `location` those of the manifest's diagnostic; one refusal per problem found), `PLUGIN_DUPLICATE` (a second plugin with the same name; the
   * first by path stays) or `PLUGINS_DIR_INVALID` (a `SYMPOSIUM.toml` directly in `plugins/`,
   * `plugins` or the configuration directory being a file, or a folder that cannot be listed).
   */
  refused: Refusal[];
}

/**
 * Loads every plugin: each folder under `<configDir>/plugins` (searched recursively, up to
 * {@link MAX_PLUGIN_DEPTH} levels, following symlinks, skipping folders whose name starts with
 * `.`) that holds a `SYMPOSIUM.toml`; the folders inside a plugin are not searched. A missing
 * `plugins` folder means no plugins. Never rejects for the user's files: a `plugins` path that is
 * not a folder is a `PLUGINS_DIR_INVALID` refusal.
 *
 * @param configDir From `resolveConfigDir()`.
 * @param fs File access. Default {@link denoFileSystem}.
 */
export async function loadPlugins(
  configDir: string,
  fs: FileSystem = denoFileSystem,
): Promise<LoadedPlugins> {
  const pluginsDir = join(configDir, "plugins");
  const refused: Refusal[] = [];
  const refuseDir = (reason: string, hint: string) =>
    refused.push({ server: "plugins", plugin: "plugins", code: "PLUGINS_DIR_INVALID", reason, hint });
  let info;
  try {
    info = await fs.stat(pluginsDir);
  } catch (error) {
    refuseDir(
      `Cannot load plugins from ${pluginsDir}: ${describeFsError(error)}`,
      error instanceof Deno.errors.NotADirectory
        ? `point SYMPOSIUM_HOME (or XDG_CONFIG_HOME) at a folder; "${configDir}" must be a folder`
        : "make the folder readable by your user",
    );
    return { plugins: [], refused };
  }
  if (info === null) return { plugins: [], refused };
  if (!info.isDirectory) {
    refuseDir(
      `Cannot load plugins from ${pluginsDir}: it is a file, not a folder`,
      `move the file "${pluginsDir}" away and create a folder there with one subfolder per plugin`,
    );
    return { plugins: [], refused };
  }
  if ((await fs.stat(join(pluginsDir, PLUGIN_MANIFEST_NAME)))?.isFile) {
    refused.push({
      server: "plugins",
      plugin: "plugins",
      code: "PLUGINS_DIR_INVALID",
      reason:
        `Cannot load ${pluginsDir}: it contains ${PLUGIN_MANIFEST_NAME} itself; it should contain one subdirectory per plugin`,
      hint: `move ${PLUGIN_MANIFEST_NAME} into a folder named after the plugin, e.g. plugins/<name>/`,
      location: { file: join(pluginsDir, PLUGIN_MANIFEST_NAME), line: 1, column: 1 },
    });
  }
  const dirs: string[] = [];
  await findPluginDirs(fs, pluginsDir, 1, new Set([await fs.realPath(pluginsDir)]), dirs, refuseDir);
  const plugins: LoadedPlugin[] = [];
  for (const dir of dirs.sort()) {
    const file = join(dir, PLUGIN_MANIFEST_NAME);
    const label = relative(pluginsDir, dir);
    let manifest: PluginManifest;
    try {
      manifest = parseManifest(await fs.readTextFile(file), file);
    } catch (error) {
      const e = error instanceof UserError ? error : new UserError(
        "PLUGIN_UNREADABLE",
        `Cannot read plugin manifest ${file}: ${(error as Error).message}`,
        { location: { file, line: 1, column: 1 } },
      );
      // One refusal per problem, so every mistake in the manifest is reported in one run.
      for (const problem of e instanceof ManifestError ? e.problems : [e]) {
        refused.push({
          server: label,
          plugin: label,
          code: "PLUGIN_INVALID",
          reason: problem.message,
          hint: problem.hint,
          location: problem.location,
        });
      }
      continue;
    }
    const first = plugins.find((p) => p.name === manifest.name);
    if (first) {
      refused.push({
        server: manifest.name,
        plugin: manifest.name,
        code: "PLUGIN_DUPLICATE",
        reason:
          `Cannot load plugin "${manifest.name}" from ${file}: a plugin of that name is loaded from ${first.file}`,
        hint: "rename one of the two plugins",
        location: { file, line: 1, column: 1 },
      });
      continue;
    }
    plugins.push({ name: manifest.name, dir, file, manifest });
  }
  plugins.sort((a, b) => a.name.localeCompare(b.name) || a.file.localeCompare(b.file));
  return { plugins, refused };
}

async function findPluginDirs(
  fs: FileSystem,
  dir: string,
  depth: number,
  visited: Set<string>,
  out: string[],
  refuseDir: (reason: string, hint: string) => void,
): Promise<void> {
  let entries;
  try {
    entries = (await fs.readDir(dir)).sort((a, b) => a.name.localeCompare(b.name));
  } catch (error) {
    refuseDir(
      `Cannot search ${dir} for plugins: ${describeFsError(error)}`,
      "make the folder readable by your user",
    );
    return;
  }
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (!entry.isDirectory && !(entry.isSymlink && (await fs.stat(path))?.isDirectory)) continue;
    const real = await fs.realPath(path);
    if (visited.has(real)) continue; // a symlink loop or a second link to the same folder
    visited.add(real);
    if ((await fs.stat(join(path, PLUGIN_MANIFEST_NAME)))?.isFile) out.push(path);
    else if (depth < MAX_PLUGIN_DEPTH) await findPluginDirs(fs, path, depth + 1, visited, out, refuseDir);
  }
}
