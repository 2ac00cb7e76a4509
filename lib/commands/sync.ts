/**
 * `cargo-agents sync`: registers (or with `--remove`, unregisters) the meta-server as the
 * `symposium` MCP entry in every detected coding agent, and prints what happened per agent.
 *
 * @module
 */
import type { CommandContext } from "./context.ts";
import { renderDiagnostic, UserError } from "../diagnostics.ts";
import { renderSyncReport } from "../sync/report.ts";
import { syncAgents } from "../sync/sync_agents.ts";
import { toPlatform } from "../sync/platform_paths.ts";

/** The argument the entry appends to the program's own command line. */
export const SERVE_SUBCOMMAND = "mcp-serve";

/** Options of {@link runSync}, from the command line. */
export interface SyncOptions {
  /** `--agent NAME` values (ids or aliases); empty: every detected agent. */
  agents: string[];
  /** `--project`: write project-level files in the workspace root. */
  project: boolean;
  /** `--dry-run`: print a unified diff per file and write nothing. */
  dryRun: boolean;
  /** `--remove`: take the `symposium` entry out instead. */
  remove: boolean;
}

/**
 * Runs `sync`. Prints each dry-run diff and then the result table on stdout, and the full
 * diagnostic of each failed file on stderr.
 *
 * The entry runs `ctx.selfCommand` with `mcp-serve` appended: the absolute path of the compiled
 * binary, or `deno run … main.ts` when running from source.
 *
 * @returns 1 when any agent's file could not be handled, else 0.
 * @throws {UsageError} for an unknown `--agent` name.
 * @throws {UserError} `code: "SYNC_NO_HOME"` when the home directory is unknown.
 * @throws {UserError} `code: "SYNC_NO_WORKSPACE"` for `--project` outside a Cargo workspace.
 */
export async function runSync(options: SyncOptions, ctx: CommandContext): Promise<number> {
  if (ctx.homeDir === "") {
    throw new UserError(
      "SYNC_NO_HOME",
      "Cannot find the agents' config files: the home directory is unknown",
      {
        hint: "set HOME (USERPROFILE on Windows)",
      },
    );
  }
  const outcomes = await syncAgents(options, {
    paths: { platform: toPlatform(Deno.build.os), homeDir: ctx.homeDir, env: ctx.env, cwd: ctx.cwd },
    server: { command: ctx.selfCommand.command, args: [...ctx.selfCommand.args, SERVE_SUBCOMMAND] },
    signal: ctx.signal,
  });
  for (const o of outcomes) if (o.diff) ctx.writeOut(o.diff + (o.diff.endsWith("\n") ? "" : "\n"));
  ctx.writeOut(renderSyncReport(outcomes, { homeDir: ctx.homeDir, dryRun: options.dryRun }));
  const detected = outcomes.filter((o) => o.status !== "skipped").length;
  if (detected === 0 && options.agents.length === 0 && !options.remove) {
    ctx.writeOut("No agent detected: name one with --agent NAME (see `cargo-agents sync --help`).\n");
  }
  for (const o of outcomes) {
    if (o.error) ctx.writeErr(renderDiagnostic(o.error, { verbose: ctx.verbose }) + "\n");
  }
  return outcomes.some((o) => o.status === "error") ? 1 : 0;
}
