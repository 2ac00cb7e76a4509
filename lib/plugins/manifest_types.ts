/**
 * The shapes of a validated `SYMPOSIUM.toml` and its error type. Pure data: no parsing here.
 *
 * @module
 */
import { type Location, UserError, type UserErrorOptions } from "../diagnostics.ts";

/** Fields every declared server has. Optional ones are `undefined` when not written. */
export interface ServerDeclBase {
  /** Server name: the global a script uses (after `namespaceKey()`) and the name in `mcp login`. */
  name: string;
  /** Server-level `depends-on` atoms (validated); `undefined` = not written (only the plugin gate applies). */
  dependsOn: string[] | undefined;
  /** Per-server `startup-timeout-secs` (1-86400 s). */
  startupTimeoutSecs: number | undefined;
  /** Per-server `tool-call-timeout-secs` (1-86400 s; clamped below the script deadline at resolution). */
  toolCallTimeoutSecs: number | undefined;
  /** `enabled-tools` allow-list (`[]` exposes nothing). */
  enabledTools: string[] | undefined;
  /** `disabled-tools` deny-list. */
  disabledTools: string[] | undefined;
  /** `confirm-tools`: wire names of tools confirmed with the user under `[mcp] confirm-tools = "destructive"`. */
  confirmTools: string[] | undefined;
  /** `observe-results = false`: never learn or show this server's result shapes. `undefined` = not written. */
  observeResults: boolean | undefined;
  /** Server-level `predicates` (each parses with `parsePredicate()`); absent when not written. */
  predicates?: string[] | undefined;
  /** Where the `[[mcp_servers]]` entry starts. */
  location: Location;
}

/** A declared server run as a child process (`command`). */
export interface StdioServerDecl extends ServerDeclBase {
  transport: "stdio";
  command: string;
  /** Default `[]`. */
  args: string[];
  /** Variables set for the child, values may hold `${VAR}` references (expanded at resolution). Default `{}`. */
  env: Record<string, string>;
  /** `env-passthrough`: names of the meta-server's variables the child also gets. Default `[]`. */
  envPassthrough: string[];
  /** `inherit-env = true`: the child gets the meta-server's whole environment (as upstream). Default `false`. */
  inheritEnv: boolean;
  /** As written; relative paths are joined to the workspace root at resolution. */
  cwd: string | undefined;
}

/** A declared remote server (`url`). Values may hold `${VAR}` references, expanded at resolution. */
export interface RemoteServerDecl extends ServerDeclBase {
  /** `"sse"` parses but is refused at resolution (deprecated transport). Default `"http"`. */
  transport: "http" | "sse";
  url: string;
  /** Default `{}`. */
  headers: Record<string, string>;
  clientId: string | undefined;
  clientSecret: string | undefined;
  scopes: string[] | undefined;
  /** `client-metadata-url`: an https URL with a path, used as OAuth `client_id` (Client ID Metadata Document). */
  clientMetadataUrl: string | undefined;
}

/** One `[[mcp_servers]]` entry. */
export type McpServerDecl = StdioServerDecl | RemoteServerDecl;

/** One `[[plugins]]` entry: a chained reference to a crate's own plugin manifest (`source.cargo`). */
export interface CrateReference {
  /** The crate's package name (`source.cargo = "name"` or `{ name = "..." }`). */
  crate: string;
  /** `source.cargo = { version = "..." }`: a Cargo version requirement the locked version must meet. */
  version?: string | undefined;
  /** The entry's own `depends-on`; absent: the crate itself must be a dependency. */
  dependsOn?: string[] | undefined;
  /** The entry's own `predicates`. */
  predicates?: string[] | undefined;
  /** Where the `[[plugins]]` entry starts. */
  location: Location;
}

/** A key of upstream's schema that this program accepts and does not act on (reported once by `plugin show`/`validate`). */
export interface ManifestNote {
  /** The key, e.g. `"skills"`. */
  key: string;
  /** What becomes of it, e.g. `handled by the rest of Symposium (skills); cargo-agents does not read it`. */
  text: string;
  location: Location;
}

/** A validated `SYMPOSIUM.toml`. Keys that concern other parts of Symposium (skills, hooks...) are not kept. */
export interface PluginManifest {
  name: string;
  /** Plugin-level `depends-on` atoms; `undefined` = not written. */
  dependsOn: string[] | undefined;
  /** In file order. */
  mcpServers: McpServerDecl[];
  /** Plugin-level `predicates` (each parses with `parsePredicate()`); absent when not written. */
  predicates?: string[] | undefined;
  /** `[[plugins]]` chained crate references; absent when none. */
  plugins?: CrateReference[] | undefined;
  /** Upstream keys accepted and not acted on; absent when none. */
  notes?: ManifestNote[] | undefined;
}

/** How {@link PluginManifest} is read for where the plugin comes from. */
export interface ManifestOptions {
  /** The name when the manifest has none (workspace and crate plugins: the folder or crate name). Default: `name` is required. */
  defaultName?: string | undefined;
  /**
   * Whether every server must be gated by `depends-on` or `predicates` at some level (registry and
   * user plugins). Workspace and crate plugins apply in their workspace without one. Default `true`.
   */
  requireGate?: boolean | undefined;
}

/** Options of {@link ManifestError}. */
export interface ManifestErrorOptions extends UserErrorOptions {
  /** Every problem found in the file, in file order (this error's own fields are the first's). */
  problems?: readonly ManifestError[];
}

/**
 * A problem in a `SYMPOSIUM.toml`. Its code, message, hint and location are those of the first
 * problem; {@link ManifestError.problems} lists all of them, so one run reports every mistake.
 */
export class ManifestError extends UserError {
  override name = "ManifestError";
  /** Every independent problem of the file, in file order; `[this]` when there is one. */
  readonly problems: readonly ManifestError[];
  constructor(code: string, message: string, options: ManifestErrorOptions = {}) {
    super(code, message, options);
    this.problems = options.problems ?? [this];
  }
}
