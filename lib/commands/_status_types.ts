/**
 * The shapes of `status --json` (private to `lib/commands/`; `status.ts` exports them).
 *
 * @module
 */
import type { Location } from "../diagnostics.ts";
import type { SignInDescription } from "../auth/mod.ts";
import type { ToolCacheState } from "../catalog/tool_cache.ts";
import type { EnvOrigin } from "../backends/mod.ts";
import type { TrustState } from "../plugins/mod.ts";
import type { StatusSource } from "./_status_sources.ts";

/** Sign-in state of a remote server (see `describeSignIn()` in `lib/auth/credentials.ts`). */
export type AuthState = SignInDescription["state"];

/** One declared server in the `--json` document. */
export interface StatusServer {
  name: string;
  plugin: string;
  /** The plugin's source: `user-plugins`, a registry's name, `workspace`, or `crate <name>`. */
  source: string;
  /** `untrusted`: its plugin (a workspace or path/git crate manifest) is not trusted, so it never starts. */
  state: "applies" | "dormant" | "refused" | "untrusted";
  /** Untrusted servers: the exact command that trusts their manifest. */
  trustCommand?: string | undefined;
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
   * Servers that apply: the MCP era the server spoke when last listed (from the tool cache): `"modern"`
   * (2026-07-28, `server/discover`, no `initialize`) or `"legacy"` (`initialize`); `"unknown"` until it
   * has been started once (its era is probed at the next start).
   */
  era?: "modern" | "legacy" | "unknown" | undefined;
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
  plugins: {
    name: string;
    file: string;
    /** `user-plugins`, a registry's name, `workspace`, or `crate <name>`. */
    source: string;
    /** Plugins that need trust: `trusted`, `untrusted` or `changed` (since it was trusted). */
    trust?: TrustState | undefined;
    /** A workspace manifest git ignores (a bare `cargo agents trust` skips it). */
    gitIgnored?: boolean | undefined;
    dependsOn: string[] | null;
    servers: string[];
  }[];
  /** Every plugin source in effect order, with its local copy's state for git registries. */
  sources: StatusSource[];
  /** Chained crate plugins not followed and why. */
  notes: string[];
  servers: StatusServer[];
  /**
   * Config, workspace, plugin-loading and server refusals, endpoint-policy refusals, then our
   * private folders (`logs/`, `cache/`, `credentials/` that are a link or another user's).
   */
  problems: StatusProblem[];
}
