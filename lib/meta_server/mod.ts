/**
 * The MCP server the agent talks to: `symposium` with `list_tools` and `execute`; stdout is JSON-RPC only.
 * It knows the MCP wire shapes and the catalog; it never spawns processes nor touches the sandbox engine
 * directly (scripts run through a `ScriptRunner`, backing servers are reached through the catalog).
 *
 * Other faces, each loaded on its own in the order a cold start needs them (`serve.ts:runServe`):
 * - `shell.ts`: the MCP server that answers `initialize` before anything else is loaded;
 * - `named_servers.ts`, `agent_relay.ts`: the servers an early `execute` names, started as soon as the
 *   catalog is resolved, and the relay of what they ask of the agent;
 * - `script_runner.ts`: the runner of scripts (and with it the sandbox), loaded after the catalog;
 * - `trace_record.ts`: the record of each `execute` in the session log, read back by `cargo agents
 *   report` without loading the server.
 * - `saved_scripts.ts`: the saved scripts' files, which `cargo agents scripts` reads without the meta-server.
 * - `list_tools.ts`: the `list_tools` tool (and with it the declarations and the search answers), loaded by
 *   the session at its first `list_tools` call and by `cargo agents mcp tools`: a session of `execute`s
 *   alone never loads it.
 *
 * @module
 */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { CallToolResult, Server } from "@modelcontextprotocol/server";
import type { Catalog } from "../catalog/mod.ts";
import type { Logger } from "../log.ts";
import { NULL_LOGGER } from "../log.ts";
import { OutputShapeChecker } from "../catalog/result_unwrap.ts";
import { executeDescription, type ExecuteOptions, runExecute, type ScriptRunner } from "./execute.ts";
import type { SavedScriptsHost } from "./_saved_script_exec.ts";
import { type ExecutePlan, scriptPlan } from "./_execute_plan.ts";
import { AgentRelay } from "./agent_relay.ts";
import { ToolConfirmer } from "./_confirm.ts";
import { ProgressThrottle } from "./_progress.ts";
import { Coalescer, LIST_CHANGED_INTERVAL_MS } from "./_coalesce.ts";
import { configProblemLines } from "./_problems.ts";
import {
  type CallEra,
  type ConnectedShell,
  createServerShell,
  type ToolHandlers,
  TOOLS_LIST_TTL_MS,
} from "./shell.ts";
import { answerWaitingExecute } from "./waiting_execute.ts";
import { type DirectTool, DirectToolSet } from "./direct_tools.ts";
import { answerDirectRequest } from "./direct_call.ts";
import { SessionStore } from "./session_store.ts";

export { LIST_CHANGED_INTERVAL_MS } from "./_coalesce.ts";
export type { SavedScriptsHost } from "./_saved_script_exec.ts";
export {
  EXECUTE_DESCRIPTION_MAX_BYTES,
  executeDescription,
  type ExecuteOptions,
  type ExecuteProgress,
  extractMedia,
  type HostCallRequest,
  type MediaBlock,
  runExecute,
  type ScriptRunner,
  toolArguments,
} from "./execute.ts";

export {
  CallTrace,
  type ExecuteTrace,
  TRACE_MAX_CALLS,
  type TracedCall,
  type TraceTotals,
  withTrace,
} from "./call_trace.ts";
export {
  type ExecuteRecord,
  logExecuteRecord,
  LOGGED_SCRIPT_MAX_CHARS,
  parseSessionLog,
  type SessionRecords,
} from "./trace_record.ts";

export {
  type CallEra,
  type ConnectedShell,
  connectServerShell,
  createServerShell,
  DISCOVER_TTL_MS,
  EARLY_SCRIPTS_KEPT,
  type Era,
  FIRST_ANSWER_WAIT_MS,
  type InputRequiredToolResult,
  INSTRUCTIONS,
  META_SERVER_VERSION,
  MODERN_PROTOCOL_VERSIONS,
  SERVED_PROTOCOL_VERSIONS,
  type ServerShell,
  type ToolCallRequest,
  type ToolHandlers,
  TOOLS_LIST_TTL_MS,
} from "./shell.ts";

