/**
 * What each agent `sync` knows accepts as the name of a tool of the `symposium` entry: the name the model
 * finally sees is the agent's prefix plus the tool's name, and the model's API bounds it. `mcp-serve`'s
 * direct tools (`lib/meta_server/direct_tools.ts`) are named so that every rule here holds (a test checks
 * each agent).
 *
 * @module
 */
import { type AgentId, ENTRY_NAME } from "./ids.ts";

/** One agent's bound on the name of an MCP tool. */
export interface ToolNameRule {
  /** What the agent puts before the tool's name in the name the model sees (for the `symposium` entry). */
  prefix: string;
  /** Characters the whole name (prefix and tool name) may hold, start and end anchored. */
  pattern: RegExp;
  /** Longest whole name (prefix and tool name), in characters. */
  maxChars: number;
  /** Where the rule comes from, in a few words. */
  source: string;
}

/** Function names the Anthropic and OpenAI APIs accept: `^[a-zA-Z0-9_-]{1,64}$`. */
const FUNCTION_NAME = /^[a-zA-Z0-9_-]+$/;
/** Gemini function names: a letter or `_` first, then letters, digits, `_`, `.`, `:`, `-`; at most 64. */
const GEMINI_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]*$/;

/** `mcp__symposium__`: Claude Code's prefix (and the longest any agent here adds). */
const CLAUDE_PREFIX = `mcp__${ENTRY_NAME}__`;

const openAi = (prefix: string, source: string): ToolNameRule => ({
  prefix,
  pattern: FUNCTION_NAME,
  maxChars: 64,
  source,
});

/**
 * An agent whose naming is not documented: the strictest known rule (Claude Code's prefix under the
 * Anthropic/OpenAI bound) is assumed.
 */
const ASSUMED: ToolNameRule = openAi(CLAUDE_PREFIX, "undocumented: the strictest known rule assumed");

/** Each agent's rule (every {@link AgentId} has one, so a new agent cannot be forgotten). */
export const TOOL_NAME_RULES: Readonly<Record<AgentId, ToolNameRule>> = {
  "claude-code": openAi(CLAUDE_PREFIX, "mcp__<server>__<tool> under the Anthropic API's 64"),
  "claude-desktop": openAi("", "FrontendRemoteMcpToolDefinition.name: ^[a-zA-Z0-9_-]{1,64}$"),
  "cursor": {
    prefix: ENTRY_NAME,
    pattern: FUNCTION_NAME,
    maxChars: 60,
    source: "server name + tool name at most 60 characters, else the tool is filtered out",
  },
  "vscode": openAi(`mcp_${ENTRY_NAME}_`, "mcp_<server>_<tool> under the model API's 64"),
  "windsurf": { ...ASSUMED },
  "zed": { ...ASSUMED },
  "codex": openAi(`mcp__${ENTRY_NAME}__`, "<server>__<tool> qualified names under the OpenAI API's 64"),
  "gemini": {
    prefix: `${ENTRY_NAME}__`,
    pattern: GEMINI_NAME,
    maxChars: 64,
    source: "Gemini function names; <server>__<tool> when two servers share a tool name",
  },
  "goose": openAi(`${ENTRY_NAME}__`, "<extension>__<tool>"),
  "kiro": { ...ASSUMED },
  "opencode": openAi(`${ENTRY_NAME}_`, "<server>_<tool>"),
  "amp": { ...ASSUMED },
  "cline": { ...ASSUMED },
  "qwen-code": {
    prefix: `${ENTRY_NAME}__`,
    pattern: GEMINI_NAME,
    maxChars: 64,
    source: "a Gemini CLI fork: as gemini",
  },
  "copilot-cli": openAi(`${ENTRY_NAME}-`, "<server>-<tool> under the model API's 64"),
  "roo-code": { ...ASSUMED },
  "kilo-code": { ...ASSUMED },
  "continue": { ...ASSUMED },
  "crush": openAi(`mcp_${ENTRY_NAME}_`, "mcp_<server>_<tool>"),
  "factory-droid": { ...ASSUMED },
  "augment": { ...ASSUMED },
  "trae": { ...ASSUMED },
  "kimi": { ...ASSUMED },
  "lm-studio": { ...ASSUMED },
  "antigravity": { ...ASSUMED },
  "junie": { ...ASSUMED },
  "pi": { ...ASSUMED },
};

/**
 * Why agent `id` would refuse or drop a tool of the `symposium` entry named `toolName`, or `undefined`
 * when its rule ({@link TOOL_NAME_RULES}) holds.
 */
export function toolNameProblem(id: AgentId, toolName: string): string | undefined {
  const rule = TOOL_NAME_RULES[id];
  const whole = `${rule.prefix}${toolName}`;
  if (whole.length > rule.maxChars) {
    return `${id} sees "${whole}", ${whole.length} characters, more than ${rule.maxChars} (${rule.source})`;
  }
  if (!rule.pattern.test(whole)) {
    return `${id} sees "${whole}", which ${rule.pattern} refuses (${rule.source})`;
  }
  return undefined;
}
