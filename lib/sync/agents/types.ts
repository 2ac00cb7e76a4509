/**
 * The shapes of the agent table: one {@link AgentDefinition} per coding agent, the config files
 * ({@link ConfigTarget}) it edits, and how an existing `symposium` entry is merged with ours.
 *
 * @module
 */
import type { FileSystem } from "../../file_system.ts";
import type { ConfigFormat, EntryAddress } from "../formats/mod.ts";
import { isPlainObject } from "../formats/mod.ts";
import type { PathContext } from "../platform_paths.ts";
import { type AgentId, ENTRY_NAME } from "./ids.ts";

/** The program an agent must start: a command and its full argument list (`mcp-serve` and its options). */
export interface ServerCommand {
  command: string;
  args: string[];
}

/** What the entry looks like in one particular document. */
export interface EntryShape {
  address: EntryAddress;
  /** The entry's value, as the agent expects it. */
  value: unknown;
  /**
   * The keys of the entry that `sync` owns (the program, its arguments, the transport fields):
   * they are overwritten, and removed when `value` lacks them. Every other key of `value` is only
   * a default for a new entry; an existing entry keeps its own value (the user's `env`, `disabled`,
   * `timeout`...) and its extra keys. See {@link mergeEntry}.
   */
  owned: readonly string[];
}

/** Transport keys of remote entries in the agents' formats; a stale remote entry loses them. */
export const REMOTE_KEYS = ["url", "httpUrl", "serverUrl", "uri", "headers"] as const;

/**
 * The entry to write over `existing`: `value`'s keys in `value`'s order, the `owned` ones from
 * `value` and the others from `existing` when it has them, then `existing`'s other keys except
 * owned ones. A `type` of `"stdio"` the user wrote is kept when `value` has no `type`.
 *
 * @param existing The entry now in the file (`undefined` when there is none; a non-object is replaced).
 * @returns `value` itself when `existing` is not an object.
 */
export function mergeEntry(existing: unknown, value: unknown, owned: readonly string[]): unknown {
  if (!isPlainObject(existing) || !isPlainObject(value)) return value;
  const merged: Record<string, unknown> = {};
  for (const [key, ours] of Object.entries(value)) {
    merged[key] = owned.includes(key) || !Object.hasOwn(existing, key) ? ours : existing[key];
  }
  for (const [key, theirs] of Object.entries(existing)) {
    if (Object.hasOwn(merged, key)) continue;
    if (owned.includes(key) && !(key === "type" && theirs === "stdio")) continue;
    merged[key] = theirs;
  }
  return merged;
}

/** One config file `sync` edits for an agent. */
export interface ConfigTarget {
  /** Absolute path. */
  path: string;
  format: ConfigFormat;
  /** Which installation this file belongs to when an agent has several, e.g. `"in Cursor"`. */
  label?: string;
  /**
   * The file is ours alone (Continue's `mcpServers/symposium.json`): `--remove` deletes it when
   * nothing but the emptied container is left, instead of leaving `{}` behind.
   */
  ownsFile?: boolean;
  /**
   * The entry's address and value for this document (OpenCode picks its V1 or V2 layout from
   * what the file already uses).
   *
   * @param doc The parsed file (`{}` when it does not exist yet).
   */
  shape(doc: unknown, server: ServerCommand): EntryShape;
}

/** Where to look for signs that an agent is installed. */
export interface DetectionHints {
  /** Folders or files; any that exists means installed. */
  paths: string[];
  /** Program names; any found on `PATH` means installed. */
  binaries: string[];
  /** A short account of `paths` for the "not detected" message, when listing them all is too long. */
  summary?: string;
}

/** Options of {@link AgentDefinition.targets}. */
export interface TargetOptions {
  /** Project-level files under this workspace root instead of the user-global ones. */
  projectRoot?: string;
  /** A layout forced by the name the user picked (`opencode-v2`). */
  variant?: string;
}

/** One coding agent. */
export interface AgentDefinition {
  id: AgentId;
  /** Human name, e.g. `"Claude Code"`. */
  name: string;
  /** Other names `--agent` accepts; `variant` forces a layout. */
  aliases: readonly { name: string; variant?: string }[];
  /** Whether the agent has a project-level config file. */
  hasProjectConfig: boolean;
  /** Where the file locations and the entry format are documented (the source cited in `docs/agents.md`). */
  docs: string;
  detection(p: PathContext, fs: FileSystem): Promise<DetectionHints>;
  /**
   * The files to edit. Usually one; Cline has one per host editor it is installed in. Empty when
   * the agent has no install to write to.
   */
  targets(p: PathContext, fs: FileSystem, options: TargetOptions): Promise<ConfigTarget[]>;
}

/** Options of {@link fixed}. */
export interface FixedOptions {
  /** {@link ConfigTarget.label}. */
  label?: string;
  /** {@link ConfigTarget.ownsFile}. */
  ownsFile?: boolean;
}

/** A target whose entry lives at a fixed container with a fixed shape. */
export function fixed(
  path: string,
  format: ConfigFormat,
  containerPath: string[],
  entry: (server: ServerCommand) => unknown,
  owned: readonly string[],
  options: FixedOptions = {},
): ConfigTarget {
  const target: ConfigTarget = {
    path,
    format,
    shape: (_doc, server) => ({
      address: { containerPath, name: ENTRY_NAME },
      value: entry(server),
      owned,
    }),
  };
  if (options.label !== undefined) target.label = options.label;
  if (options.ownsFile === true) target.ownsFile = true;
  return target;
}

/** `{command, args}`: the entry most agents take (the Claude Desktop / Cursor notation). */
export const plainEntry = (s: ServerCommand): { command: string; args: string[] } => ({
  command: s.command,
  args: s.args,
});

/** What `sync` owns in a `{command, args}` entry: those, and any transport fields of a stale entry. */
export const PLAIN_OWNED: readonly string[] = ["type", "command", "args", ...REMOTE_KEYS];

/** A `{command, args}` entry under `mcpServers` in a JSONC file: the commonest case. */
export function mcpServersTarget(
  path: string,
  format: ConfigFormat,
  entry: (server: ServerCommand) => unknown = plainEntry,
  options: FixedOptions = {},
): ConfigTarget {
  return fixed(path, format, ["mcpServers"], entry, PLAIN_OWNED, options);
}

/** Detection hints: the paths that exist when installed, and the programs on `PATH`. */
export function hints(paths: string[], binaries: string[] = []): Promise<DetectionHints> {
  return Promise.resolve({ paths, binaries });
}
