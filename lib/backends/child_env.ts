/**
 * The environment a stdio backing server receives. Plugins from many authors run in every session,
 * so a server does not get the user's whole environment (a `GITHUB_TOKEN` meant for one server's
 * header must not reach another): it gets a minimal base (where programs and caches are, locale,
 * temp, proxy and certificate settings that package runners need), plus what its manifest names -
 * `env` values, `env-passthrough` names - or everything with `inherit-env = true`.
 *
 * Upstream hands every server the whole environment; this is the deliberate difference.
 *
 * @module
 */

/**
 * Variables every stdio server receives when set (Linux, macOS and Windows names together; a name a
 * platform does not use is simply absent). No credential: proxy URLs may carry userinfo, which the
 * credential shapes mask wherever it would be printed.
 */
export const BASE_ENV_NAMES: readonly string[] = Object.freeze([
  // Where programs, the user and their files are; locale; terminal; temp.
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TZ",
  "TMPDIR",
  "TMP",
  "TEMP",
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "XDG_DATA_HOME",
  "XDG_STATE_HOME",
  "XDG_RUNTIME_DIR",
  // macOS.
  "__CF_USER_TEXT_ENCODING",
  // Windows.
  "SYSTEMROOT",
  "SYSTEMDRIVE",
  "WINDIR",
  "COMSPEC",
  "PATHEXT",
  "USERPROFILE",
  "USERNAME",
  "USERDOMAIN",
  "HOMEDRIVE",
  "HOMEPATH",
  "APPDATA",
  "LOCALAPPDATA",
  "PROGRAMDATA",
  "PROGRAMFILES",
  "PROGRAMFILES(X86)",
  "PROGRAMW6432",
  "COMMONPROGRAMFILES",
  "COMMONPROGRAMFILES(X86)",
  "ALLUSERSPROFILE",
  "PUBLIC",
  "OS",
  "PROCESSOR_ARCHITECTURE",
  "NUMBER_OF_PROCESSORS",
  "COMPUTERNAME",
  // Proxies and certificate authorities (package downloads behind a corporate proxy).
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  // Package runners and toolchains (npx, uvx, pipx, cargo, deno, go, java): where they and their caches are.
  "npm_config_cache",
  "NPM_CONFIG_CACHE",
  "npm_config_prefix",
  "NPM_CONFIG_PREFIX",
  "npm_config_registry",
  "NPM_CONFIG_REGISTRY",
  "npm_config_userconfig",
  "NPM_CONFIG_USERCONFIG",
  "YARN_CACHE_FOLDER",
  "PNPM_HOME",
  "BUN_INSTALL",
  "NVM_DIR",
  "NVM_BIN",
  "VOLTA_HOME",
  "FNM_DIR",
  "DENO_DIR",
  "DENO_INSTALL_ROOT",
  "CARGO_HOME",
  "RUSTUP_HOME",
  "RUSTUP_TOOLCHAIN",
  "UV_CACHE_DIR",
  "UV_TOOL_DIR",
  "UV_TOOL_BIN_DIR",
  "UV_PYTHON_INSTALL_DIR",
  "PIP_CACHE_DIR",
  "PIPX_HOME",
  "PIPX_BIN_DIR",
  "PYTHONUSERBASE",
  "GOPATH",
  "GOMODCACHE",
  "GOCACHE",
  "JAVA_HOME",
]);

/** Name prefixes of base variables: the locale categories (`LC_ALL`, `LC_CTYPE`, ...). */
export const BASE_ENV_PREFIXES: readonly string[] = Object.freeze(["LC_"]);

/** Where a variable of a child's environment comes from. */
export type EnvOrigin = "base" | "passthrough" | "inherited" | "manifest";

/** Options of {@link childEnvironment}. */
export interface ChildEnvOptions {
  /** The manifest's `env`, `${VAR}` already expanded; it wins over every other source. Default `{}`. */
  manifestEnv?: Readonly<Record<string, string>> | undefined;
  /** Manifest `env-passthrough`: names copied from the meta-server's environment when set. Default `[]`. */
  passthrough?: readonly string[] | undefined;
  /** Manifest `inherit-env = true`: the whole environment, as upstream. @default false */
  inheritEnv?: boolean | undefined;
  /** Names compare case-insensitively on Windows. @default Deno.build.os */
  os?: typeof Deno.build.os | undefined;
}

