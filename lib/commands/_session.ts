/**
 * What `mcp-serve`, `mcp exec` and `mcp tools` share: the session logger (stderr plus
 * `<config>/logs/`), the catalog of servers in scope, and the sandbox behind `execute`.
 *
 * @module
 */
import type { CommandContext } from "./context.ts";
import { resolveConfigDir } from "../plugins/config.ts";
import type { Catalog, CatalogOptions } from "../catalog/mod.ts";
import type { ConnectFn } from "../backends/mod.ts";
import type { HttpConnectorOptions } from "../backends/http.ts";
import { createLogger, type Logger, type LogLevel, type SessionLogger } from "../log.ts";
import type { ScriptRunner } from "../meta_server/mod.ts";

/** One session: close it once, at the end. */
export interface Session {
  logger: SessionLogger;
  catalog: Catalog;
  runner: ScriptRunner & { close(): Promise<void> };
  /** Shuts backing servers and sandbox workers down, then closes the log. */
  close(): Promise<void>;
}

/**
 * Opens a session for the workspace around `ctx.cwd`: the catalog modules load and the workspace
 * resolves (starting nothing), then the sandbox and meta-server modules load and the sandbox's first
 * process is started (it loads QuickJS on its own). Each module is imported when its step comes,
 * so a caller's `onCatalog` runs as early as it can.
 *
 * @param options.stderrLevel Lowest level logged to stderr. @default "info" (`"debug"` with --verbose)
 * @param options.load The resolution loader (`doctor` hands the resolution it already made). Default
 *   `loadResolution`.
 * @param options.noLogFile Log to stderr only (`doctor`, which reads the last session's file). Default false.
 * @param options.onCatalog Called with the catalog as soon as it is resolved, before the sandbox loads
 *   (`mcp-serve` starts the servers an early `execute` names there). Default: none.
 */
export async function openSession(
  ctx: CommandContext,
  options: {
    stderrLevel?: LogLevel;
    sessionName?: string;
    load?: CatalogOptions["load"];
    /** Log to stderr only, not to a session file in `<config>/logs/`. @default false */
    noLogFile?: boolean;
    onCatalog?: (catalog: Catalog, logger: Logger) => void;
  } = {},
): Promise<Session> {
  const configDir = resolveConfigDir(ctx.env, ctx.homeDir, ctx.configDir);
  const logger = createLogger({
    writeErr: ctx.writeErr,
    stderrLevel: ctx.verbose ? "debug" : options.stderrLevel ?? "info",
    logDir: options.noLogFile === true ? undefined : `${configDir}/logs`,
    sessionName: options.sessionName,
  });
  let catalog: Catalog;
  try {
    const [{ Catalog }, { connectBySpec }] = await Promise.all([
      import("../catalog/mod.ts"),
      import("../backends/mod.ts"),
    ]);
    catalog = await Catalog.open({
      cwd: ctx.cwd,
      env: ctx.env,
      homeDir: ctx.homeDir,
      configDir: ctx.configDir,
      logger,
      ...(options.load ? { load: options.load } : {}),
      connect: lazyHttpConnector(connectBySpec, { configDir }),
    });
  } catch (error) {
    await logger.close();
    throw error;
  }
  let runner: Session["runner"];
  try {
    options.onCatalog?.(catalog, logger);
    // The sandbox after the catalog: a named server's start (hundreds of ms) waits neither for the
    // sandbox and meta-server modules nor for the sandbox process, which is started last, when this thread
    // has nothing left to load (a sandbox loading QuickJS meanwhile made module loading here 2-3x slower),
    // and is ready before the server is.
    const { createSandboxRunner } = await import("../meta_server/script_runner.ts");
    runner = createSandboxRunner(() => catalog.config, logger);
  } catch (error) {
    await catalog.close();
    await logger.close();
    throw error;
  }
  for (const problem of catalog.configNotes.problems) {
    logger.warn(`config.toml: ${problem.message}${problem.hint ? ` (hint: ${problem.hint})` : ""}`);
  }
  for (const warning of catalog.configNotes.warnings) logger.warn(`config.toml: ${warning}`);
  for (const problem of catalog.workspace.problems) logger.warn(problem.message);
  for (const refusal of catalog.refused) logger.warn(`server ${refusal.server} refused: ${refusal.reason}`);
  for (const line of catalog.sourceProblems) logger.warn(line);
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

/**
 * `withHttpConnector(base, options)`, with the HTTP backend (and the OAuth, TLS and guarded-fetch modules
 * it brings) imported when the first remote server starts, so a session of stdio servers never loads it.
 */
function lazyHttpConnector(base: ConnectFn, options: HttpConnectorOptions): ConnectFn {
  let http: Promise<ConnectFn> | undefined;
  return async (spec, ctx) => {
    if (spec.transport !== "http") return await base(spec, ctx);
    http ??= import("../backends/http.ts").then((m) => m.withHttpConnector(base, options));
    return await (await http)(spec, ctx);
  };
}
