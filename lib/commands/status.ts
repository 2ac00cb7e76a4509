/**
 * `cargo-agents status [--json]`: what the meta-server would serve in this workspace and why —
 * config, workspace, every plugin and server (applies / dormant / refused, with the reason), the
 * transport, the tool-cache state and, for remote servers, the sign-in state and whether the
 * endpoint policy refuses the URL (checked offline: no name is looked up). It starts nothing and
 * never connects.
 *
 * @module
 */
import { join } from "node:path";
import type { CommandContext } from "./context.ts";
import { type Location, renderDiagnostic, UserError } from "../diagnostics.ts";
import { CONFIG_FILE_NAME } from "../plugins/config.ts";
import { evaluateDependsOn } from "../workspace/depends_on.ts";
import { denoFileSystem, type FileSystem, readTextFileIfExists } from "../file_system.ts";
import type { McpServerDecl } from "../plugins/manifest.ts";
import type { LoadedPlugin } from "../plugins/mod.ts";
import { type LoadedResolution, loadResolution } from "../catalog/resolve.ts";
import {
  credentialPath,
  describeSignInText,
  loginCommand,
  type SignInDescription,
} from "../auth/credentials.ts";
import { readToolCacheState, type ToolCacheState } from "../catalog/mod.ts";
import { checkEndpointUrl, EndpointPolicyError } from "../net/endpoint_policy.ts";
import { envNamesByOrigin, type EnvOrigin } from "../backends/child_env.ts";
import { envText, privateFolderProblems } from "./_status_checks.ts";

/** Sign-in state of a remote server (see `describeSignIn()` in `lib/auth/credentials.ts`). */
export type AuthState = SignInDescription["state"];

/** One declared server in the `--json` document. */
export interface StatusServer {
  name: string;
  plugin: string;
  state: "applies" | "dormant" | "refused";
  /** Why it applies, why not, or why it is refused. */
  reason: string;
  /** Code of the refusal, when refused (by resolution, or by the endpoint policy). */
  code?: string | undefined;
  transport: "stdio" | "http" | "sse";
  /** stdio: the program and its arguments. */
  command?: string | undefined;
  args?: string[] | undefined;
  /** stdio: the working directory it runs in, when it applies. */
  cwd?: string | undefined;
  /**
   * stdio servers that apply: the names (never the values) of the environment variables it
   * receives, by origin: `base` (the minimal base set), `passthrough` (`env-passthrough`),
   * `inherited` (`inherit-env = true`), `manifest` (its `env`).
   */
  envNames?: Record<EnvOrigin, string[]> | undefined;
  /** stdio servers that apply: `env-passthrough` names not set in this environment (not passed). */
  missingPassthrough?: string[] | undefined;
  /** Remote: the URL as written in the manifest (`${VAR}` not expanded, so nothing secret is shown). */
  url?: string | undefined;
  /** Remote: header names only, never values. */
  headerNames?: string[] | undefined;
  /** Remote servers that apply: the sign-in state. */
  auth?: AuthState | undefined;
  /** Remote servers that apply: when the stored access token expires(d), ms since the epoch. */
  authExpiresAt?: number | undefined;
  /** Remote servers that apply: what to do about the sign-in, e.g. the exact login command. */
  authHint?: string | undefined;
  /** Remote servers that apply: whether a stored sign-in (credentials file) exists at all. */
  authStored?: boolean | undefined;
  /**
   * Remote servers that apply: why the endpoint policy refuses the URL (scheme, host form, literal
   * address class; decided offline, so a name that resolves to a private address is not caught here).
   */
  endpointRefusal?: (StatusProblem & { /** The rule's verdict alone. */ reason: string }) | undefined;
  /** Servers that apply: what the on-disk tool cache holds (`ageMs` in ms). */
  toolCache?: ToolCacheState | undefined;
  /**
   * Servers that apply: whether their result shapes are learned (`[mcp] observe-results` and the
   * manifest's `observe-results`); how many tools have one is `toolCache.shapeCount`.
   */
  observeResults?: boolean | undefined;
  location: Location;
}

/** A problem in the `--json` document. */
export interface StatusProblem {
  code: string;
  message: string;
  hint: string | undefined;
  location: Location | undefined;
}

/** The `--json` document. */
export interface StatusReport {
  configDir: string;
  /** Whether {@link StatusReport.configDir} exists (absent: every setting has its default). */
  configDirPresent: boolean;
  configFile: string;
  /** Whether `config.toml` exists (absent: every setting has its default). */
  configFilePresent: boolean;
  configError: StatusProblem | null;
  workspace: { root: string | null; lockfile: string | null; manifests: string[]; dependencyCount: number };
  plugins: { name: string; file: string; dependsOn: string[] | null; servers: string[] }[];
  servers: StatusServer[];
  /**
   * Config, workspace, plugin-loading and server refusals, endpoint-policy refusals, then our
   * private folders (`logs/`, `cache/`, `credentials/` that are a link or another user's).
   */
  problems: StatusProblem[];
}

