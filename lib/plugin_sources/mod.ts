/**
 * Area `plugin_sources/`: where plugins come from - the user's `<config>/plugins`, registries
 * (`[[registry]]` folders and git repositories cloned into the cache, the recommendations registry),
 * the workspace itself (behind trust) and its crates (`[[plugins]] source.cargo`). Loading reads
 * files only: it starts no process and touches no network (`git.ts` does, for `plugin sync` alone).
 * It imports `plugins/`, `workspace/`, `secrets/` and the top level; never catalog, backends or MCP.
 *
 * @module
 */
import { join } from "node:path";
import type { Location, UserError } from "../diagnostics.ts";
import { denoFileSystem, type FileSystem } from "../file_system.ts";
import { CONFIG_FILE_NAME, unsafeOwnerReason } from "../plugins/config.ts";
import {
  discoverPlugins,
  type LoadedPlugin,
  loadPlugins,
  type Refusal,
  USER_PLUGINS_SOURCE,
} from "../plugins/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import { type FetchRecord, gitCopyDir, pluginSourcesCacheDir, readFetchRecord } from "./git.ts";
import { readSourcesConfig, RECOMMENDATIONS_SOURCE, type RegistryConfig } from "./sources_config.ts";
import { readTrustStore, TRUST_FILE_NAME, type TrustStore } from "./trust.ts";
import { loadWorkspacePlugins, WORKSPACE_SOURCE, workspaceManifestPaths } from "./workspace_plugins.ts";
import { loadCratePlugins } from "./crate_plugins.ts";
export { layerCrateManifest } from "./crate_plugins.ts";

export {
  DEFAULT_RECOMMENDATIONS_URL,
  isAcceptableGitUrl,
  readSourcesConfig,
  RECOMMENDATIONS_SOURCE,
  RECOMMENDATIONS_URL_ENV,
  type RegistryConfig,
  type SourcesConfig,
} from "./sources_config.ts";
export {
  readTrustStore,
  renderTrustFile,
  sha256Hex,
  TRUST_FILE_NAME,
  trustCommand,
  trustDetailOf,
  type TrustEntry,
  trustKeyOf,
  type TrustStore,
} from "./trust.ts";
export {
  AUTO_UPDATE_INTERVAL_MS,
  DEFAULT_GIT_TIMEOUT_MS,
  type FetchRecord,
  gitCopyDir,
  isFetchDue,
  pluginSourcesCacheDir,
  readFetchRecord,
  syncGitRegistry,
  type SyncResult,
} from "./git.ts";
export { WORKSPACE_SOURCE, workspaceManifestPaths } from "./workspace_plugins.ts";
export { findPins, hashPinnedFile, MAX_PINNED_FILE_BYTES, type PinPlan } from "./_pins.ts";

/** One source of plugins, for `status` and `plugin list`. */
export interface PluginSourceInfo {
  /** `user-plugins`, a registry's name, `workspace`, or `crate <name>`. */
  name: string;
  kind: "user" | "path" | "git" | "workspace" | "crate";
  /** The folder searched (a git registry's local copy). */
  dir: string;
  /** Git registries: the URL. */
  git?: string | undefined;
  /** Registries: `auto-update`. */
  autoUpdate?: boolean | undefined;
  /** Where `config.toml` declares it. */
  location?: Location | undefined;
  /** Git registries: the last fetch (`null`: never fetched). */
  fetch?: FetchRecord | null | undefined;
  /** Git registries: whether a local copy exists. */
  hasCopy?: boolean | undefined;
  /** A state worth saying, e.g. `not fetched yet: run \`cargo agents plugin sync team\``. */
  note?: string | undefined;
}

/** Everything {@link loadPluginSources} found. */
export interface LoadedSources {
  /** In effect order: recommendations, user plugins, `[[registry]]` entries, workspace, crates. */
  sources: PluginSourceInfo[];
  /** Every plugin loaded, each with `source` (none for the user's own) and trust where it needs it. */
  plugins: LoadedPlugin[];
  /** Plugins that could not be loaded (each attributed to its `source`). */
  refused: Refusal[];
  /** Problems of `[[registry]]`/`[defaults]` in `config.toml` and of `trusted.toml`. */
  problems: UserError[];
  /** Chained crate plugins not followed and why. */
  notes: string[];
  /** What re-resolution watches: folders searched recursively, folders whose entries matter, single files. */
  watch: { deep: string[]; flat: string[]; files: string[] };
  trust: TrustStore;
}

/** Where {@link loadPluginSources} looks. */
export interface SourcesOptions {
  configDir: string;
  env: Readonly<Record<string, string>>;
  homeDir: string;
  workspace: Workspace;
  /** File access. Default {@link denoFileSystem}. */
  fs?: FileSystem | undefined;
}

function cargoHomeOf(env: Readonly<Record<string, string>>, homeDir: string): string {
  return env.CARGO_HOME ? env.CARGO_HOME : join(homeDir, ".cargo");
}

/**
 * Loads the plugins of every source. Never rejects for the user's files: each problem costs only its
 * plugin (in `refused`) or its key (in `problems`). Git registries are read from their local copies
 * only; one never fetched says so in its `note` (`cargo agents plugin sync` makes the first copy).
 */
