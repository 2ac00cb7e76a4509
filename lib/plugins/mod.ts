/**
 * Area `plugins/`: the user's files (`config.toml`, `SYMPOSIUM.toml`) -> validated settings and server
 * specs. Parsing starts nothing (no process, no network); it imports only `workspace/` and the top level.
 *
 * Finds and loads the plugins of one source folder (`<config>/plugins`, a registry's folder or copy).
 * A broken plugin is reported as a {@link Refusal} and never hides the others.
 *
 * Other faces, each loaded on its own:
 * - `config.ts`: `config.toml`'s `[mcp]` table and where the configuration lives, which every command
 *   reads first (`mcp-serve` answers `initialize` with only this loaded, before any plugin).
 *
 * @module
 */
import { join, relative, sep } from "node:path";
import { UserError } from "../diagnostics.ts";
import { denoFileSystem, describeFsError, type FileSystem } from "../file_system.ts";
import { ManifestError, type ManifestOptions, parseManifest, type PluginManifest } from "./manifest.ts";
import type { Refusal } from "./server_spec.ts";
import { unsafeOwnerReason } from "./config.ts";
export { type ConfirmToolsMode, DEFAULT_MCP_CONFIG, type McpConfig } from "./config_types.ts";
export { expandVars } from "./expand_vars.ts";
export {
  layerManifests,
  ManifestError,
  type ManifestNote,
  type McpServerDecl,
  parseManifest,
  type PluginManifest,
  type RemoteServerDecl,
} from "./manifest.ts";
export {
  type Dormant,
  type HttpServerSpec,
  namespaceKey,
  type Refusal,
  type Resolution,
  type ServerSpec,
  spawnKey,
  type StdioServerSpec,
} from "./server_spec.ts";

/** The file that makes a folder a plugin. */
export const PLUGIN_MANIFEST_NAME = "SYMPOSIUM.toml";

/** The file that makes a folder a skill (upstream): such a folder is not searched for plugins. */
export const SKILL_FILE_NAME = "SKILL.md";

/** How deep below `<config>/plugins` folders are searched. */
export const MAX_PLUGIN_DEPTH = 8;

/** Largest `SYMPOSIUM.toml` read, in bytes: a bigger one is refused unread (a registry may be hostile). */
export const MAX_MANIFEST_BYTES = 256 * 1024;

/** Most plugins loaded from one source; past it the rest are refused in one problem. */
export const MAX_PLUGINS_PER_SOURCE = 1000;

/** Most folders looked at while searching one source. */
export const MAX_FOLDERS_PER_SOURCE = 20_000;

/** The name of the source of a user's own plugins (`<config>/plugins`). */
export const USER_PLUGINS_SOURCE = "user-plugins";

/** Trust state of a plugin that needs trust before its servers start (workspace, path and git crates). */
export type TrustState = "trusted" | "untrusted" | "changed";