/** `list_tools`' description (upstream wording). */
export const LIST_TOOLS_DESCRIPTION =
  "Describe the MCP tools available in this workspace. Returns names and descriptions by default; " +
  "pass `query` to search every tool by what it does (best first, with signatures), or a filter or a " +
  "higher detail level for full TypeScript signatures.";

const LIST_TOOLS_SCHEMA = {
  type: "object" as const,
  properties: {
    servers: { type: "array", items: { type: "string" }, description: "Restrict to these servers." },
    tools: { type: "array", items: { type: "string" }, description: "Restrict to these tool names." },
    pattern: { type: "string", description: "Glob matched against tool names." },
    query: {
      type: "string",
      description:
        'What you want to do, e.g. "list open github issues": the best-matching tools, best first.',
    },
    limit: { type: "number", description: "Most results for `query` (default 10, max 50)." },
    detail: {
      type: "string",
      enum: ["names", "signatures", "full"],
      description: "How much to return. Defaults to names.",
    },
  },
};

const EXECUTE_SCHEMA = {
  type: "object" as const,
  properties: {
    script: { type: "string", description: "The JavaScript program to run." },
    trace: {
      type: "boolean",
      description: "Also return `trace`: each tool call (server, tool, startMs, ms, argsBytes, " +
        "resultBytes, ok or error code) and totals. Default false.",
    },
    save_as: {
      type: "string",
      description: "Save the script under this name once it ran without error (needs `script`); it reads " +
        "its input as `input`, declared at its top as `type Input = { \u2026 };`.",
    },
    description: { type: "string", description: "What the saved script does (with `save_as`)." },
    run: { type: "string", description: "Run this saved script instead of `script`." },
    args: { type: "object", description: "The saved script's input (with `run` or `save_as`)." },
  },
};

/**
 * Shortest time between the last progress report of an `execute` and its result, in milliseconds (see
 * `ProgressThrottle`: a report read together with the response would be lost by the SDK client).
 */
export const PROGRESS_FLUSH_MS = 15;

/**
 * Shortest time between two progress reports of one `execute`, and before its first, in milliseconds.
 * A script that ends sooner sends none, so a quick `execute` costs the same with or without a
 * `progressToken`.
 */
export const PROGRESS_INTERVAL_MS = 100;

/**
 * Agents that hand the model the whole `tools/call` result serialized as JSON (`content` and
 * `structuredContent` both), seen by `deno task test:agents`: Cline CLI 3.x (`@cline/core`). `execute`
 * answers them without `structuredContent` (its text block carries the same object), so the model sees
 * the value once; every other agent gets both, as the MCP specification recommends.
 */
export const WHOLE_RESULT_CLIENTS: RegExp = /^@cline\/core$/;

/**
 * The saved scripts of one session (`_saved_script_exec.ts`, with the saved scripts' files, their index and
 * their compiler), loaded at the first use: a run by name or a save, a script's `scripts.name()` or
 * `symposium.search` call, or `list_tools`. A session of plain scripts never loads them.
 *
 * @throws Only when the module cannot be loaded (a broken installation).
 */
export async function savedScriptsHost(catalog: Catalog): Promise<SavedScriptsHost> {
  const { SavedScriptsHost } = await import("./_saved_script_exec.ts");
  return new SavedScriptsHost(catalog);
}

/** The session's saved scripts: {@link savedScriptsHost} at the first call, the same host after. */
function lazySavedScripts(catalog: Catalog): () => Promise<SavedScriptsHost> {
  let host: Promise<SavedScriptsHost> | undefined;
  return () => host ??= savedScriptsHost(catalog);
}

/** The two tools as `tools/list` answers them. */
function listedTools(catalog: Catalog) {
  return [
    {
      name: "list_tools",
      description: LIST_TOOLS_DESCRIPTION,
      inputSchema: LIST_TOOLS_SCHEMA,
      annotations: { readOnlyHint: true },
    },
    {
      name: "execute",
      description: executeDescription(catalog),
      inputSchema: EXECUTE_SCHEMA,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    },
  ];
}

