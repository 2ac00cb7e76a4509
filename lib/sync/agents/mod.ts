/**
 * The table of coding agents `sync` knows: for each, where its MCP config lives (user-global and
 * project-level, per platform, honouring the agent's own environment overrides), how to tell it
 * is installed, the file format, and the exact shape of the `symposium` entry. Each family module
 * cites the documentation of every file it names.
 *
 * @module
 */
import { AGENT_IDS, type AgentId } from "./ids.ts";
import type { AgentDefinition } from "./types.ts";
import { TERMINAL_AGENTS } from "./terminal.ts";
import { EDITOR_AGENTS } from "./editors.ts";
import { OPENCODE_FAMILY_AGENTS } from "./opencode_family.ts";
import { EXTENSION_AGENTS } from "./extensions.ts";

export { AGENT_IDS, type AgentId, ENTRY_NAME } from "./ids.ts";
export {
  type AgentDefinition,
  type ConfigTarget,
  type DetectionHints,
  type EntryShape,
  mergeEntry,
  type ServerCommand,
  type TargetOptions,
} from "./types.ts";
export { openCodeShape } from "./opencode_family.ts";
export { TOOL_NAME_RULES, toolNameProblem, type ToolNameRule } from "./tool_names.ts";

function inIdOrder(): readonly AgentDefinition[] {
  const byId = new Map<AgentId, AgentDefinition>();
  for (
    const agent of [...TERMINAL_AGENTS, ...EDITOR_AGENTS, ...OPENCODE_FAMILY_AGENTS, ...EXTENSION_AGENTS]
  ) {
    if (byId.has(agent.id)) throw new Error(`agent table: "${agent.id}" is defined twice`);
    byId.set(agent.id, agent);
  }
  return AGENT_IDS.map((id) => {
    const agent = byId.get(id);
    if (agent === undefined) throw new Error(`agent table: "${id}" has no definition`);
    return agent;
  });
}

/** Every agent, in {@link AGENT_IDS} order. */
export const AGENTS: readonly AgentDefinition[] = inIdOrder();