/** A plugin whose manifest is valid. */
export interface LoadedPlugin {
  /** From the manifest's `name`. */
  name: string;
  /** Absolute folder holding `SYMPOSIUM.toml`. */
  dir: string;
  /** Absolute path of its `SYMPOSIUM.toml` (the file named in its servers' locations). */
  file: string;
  manifest: PluginManifest;
  /**
   * The source it came from: {@link USER_PLUGINS_SOURCE}, a registry's name
   * (`symposium-recommendations`, a `[[registry]]` name), `workspace`, or `crate <name>`.
   * @default USER_PLUGINS_SOURCE
   */
  source?: string | undefined;
  /** Set for plugins whose servers start only once the user trusts the file(s) (see `cargo agents trust`). */
  trust?: TrustState | undefined;
  /** The files trust covers (the manifest, and a crate's `Cargo.toml` when its metadata holds the plugin). */
  trustFiles?: string[] | undefined;
  /** When `trust` is `changed`: what changed, one phrase each (`scripts/server.sh changed`). */
  trustChanges?: string[] | undefined;
  /** From the workspace itself (a workspace plugin or a member crate's): `workspace-member()` holds. */
  isWorkspaceMember?: boolean | undefined;
  /** A workspace manifest git ignores (a local file, not the repository's): a bare `cargo agents trust` skips it. */
  isGitIgnored?: boolean | undefined;
  /** A crate plugin: the `[[plugins]]` entry's gate, ANDed with the crate manifest's own. */
  referenceGate?: { dependsOn?: string[] | undefined; predicates?: string[] | undefined } | undefined;
  /** A crate plugin: the plugin whose `[[plugins]]` entry reached it, and where the crate was found. */
  reachedFrom?: { plugin: string; file: string; origin: string; version?: string | undefined } | undefined;
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

/** How {@link discoverPlugins} searches one source folder. */
export interface DiscoverOptions {
  /** The source's name, set on each plugin and refusal. */
  source: string;
  /** How messages name the folder, e.g. `plugins` or `registry "team"`. */
  label: string;
  /**
   * Links that lead outside the source folder are refused instead of followed (registries: their
   * content is not the user's). Default `false` (the user's own folder: followed).
   */
  confine?: boolean | undefined;
  /** File access. Default {@link denoFileSystem}. */
  fs?: FileSystem | undefined;
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
  return await discoverPlugins(join(configDir, "plugins"), {
    source: USER_PLUGINS_SOURCE,
    label: "plugins",
    fs,
    configDir,
  });
}

/**
 * Loads every plugin of one source folder, by upstream's rules: recursive (up to
 * {@link MAX_PLUGIN_DEPTH} levels, dot-folders skipped); a folder holding `SYMPOSIUM.toml` is a
 * plugin and is not searched further; a `SYMPOSIUM.toml` in the folder itself is a problem. Each
 * bad plugin costs only itself: a manifest over {@link MAX_MANIFEST_BYTES} (`PLUGIN_TOO_LARGE`), a
 * link out of a confined source (`PLUGIN_LINK_OUTSIDE`), plugins past {@link MAX_PLUGINS_PER_SOURCE}
 * (`SOURCE_TOO_MANY_PLUGINS`, one refusal), a bad manifest (`PLUGIN_INVALID`), a second plugin of
 * the same name (`PLUGIN_DUPLICATE`). A missing folder holds no plugins.
 *
 * @param root Absolute folder to search.
 * @returns Plugins sorted by name; never rejects for the folder's content.
 */
export async function discoverPlugins(
  root: string,
  options: DiscoverOptions & { configDir?: string },
): Promise<LoadedPlugins> {
  const fs = options.fs ?? denoFileSystem;
  const pluginsDir = root;
  const { label: what } = options;
  // The user's own plugins carry no `source` (it is the default).
  const source = options.source === USER_PLUGINS_SOURCE ? undefined : options.source;
  const refused: Refusal[] = [];
  const refuse = (r: Refusal) =>
    refused.push(source === undefined ? (({ source: _s, ...rest }) => rest)(r) : r);
  const refuseDir = (reason: string, hint: string) =>
    refuse({ server: what, plugin: what, code: "PLUGINS_DIR_INVALID", reason, hint, source });
  let info;
  try {
    info = await fs.stat(pluginsDir);
  } catch (error) {
    refuseDir(
      `Cannot load plugins from ${pluginsDir}: ${describeFsError(error)}`,
      error instanceof Deno.errors.NotADirectory && options.configDir !== undefined
        ? `point SYMPOSIUM_HOME (or XDG_CONFIG_HOME) at a folder; "${options.configDir}" must be a folder`
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
    refuse({
      server: what,
      plugin: what,
      code: "PLUGINS_DIR_INVALID",
      reason:
        `Cannot load ${pluginsDir}: it contains ${PLUGIN_MANIFEST_NAME} itself; it should contain one subdirectory per plugin`,
      hint: `move ${PLUGIN_MANIFEST_NAME} into a folder named after the plugin, e.g. ${
        what === "plugins" ? "plugins" : "<source>"
      }/<name>/`,
      location: { file: join(pluginsDir, PLUGIN_MANIFEST_NAME), line: 1, column: 1 },
      source,
    });
  }
  const unsafeRoot = options.configDir === undefined ? undefined : unsafeOwnerReason(pluginsDir);
  if (unsafeRoot !== undefined) {
    refuseDir(
      `Cannot load plugins from ${pluginsDir}: ${unsafeRoot}, so someone else could have put a command there`,
      `make it yours and writable only by you (\`chown "$USER" '${pluginsDir}' && chmod go-w '${pluginsDir}'\`)`,
    );
    return { plugins: [], refused };
  }
  const realRoot = await fs.realPath(pluginsDir);
  const walk: Walk = {
    fs,
    visited: new Set([realRoot]),
    out: [],
    refuseDir,
    confineTo: options.confine === true ? realRoot : undefined,
    folders: 0,
    outside: [],
  };
  await findPluginDirs(walk, pluginsDir, 1);
  for (const path of walk.outside) {
    refuse({
      server: relative(pluginsDir, path),
      plugin: relative(pluginsDir, path),
      code: "PLUGIN_LINK_OUTSIDE",
      reason: `Cannot load ${path} from ${what}: it is a symbolic link that leads outside ${pluginsDir}`,
      hint: "a registry's plugins must be inside it; the link is not followed",
      location: { file: path, line: 1, column: 1 },
      source,
    });
  }
  const dirs = walk.out.sort();
  if (dirs.length > MAX_PLUGINS_PER_SOURCE) {
    refuse({
      server: what,
      plugin: what,
      code: "SOURCE_TOO_MANY_PLUGINS",
      reason:
        `Cannot load all plugins of ${what}: it holds ${dirs.length} plugins; the first ${MAX_PLUGINS_PER_SOURCE} (by path) are loaded`,
      hint: `a source holds at most ${MAX_PLUGINS_PER_SOURCE} plugins; split it into several registries`,
      source,
    });
    dirs.length = MAX_PLUGINS_PER_SOURCE;
  }
  const plugins: LoadedPlugin[] = [];
  for (const dir of dirs) {
    const file = join(dir, PLUGIN_MANIFEST_NAME);
    const label = relative(pluginsDir, dir);
    // The user's own plugins run without trust: one someone else could have written is not used.
    const unsafe = options.configDir === undefined
      ? undefined
      : [dir, file].map((p) => [p, unsafeOwnerReason(p)]).find(([, r]) => r !== undefined);
    if (unsafe !== undefined) {
      refuse({
        server: label,
        plugin: label,
        code: "PLUGIN_UNSAFE",
        reason: `Cannot load ${unsafe[0]}: ${unsafe[1]}, so someone else could have put a command there`,
        hint:
          `make it yours and writable only by you (\`chown -R "$USER" '${dir}' && chmod -R go-w '${dir}'\`)`,
        location: { file, line: 1, column: 1 },
        source,
      });
      continue;
    }
    const loaded = await readPluginManifest(file, fs, options.confine === true ? realRoot : undefined);
    if (!loaded.ok) {
      for (const { detailCode: _, ...problem } of loaded.problems) {
        refuse({ ...problem, server: label, plugin: label, source });
      }
      continue;
    }
    const manifest = loaded.manifest;
    const first = plugins.find((p) => p.name === manifest.name);
    if (first) {
      refuse({
        server: manifest.name,
        plugin: manifest.name,
        code: "PLUGIN_DUPLICATE",
        reason:
          `Cannot load plugin "${manifest.name}" from ${file}: a plugin of that name is loaded from ${first.file}`,
        hint: "rename one of the two plugins",
        location: { file, line: 1, column: 1 },
        source,
      });
      continue;
    }
    plugins.push({
      name: manifest.name,
      dir,
      file,
      manifest,
      ...(source !== undefined ? { source } : {}),
    });
  }
  plugins.sort((a, b) => a.name.localeCompare(b.name) || a.file.localeCompare(b.file));
  return { plugins, refused };
}

/** A manifest read and parsed, or its problems as refusals (without `server`/`plugin`, set by the caller). */
export type ReadManifestResult =
  | { ok: true; manifest: PluginManifest; text: string }
  | {
    ok: false;
    problems: (Omit<Refusal, "server" | "plugin"> & {
      /** The manifest diagnostic's own code. */ detailCode?: string;
    })[];
  };

/**
 * Reads and parses one `SYMPOSIUM.toml`, refusing unread one over {@link MAX_MANIFEST_BYTES} or, when
 * `confineTo` is given, one whose real path is outside that folder.
 *
 * @param manifestOptions As `parseManifest()`.
 * @returns The manifest and the text it was parsed from (what trust hashes), or every problem.
 */
export async function readPluginManifest(
  file: string,
  fs: FileSystem,
  confineTo?: string,
  manifestOptions: ManifestOptions = {},
): Promise<ReadManifestResult> {
  const at = { file, line: 1, column: 1 };
  try {
    if (confineTo !== undefined) {
      const real = await fs.realPath(file);
      if (real !== confineTo && !real.startsWith(confineTo + sep)) {
        return {
          ok: false,
          problems: [{
            code: "PLUGIN_LINK_OUTSIDE",
            reason: `Cannot load ${file}: it is a symbolic link that leads outside ${confineTo}`,
            hint: "a registry's plugins must be inside it; the link is not followed",
            location: at,
          }],
        };
      }
    }
    const size = (await fs.stat(file))?.size;
    if (size !== undefined && size > MAX_MANIFEST_BYTES) {
      return {
        ok: false,
        problems: [{
          code: "PLUGIN_TOO_LARGE",
          reason:
            `Cannot load ${file}: it is ${size} bytes, over the ${MAX_MANIFEST_BYTES}-byte limit of a plugin manifest`,
          hint: "a plugin manifest is a short TOML file; this one is not read",
          location: at,
        }],
      };
    }
    const text = await fs.readTextFile(file);
    return { ok: true, manifest: parseManifest(text, file, manifestOptions), text };
  } catch (error) {
    const e = error instanceof UserError ? error : new UserError(
      "PLUGIN_UNREADABLE",
      `Cannot read plugin manifest ${file}: ${(error as Error).message}`,
      { location: at },
    );
    // One refusal per problem, so every mistake in the manifest is reported in one run.
    return {
      ok: false,
      problems: (e instanceof ManifestError ? e.problems : [e]).map((problem) => ({
        code: "PLUGIN_INVALID",
        detailCode: problem.code,
        reason: problem.message,
        hint: problem.hint,
        location: problem.location,
      })),
    };
  }
}

interface Walk {
  fs: FileSystem;
  visited: Set<string>;
  out: string[];
  refuseDir: (reason: string, hint: string) => void;
  /** Real path of a confined source's folder. */
  confineTo: string | undefined;
  folders: number;
  /** Links out of a confined source, not followed. */
  outside: string[];
}

async function findPluginDirs(walk: Walk, dir: string, depth: number): Promise<void> {
  const { fs } = walk;
  let entries;
  try {
    entries = (await fs.readDir(dir)).sort((a, b) => a.name.localeCompare(b.name));
  } catch (error) {
    walk.refuseDir(
      `Cannot search ${dir} for plugins: ${describeFsError(error)}`,
      "make the folder readable by your user",
    );
    return;
  }
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (!entry.isDirectory && !(entry.isSymlink && (await fs.stat(path))?.isDirectory)) continue;
    if (++walk.folders > MAX_FOLDERS_PER_SOURCE) return;
    const real = await fs.realPath(path);
    if (walk.visited.has(real)) continue; // a symlink loop or a second link to the same folder
    if (walk.confineTo !== undefined && !real.startsWith(walk.confineTo + sep)) {
      walk.outside.push(path);
      continue;
    }
    walk.visited.add(real);
    if ((await fs.stat(join(path, PLUGIN_MANIFEST_NAME)))?.isFile) walk.out.push(path);
    // A folder holding SKILL.md is a skill (handled by the rest of Symposium): not searched further.
    else if ((await fs.stat(join(path, SKILL_FILE_NAME)))?.isFile) continue;
    else if (depth < MAX_PLUGIN_DEPTH) await findPluginDirs(walk, path, depth + 1);
  }
}
