/**
 * Agents that run as extensions of a VS Code-family editor and keep their MCP servers in the
 * host's global storage (Cline, Roo Code) or in their own folder (Continue). Cline and Roo Code
 * get one file per host editor they are installed in.
 *
 * @module
 */
import type { FileSystem } from "../../file_system.ts";
import { JSONC } from "../formats/mod.ts";
import { joinPath, type PathContext } from "../platform_paths.ts";
import {
  type AgentDefinition,
  type ConfigTarget,
  hints,
  mcpServersTarget,
  plainEntry,
  type ServerCommand,
} from "./types.ts";
import { clineCliDir, exists, EXTENSION_HOSTS, extensionStorage } from "./_locations.ts";

/**
 * The `timeout` Cline and Roo Code give a server, in seconds: their budget for one tool call (Cline's
 * `DEFAULT_MCP_TIMEOUT_SECONDS` is 60, Roo's "Network Timeout" likewise), written above the meta-server's
 * default `script-timeout-secs` of 120, as Codex's `tool_timeout_sec`, so `execute` reports its own deadline
 * instead of the agent cutting it.
 */
export const EXTENSION_TIMEOUT_SECS = 150;

const CLINE_ID = "saoudrizwan.claude-dev";
const ROO_ID = "rooveterinaryinc.roo-cline";

/** One target per host editor whose global storage holds the extension's folder. */
async function hostTargets(
  p: PathContext,
  fs: FileSystem,
  extensionId: string,
  fileName: string,
  entry: (s: ServerCommand) => unknown,
): Promise<ConfigTarget[]> {
  const found: ConfigTarget[] = [];
  for (const host of EXTENSION_HOSTS) {
    const storage = extensionStorage(p, host, extensionId);
    if (!(await exists(fs, storage))) continue;
    const path = joinPath(p, storage, "settings", fileName);
    found.push(mcpServersTarget(path, JSONC, entry, { label: `in ${host}` }));
  }
  return found;
}

/** The extension agents, in {@link AGENT_IDS} order. */
export const EXTENSION_AGENTS: readonly AgentDefinition[] = [
  {
    id: "cline",
    name: "Cline",
    aliases: [],
    hasProjectConfig: false,
    // <user data>/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json per
    // host editor; Cline CLI: ~/.cline/data/settings/cline_mcp_settings.json ($CLINE_DIR).
    docs: "https://docs.cline.bot/mcp/configuring-mcp-servers",
    detection: (p) =>
      hints([...EXTENSION_HOSTS.map((h) => extensionStorage(p, h, CLINE_ID)), clineCliDir(p)], ["cline"]),
    targets: async (p, fs) => {
      const entry = (s: ServerCommand) => ({
        ...plainEntry(s),
        disabled: false,
        autoApprove: [],
        timeout: EXTENSION_TIMEOUT_SECS,
      });
      const found = await hostTargets(p, fs, CLINE_ID, "cline_mcp_settings.json", entry);
      const cli = clineCliDir(p);
      // The CLI's file is also the one written when no install is found and the user asked for Cline.
      if (found.length === 0 || (await exists(fs, cli))) {
        const path = joinPath(p, cli, "data", "settings", "cline_mcp_settings.json");
        found.push(mcpServersTarget(path, JSONC, entry, { label: "CLI" }));
      }
      return found;
    },
  },
  {
    id: "roo-code",
    name: "Roo Code",
    aliases: [{ name: "roo" }],
    hasProjectConfig: true,
    // Global: <user data>/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json;
    // project: .roo/mcp.json (wins by name). The extension was discontinued on 2026-05-15.
    docs: "https://docs.roocode.com/features/mcp/using-mcp-in-roo",
    detection: (p) => hints(EXTENSION_HOSTS.map((h) => extensionStorage(p, h, ROO_ID))),
    targets: async (p, fs, o) => {
      const entry = (s: ServerCommand) => ({
        ...plainEntry(s),
        alwaysAllow: [],
        disabled: false,
        timeout: EXTENSION_TIMEOUT_SECS,
      });
      if (o.projectRoot !== undefined) {
        return [mcpServersTarget(joinPath(p, o.projectRoot, ".roo", "mcp.json"), JSONC, entry)];
      }
      const found = await hostTargets(p, fs, ROO_ID, "mcp_settings.json", entry);
      if (found.length > 0) return found;
      // Asked for by name without an install: VS Code's storage, where the extension looks first.
      const path = joinPath(p, extensionStorage(p, "Code", ROO_ID), "settings", "mcp_settings.json");
      return [mcpServersTarget(path, JSONC, entry)];
    },
  },
  {
    id: "continue",
    name: "Continue",
    aliases: [{ name: "continue-dev" }],
    hasProjectConfig: true,
    // JSON files in the Claude Desktop notation dropped into ~/.continue/mcpServers/ (global) or
    // .continue/mcpServers/ (workspace) are loaded as they are (docs "Using JSON MCP Format from
    // Claude, Cursor, Cline"; continuedev/continue core/context/mcp/json/loadJsonMcpConfigs.ts).
    // A file of our own: config.yaml is never edited.
    docs: "https://docs.continue.dev/customize/deep-dives/mcp",
    detection: (p) => hints([joinPath(p, p.homeDir, ".continue")], ["cn"]),
    targets: (p, _fs, o) => {
      const path = joinPath(p, o.projectRoot ?? p.homeDir, ".continue", "mcpServers", "symposium.json");
      return Promise.resolve([mcpServersTarget(path, JSONC, plainEntry, { ownsFile: true })]);
    },
  },
];
