/**
 * `cargo-agents status [--json]`: what the meta-server would serve in this workspace and why -
 * config, workspace, every plugin and server (applies / dormant / refused, with the reason), the
 * transport, the tool-cache state and, for remote servers, the sign-in state and whether the
 * endpoint policy refuses the URL (checked offline: no name is looked up). It starts nothing and
 * never connects.
 *
 * @module
 */
import { join } from "node:path";
import type { CommandContext } from "./context.ts";
import { type Location, UserError } from "../diagnostics.ts";
import { CONFIG_FILE_NAME } from "../plugins/config.ts";
import { evaluateGate, parsePredicate } from "../workspace/mod.ts";
import { denoFileSystem, type FileSystem, readTextFileIfExists } from "../file_system.ts";
import { type LoadedPlugin, type McpServerDecl, USER_PLUGINS_SOURCE } from "../plugins/mod.ts";
import { trustCommand } from "../plugin_sources/mod.ts";
import { describeSource, dueRegistries, sourceLabel, startBackgroundSync } from "./_status_sources.ts";

export type { StatusSource } from "./_status_sources.ts";
export { dueRegistries, startBackgroundSync } from "./_status_sources.ts";
import { type LoadedResolution, loadResolution } from "../catalog/resolve.ts";
import { readToolCacheState } from "../catalog/tool_cache.ts";
import { envNamesByOrigin } from "../backends/child_env.ts";
import { privateFolderProblems } from "./_status_checks.ts";

export type { AuthState, StatusProblem, StatusReport, StatusServer } from "./_status_types.ts";
import type { StatusProblem, StatusReport, StatusServer } from "./_status_types.ts";

/**
 * Prints the status of the workspace around `ctx.cwd`.
 *
 * @param options.json Print one JSON document ({@link StatusReport}) instead of text.
 * @param fs File access. Default {@link denoFileSystem}.
 * @returns 0, or 1 when `config.toml` is broken, a plugin could not be loaded or a private folder
 *   is refused (what the user must fix); dormant and refused servers alone do not change the exit code.
 */
export async function runStatus(
  options: { json: boolean; startBackgroundSync?: ((names: string[]) => void) | undefined },
  ctx: CommandContext,
  fs: FileSystem = denoFileSystem,
): Promise<number> {
  const loaded = await loadResolution({
    cwd: ctx.cwd,
    env: ctx.env,
    homeDir: ctx.homeDir,
    configDir: ctx.configDir,
    fs,
  });
  const nowMs = Date.now();
  const due = dueRegistries(loaded, nowMs);
  if (due.length > 0) (options.startBackgroundSync ?? ((names) => startBackgroundSync(names, ctx)))(due);
  const report = await buildStatusReport(loaded, fs, { nowMs, updating: due, env: ctx.env });
  ctx.writeOut(
    options.json ? JSON.stringify(report, null, 2) + "\n" : renderStatusText(report, { nowMs }),
  );
  const pluginFailed = loaded.resolution.refused.some((r) =>
    r.code.startsWith("PLUGIN") || r.code.startsWith("TRUST_FILE")
  );
  const folderRefused = report.problems.some((p) =>
    p.code.startsWith("PRIVATE_DIR_") && p.code !== "PRIVATE_DIR_LOOSE"
  );
  return loaded.configError !== null || pluginFailed || folderRefused ? 1 : 0;
}

/**
 * Builds the report from a resolution. Reads only the credentials folder (sign-in states) and the
 * tool cache; never connects or looks a name up.
 *
 * @param options.nowMs The current time, ms since the epoch (tool-cache ages). @default Date.now()
 * @param options.updating Git registries being fetched in the background now. Default none.
 * @param options.env The environment `env(...)` predicates read (for the "applies because" line). Default `{}`.
 */
