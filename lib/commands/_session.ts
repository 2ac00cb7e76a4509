/**
 * What `mcp-serve`, `mcp exec` and `mcp tools` share: the session logger (stderr plus
 * `<config>/logs/`), the catalog of servers in scope, and the sandbox behind `execute`.
 *
 * @module
 */
import type { CommandContext } from "./context.ts";
import { resolveConfigDir } from "../plugins/config.ts";
import { Catalog } from "../catalog/mod.ts";
import { connectBySpec } from "../backends/pool.ts";
import { withHttpConnector } from "../backends/http.ts";
import { createLogger, type LogLevel, type SessionLogger } from "../log.ts";
import type { ScriptRunner } from "../meta_server/mod.ts";
import { createSandboxRunner } from "./_sandbox_runner.ts";

/** One session: close it once, at the end. */
export interface Session {
  logger: SessionLogger;
  catalog: Catalog;
  runner: ScriptRunner & { close(): Promise<void> };
  /** Shuts backing servers and sandbox workers down, then closes the log. */
  close(): Promise<void>;
}

/**
 * Opens a session for the workspace around `ctx.cwd`.
 *
 * @param options.stderrLevel Lowest level logged to stderr. @default "info" (`"debug"` with --verbose)
 */
export async function openSession(
  ctx: CommandContext,
  options: { stderrLevel?: LogLevel; sessionName?: string } = {},
): Promise<Session> {
  const configDir = resolveConfigDir(ctx.env, ctx.homeDir, ctx.configDir);
  const logger = createLogger({
    writeErr: ctx.writeErr,
    stderrLevel: ctx.verbose ? "debug" : options.stderrLevel ?? "info",
    logDir: `${configDir}/logs`,
    sessionName: options.sessionName,
  });
  let catalog: Catalog;
  try {
    catalog = await Catalog.open({
      cwd: ctx.cwd,
      env: ctx.env,
      homeDir: ctx.homeDir,
      configDir: ctx.configDir,
      logger,
      connect: withHttpConnector(connectBySpec, { configDir }),
    });
  } catch (error) {
    await logger.close();
    throw error;
  }
  for (const problem of catalog.configNotes.problems) {
    logger.warn(`config.toml: ${problem.message}${problem.hint ? ` (hint: ${problem.hint})` : ""}`);
  }
  for (const warning of catalog.configNotes.warnings) logger.warn(`config.toml: ${warning}`);
  for (const problem of catalog.workspace.problems) logger.warn(problem.message);
  for (const refusal of catalog.refused) logger.warn(`server ${refusal.server} refused: ${refusal.reason}`);
  const runner = createSandboxRunner(() => catalog.config, logger);
  let closed = false;
  return {
    logger,
    catalog,
    runner,
    async close() {
      if (closed) return;
      closed = true;
      try {
        await catalog.close();
        await runner.close();
      } finally {
        await logger.close();
      }
    },
  };
}