/**
 * Re-resolves if files changed; a failure is logged and the last resolution stays in use. With
 * `trustWatch` (requests) the files are looked at only after a watch event; without (the periodic look),
 * always.
 */
async function refreshQuietly(catalog: Catalog, logger: Logger, trustWatch = false): Promise<void> {
  try {
    await catalog.refreshIfChanged({ trustWatch });
  } catch (error) {
    logger.warn(`re-resolution failed: ${String(error)}`);
  }
}

/** Options of {@link createMetaServer}. */
export interface MetaServerOptions {
  catalog: Catalog;
  runner: ScriptRunner;
  /** @default NULL_LOGGER */
  logger?: Logger | undefined;
  /** Progress throttle interval, ms (tests use 0 to see every report). @default PROGRESS_INTERVAL_MS */
  progressIntervalMs?: number | undefined;
  /** Shortest time between two `tools/list_changed` to the agent, ms. @default LIST_CHANGED_INTERVAL_MS */
  listChangedIntervalMs?: number | undefined;
  /**
   * The relay to the agent over this server, when servers may start before the handlers exist (the
   * caller then made it the catalog's peer already). @default a new `AgentRelay`, made the catalog's peer
   */
  relay?: AgentRelay | undefined;
}

/**
 * Builds the `symposium` MCP server (not connected). Tells the agent `tools/list_changed` when
 * the catalog changes (workspace re-resolved, a backing server's tools changed), at most once per
 * {@link LIST_CHANGED_INTERVAL_MS}. Its `close()` also stops telling.
 */
export function createMetaServer(options: MetaServerOptions): Server {
  const shell = createServerShell();
  shell.supply(metaServerHandlers(shell.server, options));
  return shell.server;
}

/**
 * The tool and logging handlers of `server` over the catalog and the script runner. Also relays the
 * backing servers' requests to the agent, logs which agent connected and tells it `tools/list_changed`
 * (coalesced) when the catalog changes; `server.close()` stops that.
 */