export async function loadPluginSources(options: SourcesOptions): Promise<LoadedSources> {
  const fs = options.fs ?? denoFileSystem;
  const { configDir, workspace } = options;
  const configFile = join(configDir, CONFIG_FILE_NAME);
  // config.toml's reader reports failures, and one someone else could have written (CONFIG_UNSAFE): not used.
  const configText = unsafeOwnerReason(configFile) === undefined
    ? await fs.readTextFile(configFile).catch(() => null)
    : null;
  const config = readSourcesConfig(configText, configFile, { configDir, env: options.env });
  const trust = await readTrustStore(configDir, fs);
  const sources: PluginSourceInfo[] = [];
  const watch = {
    deep: [] as string[],
    flat: [] as string[],
    files: [join(configDir, TRUST_FILE_NAME), ...workspaceManifestPaths(workspace)],
  };
  const userDir = join(configDir, "plugins");
  const [user, registries, local] = await Promise.all([
    config.userPlugins ? loadPlugins(configDir, fs) : Promise.resolve({ plugins: [], refused: [] }),
    Promise.all(config.registries.map((r) => loadRegistry(r, configDir, fs))),
    loadWorkspacePlugins(workspace, trust, fs, { env: options.env, homeDir: options.homeDir }),
  ]);
  const plugins: LoadedPlugin[] = [];
  const refused: Refusal[] = [];
  // Upstream's effect order: the recommendations, the user's own plugins, then `[[registry]]` entries.
  const isBuiltIn = (r: RegistryConfig) => r.name === RECOMMENDATIONS_SOURCE;
  const ordered = [
    ...registries.filter((_, i) => isBuiltIn(config.registries[i]!)),
    ...(config.userPlugins
      ? [{ info: { name: USER_PLUGINS_SOURCE, kind: "user" as const, dir: userDir }, ...user }]
      : []),
    ...registries.filter((_, i) => !isBuiltIn(config.registries[i]!)),
  ];
  for (const found of ordered) {
    sources.push(found.info);
    plugins.push(...found.plugins);
    refused.push(...found.refused);
  }
  for (const found of registries) {
    if (found.info.kind === "path") watch.deep.push(found.info.dir);
  }
  if (config.registries.some((r) => r.kind === "git")) watch.flat.push(pluginSourcesCacheDir(configDir));
  if (workspace.root !== null) {
    sources.push({ name: WORKSPACE_SOURCE, kind: "workspace", dir: workspace.root });
  }
  plugins.push(...local.plugins);
  refused.push(...local.refused);
  const crates = await loadCratePlugins(plugins, workspace, {
    cargoHome: cargoHomeOf(options.env, options.homeDir),
    store: trust,
    fs,
    predicates: { workspace, env: options.env, baseDir: workspace.root ?? configDir },
  });
  for (const plugin of crates.plugins) {
    sources.push({ name: plugin.source!, kind: "crate", dir: plugin.dir });
  }
  plugins.push(...crates.plugins);
  refused.push(...crates.refused);
  watch.files.push(...crates.files);
  // A pinned file that changes mid-session makes its plugin `changed`: re-resolve then, as for a manifest.
  for (const plugin of plugins) {
    for (const key of plugin.trustFiles ?? []) {
      watch.files.push(...(trust.entries.get(key)?.pins ?? []).map((p) => p.path));
    }
  }
  return {
    sources,
    plugins: plugins.sort((a, b) => a.name.localeCompare(b.name) || a.file.localeCompare(b.file)),
    refused,
    problems: [...config.problems, ...trust.problems],
    notes: crates.notes,
    watch,
    trust,
  };
}

async function loadRegistry(
  registry: RegistryConfig,
  configDir: string,
  fs: FileSystem,
): Promise<{ info: PluginSourceInfo; plugins: LoadedPlugin[]; refused: Refusal[] }> {
  const base = { name: registry.name, autoUpdate: registry.autoUpdate, location: registry.location };
  const label = `registry "${registry.name}"`;
  if (registry.kind === "path") {
    const dir = registry.path!;
    const found = await discoverPlugins(dir, { source: registry.name, label, confine: true, fs });
    const missing = (await fs.stat(dir).catch(() => null)) === null;
    return {
      info: { ...base, kind: "path", dir, ...(missing ? { note: `folder ${dir} does not exist` } : {}) },
      ...found,
    };
  }
  const dir = gitCopyDir(configDir, registry.name);
  const [fetch, copy] = await Promise.all([
    readFetchRecord(configDir, registry.name),
    fs.stat(dir).catch(() => null),
  ]);
  const info: PluginSourceInfo = {
    ...base,
    kind: "git",
    dir,
    git: registry.git,
    fetch,
    hasCopy: copy?.isDirectory === true,
  };
  if (!info.hasCopy) {
    info.note = `not fetched yet: run \`cargo agents plugin sync ${registry.name}\``;
    return { info, plugins: [], refused: [] };
  }
  if (fetch?.error !== undefined) {
    const from = fetch.fetchedAtMs === undefined
      ? ""
      : ` fetched ${new Date(fetch.fetchedAtMs).toISOString()}`;
    info.note = `the last fetch (${new Date(fetch.attemptedAtMs).toISOString()}) failed: ${
      fetch.error.split("\n").at(-1)
    }; using the copy${from}`;
  } else if (fetch !== null && fetch.url !== registry.git) {
    info.note =
      `the copy is of ${fetch.url}; run \`cargo agents plugin sync ${registry.name}\` to fetch ${registry.git}`;
  }
  const found = await discoverPlugins(dir, { source: registry.name, label, confine: true, fs });
  return { info, ...found };
}
