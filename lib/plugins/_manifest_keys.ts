/**
 * The keys a `SYMPOSIUM.toml` may hold and how a value is named in a problem (private to
 * `lib/plugins/`, used by the checker).
 *
 * @module
 */
import { tomlTypeName } from "../toml_position.ts";

/** Top-level keys this program reads. */
export const PLUGIN_KEYS = ["name", "depends-on", "mcp_servers", "predicates", "plugins"] as const;
/** Upstream top-level keys that concern other parts of Symposium: accepted, not read, reported once as a note. */
export const FOREIGN_PLUGIN_KEYS: Readonly<Record<string, string>> = {
  installations:
    "installations are handled by the rest of Symposium; cargo-agents runs only `command` or `url` servers",
  hooks: "hooks are handled by the rest of Symposium (cargo agents hook); cargo-agents does not read them",
  skills: "skills are handled by the rest of Symposium (cargo agents sync); cargo-agents does not read them",
  subcommand: "plugin subcommands are handled by the rest of Symposium; cargo-agents does not read them",
  predicate:
    "custom `[[predicate]]` functions are never run by cargo-agents: a predicate that uses one leaves its plugin or server dormant",
  defaults: "workspace `[defaults]` are handled by the rest of Symposium; cargo-agents does not read them",
};
/** `[[plugins]]` keys this program reads. */
export const CRATE_REFERENCE_KEYS = ["source", "depends-on", "predicates", "name"];
/** `[[mcp_servers]]` keys this program reads. */
export const SERVER_KEYS = [
  "name",
  "depends-on",
  "command",
  "args",
  "env",
  "env-passthrough",
  "inherit-env",
  "cwd",
  "url",
  "headers",
  "transport",
  "client-id",
  "client-secret",
  "scopes",
  "startup-timeout-secs",
  "tool-call-timeout-secs",
  "enabled-tools",
  "disabled-tools",
  "confirm-tools",
  "observe-results",
  "client-metadata-url",
  "predicates",
];
/** Keys of a server run as a child process (refused alongside `url`). */
export const STDIO_KEYS = ["command", "args", "env", "env-passthrough", "inherit-env", "cwd"];
/** Keys of a remote server only (refused without `url`). */
export const REMOTE_ONLY_KEYS = [
  "headers",
  "transport",
  "client-id",
  "client-secret",
  "scopes",
  "client-metadata-url",
];
/** Upstream server keys this program does not implement: refused, since ignoring them would change what runs. */
export const UNSUPPORTED_SERVER_KEYS: Record<string, string> = {
  installation: "install the server yourself and set `command` to it",
  requirements: "install what the server needs yourself; `requirements` is not supported",
};
/** Longest timeout a manifest may set, in s (one day). */
export const MAX_TIMEOUT_SECS = 86_400;

/** A value as a problem names it: `missing`, `the string "x"`, `an empty array`, `a table`. */
export function describe(value: unknown): string {
  if (value === undefined) return "missing";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value) && value.length === 0) return "an empty array";
  const type = tomlTypeName(value);
  return `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}

/** A shape a string value must have, with the problem and hint reported when it has not. */
export interface ValueRule {
  pattern: RegExp;
  problem: string;
  hint: string;
}

/** `client-metadata-url`: an https URL with a non-root path (draft-ietf-oauth-client-id-metadata-document §3). */
export const CLIENT_METADATA_URL_RULE: ValueRule = {
  pattern: /^https:\/\/[^/?#]+\/[^?#]*[^/?#]/,
  problem: "`client-metadata-url` must be an https URL with a path",
  hint: 'write the URL of your client ID metadata document, e.g. "https://example.com/oauth/client.json"',
};
