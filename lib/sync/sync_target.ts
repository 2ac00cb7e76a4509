/**
 * One config file of one agent: read it under the budgets, put the `symposium` entry in (or take
 * it out), and write it with the checked swap of `atomic_write.ts`, or only diff it for a dry run.
 * When another program changes the file meanwhile, the edit is redone on its version (a few
 * times), so its update is never lost.
 *
 * @module
 */
import { dirname } from "node:path";
import { UserError } from "../diagnostics.ts";
import type { AgentDefinition, ConfigTarget, ServerCommand } from "./agents/mod.ts";
import { mergeEntry } from "./agents/mod.ts";
import { BACKUP_SUFFIX, writeFileAtomic } from "./atomic_write.ts";
import { readConfigFile, resolveConfigPath } from "./config_file.ts";
import { type HeldLock, lockConfigFile } from "./config_lock.ts";
import { getAtPath, isPlainObject } from "./formats/mod.ts";
import { assertInsideProject } from "./project_root.ts";
import { cleanUpKilledWrites } from "./stale_files.ts";
import { renderUnifiedDiff } from "./unified_diff.ts";
import type { WritableFileSystem } from "./writable_file_system.ts";

/** How many times an edit is redone when another program keeps changing the file: 3. */
export const MAX_WRITE_ATTEMPTS = 3;

/** How one file (or one agent without a file) came out. */
export type SyncStatus = "written" | "unchanged" | "removed" | "skipped" | "error";

/** One row of the report. */
export interface SyncOutcome {
  agent: AgentDefinition["id"];
  /** Human name plus the install label when the agent has several files, e.g. `"Cline (in Cursor)"`. */
  agentName: string;
  status: SyncStatus;
  /** The file concerned (absolute), when there is one. */
  file: string | undefined;
  /** Why (for `skipped`) or what (`added the entry`, `replaced a stale entry`, `created the file`...). */
  detail: string;
  /** The unified diff, for a dry run that would change the file. */
  diff: string | undefined;
  /** The `.bak` written, when one was. */
  backupPath: string | undefined;
  /** For `status: "error"`. */
  error: UserError | undefined;
}

/** What {@link syncTarget} is asked to do. */
export interface TargetRequest {
  dryRun: boolean;
  remove: boolean;
  /** Replace a read-only file. */
  force: boolean;
  /** The program the entry starts. */
  server: ServerCommand;
  /**
   * For a project-level file: the workspace root it must stay inside (see `project_root.ts`'s
   * `assertInsideProject`). `undefined` for user-level files.
   */
  projectRoot?: string | undefined;
  /** How long to wait for another run's lock on the file, in ms. @default LOCK_WAIT_MS */
  lockWaitMs?: number;
  /** Stops a wait for another run's lock (Ctrl-C). */
  signal?: AbortSignal | undefined;
}

