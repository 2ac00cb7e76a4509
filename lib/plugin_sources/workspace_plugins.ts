/**
 * Workspace plugins: a `SYMPOSIUM.toml` at the workspace root or in a member's folder is a plugin whose
 * servers apply while working in that workspace (no `depends-on` needed), and start only once the user
 * trusted that exact content (`cargo agents trust`). A manifest that is a symbolic link is followed only
 * when it leads to a file inside the workspace; one that git ignores is marked so (a bare
 * `cargo agents trust` skips it: it is not part of the repository the user reviewed).
 *
 * @module
 */
import { basename, dirname, isAbsolute, join, relative } from "node:path";
import type { FileSystem } from "../file_system.ts";
import { type LoadedPlugin, PLUGIN_MANIFEST_NAME, readPluginManifest, type Refusal } from "../plugins/mod.ts";
import type { Workspace } from "../workspace/mod.ts";
import { trustDetailOf, trustKeyOf, type TrustStore } from "./trust.ts";
import { type GitIgnoreOptions, isGitIgnored } from "./_gitignore.ts";

/** The source name of workspace plugins. */
export const WORKSPACE_SOURCE = "workspace";

/** The `SYMPOSIUM.toml` paths a workspace may hold (root first, then members' folders), existing or not. */
export function workspaceManifestPaths(workspace: Workspace): string[] {
  if (workspace.root === null) return [];
  const dirs = new Set([workspace.root, ...(workspace.members ?? []).map((m) => m.dir)]);
  return [...dirs].map((dir) => join(dir, PLUGIN_MANIFEST_NAME));
}

/**
 * Loads the workspace's plugins, each with its trust state.
 *
 * @param git Where git's own settings are (`core.excludesFile`, `core.ignorecase`): the environment
 *   and home folder. Default: none (only the repository's ignore files).
 *
 * @returns Plugins (source {@link WORKSPACE_SOURCE}, `trust` set, `isWorkspaceMember: true`) and the
 *   problems of manifests that could not be used (`PLUGIN_INVALID`, `PLUGIN_TOO_LARGE`,
 *   `PLUGIN_LINK_OUTSIDE` for a manifest that is a link out of the workspace, `PLUGIN_MEMBER_OUTSIDE`
 *   for one in a member folder outside the workspace root).
 */
export async function loadWorkspacePlugins(
  workspace: Workspace,
  store: TrustStore,
  fs: FileSystem,
  git: GitIgnoreOptions = {},
): Promise<{ plugins: LoadedPlugin[]; refused: Refusal[] }> {
  const plugins: LoadedPlugin[] = [];
  const refused: Refusal[] = [];
  if (workspace.root === null) return { plugins, refused };
  let realRoot: string;
  try {
    realRoot = await fs.realPath(workspace.root);
  } catch {
    return { plugins, refused }; // The workspace vanished meanwhile: no plugins.
  }
  for (const file of workspaceManifestPaths(workspace)) {
    if (!(await fs.stat(file).catch(() => null))?.isFile) continue;
    const dir = dirname(file);
    const member = workspace.members?.find((m) => m.dir === dir);
    const defaultName = member?.name ?? basename(dir);
    const outside = await memberOutside(dir, workspace.root, realRoot, fs);
    if (outside !== undefined) {
      refused.push({
        code: "PLUGIN_MEMBER_OUTSIDE",
        reason: `Cannot load ${file} as a workspace plugin: ${outside}`,
        hint: `a workspace plugin must be inside the workspace: move the member under ${workspace.root}, ` +
          "or make the plugin a registry or user plugin",
        location: { file, line: 1, column: 1 },
        server: defaultName,
        plugin: defaultName,
        source: WORKSPACE_SOURCE,
      });
      continue;
    }
    const loaded = await readPluginManifest(file, fs, realRoot, { defaultName, requireGate: false });
    if (!loaded.ok) {
      for (const { detailCode: _, ...problem } of loaded.problems) {
        refused.push({ ...problem, server: defaultName, plugin: defaultName, source: WORKSPACE_SOURCE });
      }
      continue;
    }
    const key = await trustKeyOf(file, fs);
    const trust = await trustDetailOf(store, [{ key, text: loaded.text }]);
    plugins.push({
      name: loaded.manifest.name,
      dir,
      file,
      manifest: loaded.manifest,
      source: WORKSPACE_SOURCE,
      trust: trust.state,
      trustFiles: [key],
      ...(trust.changes.length > 0 ? { trustChanges: trust.changes } : {}),
      isWorkspaceMember: true,
      ...(await isGitIgnored(file, workspace.root, fs, git) ? { isGitIgnored: true } : {}),
    });
  }
  return { plugins, refused };
}

/**
 * Why member folder `dir` is outside the workspace root, or `undefined` when it is inside: a member
 * listed outside the root (`members = ["../x"]`), or a member folder that is a symbolic link out of it.
 */
async function memberOutside(
  dir: string,
  root: string,
  realRoot: string,
  fs: FileSystem,
): Promise<string | undefined> {
  if (dir === root) return undefined;
  const inside = (path: string, base: string) => {
    const rel = relative(base, path);
    return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
  };
  if (!inside(dir, root)) {
    return `its member folder ${dir} is outside the workspace root ${root} (workspace.members lists a folder outside it)`;
  }
  const realDir = await fs.realPath(dir).catch(() => dir);
  if (!inside(realDir, realRoot)) {
    return `its member folder ${dir} is a symbolic link to ${realDir}, outside the workspace root ${root}`;
  }
  return undefined;
}
