/**
 * The table of coding agents `sync` knows: for each, where its MCP config lives (user-global and
 * project-level, per platform, honouring the agent's own environment overrides), how to tell it
 * is installed, the file format, and the exact shape of the `symposium` entry.
 * Sources: `reference/agents.md`.
 *
 * @module
 */
import type { FileSystem } from "../file_system.ts";
import type { ConfigFormat, EntryAddress } from "./config_format.ts";
import { JSONC, STRICT_JSON } from "./json_format.ts";
import { TOML } from "./toml_format.ts";
import { YAML } from "./yaml_format.ts";
import { isPlainObject } from "./_values.ts";
import { envPath, joinPath, type PathContext, vscodeUserDataDir, xdgConfigHome } from "./platform_paths.ts";
import {
  claudeCodeFile,
  claudeDesktopDir,
  CLINE_HOSTS,
  CLINE_STORAGE,
  clineCliDir,
  codexDir,
  exists,
  firstExisting,
  gooseDir,
  vscodeDir,
  zedDir,
} from "./agent_locations.ts";

/** The name of the entry written into every agent. */
export const ENTRY_NAME = "symposium";

/** Identifiers accepted by `--agent`, in the order the report lists them. */
export const AGENT_IDS = [
  "claude-code",
  "claude-desktop",
  "cursor",
  "vscode",
  "windsurf",
  "zed",
  "codex",
  "gemini",
  "goose",
  "kiro",
  "opencode",
  "amp",
  "cline",
] as const;

/** One of {@link AGENT_IDS}. */
export type AgentId = typeof AGENT_IDS[number];

/** The program an agent must start: an absolute command and its full argument list (ending in `mcp-serve`). */
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
   * `timeout`…) and its extra keys. See {@link mergeEntry}.
   */
  owned: readonly string[];
}

/** Transport keys of remote entries in the agents' formats; a stale remote entry loses them. */
const REMOTE_KEYS = ["url", "httpUrl", "serverUrl", "uri", "headers"] as const;

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
  detection(p: PathContext, fs: FileSystem): Promise<DetectionHints>;
  /**
   * The files to edit. Usually one; Cline has one per host editor it is installed in. Empty when
   * the agent has no install to write to.
   */
  targets(p: PathContext, fs: FileSystem, options: TargetOptions): Promise<ConfigTarget[]>;
}

/** A target whose entry lives at a fixed container with a fixed shape. */
function fixed(
  path: string,
  format: ConfigFormat,
  containerPath: string[],
  entry: (server: ServerCommand) => unknown,
  owned: readonly string[],
  label?: string,
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
  if (label !== undefined) target.label = label;
  return target;
}

const plainEntry = (s: ServerCommand) => ({ command: s.command, args: s.args });
/** What `sync` owns in a `{command, args}` entry: those, and any transport fields of a stale entry. */
const PLAIN_OWNED = ["type", "command", "args", ...REMOTE_KEYS] as const;

/**
 * Picks OpenCode's layout: V2 (`mcp.servers.<name>`) when the file already has a `mcp.servers`
 * object that is not itself a V1 server entry, else V1 (`mcp.<name>`), which is also the default.
 */
export function openCodeShape(doc: unknown, server: ServerCommand, variant?: string): EntryShape {
  const mcp = isPlainObject(doc) ? doc.mcp : undefined;
  const servers = isPlainObject(mcp) ? mcp.servers : undefined;
  const isV2 = variant === "v2" ||
    (variant !== "v1" && isPlainObject(servers) && typeof servers.type !== "string");
  const command = [server.command, ...server.args];
  const owned = ["type", "command", ...REMOTE_KEYS];
  return isV2
    ? {
      address: { containerPath: ["mcp", "servers"], name: ENTRY_NAME },
      value: { type: "local", command },
      owned,
    }
    : {
      address: { containerPath: ["mcp"], name: ENTRY_NAME },
      value: { type: "local", command, enabled: true },
      owned,
    };
}

