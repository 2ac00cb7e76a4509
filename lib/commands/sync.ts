/**
 * `cargo-agents sync`: registers (or with `--remove`, unregisters) the meta-server as the
 * `symposium` MCP entry in every detected coding agent, and prints what happened per agent;
 * `--list` shows every agent id, whether it is detected and why, and its files.
 *
 * @module
 */
import type { CommandContext } from "./context.ts";
import { renderDiagnostic, UsageError, UserError } from "../diagnostics.ts";
import { defaultConfigDir, resolveConfigDir } from "../plugins/config.ts";
import {
  listAgents,
  type PathContext,
  PORTABLE_CARGO_SERVER,
  PORTABLE_SERVER,
  renderAgentList,
  renderSyncReport,
  type ServerCommand,
  syncAgents,
  toPlatform,
} from "../sync/mod.ts";

/** The argument the entry appends to the program's own command line. */
export const SERVE_SUBCOMMAND = "mcp-serve";

/** The `mcp-serve` option that carries a non-default config dir in the entry. */
export const CONFIG_DIR_OPTION = "--config-dir";

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
  /** `--force`: replace read-only config files too. @default false */
  force?: boolean;
  /** `--list`: list the agents, detection and files; write nothing. @default false */
  list?: boolean;
  /** `--via-cargo`: project-level entries run `cargo agents mcp-serve`. @default false */
  viaCargo?: boolean;
}

/**
 * The program a user-level entry starts: `ctx.selfCommand` (the absolute path of the compiled
 * binary, or `deno run -q ... main.ts` from source) with `mcp-serve`, plus `--config-dir DIR` when
 * the config dir is not the default `~/.symposium` (agents such as Codex pass MCP servers only a
 * short list of environment variables, so `SYMPOSIUM_HOME`/`XDG_CONFIG_HOME` would be lost).
 */
export function userServerCommand(ctx: CommandContext): ServerCommand {
  const configDir = resolveConfigDir(ctx.env, ctx.homeDir, ctx.configDir);
  const carry = configDir === defaultConfigDir(ctx.homeDir) ? [] : [CONFIG_DIR_OPTION, configDir];
  return { command: ctx.selfCommand.command, args: [...ctx.selfCommand.args, SERVE_SUBCOMMAND, ...carry] };
}

/**
 * Runs `sync`. Prints each dry-run diff and then the result table on stdout, and the full
 * diagnostic of each failed file on stderr.
 *
 * @returns 1 when any agent's file could not be handled, else 0.
 * @throws {UsageError} for an unknown `--agent` name, or `--list` with `--agent`/`--remove`/`--dry-run`.
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
  if (!options.dryRun && options.list !== true) {
    // Git registries' copies a day old update in the background, as in `status` (never the first clone).
    const { findDueRegistries, startBackgroundSync } = await import("./_status_sources.ts");
    const configDir = resolveConfigDir(ctx.env, ctx.homeDir, ctx.configDir);
    const due = await findDueRegistries(configDir, ctx.env, Date.now());
    if (due.length > 0) startBackgroundSync(due, ctx);
  }
  const paths: PathContext = {
    platform: toPlatform(Deno.build.os),
    homeDir: ctx.homeDir,
    env: ctx.env,
    cwd: ctx.cwd,
  };
  if (options.list === true) {
    if (options.agents.length > 0 || options.remove || options.dryRun || options.force === true) {
      throw new UsageError(
        "Cannot use --list with --agent, --remove, --dry-run or --force: it writes nothing",
        {
          hint: "run `cargo-agents sync --list` alone (or with --project)",
        },
      );
    }
    const rows = await listAgents({ paths }, { project: options.project });
    ctx.writeOut(renderAgentList(rows, { homeDir: ctx.homeDir }));
    return 0;
  }
  if (options.viaCargo === true && !options.project) {
    throw new UsageError(
      "Cannot use --via-cargo without --project: user-level entries start this program by its path",
      {
        hint: "run `cargo-agents sync --project --via-cargo`",
      },
    );
  }
  const outcomes = await syncAgents({ ...options, force: options.force === true }, {
    paths,
    server: userServerCommand(ctx),
    projectServer: options.viaCargo === true ? PORTABLE_CARGO_SERVER : PORTABLE_SERVER,
    signal: ctx.signal,
  });
  for (const o of outcomes) if (o.diff) ctx.writeOut(o.diff + (o.diff.endsWith("\n") ? "" : "\n"));
  ctx.writeOut(renderSyncReport(outcomes, { homeDir: ctx.homeDir, dryRun: options.dryRun }));
  const detected = outcomes.filter((o) => o.status !== "skipped").length;
  if (detected === 0 && options.agents.length === 0 && !options.remove) {
    ctx.writeOut(
      "No agent detected: name one with --agent NAME (`cargo-agents sync --list` shows them all).\n",
    );
  }
  for (const o of outcomes) {
    if (o.error) ctx.writeErr(renderDiagnostic(o.error, { verbose: ctx.verbose }) + "\n");
  }
  return outcomes.some((o) => o.status === "error") ? 1 : 0;
}
