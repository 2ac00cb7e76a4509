/**
 * Plugins + workspace + `[mcp]` -> the servers that apply here ({@link ServerSpec}), the ones
 * refused and the ones dormant, each with a reason (for `status` and `list_tools` Problems).
 * {@link loadResolution} is the one call the meta-server and the commands make.
 *
 * @module
 */
import { resolve as resolvePath } from "node:path";
import { UserError } from "../diagnostics.ts";
import {
  DEFAULT_MCP_CONFIG,
  type Dormant,
  expandVars,
  type HttpServerSpec,
  type LoadedPlugin,
  type McpConfig,
  type McpServerDecl,
  namespaceKey,
  type Refusal,
  type RemoteServerDecl,
  type Resolution,
  type ServerSpec,
} from "../plugins/mod.ts";
import { loadMcpConfigReport, resolveConfigDir } from "../plugins/config.ts";
import { evaluateGate, loadWorkspace, parsePredicate, type Workspace } from "../workspace/mod.ts";
import { type Candidate, combineGates, settleClaims } from "./_server_claims.ts";
import { denoFileSystem, describeFsError, type FileSystem } from "../file_system.ts";
import { type LoadedSources, loadPluginSources, trustCommand } from "../plugin_sources/mod.ts";
import { childEnvironment, isBaseEnvName } from "../backends/child_env.ts";
import { processSecrets, type SecretRegistry } from "../secrets/mod.ts";

/** Server names the meta-server keeps for itself (compared after `namespaceKey()`). */
export const RESERVED_SERVER_NAMES: readonly string[] = ["list_tools", "execute"];

/** Everything {@link resolveServers} combines. */
export interface ResolveInput {
  /** From `loadPlugins()`, sorted by name. */
  plugins: readonly LoadedPlugin[];
  /** Plugins that failed to load (from `loadPlugins()`); passed through to {@link Resolution.refused}. */
  refused: readonly Refusal[];
  workspace: Workspace;
  config: McpConfig;
  /** The environment `${VAR}` references read. */
  env: Readonly<Record<string, string>>;
  /** Absolute working directory: where stdio servers run when there is no workspace root. */
  cwd: string;
  /**
   * Where the values read for `${VAR}` expansions and `env-passthrough` are registered as secrets
   * (values of base variables such as `HOME` are not). @default processSecrets
   */
  secrets?: SecretRegistry | undefined;
}

/**
 * Decides, for every declared server, whether it applies here.
 *
 * In order, a server is: refused (`SERVER_RESERVED_NAME`) when named `list_tools` or `execute`;
 * dormant when the plugin's gate (`depends-on` and `predicates`, and a crate plugin's `[[plugins]]`
 * entry) or its own does not hold, or uses a predicate this program does not evaluate (`shell(...)`:
 * dormant, never run); refused (`SERVER_UNTRUSTED`) when its plugin needs trust (a workspace
 * manifest, a path or git crate's) and the file is not trusted with its current content; refused when
 * another applicable server has the same name (`SERVER_DUPLICATE`) or the same script global
 * (`SERVER_NAME_CLASH`): within one source the earlier one (plugins by name, servers in file order)
 * stays usable; across sources both are refused naming both files, except that a server of the
 * user's own plugins (`<config>/plugins`) wins; refused when `transport = "sse"` (`SSE_DEPRECATED`),
 * when `url`, a header value, `client-secret` or a stdio `env` value names an unset variable
 * (`ENV_VAR_UNSET`), or when the expanded URL is not http(s) (`SERVER_BAD_URL`). Otherwise it becomes
 * a {@link ServerSpec}: timeouts from the manifest or `[mcp]` (the tool-call timeout clamped to at
 * most `script-timeout-secs - 1`), stdio `cwd` joined to the workspace root (default: the root, or
 * `cwd` outside a workspace), stdio `env` the complete child environment (`childEnvironment()`).
 * Every value read from `input.env` for an expansion or a passthrough is registered with
 * `input.secrets`.
 *
 * @returns Servers sorted by name; refusals sorted by plugin then server; dormant sorted by name.
 */