export async function buildStatusReport(
  loaded: LoadedResolution,
  fs: FileSystem,
  options: { nowMs?: number; updating?: readonly string[]; env?: Readonly<Record<string, string>> } = {},
): Promise<StatusReport> {
  const { resolution, workspace } = loaded;
  const nowMs = options.nowMs ?? Date.now();
  const servers: StatusServer[] = [];
  for (const plugin of loaded.plugins) {
    for (const decl of plugin.manifest.mcpServers) {
      servers.push(await describeServer(decl, plugin, loaded, fs, nowMs, options.env ?? {}));
    }
  }
  const diagnostic = (e: UserError): StatusProblem => ({
    code: e.code,
    message: e.message,
    hint: e.hint,
    location: e.location,
  });
  const problems: StatusProblem[] = [
    ...loaded.configProblems.map(diagnostic),
    ...workspace.problems.map(diagnostic),
    ...resolution.refused.map((r) => ({
      code: r.code,
      message: r.code.startsWith("PLUGIN") || r.code.startsWith("TRUST_FILE") || r.code.startsWith("SOURCE_")
        ? r.reason
        : `Cannot use server "${r.server}" (plugin "${r.plugin}"${
          r.source ? `, ${sourceLabel(r.source)}` : ""
        }): ${r.reason}`,
      hint: r.hint,
      location: r.location,
    })),
    ...servers.flatMap((server) => {
      const refusal = server.endpointRefusal;
      return refusal
        ? [{ code: refusal.code, message: refusal.message, hint: refusal.hint, location: refusal.location }]
        : [];
    }),
    ...privateFolderProblems(loaded.configDir),
  ];
  const configFile = join(loaded.configDir, CONFIG_FILE_NAME);
  return {
    configDir: loaded.configDir,
    configDirPresent: await exists(fs, loaded.configDir),
    configFile,
    configFilePresent: await exists(fs, configFile),
    configError: loaded.configError ? diagnostic(loaded.configError) : null,
    workspace: {
      root: workspace.root,
      lockfile: workspace.lockfile,
      manifests: workspace.manifests,
      dependencyCount: workspace.dependencies.length,
    },
    plugins: loaded.plugins.map((p) => ({
      name: p.name,
      file: p.file,
      source: p.source ?? USER_PLUGINS_SOURCE,
      ...(p.trust !== undefined ? { trust: p.trust } : {}),
      ...(p.isGitIgnored ? { gitIgnored: true } : {}),
      dependsOn: p.manifest.dependsOn ?? null,
      servers: p.manifest.mcpServers.map((s) => s.name),
    })),
    sources: (loaded.sources?.sources ?? []).map((src) =>
      describeSource(src, loaded, options.updating ?? [])
    ),
    notes: loaded.sources?.notes ?? [],
    servers,
    problems,
  };
}

/** Whether something is at `path`; a path that cannot be examined counts as absent. */
async function exists(fs: FileSystem, path: string): Promise<boolean> {
  try {
    return (await fs.stat(path)) !== null;
  } catch {
    return false;
  }
}

