/**
 * The real agent CLIs `deno task test:agents` drives, pinned: what to install from npm, the
 * agent's own settings a user would have (the stand-in model as its provider, the workspace
 * trusted, telemetry and update checks off), the agent's own commands that show whether it
 * accepts the `symposium` entry and connects to it, and the one-prompt command that lets the
 * stand-in model call `list_tools` and `execute`. Settings and flags are the agents' documented
 * ones (each CLI's `--help`, `help environment` or settings reference of the pinned version).
 *
 * @module
 */
import type { PinnedPackage } from "./_install.ts";

/** Node.js for the agents whose npm package is JavaScript that needs Node 22 (Gemini CLI, Qwen Code, Cline's launcher). */
export const NODE_22: PinnedPackage = { name: "node", version: "22.23.3" };

/** What an agent case gets to prepare and run. */
export interface AgentContext {
  /** The fake HOME of this agent (absolute). */
  home: string;
  /** The Cargo workspace the agent runs in (absolute). */
  ws: string;
  /** `http://127.0.0.1:<port>` of the stand-in model. */
  modelUrl: string;
  /** Runs the agent's own binary with `args` (in `ws`, with the agent's environment). */
  run(args: string[], options?: { timeoutMs?: number }): Promise<CommandOutput>;
}

/** Exit code and output of one command. */
export interface CommandOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** One check with the agent's own command, e.g. `claude mcp list`. */
export interface ListCheck {
  args: string[];
  /** Matches the output when the agent lists the entry (accepted). */
  accepted: RegExp;
  /** Matches when the agent reports it connected (only for commands that connect). */
  connected?: RegExp;
  /** Matches when the agent reports both tools (only for commands that list tools). */
  tools?: RegExp;
}

/** One agent under test. */
export interface AgentCase {
  id: string;
  name: string;
  pkg: PinnedPackage;
  needsNode22: boolean;
  /** The program in the package's `.bin`. */
  bin: string;
  /** `cargo-agents sync --agent` name. */
  syncName: string;
  /** Writes the agent's own settings before `sync` runs (so `sync` must keep them). */
  prepare?(ctx: AgentContext): Promise<void>;
  /** The agent's environment on top of HOME/PATH/locale. */
  env(ctx: Pick<AgentContext, "modelUrl">): Record<string, string>;
  checks: ListCheck[];
  /** Arguments of one non-interactive prompt against the stand-in; absent when the agent cannot use a local model. */
  prompt?: (text: string) => string[];
  /** Why there is no end-to-end run (shown in the table). */
  noPromptReason?: string;
  /**
   * The MCP era the agent must use for every tool call of its run: `"modern"` for an agent that opens a
   * stdio server with `server/discover` (MCP 2026-07-28) and stays modern where it is answered. Absent: any.
   */
  era?: "modern" | "legacy";
}

async function writeJson(path: string, value: unknown): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, JSON.stringify(value, null, 2) + "\n");
}

/** Gemini CLI and Qwen Code (a Gemini CLI fork) skip MCP servers in folders the user has not trusted. */
async function trustFolder(home: string, dotDir: string, ws: string): Promise<void> {
  await writeJson(`${home}/${dotDir}/trustedFolders.json`, { [ws]: "TRUST_FOLDER" });
}