export function resolveServers(input: ResolveInput): Resolution {
  const { workspace } = input;
  const servers: ServerSpec[] = [];
  const refused: Refusal[] = [...input.refused];
  const dormant: Dormant[] = [];
  const candidates: Candidate[] = [];
  for (const plugin of input.plugins) {
    const ctx = {
      workspace,
      env: input.env,
      baseDir: workspace.root ?? input.cwd,
      isWorkspaceMember: plugin.isWorkspaceMember === true,
    };
    const parse = (texts: readonly string[] | undefined) => texts?.map(parsePredicate);
    const pluginGate = combineGates(
      evaluateGate(plugin.manifest.dependsOn, parse(plugin.manifest.predicates), ctx),
      plugin.referenceGate &&
        evaluateGate(plugin.referenceGate.dependsOn, parse(plugin.referenceGate.predicates), ctx),
    );
    for (const decl of plugin.manifest.mcpServers) {
      const source = plugin.source;
      const refuse = (code: string, reason: string, hint?: string) =>
        refused.push({
          server: decl.name,
          plugin: plugin.name,
          code,
          reason,
          hint,
          location: decl.location,
          ...(source !== undefined ? { source } : {}),
        });
      const key = namespaceKey(decl.name);
      if (RESERVED_SERVER_NAMES.includes(key)) {
        refuse(
          "SERVER_RESERVED_NAME",
          `server name "${decl.name}" is reserved by the meta-server`,
          `rename the server in ${plugin.file}`,
        );
        continue;
      }
      const sleep = (reason: string) =>
        dormant.push({
          server: decl.name,
          plugin: plugin.name,
          reason,
          ...(source !== undefined ? { source } : {}),
        });
      if (pluginGate.holds !== true) {
        sleep(`plugin ${pluginGate.holds === "unknown" ? "stays dormant: " : ""}${pluginGate.reason}`);
        continue;
      }
      const gate = evaluateGate(decl.dependsOn, parse(decl.predicates), ctx);
      if (gate.holds !== true) {
        sleep(`${gate.holds === "unknown" ? "stays dormant: " : ""}${gate.reason}`);
        continue;
      }
      if (plugin.trust !== undefined && plugin.trust !== "trusted") {
        const files = plugin.trustFiles ?? [plugin.file];
        const changes = plugin.trustChanges?.length ? ` (${plugin.trustChanges.join("; ")})` : "";
        const what = plugin.trust === "changed" ? `changed since you trusted it${changes}` : "not trusted";
        refuse(
          "SERVER_UNTRUSTED",
          `untrusted: ${files.join(" and ")} (${
            source ?? "workspace"
          } plugin "${plugin.name}") is ${what}, so its servers never start`,
          untrustedHint(files),
        );
        continue;
      }
      candidates.push({ plugin, decl, key, refuse });
    }
  }
  for (const { plugin, decl, refuse } of settleClaims(candidates)) {
    const built = buildSpec(decl, plugin, input);
    if ("code" in built) refuse(built.code, built.reason, built.hint);
    else servers.push(built);
  }
  return {
    servers: servers.sort((a, b) => a.name.localeCompare(b.name)),
    refused: refused.sort((a, b) => a.plugin.localeCompare(b.plugin) || a.server.localeCompare(b.server)),
    dormant: dormant.sort((a, b) => a.server.localeCompare(b.server) || a.plugin.localeCompare(b.plugin)),
  };
}

/**
 * What the agent reads about an untrusted manifest: trusting is the user's decision, so it is asked to
 * have the user review the file and run the command themselves (`trust` asks a person to confirm).
 */
function untrustedHint(files: readonly string[]): string {
  return `ask the user to review ${files.join(" and ")} and, if they agree, to run \`${
    files.map(trustCommand).join(" && ")
  }\` themselves in a terminal (it shows what would start and asks them to confirm); an agent must not run it`;
}

type BuildFailure = { code: string; reason: string; hint: string | undefined };