async function describeServer(
  decl: McpServerDecl,
  plugin: LoadedPlugin,
  loaded: LoadedResolution,
  fs: FileSystem,
  nowMs: number,
  env: Readonly<Record<string, string>>,
): Promise<StatusServer> {
  const { resolution } = loaded;
  const source = plugin.source ?? USER_PLUGINS_SOURCE;
  const sameSource = (s: string | undefined) => (s ?? USER_PLUGINS_SOURCE) === source;
  const spec = resolution.servers.find((s) =>
    s.name === decl.name && s.plugin === plugin.name && s.location.file === decl.location.file
  );
  const refusal = resolution.refused.find((r) =>
    r.server === decl.name && r.plugin === plugin.name && sameSource(r.source)
  );
  const dormant = resolution.dormant.find((d) =>
    d.server === decl.name && d.plugin === plugin.name && sameSource(d.source)
  );
  const untrusted = refusal?.code === "SERVER_UNTRUSTED";
  const entry: StatusServer = spec
    ? {
      name: decl.name,
      plugin: plugin.name,
      source,
      state: "applies",
      reason: whyApplies(decl, plugin, loaded, env),
      transport: decl.transport,
      location: decl.location,
    }
    : refusal
    ? {
      name: decl.name,
      plugin: plugin.name,
      source,
      state: untrusted ? "untrusted" : "refused",
      reason: refusal.reason,
      code: refusal.code,
      ...(untrusted
        ? { trustCommand: (plugin.trustFiles ?? [plugin.file]).map(trustCommand).join(" && ") }
        : {}),
      transport: decl.transport,
      location: decl.location,
    }
    : {
      name: decl.name,
      plugin: plugin.name,
      source,
      state: "dormant",
      reason: dormant?.reason ?? "does not apply",
      transport: decl.transport,
      location: decl.location,
    };
  if (decl.transport === "stdio") {
    entry.command = decl.command;
    entry.args = decl.args;
    if (spec?.transport === "stdio") {
      entry.cwd = spec.cwd;
      entry.envNames = envNamesByOrigin(spec.envOrigins ?? {});
      entry.missingPassthrough = spec.missingPassthrough ?? [];
    }
  } else {
    entry.url = decl.url;
    entry.headerNames = Object.keys(decl.headers);
    if (spec?.transport === "http") {
      // Loaded only for a remote server (it brings node:crypto, ~60 ms of every status otherwise).
      const { credentialPath, describeSignInText, loginCommand } = await import("../auth/mod.ts");
      const text = await readTextFileIfExists(fs, credentialPath(loaded.configDir, spec.name));
      const signIn = describeSignInText(text, spec);
      entry.auth = signIn.state;
      entry.authExpiresAt = signIn.expiresAt;
      entry.authStored = text !== null;
      // Nothing stored says nothing about whether the server needs a sign-in at all.
      entry.authHint = signIn.state === "not-signed-in" && text === null
        ? `if the server asks for one: \`${loginCommand(spec.name)}\``
        : signIn.hint;
      entry.endpointRefusal = await endpointRefusal(spec.url, decl.url, spec.name, decl.location);
      if (entry.endpointRefusal) {
        // The meta-server will not connect to it: it is refused, whatever its depends-on says.
        entry.state = "refused";
        entry.code = entry.endpointRefusal.code;
        entry.reason = `the endpoint policy refuses its URL: ${entry.endpointRefusal.reason}`;
      }
    }
  }
  if (spec && entry.state === "applies") {
    entry.toolCache = await readToolCacheState(loaded.configDir, spec, { nowMs, fs });
    entry.era = (entry.toolCache.state !== "none" ? entry.toolCache.era : undefined) ?? "unknown";
    entry.observeResults = loaded.config.observeResults && spec.observeResults !== false;
  }
  return entry;
}

/**
 * The endpoint policy's verdict on `url` as text only (no lookup; messages show `template`), or
 * `undefined` when it passes. The policy (and its address library) loads only for a remote server.
 */
async function endpointRefusal(
  url: string,
  template: string,
  server: string,
  location: Location,
): Promise<StatusServer["endpointRefusal"]> {
  const { checkEndpointUrl, EndpointPolicyError } = await import("../net/mod.ts");
  try {
    checkEndpointUrl(url, { server, displayAs: template });
    return undefined;
  } catch (error) {
    if (!(error instanceof EndpointPolicyError)) throw error;
    return { code: error.code, message: error.message, reason: error.reason, hint: error.hint, location };
  }
}

function whyApplies(
  decl: McpServerDecl,
  plugin: LoadedPlugin,
  loaded: LoadedResolution,
  env: Readonly<Record<string, string>>,
): string {
  const atoms = decl.dependsOn ?? plugin.manifest.dependsOn;
  const gated = atoms !== undefined || decl.predicates !== undefined ||
    plugin.manifest.predicates !== undefined;
  if (!gated && plugin.trust === "trusted") {
    return `trusted ${plugin.source ?? "workspace"} plugin, applies in this workspace`;
  }
  if (atoms === undefined && !gated) return "no depends-on";
  const predicates = [...(plugin.manifest.predicates ?? []), ...(decl.predicates ?? [])].map(parsePredicate);
  return evaluateGate(atoms, predicates, {
    workspace: loaded.workspace,
    env,
    baseDir: loaded.workspace.root ?? "/",
    isWorkspaceMember: plugin.isWorkspaceMember === true,
  }).reason;
}

import { renderStatusText } from "./_status_text.ts";
export { renderStatusText };