export function metaServerHandlers(server: Server, options: MetaServerOptions): ToolHandlers {
  const { catalog } = options;
  const logger = options.logger ?? NULL_LOGGER;
  const checker = new OutputShapeChecker();
  // Each `config.toml` problem is told once in an `execute` result (the first one of the session
  // for a problem present at start): the agent may never call `list_tools`.
  const toldConfig = new Set<string>();
  const sessionNotices = () => {
    const fresh = configProblemLines(catalog).filter((line) => !toldConfig.has(line));
    for (const line of fresh) toldConfig.add(line);
    return fresh;
  };
  // Backing servers started from now on are offered what the agent declared (read at each start).
  const relay = options.relay ?? new AgentRelay(server, { logger });
  catalog.setPeer((spec) => relay.peerFor(spec.name));
  const confirmer = new ToolConfirmer(relay);
  const logAgent = () => {
    const client = server.getClientVersion();
    logger.info(`agent: ${client?.name ?? "unnamed client"} ${client?.version ?? ""}`.trimEnd());
  };
  // A shell is usually initialized before its handlers are supplied.
  if (server.getClientVersion()) logAgent();
  else server.oninitialized = logAgent;
  const setLevel = (level: Parameters<ToolHandlers["setLevel"]>[0]) => relay.setLevel(level);
  const store = new SessionStore({ maxStoreBytes: () => catalog.config.sessionStoreMb * 1024 * 1024 });
  const shared = { server, options, logger, checker, confirmer, sessionNotices, relay, store };
  const session: ExecuteSession = { ...shared, saved: lazySavedScripts(catalog) };
  const direct = new DirectToolSet(catalog); // `[mcp] direct-tools`, listed from the tool cache
  const listTools = async () => {
    await refreshQuietly(catalog, logger, true); // `execute`'s description names the servers in scope now
    return { tools: [...listedTools(catalog), ...await direct.shownTools()] };
  };
  let modernAgentLogged = false;
  const callTool: ToolHandlers["callTool"] = async (request, ctx, call) => {
    if (call?.era === "modern" && !modernAgentLogged) {
      modernAgentLogged = true;
      const client = call.clientInfo;
      logger.info(
        `agent (${call.protocolVersion}): ${client?.name ?? "unnamed client"} ${client?.version ?? ""}`
          .trimEnd(),
      );
    }
    const name = request.params.name;
    const signal = ctx.mcpReq.signal;
    // The session log says which era each call came in (the agent suite reads it: tests/agents).
    logger.debug(`tools/call ${name}: ${call?.era ?? "legacy"} era, MCP ${call?.protocolVersion ?? "?"}`);
    // A modern agent's capabilities, for the servers this call may start (`list_tools` starts some).
    if (call?.era === "modern") relay.noteModernAgent(call.capabilities ?? {});
    if (name === "list_tools") {
      return await answerListTools(session, request.params.arguments, signal, () => direct.problems());
    }
    if (name === "execute") {
      return await answerExecute(session, request, ctx, call);
    }
    const tool = await direct.find(name);
    if (tool !== undefined) return await answerDirect(session, tool, request, ctx, call);
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `no such tool: ${name}. Available: ${["list_tools", "execute", ...direct.names()].join(", ")}`,
    );
  };
  // A burst of changes (a server flooding `tools/list_changed`) reaches the agent as at most one
  // notification per LIST_CHANGED_INTERVAL_MS: the first at once, the rest as one at the end.
  const changes = new Coalescer(() => {
    logger.info("tools changed; telling the agent");
    server.sendToolListChanged().catch(() => {}); // Not connected yet or gone: nothing to tell.
  }, options.listChangedIntervalMs ?? LIST_CHANGED_INTERVAL_MS);
  const unsubscribe = catalog.onChange(() => changes.trigger());
  const unlisten = direct.watch(() => changes.trigger(), logger);
  const close = server.close.bind(server);
  server.close = async () => {
    changes.close();
    relay.close();
    unsubscribe();
    unlisten();
    await close();
  };
  return { listTools, callTool, setLevel };
}

/**
 * Answers one `tools/call` of `list_tools` (with what the session keeps in `$session`, and `problems()`: the
 * `[mcp] direct-tools` ones).
 */
async function answerListTools(
  session: ExecuteSession,
  args: unknown,
  signal: AbortSignal,
  problems: () => Promise<readonly string[]>,
): Promise<CallToolResult> {
  const { catalog } = session.options;
  const [{ parseListToolsArgs, renderListTools }, savedScripts] = await Promise.all([
    import("./list_tools.ts"),
    session.saved(),
  ]);
  const text = await renderListTools(catalog, parseListToolsArgs(args), signal, {
    session: session.store,
    savedScripts,
    problems,
  });
  return { content: [{ type: "text", text }] };
}

/** What every `execute` of one agent session shares. */
interface ExecuteSession {
  server: Server;
  options: MetaServerOptions;
  logger: Logger;
  checker: OutputShapeChecker;
  confirmer: ToolConfirmer;
  /** The `config.toml` problems not told yet in an `execute` result. */
  sessionNotices: () => string[];
  relay: AgentRelay;
  /** The agent's `$session` values: this session's memory only, gone with it (see `session_store.ts`). */
  store: SessionStore;
  /** The saved scripts (`execute { run }`, `save_as`, `scripts.name()`), loaded at the first call. */
  saved: () => Promise<SavedScriptsHost>;
}

/**
 * The options of one `execute` of the session: what every run shares, and the agent's W3C trace context
 * (`traceparent`/`tracestate` in the request's `_meta`, MCP's OpenTelemetry convention) for its calls.
 */
function executeOptions(session: ExecuteSession, meta?: Record<string, unknown>): ExecuteOptions {
  const { checker, logger, confirmer, sessionNotices, store } = session;
  const text = (v: unknown) => typeof v === "string" ? v : undefined;
  const trace = { traceparent: text(meta?.traceparent), tracestate: text(meta?.tracestate) };
  return {
    checker,
    logger,
    confirmer,
    sessionNotices,
    session: store,
    trace: trace.traceparent === undefined ? undefined : trace,
  };
}

