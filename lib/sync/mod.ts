/**
 * Area `sync/`: writing our one entry into agents' own config files (`agents/` says where, `formats/` how
 * to edit each format in place). It never starts the meta-server or a backing server; it imports only the
 * top level.
 *
 * The face of the area: the sync itself and the agent list (`sync_agents.ts`), its report (`report.ts`)
 * and the platform's path shapes (`platform_paths.ts`).
 *
 * @module
 */
export type { ServerCommand } from "./agents/mod.ts";
export { type PathContext, toPlatform } from "./platform_paths.ts";
export { renderAgentList, renderSyncReport } from "./report.ts";
export { listAgents, PORTABLE_CARGO_SERVER, PORTABLE_SERVER, syncAgents } from "./sync_agents.ts";
