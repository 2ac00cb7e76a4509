/**
 * Resolves the names given to `--agent` (ids or aliases, any case) to agents of the table.
 *
 * @module
 */
import { closestMatch, UsageError } from "../diagnostics.ts";
import { AGENT_IDS, type AgentDefinition, AGENTS } from "./agents/mod.ts";

/** An agent picked by name, with the layout its alias forces, if any. */
export interface AgentSelection {
  agent: AgentDefinition;
  variant?: string;
}

/**
 * Resolves `--agent` names (ids or aliases, case-insensitive), dropping repeats.
 *
 * @throws {UsageError} for an unknown name, with a did-you-mean hint and the list of valid names.
 */
export function selectAgents(names: readonly string[]): AgentSelection[] {
  const known = new Map<string, AgentSelection>();
  for (const agent of AGENTS) {
    known.set(agent.id, { agent });
    for (const alias of agent.aliases) {
      known.set(alias.name, alias.variant === undefined ? { agent } : { agent, variant: alias.variant });
    }
  }
  const picked: AgentSelection[] = [];
  for (const raw of names) {
    const selection = known.get(raw.trim().toLowerCase());
    if (selection === undefined) {
      const guess = closestMatch(raw, [...known.keys()]);
      const list = AGENT_IDS.join(", ");
      throw new UsageError(`Cannot sync agent "${raw}": no such agent`, {
        hint: guess === undefined
          ? `valid agents: ${list}`
          : `did you mean "${guess}"? Valid agents: ${list}`,
      });
    }
    if (!picked.some((s) => s.agent === selection.agent && s.variant === selection.variant)) {
      picked.push(selection);
    }
  }
  return picked;
}
