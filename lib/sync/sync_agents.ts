/**
 * `sync`'s engine: for each chosen (or detected) agent, syncs each of its config files (see
 * `sync_target.ts`), and lists what is detected and why. One agent's failure never stops the
 * others: each outcome is reported.
 *
 * @module
 */
import {
  type AgentDefinition,
  AGENTS,
  type ConfigTarget,
  type DetectionHints,
  type ServerCommand,
} from "./agents/mod.ts";
import { type AgentSelection, selectAgents } from "./agent_selection.ts";
import { detectAgent } from "./detect.ts";
import { displayPath, type PathContext } from "./platform_paths.ts";
import { findProjectRoot } from "./project_root.ts";
import { outcome, type SyncOutcome, syncTarget } from "./sync_target.ts";
import { denoWritableFileSystem, type WritableFileSystem } from "./writable_file_system.ts";

export { editConfigText, type SyncOutcome, type SyncStatus } from "./sync_target.ts";

/**
 * What a project-level file starts: the program as a user types it, found on `PATH` on every
 * teammate's machine (`cargo-agents mcp-serve`), never an absolute path of this machine.
 */
export const PORTABLE_SERVER: Readonly<ServerCommand> = Object.freeze({
  command: "cargo-agents",
  args: ["mcp-serve"],
});

/** The project-level program when the team runs it through cargo: `cargo agents mcp-serve`. */
export const PORTABLE_CARGO_SERVER: Readonly<ServerCommand> = Object.freeze({
  command: "cargo",
  args: ["agents", "mcp-serve"],
});

/** What the user asked for. */
export interface SyncRequest {
  /** `--agent` names; empty means every detected agent (every agent with `remove`). */
  agents: readonly string[];
  /** Write project-level files in the workspace root instead of the user-global ones. */
  project: boolean;
  /** Compute and diff only; write nothing. */
  dryRun: boolean;
  /** Take the entry out instead of putting it in. */
  remove: boolean;
  /** Replace read-only files too. @default false */
  force?: boolean;
}

/** The effects and facts the engine needs. */
export interface SyncDeps {
  paths: PathContext;
  /** The program user-level entries start (absolute; its args end with `mcp-serve` and its options). */
  server: ServerCommand;
  /** The program project-level entries start. @default PORTABLE_SERVER */
  projectServer?: ServerCommand;
  /** @default denoWritableFileSystem */
  fs?: WritableFileSystem;
  /** When aborted, stops before the next agent and returns the outcomes so far. */
  signal?: AbortSignal;
}

/**
 * Runs `sync`.
 *
 * Without names, agents are detected (config folders, or programs on `PATH`) and the others are
 * reported as skipped; with `remove` and no names, every agent is visited. With names, each named
 * agent is written even when not detected, creating missing files and folders.
 *
 * @returns One outcome per file (or per skipped agent), in agent-table order.
 * @throws {UsageError} for an unknown agent name (before anything is read or written).
 * @throws {UserError} `SYNC_NO_WORKSPACE` for `project` outside a Cargo workspace (nothing written).
 */
export async function syncAgents(request: SyncRequest, deps: SyncDeps): Promise<SyncOutcome[]> {
  const fs = deps.fs ?? denoWritableFileSystem;
  const p = deps.paths;
  const explicit = request.agents.length > 0;
  const selections: AgentSelection[] = explicit
    ? selectAgents(request.agents)
    : AGENTS.map((agent) => ({ agent }));
  const projectRoot = request.project ? await findProjectRoot(p.cwd, fs) : undefined;
  const server = projectRoot === undefined ? deps.server : deps.projectServer ?? PORTABLE_SERVER;
  const targetRequest = {
    dryRun: request.dryRun,
    remove: request.remove,
    force: request.force === true,
    server,
    projectRoot,
    signal: deps.signal,
  };
  const outcomes: SyncOutcome[] = [];
  for (const { agent, variant } of selections) {
    if (deps.signal?.aborted) break; // Ctrl-C: report what was done so far.
    if (projectRoot !== undefined && !agent.hasProjectConfig) {
      outcomes.push(skipped(agent, "has no project-level config file"));
      continue;
    }
    if (!explicit && !request.remove) {
      const detection = await detectAgent(agent, { paths: p, fs });
      if (!detection.isInstalled) {
        outcomes.push(skipped(agent, describeNotDetected(detection.lookedFor, p.homeDir)));
        continue;
      }
    }
    for (const target of await targetsOf(agent, p, fs, variant, projectRoot)) {
      outcomes.push(await syncTarget(agent, target, targetRequest, fs));
    }
  }
  return outcomes;
}

/** One row of `sync --list`. */
export interface AgentListing {
  agent: AgentDefinition;
  isDetected: boolean;
  /** Why it counts as installed (`~/.cursor exists`, `codex on PATH`) or what was looked for. */
  reason: string;
  /** The files `sync` would edit (project-level ones with `project`). */
  files: string[];
}

/**
 * Lists every agent with whether it is detected and why, and the files `sync` would edit.
 * Reads nothing but directory entries and file status.
 *
 * @param options.project List the project-level files (of the Cargo workspace around `cwd`).
 * @throws {UserError} `SYNC_NO_WORKSPACE` for `project` outside a Cargo workspace.
 */
export async function listAgents(
  deps: Pick<SyncDeps, "paths" | "fs">,
  options: { project?: boolean } = {},
): Promise<AgentListing[]> {
  const fs = deps.fs ?? denoWritableFileSystem;
  const p = deps.paths;
  const projectRoot = options.project === true ? await findProjectRoot(p.cwd, fs) : undefined;
  const rows: AgentListing[] = [];
  for (const agent of AGENTS) {
    const detection = await detectAgent(agent, { paths: p, fs });
    const reason = detection.isInstalled
      ? detection.evidence!.endsWith(" on PATH")
        ? detection.evidence!
        : `${displayPath(detection.evidence!, p.homeDir)} exists`
      : describeMissing(detection.lookedFor, p.homeDir);
    const files = projectRoot !== undefined && !agent.hasProjectConfig
      ? []
      : (await targetsOf(agent, p, fs, undefined, projectRoot)).map((t) => t.path);
    rows.push({ agent, isDetected: detection.isInstalled, reason, files });
  }
  return rows;
}

function targetsOf(
  agent: AgentDefinition,
  p: PathContext,
  fs: WritableFileSystem,
  variant: string | undefined,
  projectRoot: string | undefined,
): Promise<ConfigTarget[]> {
  const options = variant === undefined ? {} : { variant };
  return agent.targets(p, fs, projectRoot === undefined ? options : { ...options, projectRoot });
}

function describeNotDetected(lookedFor: DetectionHints, homeDir: string): string {
  return `not detected (${describeMissing(lookedFor, homeDir)})`;
}

/** What was looked for and not found: `no ~/.cursor, no cursor/cursor-agent on PATH`. */
function describeMissing(lookedFor: DetectionHints, homeDir: string): string {
  const parts = lookedFor.summary === undefined
    ? lookedFor.paths.map((path) => `no ${displayPath(path, homeDir)}`)
    : [homeDir === "" ? lookedFor.summary : lookedFor.summary.replaceAll(homeDir, "~")];
  if (lookedFor.binaries.length > 0) parts.push(`no ${lookedFor.binaries.join("/")} on PATH`);
  return parts.join(", ");
}

function skipped(agent: AgentDefinition, detail: string): SyncOutcome {
  return outcome(agent, undefined, { status: "skipped", file: undefined, detail });
}
