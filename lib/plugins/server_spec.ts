/**
 * The resolved shape of one backing server that applies to this workspace:
 * what the backends need to reach it. Produced by `resolveServers()` from the
 * plugin manifests, the workspace and `[mcp]`; consumed by the catalog and
 * the backends. Pure data.
 *
 * @module
 */
import type { Location } from "../diagnostics.ts";

/** Fields every resolved server has, whatever its transport. */
export interface ServerSpecBase {
  /** Server name from the manifest; the global a script uses (after {@link namespaceKey}). */
  name: string;
  /** Name of the plugin that declares it. */
  plugin: string;
  /** The plugin's source when not the user's own plugins (a registry's name, `workspace`, `crate <name>`). */
  source?: string | undefined;
  /** Where the `[[mcp_servers]]` entry is. */
  location: Location;
  /** Longest wait for spawn/connect + `initialize`, in milliseconds. */
  startupTimeoutMs: number;
  /** Longest wait for one `tools/call`, in milliseconds (always below the script deadline). */
  toolCallTimeoutMs: number;
  /** Allow-list of wire tool names; `[]` exposes nothing; `undefined` = no allow-list. */
  enabledTools?: string[] | undefined;
  /** Deny-list of wire tool names; `undefined` = none. */
  disabledTools?: string[] | undefined;
  /** Wire tool names confirmed with the user first under `confirm-tools = "destructive"` (manifest `confirm-tools`). */
  confirmTools?: string[] | undefined;
  /** `false` (manifest `observe-results = false`): its result shapes are neither learned nor shown. */
  observeResults?: false | undefined;
}

/** A server run as a child process speaking MCP over stdio. */
export interface StdioServerSpec extends ServerSpecBase {
  transport: "stdio";
  /** Executable, looked up on `PATH` unless absolute. */
  command: string;
  /** Arguments. Default `[]`. */
  args: string[];
  /**
   * The complete environment the child is started with (nothing else is inherited): the base
   * variables, `env-passthrough` names (or everything with `inherit-env`), then the manifest `env`
   * with `${VAR}` expanded. Values may be secrets: never logged or shown (only the names are).
   */
  env: Record<string, string>;
  /** Where each name of {@link env} comes from (`status` shows the names per origin). Default: not known. */
  envOrigins?: Record<string, "base" | "passthrough" | "inherited" | "manifest"> | undefined;
  /** `env-passthrough` names that were not set in the meta-server's environment. Default `[]`. */
  missingPassthrough?: string[] | undefined;
  /** Absolute working directory (manifest `cwd` joined to the workspace root; default the workspace root or cwd). */
  cwd: string;
}

/** A remote server reached over streamable HTTP. */
export interface HttpServerSpec extends ServerSpecBase {
  transport: "http";
  /** The endpoint URL with `${VAR}` expanded. May hold a secret: shown only as {@link urlTemplate}. */
  url: string;
  /** The URL as written in the manifest (`${VAR}` not expanded): what messages show. Default: `url`. */
  urlTemplate?: string | undefined;
  /** Extra request headers with `${VAR}` expanded in values. Never logged. */
  headers: Record<string, string>;
  /** Pre-registered OAuth client id (manifest `client-id`), for servers without dynamic registration. */
  clientId?: string | undefined;
  /** OAuth client secret (manifest `client-secret`, expanded). Never logged. */
  clientSecret?: string | undefined;
  /** OAuth scopes to request (manifest `scopes`). */
  scopes?: string[] | undefined;
  /** Client ID Metadata Document URL (manifest `client-metadata-url`), the `client_id` where the AS supports it. */
  clientMetadataUrl?: string | undefined;
}

/** One applicable backing server. */
export type ServerSpec = StdioServerSpec | HttpServerSpec;

