/**
 * `SYMPOSIUM.toml` text -> a validated {@link PluginManifest} (`docs/configuration.md`, "`SYMPOSIUM.toml`"). Every
 * problem is a {@link ManifestError} naming the key with file:line:col and how to fix it.
 *
 * @module
 */
import { UserError } from "../diagnostics.ts";
import { isTable, parseTomlDocument, type TomlDocument } from "../toml_position.ts";
import { Checker } from "./_manifest_checker.ts";
import { ManifestError, type ManifestOptions, type PluginManifest } from "./manifest_types.ts";

export {
  type CrateReference,
  ManifestError,
  type ManifestErrorOptions,
  type ManifestNote,
  type ManifestOptions,
  type McpServerDecl,
  type PluginManifest,
  type RemoteServerDecl,
  type ServerDeclBase,
  type StdioServerDecl,
} from "./manifest_types.ts";

/**
 * Validates a plugin manifest.
 *
 * Accepted: top-level `name` (required unless `options.defaultName`), `depends-on` (atom or list of
 * atoms), `predicates` (see `parsePredicate()`), `[[plugins]]` (`source.cargo` chained crate
 * plugins) and `[[mcp_servers]]`; upstream's other top-level keys (`skills`, `hooks`,
 * `installations`, `subcommand`, `predicate`, `defaults`) are accepted, not read, and listed in
 * `notes`. Each server has `name`, optional `depends-on` and `predicates`, then either
 * `command` (+ `args`, `env`, `cwd`) or `url` (+ `headers`, `transport`, `client-id`,
 * `client-secret`, `scopes`), and optional `startup-timeout-secs`, `tool-call-timeout-secs`,
 * `enabled-tools` or `disabled-tools`. Every server must be gated: `depends-on` or `predicates` at
 * the plugin or the server level (`"*"` applies everywhere), unless `options.requireGate` is `false`.
 *
 * @param options.defaultName The plugin name when the file has none. Default: required.
 * @param options.requireGate Whether an ungated server is an error. Default `true`.
 *
 * @param text The file's content.
 * @param file The path shown in diagnostics.
 * @throws {ManifestError} Every independent problem (each unknown key, each bad value, in every
 *   server) in `problems`, the first in file order as the error itself; each has a 1-based location
 *   at the offending key (unknown or missing keys) or value (bad values): codes
 *   `MANIFEST_SYNTAX`, `MANIFEST_UNKNOWN_KEY` (hint: the closest key), `MANIFEST_UNSUPPORTED_KEY`,
 *   `MANIFEST_MISSING_KEY`, `MANIFEST_BAD_VALUE`, `MANIFEST_CONFLICT` (stdio and remote keys
 *   mixed, both tool lists), `MANIFEST_DUPLICATE_SERVER`, `MANIFEST_NO_DEPENDENCY`,
 *   `DEPENDS_ON_INVALID`, `PREDICATE_INVALID`.
 */
export function parseManifest(text: string, file: string, options: ManifestOptions = {}): PluginManifest {
  let doc: TomlDocument;
  try {
    doc = parseTomlDocument(text, file, { code: "MANIFEST_SYNTAX", what: "plugin manifest" });
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    throw new ManifestError(error.code, error.message, error);
  }
  return new Checker(doc, file, options).plugin();
}

/** Top-level keys whose lists a layer appends to (upstream's `RawPluginManifest::merge`). */
const LAYERED_LIST_KEYS = [
  "mcp_servers",
  "plugins",
  "installations",
  "hooks",
  "skills",
  "predicate",
  "predicates",
];

/**
 * Layers manifest `over` on top of `base`, as upstream combines a crate's `[package.metadata.symposium]`
 * (base) with its `SYMPOSIUM.toml` (over) in `RawPluginManifest::merge` (symposium-dev/symposium
 * `src/plugins.rs`): lists (`mcp_servers`, `plugins`, `installations`, `hooks`, `skills`, `predicate`,
 * `predicates`) append, base first; `depends-on` lists append too (a single atom counts as a list of
 * one); the `subcommand` table takes `over`'s entry per name; any other key takes `over`'s value where
 * it sets one. Neither input is changed; values are not validated here (the caller parses the result).
 *
 * @example
 * ```ts
 * import { layerManifests } from "./manifest.ts";
 * const merged = layerManifests({ mcp_servers: [{ name: "a" }] }, { name: "p", mcp_servers: [{ name: "b" }] });
 * if (JSON.stringify(merged.mcp_servers) !== '[{"name":"a"},{"name":"b"}]') throw new Error("not layered");
 * ```
 */
export function layerManifests(
  base: Readonly<Record<string, unknown>>,
  over: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
  for (const [key, value] of Object.entries(over)) {
    const had = out[key];
    if (had === undefined) out[key] = value;
    else if (LAYERED_LIST_KEYS.includes(key) && Array.isArray(had) && Array.isArray(value)) {
      out[key] = [...had, ...value];
    } else if (key === "depends-on") out[key] = [...asList(had), ...asList(value)];
    else if (key === "subcommand" && isTable(had) && isTable(value)) out[key] = { ...had, ...value };
    else out[key] = value;
  }
  return out;
}