function buildSpec(
  decl: McpServerDecl,
  plugin: LoadedPlugin,
  input: ResolveInput,
): ServerSpec | BuildFailure {
  const { config } = input;
  const scriptLimitSecs = Math.max(1, config.scriptTimeoutSecs - 1);
  const base = {
    name: decl.name,
    plugin: plugin.name,
    ...(plugin.source !== undefined ? { source: plugin.source } : {}),
    location: decl.location,
    startupTimeoutMs: (decl.startupTimeoutSecs ?? config.serverStartupTimeoutSecs) * 1000,
    toolCallTimeoutMs: Math.min(decl.toolCallTimeoutSecs ?? config.toolCallTimeoutSecs, scriptLimitSecs) *
      1000,
    enabledTools: decl.enabledTools,
    disabledTools: decl.disabledTools,
    confirmTools: decl.confirmTools,
    ...(decl.observeResults === false ? { observeResults: false as const } : {}),
  };
  if (decl.transport === "stdio") {
    const root = input.workspace.root ?? input.cwd;
    const secrets = input.secrets ?? processSecrets;
    const register = (variable: string, value: string) => {
      if (!isBaseEnvName(variable)) secrets.register(value);
    };
    const manifestEnv: Record<string, string> = {};
    for (const [name, value] of Object.entries(decl.env)) {
      const expanded = expandVars(value, input.env, { onVariable: register });
      if (!expanded.ok) return unsetVariable(expanded.error.variable);
      manifestEnv[name] = expanded.value;
    }
    const child = childEnvironment(input.env, {
      manifestEnv,
      passthrough: decl.envPassthrough,
      inheritEnv: decl.inheritEnv,
    });
    for (const [name, origin] of Object.entries(child.origins)) {
      if (origin === "passthrough") register(name, child.env[name]!);
    }
    return {
      ...base,
      transport: "stdio",
      command: decl.command,
      args: [...decl.args],
      env: child.env,
      envOrigins: child.origins,
      missingPassthrough: child.missingPassthrough,
      cwd: decl.cwd === undefined ? root : resolvePath(root, decl.cwd),
    };
  }
  return buildRemote(decl, base, input.env, input.secrets ?? processSecrets);
}

/** Header names whose value is a credential even when the manifest writes it literally. */
const CREDENTIAL_HEADER = /authorization|cookie|token|secret|key|auth|password/i;

/** The refusal of a server whose manifest names an unset variable without a default. */
function unsetVariable(variable: string): BuildFailure {
  return {
    code: "ENV_VAR_UNSET",
    reason: `references environment variable "${variable}", which is not set`,
    hint:
      `set ${variable} in the environment the agent starts cargo-agents from, or write \${${variable}:-default}`,
  };
}

function buildRemote(
  decl: RemoteServerDecl,
  base: Omit<HttpServerSpec, "transport" | "url" | "headers">,
  env: Readonly<Record<string, string>>,
  secrets: SecretRegistry,
): HttpServerSpec | BuildFailure {
  if (decl.transport === "sse") {
    return {
      code: "SSE_DEPRECATED",
      reason: "the SSE transport is deprecated; declare a streamable HTTP server with `url` instead",
      hint: 'remove `transport = "sse"` and point `url` at the server\'s streamable HTTP endpoint',
    };
  }
  const unset = unsetVariable;
  // Every value a reference reads may be a secret (a key in a query, a token in a path or header).
  const onVariable = (variable: string, value: string) => {
    if (!isBaseEnvName(variable)) secrets.register(value);
  };
  const url = expandVars(decl.url, env, {
    onVariable: (variable, value) => {
      if (!isBaseEnvName(variable)) secrets.registerUrlValue(value);
    },
  });
  if (!url.ok) return unset(url.error.variable);
  if (!URL.canParse(url.value) || !["http:", "https:"].includes(new URL(url.value).protocol)) {
    return {
      code: "SERVER_BAD_URL",
      reason: `url "${decl.url}" is not an http(s) URL`,
      hint: 'write the full endpoint, e.g. url = "https://example.com/mcp"',
    };
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(decl.headers)) {
    const expanded = expandVars(value, env, { onVariable });
    if (!expanded.ok) return unset(expanded.error.variable);
    headers[name] = expanded.value;
    if (CREDENTIAL_HEADER.test(name)) {
      // A credential written literally is one too: the whole value, and the part after a scheme.
      secrets.register(expanded.value);
      secrets.register(expanded.value.replace(/^\s*[A-Za-z]+\s+/, ""));
    }
  }
  let clientSecret: string | undefined;
  if (decl.clientSecret !== undefined) {
    const expanded = expandVars(decl.clientSecret, env, { onVariable });
    if (!expanded.ok) return unset(expanded.error.variable);
    clientSecret = expanded.value;
    secrets.register(clientSecret); // A client secret is one even when written literally.
  }
  return {
    ...base,
    transport: "http",
    url: url.value,
    urlTemplate: decl.url,
    headers,
    clientId: decl.clientId,
    clientSecret,
    scopes: decl.scopes === undefined ? undefined : [...decl.scopes],
    clientMetadataUrl: decl.clientMetadataUrl,
  };
}

/** Where {@link loadResolution} looks: the workspace around `cwd` and the config dir of `env`/`homeDir`. */
export interface LoadOptions {
  cwd: string;
  env: Readonly<Record<string, string>>;
  homeDir: string;
  /** `--config-dir` (absolute), over the environment's. */
  configDir?: string | undefined;
}

