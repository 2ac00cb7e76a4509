/**
 * The stable names of the agents `sync` knows. These ids are a public interface: `--agent` takes
 * them, `sync --list` and the report show them, and the real-agent test suite keys on them. Add
 * new ids at the end; never rename one.
 *
 * @module
 */

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
  "qwen-code",
  "copilot-cli",
  "roo-code",
  "kilo-code",
  "continue",
  "crush",
  "factory-droid",
  "augment",
  "trae",
  "kimi",
  "lm-studio",
  "antigravity",
  "junie",
  "pi",
] as const;

/** One of {@link AGENT_IDS}. */
export type AgentId = typeof AGENT_IDS[number];
