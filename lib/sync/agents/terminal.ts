/**
 * Terminal coding agents whose MCP servers live in a JSON, TOML or YAML file under the home
 * folder: Claude Code, Codex CLI, Gemini CLI, Qwen Code, GitHub Copilot CLI, Goose, Amp, Factory
 * Droid, Augment (Auggie), Kimi and Pi. Each definition cites where its file and format are documented.
 *
 * @module
 */
import { JSONC, STRICT_JSON, TOML, YAML } from "../formats/mod.ts";
import { envPath, joinPath } from "../platform_paths.ts";
import { ENTRY_NAME } from "./ids.ts";
import {
  type AgentDefinition,
  type ConfigTarget,
  fixed,
  hints,
  mcpServersTarget,
  PLAIN_OWNED,
  plainEntry,
  REMOTE_KEYS,
  type ServerCommand,
} from "./types.ts";
import {
  claudeCodeFile,
  codexDir,
  copilotDir,
  exists,
  gooseDir,
  kimiCodeDir,
  piAgentDir,
} from "./_locations.ts";

/**
 * Codex's startup budget for an MCP server, in seconds (Codex's default is 10). A first run from
 * source compiles the module graph; 30 s keeps that inside the budget.
 */
export const CODEX_STARTUP_TIMEOUT_SECS = 30;

/**
 * Codex's budget for one tool call, in seconds (Codex's default is 60): above the meta-server's
 * default `script-timeout-secs` of 120, so `execute` reports its own deadline instead of Codex cutting it.
 */
export const CODEX_TOOL_TIMEOUT_SECS = 150;

/** Goose's per-extension timeout, in seconds (Goose's own default, written so it is visible). */
export const GOOSE_TIMEOUT_SECS = 300;