/** A child's environment and where each name came from. */
export interface ChildEnv {
  /** The complete environment the child is started with (nothing else is inherited). */
  env: Record<string, string>;
  /** The origin of every name of {@link env}. */
  origins: Record<string, EnvOrigin>;
  /** `env-passthrough` names that are not set in the meta-server's environment (not passed). */
  missingPassthrough: string[];
}

/**
 * Whether `name` belongs to the base environment ({@link BASE_ENV_NAMES}, {@link BASE_ENV_PREFIXES}).
 *
 * @param options.os Names compare case-insensitively on Windows. @default Deno.build.os
 */
export function isBaseEnvName(name: string, options: { os?: typeof Deno.build.os } = {}): boolean {
  const fold = (options.os ?? Deno.build.os) === "windows";
  const n = fold ? name.toUpperCase() : name;
  if (BASE_ENV_PREFIXES.some((p) => n.startsWith(fold ? p.toUpperCase() : p))) return true;
  return fold ? BASE_NAMES_UPPER.has(n) : BASE_NAMES.has(n);
}

const BASE_NAMES = new Set(BASE_ENV_NAMES);
const BASE_NAMES_UPPER = new Set(BASE_ENV_NAMES.map((n) => n.toUpperCase()));

/**
 * The environment of one stdio server: the base variables that are set in `parent` (or all of
 * `parent` with `inheritEnv`), then the `passthrough` names that are set, then the manifest `env`.
 *
 * @param parent The meta-server's environment (a snapshot; never read from `Deno.env` here).
 * @example
 * ```ts
 * import { childEnvironment } from "./child_env.ts";
 * const { env } = childEnvironment(
 *   { PATH: "/usr/bin", HOME: "/home/me", GITHUB_TOKEN: "ghp_x", AWS_SECRET: "s" },
 *   { manifestEnv: { LOG_LEVEL: "debug" }, passthrough: ["GITHUB_TOKEN"], os: "linux" },
 * );
 * // env: { PATH: "/usr/bin", HOME: "/home/me", GITHUB_TOKEN: "ghp_x", LOG_LEVEL: "debug" }
 * ```
 */
export function childEnvironment(
  parent: Readonly<Record<string, string>>,
  options: ChildEnvOptions = {},
): ChildEnv {
  const os = options.os ?? Deno.build.os;
  const fold = os === "windows";
  const env: Record<string, string> = {};
  const origins: Record<string, EnvOrigin> = {};
  const set = (name: string, value: string, origin: EnvOrigin) => {
    if (fold) {
      // One spelling per name on Windows: a later source replaces an earlier one whatever its case.
      const existing = Object.keys(env).find((k) => k.toUpperCase() === name.toUpperCase());
      if (existing !== undefined && existing !== name) {
        delete env[existing];
        delete origins[existing];
      }
    }
    env[name] = value;
    origins[name] = origin;
  };
  for (const [name, value] of Object.entries(parent)) {
    if (options.inheritEnv) set(name, value, isBaseEnvName(name, { os }) ? "base" : "inherited");
    else if (isBaseEnvName(name, { os })) set(name, value, "base");
  }
  const missingPassthrough: string[] = [];
  for (const name of options.passthrough ?? []) {
    const found = fold ? Object.keys(parent).find((k) => k.toUpperCase() === name.toUpperCase()) : name;
    if (found === undefined || !Object.hasOwn(parent, found)) {
      missingPassthrough.push(name);
      continue;
    }
    set(found, parent[found]!, "passthrough");
  }
  for (const [name, value] of Object.entries(options.manifestEnv ?? {})) set(name, value, "manifest");
  return { env, origins, missingPassthrough };
}

/**
 * The names of a child's environment grouped by origin, each group sorted (for `status`; never
 * the values).
 */
export function envNamesByOrigin(origins: Readonly<Record<string, EnvOrigin>>): Record<EnvOrigin, string[]> {
  const out: Record<EnvOrigin, string[]> = { base: [], passthrough: [], inherited: [], manifest: [] };
  for (const [name, origin] of Object.entries(origins)) out[origin].push(name);
  for (const list of Object.values(out)) list.sort();
  return out;
}