/**
 * The plan of one `execute` (`_saved_script_exec.ts:planExecute`). Arguments that are a `script` string alone
 * (with `trace` or not) get `scriptPlan` without loading the saved scripts; any other arguments (`run`,
 * `save_as`, `args`, `description`, a wrong one) load them, and are read there.
 */
async function planOf(session: ExecuteSession, raw: unknown): Promise<ExecutePlan | { error: string }> {
  const a = typeof raw === "object" && raw !== null && !Array.isArray(raw)
    ? raw as Record<string, unknown>
    : {};
  const plain = typeof a.script === "string" && a.run === undefined && a.save_as === undefined &&
    a.description === undefined && a.args === undefined;
  if (plain) return scriptPlan(a.script as string, session.saved);
  const [{ planExecute, readExecuteRequest }, host] = await Promise.all([
    import("./_saved_script_exec.ts"),
    session.saved(),
  ]);
  const read = readExecuteRequest(raw);
  return "error" in read ? read : planExecute(host, read);
}

/**
 * Answers one `tools/call` of `execute`: runs the script with progress reports when the agent asked for
 * them, logs the outcome and its time, and leaves `structuredContent` out for {@link WHOLE_RESULT_CLIENTS}.
 *
 * @throws {ProtocolError} `InvalidParams` when the arguments carry no `script` string.
 */
async function answerExecute(
  session: ExecuteSession,
  request: Parameters<ToolHandlers["callTool"]>[0],
  ctx: Parameters<ToolHandlers["callTool"]>[1],
  call: CallEra | undefined,
): Promise<Awaited<ReturnType<typeof runExecute>>> {
  const { server, options, logger } = session;
  const signal = ctx.mcpReq.signal;
  const raw = request.params.arguments as Record<string, unknown> | undefined;
  if (raw?.trace !== undefined && typeof raw.trace !== "boolean") {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, "`execute`'s `trace` must be true or false");
  }
  const returnTrace = raw?.trace === true;
  const plan = await planOf(session, request.params.arguments);
  if ("error" in plan) throw new ProtocolError(ProtocolErrorCode.InvalidParams, plan.error);
  if (plan.refusal) return plan.refusal;
  const script = plan.script;
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const started = Date.now();
  // Reports are throttled, and the result waits until the last one sent can have been read on its own,
  // so the agent never receives a report after the response (its progress handler is gone by then).
  const progress = progressToken === undefined ? undefined : new ProgressThrottle(
    ({ progress, message }) =>
      ctx.mcpReq.notify({
        method: "notifications/progress",
        params: { progressToken, progress, message },
      }),
    { intervalMs: options.progressIntervalMs ?? PROGRESS_INTERVAL_MS, flushGapMs: PROGRESS_FLUSH_MS },
  );
  if (call?.era === "modern") {
    const params = request.params as Record<string, unknown>; // the SDK lifts the retry fields into ctx
    const answer = await answerWaitingExecute(session.relay, {
      requestState: ctx.mcpReq.requestState() ?? params.requestState,
      inputResponses: ctx.mcpReq.inputResponses ?? params.inputResponses,
      script,
      capabilities: call.capabilities ?? {},
      signal,
      timeoutMs: options.catalog.config.scriptTimeoutSecs * 1000,
      onProgress: progress ? (report) => progress.report(report) : undefined,
      run: (extra) =>
        runExecute(options.catalog, options.runner, script, {
          ...executeOptions(session, request.params._meta),
          returnTrace,
          loggedScript: plan.logged,
          answerScripts: plan.answerScripts,
          searchScripts: plan.searchScripts,
          ...extra,
        }),
    });
    await progress?.finish();
    // `input_required` is a result of tools/call in MCP 2026-07-28; only a final answer is saved.
    if (Array.isArray((answer as CallToolResult).content)) return await plan.finish(answer as CallToolResult);
    return answer as CallToolResult;
  }
  const result = await plan.finish(
    await runExecute(options.catalog, options.runner, script, {
      ...executeOptions(session, request.params._meta),
      returnTrace,
      loggedScript: plan.logged,
      answerScripts: plan.answerScripts,
      searchScripts: plan.searchScripts,
      signal,
      onProgress: progress ? (report) => progress.report(report) : undefined,
    }),
  );
  await progress?.finish();
  const outcome = signal.aborted ? "cancelled by the agent" : result.isError ? "error" : "ok";
  // A run that went well is the log file's business (debug); stderr hears of the others.
  const line = `execute: ${outcome} in ${Date.now() - started} ms`;
  if (outcome === "ok") logger.debug(line);
  else logger.info(line);
  const client = call?.clientInfo ?? server.getClientVersion();
  if (WHOLE_RESULT_CLIENTS.test(client?.name ?? "")) delete result.structuredContent;
  return result;
}