/** Every agent, in {@link AGENT_IDS} order. */
export const AGENTS: readonly AgentDefinition[] = [
  {
    id: "claude-code",
    name: "Claude Code",
    aliases: [{ name: "claude" }],
    hasProjectConfig: true,
    detection: (p) =>
      Promise.resolve({
        paths: [envPath(p, "CLAUDE_CONFIG_DIR") ?? joinPath(p, p.homeDir, ".claude"), claudeCodeFile(p)],
        binaries: ["claude"],
      }),
    targets: (p, _fs, o) => {
      // Strict JSON: Claude Code resets a ~/.claude.json it cannot parse (anthropics/claude-code#1788).
      const path = o.projectRoot === undefined ? claudeCodeFile(p) : joinPath(p, o.projectRoot, ".mcp.json");
      return Promise.resolve([
        fixed(
          path,
          STRICT_JSON,
          ["mcpServers"],
          (s) => ({ type: "stdio", ...plainEntry(s), env: {} }),
          PLAIN_OWNED,
        ),
      ]);
    },
  },
  {
    id: "claude-desktop",
    name: "Claude Desktop",
    aliases: [],
    hasProjectConfig: false,
    detection: async (p, fs) => ({ paths: [await claudeDesktopDir(p, fs)], binaries: [] }),
    targets: async (p, fs) => [
      fixed(
        joinPath(p, await claudeDesktopDir(p, fs), "claude_desktop_config.json"),
        STRICT_JSON,
        ["mcpServers"],
        plainEntry,
        PLAIN_OWNED,
      ),
    ],
  },
  {
    id: "cursor",
    name: "Cursor",
    aliases: [],
    hasProjectConfig: true,
    detection: (p) =>
      Promise.resolve({ paths: [joinPath(p, p.homeDir, ".cursor")], binaries: ["cursor", "cursor-agent"] }),
    targets: (p, _fs, o) =>
      Promise.resolve([
        fixed(
          joinPath(p, o.projectRoot ?? p.homeDir, ".cursor", "mcp.json"),
          JSONC,
          ["mcpServers"],
          plainEntry,
          PLAIN_OWNED,
        ),
      ]),
  },
  {
    id: "vscode",
    name: "VS Code",
    aliases: [{ name: "code" }, { name: "vs-code" }, { name: "copilot" }],
    hasProjectConfig: true,
    detection: (p) =>
      Promise.resolve({
        paths: [
          joinPath(p, vscodeUserDataDir(p, "Code"), "User"),
          joinPath(p, vscodeUserDataDir(p, "Code - Insiders"), "User"),
        ],
        binaries: ["code", "code-insiders"],
      }),
    targets: async (p, fs, o) => {
      const path = o.projectRoot === undefined
        ? joinPath(p, await vscodeDir(p, fs), "User", "mcp.json")
        : joinPath(p, o.projectRoot, ".vscode", "mcp.json");
      return [fixed(path, JSONC, ["servers"], (s) => ({ type: "stdio", ...plainEntry(s) }), PLAIN_OWNED)];
    },
  },
  {
    id: "windsurf",
    name: "Windsurf",
    aliases: [],
    hasProjectConfig: false,
    detection: (p) =>
      Promise.resolve({ paths: [joinPath(p, p.homeDir, ".codeium", "windsurf")], binaries: ["windsurf"] }),
    targets: (p) =>
      Promise.resolve([
        fixed(
          joinPath(p, p.homeDir, ".codeium", "windsurf", "mcp_config.json"),
          JSONC,
          ["mcpServers"],
          plainEntry,
          PLAIN_OWNED,
        ),
      ]),
  },
  {
    id: "zed",
    name: "Zed",
    aliases: [],
    hasProjectConfig: true,
    detection: (p) => Promise.resolve({ paths: [zedDir(p)], binaries: ["zed", "zeditor", "zedit"] }),
    targets: (p, _fs, o) => {
      const path = o.projectRoot === undefined
        ? joinPath(p, zedDir(p), "settings.json")
        : joinPath(p, o.projectRoot, ".zed", "settings.json");
      // Older Zed needs "source": "custom"; newer Zed needs "args": write both.
      return Promise.resolve([
        fixed(
          path,
          JSONC,
          ["context_servers"],
          (s) => ({ source: "custom", ...plainEntry(s), env: {} }),
          ["source", ...PLAIN_OWNED],
        ),
      ]);
    },
  },
  {
    id: "codex",
    name: "Codex CLI",
    aliases: [{ name: "codex-cli" }],
    hasProjectConfig: true,
    detection: (p) => Promise.resolve({ paths: [codexDir(p)], binaries: ["codex"] }),
    targets: (p, _fs, o) => {
      const dir = o.projectRoot === undefined ? codexDir(p) : joinPath(p, o.projectRoot, ".codex");
      return Promise.resolve([
        fixed(joinPath(p, dir, "config.toml"), TOML, ["mcp_servers"], plainEntry, PLAIN_OWNED),
      ]);
    },
  },
  {
    id: "gemini",
    name: "Gemini CLI",
    aliases: [{ name: "gemini-cli" }],
    hasProjectConfig: true,
    // ~/.gemini alone is ambiguous (Google Antigravity uses it too): look for the settings file.
    detection: (p) =>
      Promise.resolve({ paths: [joinPath(p, p.homeDir, ".gemini", "settings.json")], binaries: ["gemini"] }),
    targets: (p, _fs, o) =>
      Promise.resolve([
        fixed(
          joinPath(p, o.projectRoot ?? p.homeDir, ".gemini", "settings.json"),
          JSONC,
          ["mcpServers"],
          plainEntry,
          PLAIN_OWNED,
        ),
      ]),
  },
  {
    id: "goose",
    name: "Goose",
    aliases: [],
    hasProjectConfig: false,
    detection: (p) => Promise.resolve({ paths: [gooseDir(p)], binaries: ["goose"] }),
    targets: (p) =>
      Promise.resolve([
        fixed(joinPath(p, gooseDir(p), "config.yaml"), YAML, ["extensions"], (s) => ({
          enabled: true,
          type: "stdio",
          name: ENTRY_NAME,
          description: "Symposium: the Rust workspace's MCP tools",
          cmd: s.command,
          args: s.args,
          envs: {},
          timeout: 300,
        }), ["type", "name", "cmd", "args", ...REMOTE_KEYS]),
      ]),
  },
  {
    id: "kiro",
    name: "Kiro",
    aliases: [{ name: "kiro-cli" }],
    hasProjectConfig: true,
    detection: (p) =>
      Promise.resolve({ paths: [joinPath(p, p.homeDir, ".kiro")], binaries: ["kiro", "kiro-cli"] }),
    targets: (p, _fs, o) =>
      Promise.resolve([
        fixed(
          joinPath(p, o.projectRoot ?? p.homeDir, ".kiro", "settings", "mcp.json"),
          JSONC,
          ["mcpServers"],
          (s) => ({ ...plainEntry(s), env: {}, disabled: false, autoApprove: [] }),
          PLAIN_OWNED,
        ),
      ]),
  },
  {
    id: "opencode",
    name: "OpenCode",
    aliases: [{ name: "opencode-v1", variant: "v1" }, { name: "opencode-v2", variant: "v2" }],
    hasProjectConfig: true,
    detection: (p) =>
      Promise.resolve({
        paths: [
          joinPath(p, xdgConfigHome(p), "opencode"),
          ...(envPath(p, "OPENCODE_CONFIG") ? [envPath(p, "OPENCODE_CONFIG")!] : []),
        ],
        binaries: ["opencode"],
      }),
    targets: async (p, fs, o) => {
      let path: string;
      if (o.projectRoot !== undefined) {
        const root = o.projectRoot;
        const candidates = [
          joinPath(p, root, "opencode.jsonc"),
          joinPath(p, root, "opencode.json"),
          joinPath(p, root, ".opencode", "opencode.jsonc"),
          joinPath(p, root, ".opencode", "opencode.json"),
        ];
        path = (await firstExisting(fs, candidates)) ?? candidates[1]!;
      } else {
        const dir = joinPath(p, xdgConfigHome(p), "opencode");
        const candidates = [joinPath(p, dir, "opencode.jsonc"), joinPath(p, dir, "opencode.json")];
        path = envPath(p, "OPENCODE_CONFIG") ?? (await firstExisting(fs, candidates)) ?? candidates[1]!;
      }
      return [{ path, format: JSONC, shape: (doc, server) => openCodeShape(doc, server, o.variant) }];
    },
  },
  {
    id: "amp",
    name: "Amp",
    aliases: [],
    hasProjectConfig: true,
    detection: (p) =>
      Promise.resolve({ paths: [joinPath(p, p.homeDir, ".config", "amp")], binaries: ["amp"] }),
    targets: (p, _fs, o) => {
      const path = o.projectRoot === undefined
        ? joinPath(p, p.homeDir, ".config", "amp", "settings.json")
        : joinPath(p, o.projectRoot, ".amp", "settings.json");
      // The key is the literal "amp.mcpServers", one property name with a dot in it.
      return Promise.resolve([fixed(path, JSONC, ["amp.mcpServers"], plainEntry, PLAIN_OWNED)]);
    },
  },
  {
    id: "cline",
    name: "Cline",
    aliases: [],
    hasProjectConfig: false,
    detection: (p) =>
      Promise.resolve({
        paths: [
          ...CLINE_HOSTS.map((h) => joinPath(p, vscodeUserDataDir(p, h), ...CLINE_STORAGE)),
          clineCliDir(p),
        ],
        binaries: ["cline"],
      }),
    targets: async (p, fs) => {
      const entry = (s: ServerCommand) => ({ ...plainEntry(s), disabled: false, autoApprove: [] });
      const found: ConfigTarget[] = [];
      for (const host of CLINE_HOSTS) {
        const storage = joinPath(p, vscodeUserDataDir(p, host), ...CLINE_STORAGE);
        if (!(await exists(fs, storage))) continue;
        const path = joinPath(p, storage, "settings", "cline_mcp_settings.json");
        found.push(fixed(path, JSONC, ["mcpServers"], entry, PLAIN_OWNED, `in ${host}`));
      }
      const cli = clineCliDir(p);
      // The CLI's file is also the one written when no install is found and the user asked for Cline.
      if (found.length === 0 || (await exists(fs, cli))) {
        const path = joinPath(p, cli, "data", "settings", "cline_mcp_settings.json");
        found.push(fixed(path, JSONC, ["mcpServers"], entry, PLAIN_OWNED, "CLI"));
      }
      return found;
    },
  },
];