/** Builds an outcome row for `agent` (and `target`, when there is a file). */
export function outcome(
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

/**
 * Syncs one file. Never throws for a problem of the file (syntax, shape, budget, permissions,
 * a concurrent writer, a symlink out of the project): that is an `error` outcome, so the other
 * agents still get written. A real run (not `dryRun`) holds the file's lock (`config_lock.ts`)
 * from the cleanup and the read to the write, so two `sync` runs never merge one file at once.
 *
 * @throws Only for bugs (an error that is not a {@link UserError}).
 */
export async function syncTarget(
  agent: AgentDefinition,
  target: ConfigTarget,
  request: TargetRequest,
  fs: WritableFileSystem,
): Promise<SyncOutcome> {
  const file = target.path;
  try {
    if (request.projectRoot !== undefined) await assertInsideProject(file, request.projectRoot, fs);
    const lock = request.dryRun ? undefined : await lockTarget(file, request, fs);
    try {
      return await syncLocked(agent, target, request, fs);
    } finally {
      await lock?.release();
    }
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    return outcome(agent, target, { status: "error", file, detail: error.message, error });
  }
}

/**
 * Takes the lock of the file `path` leads to, creating its folder for a write; `undefined` (no
 * lock needed) when the folder is missing and the entry is to be removed: there is no file.
 */
async function lockTarget(
  path: string,
  request: TargetRequest,
  fs: WritableFileSystem,
): Promise<HeldLock | undefined> {
  const file = (await resolveConfigPath(path, fs)).path;
  if ((await fs.lstat(dirname(file))) === null) {
    if (request.remove) return undefined;
    await fs.mkdirAll(dirname(file));
  }
  const waitMs = request.lockWaitMs === undefined ? {} : { waitMs: request.lockWaitMs };
  return await lockConfigFile(file, { ...waitMs, signal: request.signal });
}

/** The read, edit and write of {@link syncTarget}, redone when another program changes the file. */
async function syncLocked(
  agent: AgentDefinition,
  target: ConfigTarget,
  request: TargetRequest,
  fs: WritableFileSystem,
): Promise<SyncOutcome> {
  const file = target.path;
  const cleanup = request.dryRun ? undefined : await cleanUpKilledWrites(file, { fs });
  const notes = cleanup === undefined ? [] : [
    ...(cleanup.restored === undefined ? [] : ["restored the file a killed sync had moved aside"]),
    ...(cleanup.removed.length === 0 ? [] : [
      `removed ${cleanup.removed.length} stale temporary file${cleanup.removed.length === 1 ? "" : "s"}`,
    ]),
  ];
  const withNotes = (detail: string) => [detail, ...notes].join("; ");
  for (let attempt = 1;; attempt++) {
    const before = await readConfigFile(file, fs);
    if (request.remove && before === null) {
      return outcome(agent, target, { status: "unchanged", file, detail: withNotes("no config file") });
    }
    const { after, hadEntry } = editConfigText(target, before, request);
    if (after === before) {
      const detail = request.remove ? "no symposium entry" : "already registered";
      return outcome(agent, target, { status: "unchanged", file, detail: withNotes(detail) });
    }
    const status = request.remove ? "removed" : "written";
    const deleteFile = request.remove && target.ownsFile === true && isEmptyDocument(target, after);
    const detail = deleteFile
      ? "removed the file"
      : request.remove
      ? "removed the entry"
      : before === null
      ? "created the file"
      : hadEntry
      ? "replaced a stale entry"
      : "added the entry";
    if (request.dryRun) {
      const diff = renderUnifiedDiff(file, before, deleteFile ? "" : after);
      return outcome(agent, target, { status, file, detail, diff });
    }
    try {
      if (deleteFile) {
        const backupPath = await retireOwnedFile(file, before!, fs);
        return outcome(agent, target, { status, file, detail: withNotes(detail), backupPath });
      }
      const written = await writeFileAtomic(file, after, { fs, expected: before, force: request.force });
      return outcome(agent, target, {
        status,
        file: written.path,
        detail: withNotes(detail),
        backupPath: written.backupPath,
      });
    } catch (error) {
      if (
        error instanceof UserError && error.code === "SYNC_CONFIG_CHANGED" && attempt < MAX_WRITE_ATTEMPTS
      ) {
        continue; // Redo the edit on the other program's version.
      }
      throw error;
    }
  }
}

/** Whether `text` parses to an empty object (a file of ours with nothing left in it). */
function isEmptyDocument(target: ConfigTarget, text: string): boolean {
  const doc = target.format.read(text, target.path);
  return isPlainObject(doc) && Object.keys(doc).length === 0;
}

/** Moves a file of ours that `--remove` emptied to `<file>.bak`, if it still holds what was read. */
async function retireOwnedFile(file: string, before: string, fs: WritableFileSystem): Promise<string> {
  if ((await readConfigFile(file, fs)) !== before) {
    throw new UserError(
      "SYNC_CONFIG_CHANGED",
      `Cannot remove "${file}": another program changed it meanwhile`,
      {
        hint: "its version was kept; run `cargo-agents sync --remove` again",
      },
    );
  }
  const backupPath = file + BACKUP_SUFFIX;
  try {
    await fs.rename(file, backupPath);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UserError("SYNC_WRITE_FAILED", `Cannot remove "${file}": ${reason}`, { cause: error });
  }
  return backupPath;
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
 * @throws {ConfigTooDeepError} `SYNC_CONFIG_TOO_DEEP` past the nesting budget.
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
  // Only the program and transport fields are ours: the user's env, disabled, timeout... stay.
  const value = mergeEntry(existing, shape.value, shape.owned);
  return { after: target.format.setEntry(before ?? "", shape.address, value, file), hadEntry };
}