/**
 * Answers one `tools/call` of a direct tool (`direct_call.ts`) in the agent's era, with the session's
 * confirmer, checker and relay and the agent's trace context.
 */
async function answerDirect(
  session: ExecuteSession,
  tool: DirectTool,
  request: Parameters<ToolHandlers["callTool"]>[0],
  ctx: Parameters<ToolHandlers["callTool"]>[1],
  call: CallEra | undefined,
): Promise<CallToolResult> {
  const { params } = request;
  const { confirmer, checker, logger } = session;
  const modern = call?.era === "modern"
    ? {
      requestState: ctx.mcpReq.requestState() ?? params.requestState,
      inputResponses: ctx.mcpReq.inputResponses ?? params.inputResponses,
      capabilities: call.capabilities ?? {},
    }
    : undefined;
  const trace = executeOptions(session, params._meta).trace;
  const answer = await answerDirectRequest(session.relay, session.options.catalog, tool, {
    args: params.arguments ?? {},
    signal: ctx.mcpReq.signal,
    modern,
  }, { confirmer, checker, logger, trace });
  return answer as CallToolResult; // `input_required` is a result of tools/call in MCP 2026-07-28
}

/**
 * Pause after the session starts before the search index is built in the background, in ms: the
 * handshake and the agent's `tools/list` go first; the index is then ready for the first query.
 */
export const SEARCH_PREPARE_DELAY_MS = 250;

/**
 * Serves the meta-server on a shell that is already connected (`connectServerShell()`, which answers
 * `initialize` while the catalog loads) until the agent disconnects (stdin closes) or the shell's signal
 * aborts, then shuts every backing server down.
 *
 * @param options.watchIntervalMs How often the workspace, plugin and config files are checked for
 *   changes (then re-resolved, and the agent told), in ms. @default TOOLS_LIST_TTL_MS (2000)
 */
export async function serveMetaServer(
  options: MetaServerOptions & { shell: ConnectedShell; watchIntervalMs?: number },
): Promise<void> {
  const logger = options.logger ?? NULL_LOGGER;
  const { shell } = options;
  shell.supply(metaServerHandlers(shell.server, options));
  logger.info(
    `serving; servers in scope: ${options.catalog.servers.map((s) => s.name).join(", ") || "none"}`,
  );
  const watch = setInterval(
    () => void refreshQuietly(options.catalog, logger),
    options.watchIntervalMs ?? TOOLS_LIST_TTL_MS,
  );
  // The search index is built while the agent reads the tool list, so its first query does not wait.
  const preparing = new AbortController();
  let prepared: Promise<void> = Promise.resolve();
  const prepareTimer = setTimeout(() => {
    prepared = options.catalog.toolSearch.prepare(preparing.signal);
  }, SEARCH_PREPARE_DELAY_MS);
  try {
    await shell.closed;
  } finally {
    clearInterval(watch);
    clearTimeout(prepareTimer);
    preparing.abort();
    await prepared;
    logger.info("client gone; shutting down backing servers");
    await options.catalog.close();
    await shell.server.close().catch(() => {}); // Already closed when stdin ended.
  }
}
