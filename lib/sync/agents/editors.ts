/**
 * Desktop editors and apps with a file-based MCP config: Claude Desktop, Cursor, VS Code, Windsurf,
 * Zed, Kiro, Trae, Google Antigravity, JetBrains Junie and LM Studio. Each definition cites where
 * its file and format are documented.
 *
 * @module
 */
import { JSONC, STRICT_JSON } from "../formats/mod.ts";
import { appDataDir, joinPath, vscodeUserDataDir } from "../platform_paths.ts";
import {
  type AgentDefinition,
  fixed,
  hints,
  mcpServersTarget,
  PLAIN_OWNED,
  plainEntry,
  type ServerCommand,
} from "./types.ts";
import { claudeDesktopDir, vscodeDir, zedDir } from "./_locations.ts";

/** The editor agents, in {@link AGENT_IDS} order. */
export const EDITOR_AGENTS: readonly AgentDefinition[] = [
  {
    id: "claude-desktop",
    name: "Claude Desktop",
    aliases: [],
    hasProjectConfig: false,
    docs: "https://modelcontextprotocol.io/quickstart/user",
    detection: async (p, fs) => hints([await claudeDesktopDir(p, fs)]),
    targets: async (p, fs) => [
      mcpServersTarget(
        joinPath(p, await claudeDesktopDir(p, fs), "claude_desktop_config.json"),
        STRICT_JSON,
      ),
    ],
  },
  {
    id: "cursor",
    name: "Cursor",
    aliases: [],
    hasProjectConfig: true,
    docs: "https://cursor.com/docs/mcp",
    detection: (p) => hints([joinPath(p, p.homeDir, ".cursor")], ["cursor", "cursor-agent"]),
    targets: (p, _fs, o) =>
      Promise.resolve([
        mcpServersTarget(joinPath(p, o.projectRoot ?? p.homeDir, ".cursor", "mcp.json"), JSONC),
      ]),
  },
  {
    id: "vscode",
    name: "VS Code",
    aliases: [{ name: "code" }, { name: "vs-code" }, { name: "vscode-copilot" }],
    hasProjectConfig: true,
    // "servers" (not mcpServers) in <user data>/User/mcp.json or .vscode/mcp.json; "type" is required.
    docs: "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
    detection: (p) =>
      hints([
        joinPath(p, vscodeUserDataDir(p, "Code"), "User"),
        joinPath(p, vscodeUserDataDir(p, "Code - Insiders"), "User"),
      ], ["code", "code-insiders"]),
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
    docs: "https://docs.windsurf.com/windsurf/cascade/mcp",
    detection: (p) => hints([joinPath(p, p.homeDir, ".codeium", "windsurf")], ["windsurf"]),
    targets: (p) =>
      Promise.resolve([
        mcpServersTarget(joinPath(p, p.homeDir, ".codeium", "windsurf", "mcp_config.json"), JSONC),
      ]),
  },
  {
    id: "zed",
    name: "Zed",
    aliases: [],
    hasProjectConfig: true,
    docs: "https://zed.dev/docs/ai/mcp",
    detection: (p) => hints([zedDir(p)], ["zed", "zeditor", "zedit"]),
    targets: (p, _fs, o) => {
      const path = o.projectRoot === undefined
        ? joinPath(p, zedDir(p), "settings.json")
        : joinPath(p, o.projectRoot, ".zed", "settings.json");
      // Older Zed needs "source": "custom"; newer Zed needs "args": write both.
      const entry = (s: ServerCommand) => ({ source: "custom", ...plainEntry(s), env: {} });
      return Promise.resolve([fixed(path, JSONC, ["context_servers"], entry, ["source", ...PLAIN_OWNED])]);
    },
  },
  {
    id: "kiro",
    name: "Kiro",
    aliases: [{ name: "kiro-cli" }],
    hasProjectConfig: true,
    docs: "https://kiro.dev/docs/mcp/configuration",
    detection: (p) => hints([joinPath(p, p.homeDir, ".kiro")], ["kiro", "kiro-cli"]),
    targets: (p, _fs, o) => {
      const entry = (s: ServerCommand) => ({ ...plainEntry(s), env: {}, disabled: false, autoApprove: [] });
      return Promise.resolve([
        mcpServersTarget(
          joinPath(p, o.projectRoot ?? p.homeDir, ".kiro", "settings", "mcp.json"),
          JSONC,
          entry,
        ),
      ]);
    },
  },
  {
    id: "trae",
    name: "Trae",
    aliases: [],
    hasProjectConfig: true,
    // Project: .trae/mcp.json (TRAE docs, "Project-level MCP Server"; "Enable Project MCP" must be on).
    // User: <app data>/Trae/User/mcp.json, the file behind "Raw config (JSON)" (observed in
    // pathintegral-institute/mcpm.sh#92); both in the Claude Desktop notation.
    docs: "https://www.volcengine.com/docs/86677/2137601",
    detection: (p) => hints([joinPath(p, appDataDir(p), "Trae")], ["trae"]),
    targets: (p, _fs, o) => {
      const path = o.projectRoot === undefined
        ? joinPath(p, appDataDir(p), "Trae", "User", "mcp.json")
        : joinPath(p, o.projectRoot, ".trae", "mcp.json");
      return Promise.resolve([mcpServersTarget(path, JSONC)]);
    },
  },
  {
    id: "antigravity",
    name: "Google Antigravity",
    aliases: [{ name: "agy" }],
    hasProjectConfig: false,
    // mcpServers in ~/.gemini/antigravity/mcp_config.json ("Manage MCP Servers" -> "View raw config";
    // Google's chrome-devtools-mcp README, ChromeDevTools/chrome-devtools-mcp#580).
    docs: "https://github.com/ChromeDevTools/chrome-devtools-mcp/pull/580",
    detection: (p) => hints([joinPath(p, p.homeDir, ".gemini", "antigravity")], ["antigravity"]),
    targets: (p) =>
      Promise.resolve([
        mcpServersTarget(joinPath(p, p.homeDir, ".gemini", "antigravity", "mcp_config.json"), JSONC),
      ]),
  },
  {
    id: "junie",
    name: "JetBrains Junie",
    aliases: [{ name: "jetbrains-junie" }],
    hasProjectConfig: true,
    // mcpServers (no "type": stdio by command/args) in ~/.junie/mcp/mcp.json and .junie/mcp/mcp.json.
    docs: "https://junie.jetbrains.com/docs/junie-cli-mcp-configuration.html",
    detection: (p) => hints([joinPath(p, p.homeDir, ".junie")], ["junie"]),
    targets: (p, _fs, o) =>
      Promise.resolve([
        mcpServersTarget(joinPath(p, o.projectRoot ?? p.homeDir, ".junie", "mcp", "mcp.json"), JSONC),
      ]),
  },
  {
    id: "lm-studio",
    name: "LM Studio",
    aliases: [{ name: "lmstudio" }],
    hasProjectConfig: false,
    // ~/.lmstudio/mcp.json (%USERPROFILE%/.lmstudio/mcp.json on Windows), "Cursor's mcp.json notation".
    docs: "https://lmstudio.ai/docs/app/mcp",
    detection: (p) => hints([joinPath(p, p.homeDir, ".lmstudio")], ["lms"]),
    targets: (p) =>
      Promise.resolve([mcpServersTarget(joinPath(p, p.homeDir, ".lmstudio", "mcp.json"), JSONC)]),
  },
];