/**
 * Prints the status of the workspace around `ctx.cwd`.
 *
 * @param options.json Print one JSON document ({@link StatusReport}) instead of text.
 * @param fs File access. Default {@link denoFileSystem}.
 * @returns 0, or 1 when `config.toml` is broken, a plugin could not be loaded or a private folder
 *   is refused (what the user must fix); dormant and refused servers alone do not change the exit code.
 */
export async function runStatus(
  options: { json: boolean },
  ctx: CommandContext,
  fs: FileSystem = denoFileSystem,
): Promise<number> {
  const loaded = await loadResolution({ cwd: ctx.cwd, env: ctx.env, homeDir: ctx.homeDir, fs });
  const nowMs = Date.now();
  const report = await buildStatusReport(loaded, fs, { nowMs });
  ctx.writeOut(
    options.json ? JSON.stringify(report, null, 2) + "\n" : renderStatusText(report, { nowMs }),
  );
  const pluginFailed = loaded.resolution.refused.some((r) => r.code.startsWith("PLUGIN"));
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
 */
export async function buildStatusReport(
  loaded: LoadedResolution,
  fs: FileSystem,
  options: { nowMs?: number } = {},
): Promise<StatusReport> {
  const { resolution, workspace } = loaded;
  const nowMs = options.nowMs ?? Date.now();
  const servers: StatusServer[] = [];
  for (const plugin of loaded.plugins) {
    for (const decl of plugin.manifest.mcpServers) {
      servers.push(await describeServer(decl, plugin, loaded, fs, nowMs));
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
      message: r.code.startsWith("PLUGIN")
        ? r.reason
        : `Cannot use server "${r.server}" (plugin "${r.plugin}"): ${r.reason}`,
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
      dependsOn: p.manifest.dependsOn ?? null,
      servers: p.manifest.mcpServers.map((s) => s.name),
    })),
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
): Promise<StatusServer> {
  const { resolution } = loaded;
  const spec = resolution.servers.find((s) => s.name === decl.name && s.plugin === plugin.name);
  const refusal = resolution.refused.find((r) => r.server === decl.name && r.plugin === plugin.name);
  const dormant = resolution.dormant.find((d) => d.server === decl.name && d.plugin === plugin.name);
  const entry: StatusServer = spec
    ? {
      name: decl.name,
      plugin: plugin.name,
      state: "applies",
      reason: whyApplies(decl, plugin, loaded),
      transport: decl.transport,
      location: decl.location,
    }
    : refusal
    ? {
      name: decl.name,
      plugin: plugin.name,
      state: "refused",
      reason: refusal.reason,
      code: refusal.code,
      transport: decl.transport,
      location: decl.location,
    }
    : {
      name: decl.name,
      plugin: plugin.name,
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
      const text = await readTextFileIfExists(fs, credentialPath(loaded.configDir, spec.name));
      const signIn = describeSignInText(text, spec);
      entry.auth = signIn.state;
      entry.authExpiresAt = signIn.expiresAt;
      entry.authStored = text !== null;
      // Nothing stored says nothing about whether the server needs a sign-in at all.
      entry.authHint = signIn.state === "not-signed-in" && text === null
        ? `if the server asks for one: \`${loginCommand(spec.name)}\``
        : signIn.hint;
      entry.endpointRefusal = endpointRefusal(spec.url, decl.url, spec.name, decl.location);
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
    entry.observeResults = loaded.config.observeResults && spec.observeResults !== false;
  }
  return entry;
}

/** The endpoint policy's verdict on `url` as text only (no lookup; messages show `template`), or `undefined` when it passes. */
function endpointRefusal(
  url: string,
  template: string,
  server: string,
  location: Location,
): StatusServer["endpointRefusal"] {
  try {
    checkEndpointUrl(url, { server, displayAs: template });
    return undefined;
  } catch (error) {
    if (!(error instanceof EndpointPolicyError)) throw error;
    return { code: error.code, message: error.message, reason: error.reason, hint: error.hint, location };
  }
}

/** `42 s`, `5 min`, `3 h`, `2 d`. */
function ageText(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}

/** The tool-cache line of a server that applies. */
function toolCacheText(cache: ToolCacheState): string {
  switch (cache.state) {
    case "fresh":
      return `tool cache: fresh (${cache.toolCount} tools, listed ${
        ageText(cache.ageMs)
      } ago; list_tools answers without starting the server)`;
    case "stale":
      return `tool cache: stale (listed ${ageText(cache.ageMs)} ago; the server starts for list_tools)`;
    default:
      return "tool cache: none (the server starts for list_tools)";
  }
}

/**
 * The observed-results line of a server that applies: how many of its cached tools have a learned
 * result shape; none without a tool cache (nothing is known of its tools yet).
 */