/** A server declared by a plugin that is not usable here, and why. */
export interface Refusal {
  /** Server name as declared (or the plugin name when the whole plugin failed to load). */
  server: string;
  /** Plugin that declares it. */
  plugin: string;
  /** Stable code, e.g. `"SERVER_RESERVED_NAME"`, `"SERVER_DUPLICATE"`, `"ENV_VAR_UNSET"`, `"PLUGIN_INVALID"`. */
  code: string;
  /** One sentence a user can act on, e.g. `references environment variable "TOKEN", which is not set`. */
  reason: string;
  /** Where, when it is in a file. */
  location?: Location | undefined;
  /** How to fix it, when known (e.g. `did you mean "command"?`). */
  hint?: string | undefined;
  /** The plugin source it comes from (`user-plugins`, a registry, `workspace`, `crate <name>`), when known. */
  source?: string | undefined;
}

/** A declared server whose `depends-on` does not hold here (not an error: just not in scope). */
export interface Dormant {
  server: string;
  plugin: string;
  /** The plugin source, when not the user's own plugins. */
  source?: string | undefined;
  /** Why it does not apply, e.g. `needs one of: serde>=1.0 (workspace has serde 0.9.1)`. */
  reason: string;
}

/** The result of resolving plugins against a workspace. */
export interface Resolution {
  /** Applicable servers, sorted by name. */
  servers: ServerSpec[];
  /** Declared servers that are refused (bad manifest, reserved or duplicate name, unset variable, sse...). */
  refused: Refusal[];
  /** Declared servers whose `depends-on` does not hold here. */
  dormant: Dormant[];
}

/**
 * The global name under which a server appears in a script: non-ASCII-alphanumeric
 * characters become `_`, a leading digit gets a `_` prefix, empty becomes `_` (as upstream names
 * them, so scripts written for it run here).
 *
 * @example
 * ```ts
 * import { namespaceKey } from "./server_spec.ts";
 * namespaceKey("my-server"); // "my_server"
 * ```
 */
export function namespaceKey(serverName: string): string {
  let key = serverName.replace(/[^A-Za-z0-9_$]/g, "_");
  if (key === "") key = "_";
  if (/^[0-9]/.test(key) || RESERVED_GLOBALS.has(key)) key = `_${key}`;
  return key;
}

/**
 * Names a server cannot take as its global: ECMAScript reserved words (a
 * `declare const class` would not parse) and the globals the sandbox itself
 * installs or a script relies on (`symposium` holds the meta-server's helpers, `$session` the session state,
 * `scripts` the saved scripts).
 * Such a server gets a `_` prefix.
 */
const RESERVED_GLOBALS: ReadonlySet<string> = new Set([
  ..."break case catch class const continue debugger default delete do else enum export extends false finally for"
    .split(" "),
  ..."function if import in instanceof new null return super switch this throw true try typeof var void while with"
    .split(" "),
  ..."yield let static implements interface package private protected public await async arguments eval undefined"
    .split(" "),
  ..."NaN Infinity globalThis console JSON Math Object Array Promise String Number Boolean Symbol Error Date RegExp"
    .split(" "),
  ..."Map Set WeakMap WeakSet Proxy Reflect BigInt setTimeout clearTimeout symposium $session scripts".split(
    " ",
  ),
]);

/**
 * A stable identity of how a server is reached: two specs with the same key can
 * share one running process or connection (carry-over across re-resolution),
 * and the on-disk tool cache is keyed by its hash. It holds secrets (header values, the expanded
 * URL, environment values): keep it in memory, never write or log it.
 *
 * @returns A string such as `stdio:["npx",["-y","pkg"],{"A":"1"},"/ws"]`.
 */
export function spawnKey(spec: ServerSpec): string {
  if (spec.transport === "stdio") {
    const env = Object.fromEntries(Object.entries(spec.env).sort(([a], [b]) => a.localeCompare(b)));
    return `stdio:${JSON.stringify([spec.name, spec.command, spec.args, env, spec.cwd])}`;
  }
  const headers = Object.fromEntries(Object.entries(spec.headers).sort(([a], [b]) => a.localeCompare(b)));
  return `http:${JSON.stringify([spec.name, spec.url, headers, spec.clientId ?? null])}`;
}