/** The terminal agents, in {@link AGENT_IDS} order. */
export const TERMINAL_AGENTS: readonly AgentDefinition[] = [
  {
    id: "claude-code",
    name: "Claude Code",
    aliases: [{ name: "claude" }],
    hasProjectConfig: true,
    // User scope: top-level mcpServers of ~/.claude.json; project scope: .mcp.json at the root.
    docs: "https://code.claude.com/docs/en/mcp",
    detection: (p) =>
      hints(
        [envPath(p, "CLAUDE_CONFIG_DIR") ?? joinPath(p, p.homeDir, ".claude"), claudeCodeFile(p)],
        ["claude"],
      ),
    targets: (p, _fs, o) => {
      // Strict JSON: Claude Code resets a ~/.claude.json it cannot parse (anthropics/claude-code#1788).
      const path = o.projectRoot === undefined ? claudeCodeFile(p) : joinPath(p, o.projectRoot, ".mcp.json");
      const entry = (s: ServerCommand) => ({ type: "stdio", ...plainEntry(s), env: {} });
      return Promise.resolve([mcpServersTarget(path, STRICT_JSON, entry)]);
    },
  },
  {
    id: "codex",
    name: "Codex CLI",
    aliases: [{ name: "codex-cli" }],
    hasProjectConfig: true,
    // [mcp_servers.<name>] in $CODEX_HOME/config.toml; .codex/config.toml in trusted projects.
    docs: "https://developers.openai.com/codex/mcp",
    detection: (p) => hints([codexDir(p)], ["codex"]),
    targets: (p, _fs, o) => {
      const dir = o.projectRoot === undefined ? codexDir(p) : joinPath(p, o.projectRoot, ".codex");
      const entry = (s: ServerCommand) => ({
        ...plainEntry(s),
        startup_timeout_sec: CODEX_STARTUP_TIMEOUT_SECS,
        tool_timeout_sec: CODEX_TOOL_TIMEOUT_SECS,
      });
      return Promise.resolve([
        fixed(joinPath(p, dir, "config.toml"), TOML, ["mcp_servers"], entry, PLAIN_OWNED),
      ]);
    },
  },
  {
    id: "gemini",
    name: "Gemini CLI",
    aliases: [{ name: "gemini-cli" }],
    hasProjectConfig: true,
    docs: "https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md",
    // ~/.gemini alone is ambiguous (Google Antigravity uses it too): look for the settings file.
    detection: (p) => hints([joinPath(p, p.homeDir, ".gemini", "settings.json")], ["gemini"]),
    targets: (p, _fs, o) =>
      Promise.resolve([
        mcpServersTarget(joinPath(p, o.projectRoot ?? p.homeDir, ".gemini", "settings.json"), JSONC),
      ]),
  },
  {
    id: "goose",
    name: "Goose",
    aliases: [],
    hasProjectConfig: false,
    // extensions.<key> map in config.yaml; the stdio variant requires name, cmd and args.
    docs: "https://block.github.io/goose/docs/guides/config-files",
    detection: (p) => hints([gooseDir(p)], ["goose"]),
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
          timeout: GOOSE_TIMEOUT_SECS,
        }), ["type", "name", "cmd", "args", ...REMOTE_KEYS]),
      ]),
  },
  {
    id: "amp",
    name: "Amp",
    aliases: [],
    hasProjectConfig: true,
    docs: "https://ampcode.com/manual",
    detection: (p) => hints([joinPath(p, p.homeDir, ".config", "amp")], ["amp"]),
    targets: (p, _fs, o) => {
      const path = o.projectRoot === undefined
        ? joinPath(p, p.homeDir, ".config", "amp", "settings.json")
        : joinPath(p, o.projectRoot, ".amp", "settings.json");
      // The key is the literal "amp.mcpServers", one property name with a dot in it.
      return Promise.resolve([fixed(path, JSONC, ["amp.mcpServers"], plainEntry, PLAIN_OWNED)]);
    },
  },
  {
    id: "qwen-code",
    name: "Qwen Code",
    aliases: [{ name: "qwen" }],
    hasProjectConfig: true,
    // mcpServers in ~/.qwen/settings.json (user scope) or .qwen/settings.json (project scope), as Gemini CLI.
    docs: "https://qwenlm.github.io/qwen-code-docs/en/users/features/mcp/",
    detection: (p) => hints([joinPath(p, p.homeDir, ".qwen")], ["qwen"]),
    targets: (p, _fs, o) =>
      Promise.resolve([
        mcpServersTarget(joinPath(p, o.projectRoot ?? p.homeDir, ".qwen", "settings.json"), JSONC),
      ]),
  },
  {
    id: "copilot-cli",
    name: "GitHub Copilot CLI",
    aliases: [{ name: "copilot" }, { name: "github-copilot-cli" }],
    hasProjectConfig: true,
    // $COPILOT_HOME/mcp-config.json (default ~/.copilot); per repository .github/mcp.json. Entries
    // are typed ("local" runs a command) and list the tools to expose ("*": all).
    docs: "https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers",
    detection: (p) => hints([copilotDir(p)], ["copilot"]),
    targets: (p, _fs, o) => {
      const path = o.projectRoot === undefined
        ? joinPath(p, copilotDir(p), "mcp-config.json")
        : joinPath(p, o.projectRoot, ".github", "mcp.json");
      const entry = (s: ServerCommand) => ({ type: "local", ...plainEntry(s), tools: ["*"] });
      return Promise.resolve([mcpServersTarget(path, JSONC, entry)]);
    },
  },
  {
    id: "factory-droid",
    name: "Factory Droid",
    aliases: [{ name: "droid" }, { name: "factory" }],
    hasProjectConfig: true,
    // mcpServers in ~/.factory/mcp.json (user) and .factory/mcp.json (project); stdio entries are typed.
    docs: "https://docs.factory.ai/cli/configuration/mcp",
    detection: (p) => hints([joinPath(p, p.homeDir, ".factory")], ["droid"]),
    targets: (p, _fs, o) => {
      const entry = (s: ServerCommand) => ({ type: "stdio", ...plainEntry(s), disabled: false });
      return Promise.resolve([
        mcpServersTarget(joinPath(p, o.projectRoot ?? p.homeDir, ".factory", "mcp.json"), JSONC, entry),
      ]);
    },
  },
  {
    id: "augment",
    name: "Augment (Auggie CLI)",
    aliases: [{ name: "auggie" }],
    hasProjectConfig: false,
    // mcpServers in ~/.augment/settings.json (Auggie CLI 0.5.4 release notes; "Configure MCP via settings.json").
    docs: "https://docs.augmentcode.com/cli/integrations",
    detection: (p) => hints([joinPath(p, p.homeDir, ".augment")], ["auggie"]),
    targets: (p) =>
      Promise.resolve([mcpServersTarget(joinPath(p, p.homeDir, ".augment", "settings.json"), JSONC)]),
  },
  {
    id: "kimi",
    name: "Kimi Code CLI",
    aliases: [{ name: "kimi-code" }, { name: "kimi-cli" }],
    hasProjectConfig: true,
    // mcpServers in $KIMI_CODE_HOME/mcp.json (default ~/.kimi-code) and .kimi-code/mcp.json; the
    // older Kimi CLI (MoonshotAI/kimi-cli) reads ~/.kimi/mcp.json in the same notation.
    docs: "https://moonshotai.github.io/kimi-code/zh/customization/mcp",
    detection: (p) => hints([kimiCodeDir(p), joinPath(p, p.homeDir, ".kimi")], ["kimi"]),
    targets: async (p, fs, o) => {
      if (o.projectRoot !== undefined) {
        return [mcpServersTarget(joinPath(p, o.projectRoot, ".kimi-code", "mcp.json"), JSONC)];
      }
      const found: ConfigTarget[] = [];
      const current = kimiCodeDir(p);
      const legacy = joinPath(p, p.homeDir, ".kimi");
      const hasLegacy = await exists(fs, legacy);
      if (!hasLegacy || (await exists(fs, current)) || envPath(p, "KIMI_CODE_HOME") !== undefined) {
        found.push(mcpServersTarget(joinPath(p, current, "mcp.json"), JSONC));
      }
      if (hasLegacy) {
        found.push(
          mcpServersTarget(joinPath(p, legacy, "mcp.json"), JSONC, plainEntry, { label: "Kimi CLI" }),
        );
      }
      return found;
    },
  },
  {
    id: "pi",
    name: "Pi",
    aliases: [{ name: "pi-coding-agent" }],
    hasProjectConfig: true,
    // mcpServers (command, args) in $PI_CODING_AGENT_DIR/mcp.json (default ~/.pi/agent/mcp.json) and
    // <project>/.pi/mcp.json, read as JSON with comments by Pi's built-in MCP (0.99+) and by the
    // pi-mcp-adapter extension before it (its config.ts: getPiMcpGlobalConfigPath, getProjectPiMcpConfigPath).
    docs: "https://github.com/nicobailon/pi-mcp-adapter#config",
    detection: (p) => hints([piAgentDir(p)], ["pi"]),
    targets: (p, _fs, o) => {
      const path = o.projectRoot === undefined
        ? joinPath(p, piAgentDir(p), "mcp.json")
        : joinPath(p, o.projectRoot, ".pi", "mcp.json");
      return Promise.resolve([mcpServersTarget(path, JSONC)]);
    },
  },
];