function observedText(cache: ToolCacheState, isObserving: boolean | undefined): string | undefined {
  if (isObserving === false) return "result shapes: not observed (observe-results = false)";
  if (cache.state === "none") return undefined;
  return `result shapes: ${cache.shapeCount} of ${cache.toolCount} tools learned from their answers`;
}

function whyApplies(decl: McpServerDecl, plugin: LoadedPlugin, loaded: LoadedResolution): string {
  const atoms = decl.dependsOn ?? plugin.manifest.dependsOn;
  return evaluateDependsOn(atoms, loaded.workspace).reason;
}

/** The sign-in line of a remote server (never a token). */
function authText(server: StatusServer, nowMs: number): string {
  const hint = server.authHint ? `; ${server.authHint}` : "";
  const expiry = server.authExpiresAt === undefined ? "" : new Date(server.authExpiresAt).toISOString();
  switch (server.auth) {
    case "signed-in":
      return expiry
        ? `signed in (token expires ${expiry}, in ${
          Math.max(0, Math.round((server.authExpiresAt! - nowMs) / 60_000))
        } min)`
        : "signed in";
    case "expired-refreshable":
      return `signed in, token expired ${expiry}; it is refreshed on next use`;
    case "expired":
      return `token expired ${expiry}${hint}`;
    case "header-auth":
      return "authorization header configured";
    default:
      return server.authStored === false
        ? `no stored sign-in (${server.authHint ?? "none needed so far"})`
        : `not signed in${hint}`;
  }
}

/**
 * The text form of {@link StatusReport}: sections Config, Workspace, Plugins, Problems.
 *
 * @param options.nowMs The current time, ms since the epoch (token expiry). @default Date.now()
 */
export function renderStatusText(report: StatusReport, options: { nowMs?: number } = {}): string {
  const nowMs = options.nowMs ?? Date.now();
  const lines: string[] = [];
  lines.push(`Config:    ${report.configDir}${report.configDirPresent ? "" : " (not present)"}`);
  lines.push(
    `           ${CONFIG_FILE_NAME}: ${
      report.configError
        ? "has problems (see Problems): a bad key keeps its default, a syntax error costs the file"
        : report.configFilePresent
        ? "ok"
        : "not present (defaults)"
    }`,
  );
  const ws = report.workspace;
  if (ws.root === null) {
    lines.push('Workspace: none (no Cargo.toml here or above); only depends-on "*" servers apply');
  } else {
    const lock = ws.lockfile ? "Cargo.lock" : "no Cargo.lock yet";
    lines.push(`Workspace: ${ws.root}`);
    lines.push(
      `           ${ws.manifests.length} manifest(s), ${ws.dependencyCount} direct dependencies, ${lock}`,
    );
  }
  lines.push("");
  if (report.plugins.length === 0) {
    lines.push(`Plugins: none loaded from ${join(report.configDir, "plugins")}`);
  } else {
    lines.push(`Plugins (${report.plugins.length}):`);
  }
  for (const plugin of report.plugins) {
    lines.push(`  ${plugin.name}  ${plugin.file}`);
    for (const server of report.servers.filter((s) => s.plugin === plugin.name)) {
      lines.push(`    ${server.name}: ${server.state} - ${server.reason}`);
      if (server.command !== undefined) {
        const cwd = server.cwd ? ` (in ${server.cwd})` : "";
        lines.push(`      stdio: ${[server.command, ...(server.args ?? [])].map(quoteArg).join(" ")}${cwd}`);
        if (server.envNames) lines.push(`      ${envText(server.envNames, server.missingPassthrough ?? [])}`);
      } else {
        const headers = server.headerNames?.length ? ` [headers: ${server.headerNames.join(", ")}]` : "";
        const sse = server.transport === "sse" ? " (sse)" : "";
        lines.push(`      http${sse}: ${server.url}${headers}`);
        // Signing in cannot help a URL the policy refuses: its state line says what is wrong.
        if (server.auth && !server.endpointRefusal) lines.push(`      ${authText(server, nowMs)}`);
      }
      if (server.toolCache) lines.push(`      ${toolCacheText(server.toolCache)}`);
      const observed = server.toolCache && observedText(server.toolCache, server.observeResults);
      if (observed) lines.push(`      ${observed}`);
    }
  }
  const count = (state: StatusServer["state"]) => report.servers.filter((s) => s.state === state).length;
  lines.push("");
  lines.push(`Servers: ${count("applies")} apply, ${count("dormant")} dormant, ${count("refused")} refused`);
  if (report.problems.length > 0) {
    lines.push("", "Problems:");
    for (const p of report.problems) {
      lines.push(
        renderDiagnostic(new UserError(p.code, p.message, { hint: p.hint, location: p.location })),
      );
    }
  }
  return lines.join("\n") + "\n";
}

function quoteArg(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}