/** Everything a command or the meta-server needs to know about the servers of this workspace. */
export interface LoadedResolution {
  /** From `resolveConfigDir()`. */
  configDir: string;
  /** The effective `[mcp]` settings (the defaults when `config.toml` is broken). */
  config: McpConfig;
  /**
   * The first of {@link configProblems}, or `null`; report it, never drop it.
   */
  configError: UserError | null;
  /**
   * Every problem of `config.toml`: each bad key costs only that key (its default applies); an
   * unreadable file or a syntax error costs the file (all defaults). Empty when the file is fine.
   */
  configProblems: UserError[];
  /** Adjustments of the settings that are not errors (a timeout lowered to follow another), one line each. */
  configWarnings: string[];
  workspace: Workspace;
  /** Loaded plugins sorted by name (the ones that failed are in `resolution.refused`). */
  plugins: LoadedPlugin[];
  resolution: Resolution;
  /** Where the plugins came from, `config.toml`'s registry problems, trust, and what to watch. Absent: user plugins only. */
  sources?: Omit<LoadedSources, "plugins" | "refused"> | undefined;
}

/**
 * Reads config, workspace and plugins of every source (user plugins, registries' folders and local
 * copies, workspace manifests with their trust, crate plugins) and resolves the servers: the one
 * call the meta-server and the commands make. It starts nothing and does not touch the network.
 *
 * @param options.cwd Absolute working directory (the user's workspace).
 * @param options.env The process environment (config dir lookup and `${VAR}` expansion).
 * @param options.homeDir The user's home directory.
 * @param options.configDir `--config-dir` (absolute), which wins over the environment.
 * @param options.fs File access. Default {@link denoFileSystem}.
 * Problems in the user's files (including a configuration directory, `config.toml` or `plugins`
 * of the wrong type) are reported in `configProblems`, `workspace.problems` and `resolution.refused`,
 * with the defaults in effect; it does not throw for them.
 */
export async function loadResolution(
  options: LoadOptions & { fs?: FileSystem | undefined },
): Promise<LoadedResolution> {
  const fs = options.fs ?? denoFileSystem;
  const configDir = resolveConfigDir(options.env, options.homeDir, options.configDir);
  let config: McpConfig;
  let configProblems: UserError[] = [];
  let configWarnings: string[] = [];
  try {
    ({ config, problems: configProblems, warnings: configWarnings } = await loadMcpConfigReport(
      configDir,
      fs,
    ));
  } catch (error) {
    config = { ...DEFAULT_MCP_CONFIG };
    configProblems = [
      error instanceof UserError ? error : new UserError(
        "CONFIG_UNREADABLE",
        `Cannot load the configuration in "${configDir}": ${describeFsError(error)}`,
        { cause: error },
      ),
    ];
  }
  const configError = configProblems[0] ?? null;
  // A configuration "directory" that is a file holds no plugins: configError already says so.
  const noDir = configError?.code === "CONFIG_DIR_NOT_A_FOLDER";
  const workspace = await loadWorkspace(options.cwd, fs);
  const { plugins, refused, ...sources } = noDir
    ? emptySources(configDir)
    : await loadPluginSources({ configDir, env: options.env, homeDir: options.homeDir, workspace, fs });
  // A broken or unsafe trusted.toml trusts nothing: said where refusals are (status, list_tools Problems).
  const trustRefusals = sources.trust.problems.map((p) => ({
    server: "trusted.toml",
    plugin: "trusted.toml",
    code: p.code,
    reason: p.message,
    hint: p.hint,
    location: p.location,
  }));
  const resolution = resolveServers({
    plugins,
    refused: [...refused, ...trustRefusals],
    workspace,
    config,
    env: options.env,
    cwd: options.cwd,
  });
  return {
    configDir,
    config,
    configError,
    configProblems: [...configProblems, ...sources.problems.filter((p) => !p.code.startsWith("TRUST_FILE"))],
    configWarnings,
    workspace,
    plugins,
    resolution,
    sources,
  };
}

function emptySources(configDir: string): LoadedSources {
  return {
    sources: [],
    plugins: [],
    refused: [],
    problems: [],
    notes: [],
    watch: { deep: [], flat: [], files: [] },
    trust: { file: `${configDir}/trusted.toml`, entries: new Map(), problems: [] },
  };
}