/** Every agent with a pinned npm release, in the table's order. */
export const AGENT_CASES: readonly AgentCase[] = [
  {
    id: "claude-code",
    name: "Claude Code",
    pkg: { name: "@anthropic-ai/claude-code", version: "2.1.332" },
    needsNode22: false,
    bin: "claude",
    syncName: "claude-code",
    env: ({ modelUrl }) => ({
      ANTHROPIC_BASE_URL: modelUrl,
      ANTHROPIC_API_KEY: "sk-stand-in",
      // MCP tools offered up front, not behind the ToolSearch tool (the stand-in calls them by name).
      ENABLE_TOOL_SEARCH: "false",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    }),
    checks: [{
      args: ["mcp", "list"],
      accepted: /^symposium: .*mcp-serve/m,
      connected: /^symposium: .*✔ Connected/m,
    }],
    era: "modern",
    prompt: (text) => [
      "-p",
      text,
      "--allowedTools",
      "mcp__symposium__list_tools,mcp__symposium__execute",
      "--output-format",
      "json",
    ],
  },
  {
    id: "codex",
    name: "Codex CLI",
    pkg: { name: "@openai/codex", version: "0.171.0" },
    needsNode22: false,
    bin: "codex",
    syncName: "codex",
    async prepare({ home, modelUrl }) {
      // A model name Codex has no metadata for: plain function tools, no tool search. Codex waits only
      // `mcp_optional_startup_grace_ms` (default 1000) for a server's tools before the first turn and
      // leaves a later one out of it; 0 waits for the startup timeout `sync` writes, so a loaded machine
      // cannot fail the test (the start time is measured by `deno task bench:initialize` instead).
      await Deno.mkdir(`${home}/.codex`, { recursive: true });
      await Deno.writeTextFile(
        `${home}/.codex/config.toml`,
        [
          `model = "stand-in"`,
          `model_provider = "stand-in"`,
          `approval_policy = "never"`,
          `check_for_update_on_startup = false`,
          `mcp_optional_startup_grace_ms = 0`,
          ``,
          `[model_providers.stand-in]`,
          `name = "stand-in"`,
          `base_url = "${modelUrl}/v1"`,
          `wire_api = "responses"`,
          ``,
          `[analytics]`,
          `enabled = false`,
          ``,
        ].join("\n"),
      );
    },
    env: () => ({}),
    checks: [{ args: ["mcp", "list"], accepted: /^symposium\s+\S+\s.*mcp-serve.*\benabled\b/m }],
    prompt: (text) => ["exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", text],
  },
  {
    id: "gemini",
    name: "Gemini CLI",
    pkg: { name: "@google/gemini-cli", version: "0.61.0" },
    needsNode22: true,
    bin: "gemini",
    syncName: "gemini",
    async prepare({ home, ws }) {
      await writeJson(`${home}/.gemini/settings.json`, {
        security: { auth: { selectedType: "gemini-api-key" } },
        privacy: { usageStatisticsEnabled: false },
        general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      });
      await trustFolder(home, ".gemini", ws);
    },
    env: ({ modelUrl }) => ({
      GEMINI_API_KEY: "stand-in",
      GOOGLE_GEMINI_BASE_URL: modelUrl,
      GEMINI_TELEMETRY_ENABLED: "false",
    }),
    checks: [{
      args: ["mcp", "list"],
      accepted: /symposium: .*mcp-serve/,
      connected: /✓ symposium: .* - Connected/,
    }],
    // A fixed model: `auto` first asks a routing model for a JSON score the stand-in does not give.
    prompt: (text) => ["-m", "gemini-2.5-flash", "-p", text, "--approval-mode", "yolo"],
  },
  {
    id: "qwen",
    name: "Qwen Code",
    pkg: { name: "@qwen-code/qwen-code", version: "0.24.4" },
    needsNode22: true,
    bin: "qwen",
    syncName: "qwen-code",
    async prepare({ home, ws }) {
      await writeJson(`${home}/.qwen/settings.json`, {
        security: { auth: { selectedType: "openai" } },
        privacy: { usageStatisticsEnabled: false },
        general: { enableAutoUpdate: false },
        tools: { toolSearch: { enabled: false } },
      });
      await trustFolder(home, ".qwen", ws);
    },
    env: ({ modelUrl }) => ({
      OPENAI_API_KEY: "stand-in",
      OPENAI_BASE_URL: `${modelUrl}/v1`,
      OPENAI_MODEL: "stand-in",
      QWEN_CODE_SUPPRESS_YOLO_WARNING: "1",
    }),
    checks: [{
      args: ["mcp", "list"],
      accepted: /symposium: .*mcp-serve/,
      connected: /✓.* symposium: .* - Connected/,
    }],
    prompt: (text) => ["-p", text, "--approval-mode", "yolo"],
  },
  {
    id: "opencode",
    name: "OpenCode",
    pkg: { name: "opencode-ai", version: "1.18.33" },
    needsNode22: false,
    bin: "opencode",
    syncName: "opencode",
    async prepare({ home, modelUrl }) {
      await writeJson(`${home}/.config/opencode/opencode.json`, {
        provider: {
          "stand-in": {
            npm: "@ai-sdk/openai-compatible",
            name: "Stand-in",
            options: { baseURL: `${modelUrl}/v1`, apiKey: "stand-in" },
            models: { "stand-in": { name: "Stand-in", tool_call: true } },
          },
        },
        model: "stand-in/stand-in",
        autoupdate: false,
        share: "disabled",
        permission: { "*": "allow" },
      });
    },
    env: () => ({
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_SHARE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    }),
    checks: [{
      args: ["mcp", "list"],
      accepted: /symposium/,
      connected: /✓ symposium\b.*connected/,
    }],
    prompt: (text) => ["run", text],
  },
  {
    id: "copilot-cli",
    name: "GitHub Copilot CLI",
    pkg: { name: "@github/copilot", version: "1.0.102" },
    needsNode22: false,
    bin: "copilot",
    syncName: "copilot-cli",
    env: ({ modelUrl }) => ({
      COPILOT_AUTO_UPDATE: "false",
      COPILOT_OFFLINE: "true",
      COPILOT_PROVIDER_BASE_URL: `${modelUrl}/v1`,
      COPILOT_PROVIDER_API_KEY: "stand-in",
      COPILOT_MODEL: "stand-in",
      COPILOT_ALLOW_ALL: "true",
    }),
    checks: [{ args: ["mcp", "get", "symposium"], accepted: /Status: Enabled[\s\S]*Command: .*mcp-serve/ }],
    prompt: (text) => ["-p", text, "--disable-client-telemetry"],
    era: "modern",
  },
  {
    id: "cline",
    name: "Cline CLI",
    pkg: { name: "cline", version: "3.0.65" },
    needsNode22: true,
    bin: "cline",
    syncName: "cline",
    async prepare({ home, modelUrl, run }) {
      // Cline CLI's own global settings (`~/.cline/data/settings/global-settings.json`): no telemetry, no updates.
      await writeJson(`${home}/.cline/data/settings/global-settings.json`, {
        telemetryOptOut: true,
        autoUpdateEnabled: false,
      });
      const out = await run([
        "auth",
        "-p",
        "openai",
        "-k",
        "stand-in",
        "-b",
        `${modelUrl}/v1`,
        "-m",
        "stand-in",
      ]);
      if (out.code !== 0) {
        throw new Error(`cline auth failed (exit ${out.code}): ${out.stderr || out.stdout}`);
      }
    },
    env: () => ({ CLINE_NO_AUTO_UPDATE: "1" }),
    // Cline CLI has no command that lists MCP servers; its run shows whether it loaded the entry.
    checks: [],
    prompt: (text) => ["--json", text],
  },
  {
    id: "amp",
    name: "Amp",
    pkg: { name: "@sourcegraph/amp", version: "0.0.1790142911-g7618fb" },
    needsNode22: false,
    bin: "amp",
    syncName: "amp",
    // AMP_URL points Amp's own service at the stand-in (it answers 404), keeping Amp off the internet.
    env: ({ modelUrl }) => ({ AMP_URL: modelUrl, AMP_API_KEY: "stand-in" }),
    checks: [
      { args: ["mcp", "list"], accepted: /symposium\s+command\s+.*mcp-serve/ },
      {
        args: ["mcp", "doctor"],
        accepted: /symposium \(user settings\)/,
        connected: /symposium \(user settings\): connected/,
        tools:
          /symposium \(user settings\): connected \(2 tools: (list_tools, execute|execute, list_tools)\)/,
      },
    ],
    noPromptReason: "Amp's model traffic goes through Amp's own service; no local model endpoint",
  },
];
