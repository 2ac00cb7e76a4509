/**
 * Finds and loads every plugin under `<config>/plugins`. A broken plugin is reported as a
 * {@link Refusal} and never hides the others (SPEC §3).
 *
 * @module
 */
import { join, relative } from "node:path";
import { UserError } from "./diagnostics.ts";
import { denoFileSystem, type FileSystem } from "./file_system.ts";
import { parseManifest, type PluginManifest } from "./manifest.ts";
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
   * `hint` and `location` those of the manifest's diagnostic), `PLUGIN_DUPLICATE` (a second plugin with the same name; the
   * first by path stays) or `PLUGINS_DIR_INVALID` (a `SYMPOSIUM.toml` directly in `plugins/`).
   */
  refused: Refusal[];
}

/**
 * Loads every plugin: each folder under `<configDir>/plugins` (searched recursively, up to
 * {@link MAX_PLUGIN_DEPTH} levels, following symlinks, skipping folders whose name starts with
 * `.`) that holds a `SYMPOSIUM.toml`; the folders inside a plugin are not searched. A missing
 * `plugins` folder means no plugins.
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
  if (!(await fs.stat(pluginsDir))?.isDirectory) return { plugins: [], refused };
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
  await findPluginDirs(fs, pluginsDir, 1, new Set([await fs.realPath(pluginsDir)]), dirs);
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
      refused.push({
        server: label,
        plugin: label,
        code: "PLUGIN_INVALID",
        reason: e.message,
        hint: e.hint,
        location: e.location,
      });
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
): Promise<void> {
  const entries = (await fs.readDir(dir)).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (!entry.isDirectory && !(entry.isSymlink && (await fs.stat(path))?.isDirectory)) continue;
    const real = await fs.realPath(path);
    if (visited.has(real)) continue; // a symlink loop or a second link to the same folder
    visited.add(real);
    if ((await fs.stat(join(path, PLUGIN_MANIFEST_NAME)))?.isFile) out.push(path);
    else if (depth < MAX_PLUGIN_DEPTH) await findPluginDirs(fs, path, depth + 1, visited, out);
  }
}
