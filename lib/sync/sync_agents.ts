/**
 * `sync`'s engine: for each chosen (or detected) agent, reads its config file, puts the
 * `symposium` entry in (or takes it out), and writes the result atomically, or only diffs it for a
 * dry run. One agent's failure never stops the others: each outcome is reported.
 *
 * @module
 */
import { UserError } from "../diagnostics.ts";
import { readTextFileIfExists } from "../file_system.ts";
import {
  type AgentDefinition,
  type AgentId,
  AGENTS,
  type ConfigTarget,
  type DetectionHints,
  mergeEntry,
  type ServerCommand,
} from "./agents.ts";
import { type AgentSelection, selectAgents } from "./agent_selection.ts";
import { writeFileAtomic } from "./atomic_write.ts";
import { detectAgent } from "./detect.ts";
import { displayPath, type PathContext } from "./platform_paths.ts";
import { findProjectRoot } from "./project_root.ts";
import { renderUnifiedDiff } from "./unified_diff.ts";
import { getAtPath } from "./_values.ts";
import { denoWritableFileSystem, type WritableFileSystem } from "./writable_file_system.ts";

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
}

/** The effects and facts the engine needs. */
export interface SyncDeps {
  paths: PathContext;
  /** The program the entry starts (its args end with `mcp-serve`). */
  server: ServerCommand;
  /** @default denoWritableFileSystem */
  fs?: WritableFileSystem;
  /** When aborted, stops before the next agent and returns the outcomes so far. */
  signal?: AbortSignal;
}

/** How one file (or one agent without a file) came out. */
export type SyncStatus = "written" | "unchanged" | "removed" | "skipped" | "error";

/** One row of the report. */
export interface SyncOutcome {
  agent: AgentId;
  /** Human name plus the install label when the agent has several files, e.g. `"Cline (in Cursor)"`. */
  agentName: string;
  status: SyncStatus;
  /** The file concerned (absolute), when there is one. */
  file: string | undefined;
  /** Why (for `skipped`) or what (`added the entry`, `replaced a stale entry`, `created the file`…). */
  detail: string;
  /** The unified diff, for a dry run that would change the file. */
  diff: string | undefined;
  /** The `.bak` written, when one was. */
  backupPath: string | undefined;
  /** For `status: "error"`. */
  error: UserError | undefined;
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
    const options = variant === undefined ? {} : { variant };
    const targets = await agent.targets(
      p,
      fs,
      projectRoot === undefined ? options : { ...options, projectRoot },
    );
    for (const target of targets) outcomes.push(await syncTarget(agent, target, request, deps.server, fs));
  }
  return outcomes;
}

function describeNotDetected(lookedFor: DetectionHints, homeDir: string): string {
  const parts = lookedFor.summary === undefined
    ? lookedFor.paths.map((path) => `no ${displayPath(path, homeDir)}`)
    : [homeDir === "" ? lookedFor.summary : lookedFor.summary.replaceAll(homeDir, "~")];
  if (lookedFor.binaries.length > 0) parts.push(`no ${lookedFor.binaries.join("/")} on PATH`);
  return `not detected (${parts.join(", ")})`;
}

function skipped(agent: AgentDefinition, detail: string): SyncOutcome {
  return outcome(agent, undefined, { status: "skipped", file: undefined, detail });
}

function outcome(
  agent: AgentDefinition,
  target: ConfigTarget | undefined,
  fields: Pick<SyncOutcome, "status" | "file" | "detail"> & Partial<SyncOutcome>,
): SyncOutcome {
  return {
    agent: agent.id,
    agentName: target?.label === undefined ? agent.name : `${agent.name} (${target.label})`,
    diff: undefined,
    backupPath: undefined,
    error: undefined,
    ...fields,
  };
}

async function syncTarget(
  agent: AgentDefinition,
  target: ConfigTarget,
  request: SyncRequest,
  server: ServerCommand,
  fs: WritableFileSystem,
): Promise<SyncOutcome> {
  const file = target.path;
  try {
    const before = await readConfig(fs, file);
    if (request.remove && before === null) {
      return outcome(agent, target, { status: "unchanged", file, detail: "no config file" });
    }
    const { after, hadEntry } = editConfigText(target, before, { server, remove: request.remove });
    if (after === before) {
      const detail = request.remove ? "no symposium entry" : "already registered";
      return outcome(agent, target, { status: "unchanged", file, detail });
    }
    const status = request.remove ? "removed" : "written";
    const detail = request.remove
      ? "removed the entry"
      : before === null
      ? "created the file"
      : hadEntry
      ? "replaced a stale entry"
      : "added the entry";
    if (request.dryRun) {
      return outcome(agent, target, { status, file, detail, diff: renderUnifiedDiff(file, before, after) });
    }
    const written = await writeFileAtomic(file, after, { fs, expected: before });
    return outcome(agent, target, { status, file: written.path, detail, backupPath: written.backupPath });
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    return outcome(agent, target, { status: "error", file, detail: error.message, error });
  }
}

/** What {@link editConfigText} computed. */
export interface ConfigEdit {
  /** The new text; the very same string as `before` when nothing changes. */
  after: string;
  /** The file had a `symposium` entry before. */
  hadEntry: boolean;
}

/**
 * Computes the new text of one agent config file, without touching the disk. An existing entry
 * keeps the settings `sync` does not own (see {@link mergeEntry}).
 *
 * @param before The current text, or `null` when the file does not exist (`remove` then returns `""`).
 * @param options.server The program the entry starts.
 * @param options.remove Take the entry out instead of putting it in.
 * @throws {ConfigSyntaxError} `SYNC_CONFIG_SYNTAX` when `before` does not parse.
 * @throws {ConfigShapeError} `SYNC_CONFIG_SHAPE` when the document cannot hold the entry.
 */
export function editConfigText(
  target: ConfigTarget,
  before: string | null,
  options: { server: ServerCommand; remove: boolean },
): ConfigEdit {
  const file = target.path;
  const doc = before === null ? {} : target.format.read(before, file);
  const shape = target.shape(doc, options.server);
  const existing = getAtPath(doc, [...shape.address.containerPath, shape.address.name]);
  const hadEntry = existing !== undefined;
  if (options.remove) {
    return { after: before === null ? "" : target.format.removeEntry(before, shape.address, file), hadEntry };
  }
  // Only the program and transport fields are ours: the user's env, disabled, timeout… stay.
  const value = mergeEntry(existing, shape.value, shape.owned);
  return { after: target.format.setEntry(before ?? "", shape.address, value, file), hadEntry };
}

async function readConfig(fs: WritableFileSystem, file: string): Promise<string | null> {
  try {
    return await readTextFileIfExists(fs, file);
  } catch (error) {
    if (error instanceof UserError) throw error; // not UTF-8, with the position: never rewrite it
    const reason = error instanceof Error ? error.message : String(error);
    throw new UserError("SYNC_READ_FAILED", `Cannot read "${file}": ${reason}`, {
      cause: error,
      hint: "check that the path is a readable file",
    });
  }
}
