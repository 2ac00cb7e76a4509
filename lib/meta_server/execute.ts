/**
 * The `execute` tool: runs a script in the sandbox (through a {@link ScriptRunner}) with one
 * global per server, dispatching its calls through the catalog and reporting progress.
 *
 * @module
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { type Catalog, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT } from "../catalog/mod.ts";
import type { Logger } from "../log.ts";
import { NULL_LOGGER } from "../log.ts";
import { namespaceKey } from "../plugins/mod.ts";
import { OutputShapeChecker } from "../catalog/result_unwrap.ts";
import { describeRefusal, dormantLines } from "./_problems.ts";
import { answerHelperCall, HELPER_GLOBAL } from "./_script_search.ts";
import { answerSessionCall, SESSION_GLOBAL, SessionStore } from "./session_store.ts";
import { type ConfirmationChannel, ToolConfirmer } from "./_confirm.ts";
import { dispatchToolCall } from "./tool_dispatch.ts";
import type { RunHooks } from "./suspended_runs.ts";
import { startNamedServers } from "./named_servers.ts";
import { type HostCall, type HostCallControl, type HostCallRequest, SCRIPTS_GLOBAL } from "../sandbox/mod.ts";
import { CallTrace, TOOL_ERROR_CODE, withTrace } from "./call_trace.ts";
import { logExecuteRecord, outcomeOf } from "./trace_record.ts";

export { namedServers, startNamedServers } from "./named_servers.ts";

/** Largest `execute` description, in UTF-8 bytes: past it the list of servers is cut and counted. */
export const EXECUTE_DESCRIPTION_MAX_BYTES = 2_000;

/**
 * `execute`'s description: how scripts work, how to find a tool (`list_tools` `query`, and
 * `symposium.search` inside a script), then the servers in scope, cut to stay within
 * {@link EXECUTE_DESCRIPTION_MAX_BYTES} (the servers left out are counted).
 */
export function executeDescription(catalog: Catalog): string {
  const head = "Run a JavaScript program with this workspace's MCP tools in scope. Each server is a global " +
    "object whose methods are its tools and return promises, e.g.\n" +
    '  const rows = await sqlx.query({ sql: "select 1" });\n' +
    "  return rows.filter((r) => r.ok);\n" +
    "Write an async arrow function or a statement body that returns a value. Only the returned value " +
    "(and console output) comes back, as JSON (strings as they are, lone surrogates included), so filter " +
    "inside the script. Calls under Promise.all run concurrently.\n\n" +
    "Find tools with `list_tools` and `query` (ranked search by what a tool does, with signatures), or " +
    'in a script: `await symposium.search("create issue", { limit: 5 })` returns `[{ server, tool, ' +
    "description }]`, and `globalThis[server][tool](args)` calls one.\n\n" +
    "Keep a script that worked: add `save_as` and `description` (it reads its input as `input`, declared at " +
    "its top as `type Input = { \u2026 };`, given as `args`); run it later with `run` and `args`, or with " +
    "`await scripts.name(input)` in a script. `list_tools` lists saved scripts under `scripts`." +
    " Keep data for a later execute of this session with `await $session.set(key, value)` (JSON, in " +
    "memory only) and read it back with `await $session.get(key)`; `list_tools` lists the keys kept.";
  const names = catalog.servers.map((s) =>
    namespaceKey(s.name) === s.name ? s.name : `${s.name} (as ${namespaceKey(s.name)})`
  );
  if (names.length === 0) {
    return `${head}\n\nNo MCP servers apply to this workspace. Nothing is in scope for \`execute\`.`;
  }
  const closing = "\nCall `list_tools` for their tools and signatures.";
  const encoder = new TextEncoder();
  const fits = (text: string) => encoder.encode(text).length <= EXECUTE_DESCRIPTION_MAX_BYTES;
  const whole = `${head}\n\nServers in scope: ${names.join(", ")}.${closing}`;
  if (fits(whole)) return whole;
  let shown = names.length;
  const cut = (n: number) =>
    `${head}\n\nServers in scope (${names.length}): ${names.slice(0, n).join(", ")}, and ${
      names.length - n
    } more.${closing}`;
  while (shown > 0 && !fits(cut(shown))) shown--;
  return cut(shown);
}

// The host-call shapes are the sandbox's own (one definition, `lib/sandbox/protocol/types.ts`).
export type { HostCallControl, HostCallRequest } from "../sandbox/mod.ts";

const MIB = 1024 * 1024;

/** The key prefix of resource methods: `srv.$resources.list()` arrives as key `$resources.list`. */
export const RESOURCES_KEY_PREFIX = "$resources.";

/** What `execute` needs from the sandbox (adapter over `lib/sandbox/`). */
export interface ScriptRunner {
  /**
   * Runs one script; never throws. `notices()` is read once the script ended (off-shape tags).
   * @returns The text for the agent, whether it is an error, extra content blocks (images), and the
   *   same answer as an object for `structuredContent` (on success; never an array or a scalar).
   */
  run(request: {
    script: string;
    namespaces: string[];
    hostCall: HostCall;
    notices: () => string[];
    signal?: AbortSignal | undefined;
    /** Told the JSON texts that crossed for each call (see the sandbox's `RunOptions.onCallReplied`). */
    onCallReplied?: RunCallReplied | undefined;
  }): Promise<{
    text: string;
    isError: boolean;
    extraContent?: CallToolResult["content"] | undefined;
    structured?: Record<string, unknown> | undefined;
  }>;
}

/** `RunOptions.onCallReplied` of the sandbox: a call's request and the JSON texts that crossed for it. */
export type RunCallReplied = (request: HostCallRequest, argsJson?: string, resultJson?: string) => void;

/** An image or audio content block found in a script's return value. */
export interface MediaBlock {
  type: "image" | "audio";
  data: string;
  mimeType: string;
}

/**
 * A value that claims to be an image or audio content block: `type` `"image"`/`"audio"` and a `data`
 * member. A plain object with such a `type` and a `mimeType` but no `data` is data, passed as JSON.
 */
function isMediaCandidate(value: unknown): value is Record<string, unknown> & { type: "image" | "audio" } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return (v.type === "image" || v.type === "audio") && "data" in v;
}

/** A media type of RFC 6838 restricted-name form: `image/png`, `audio/x-wav`, `image/svg+xml`. */
const MEDIA_SUBTYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;
/** RFC 4648 base64 (standard alphabet), padding optional, no whitespace. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Why a media block is not one the agent can be given, or `undefined` when it is: its `mimeType`
 * must be `image/<subtype>` (or `audio/<subtype>` for audio) and its `data` non-empty base64.
 */
export function mediaBlockProblem(block: Record<string, unknown>, where: string): string | undefined {
  const kind = block.type as "image" | "audio";
  const mime = block.mimeType;
  const [top, subtype, ...rest] = typeof mime === "string" ? mime.split("/") : [];
  if (
    typeof mime !== "string" || top?.toLowerCase() !== kind || !MEDIA_SUBTYPE.test(subtype ?? "") ||
    rest.length
  ) {
    const shown = typeof mime === "string" ? JSON.stringify(mime.slice(0, 80)) : `no string (${typeof mime})`;
    return `the ${kind} block at ${where} has mimeType ${shown}; an ${kind} block needs mimeType ${kind}/<type>, e.g. ${
      kind === "image" ? "image/png" : "audio/wav"
    }`;
  }
  const data = block.data;
  if (typeof data !== "string" || data.length === 0) {
    return `the ${kind} block at ${where} has no data; it needs the ${kind} as a base64 string in \`data\``;
  }
  const padded = data.endsWith("=");
  if (!BASE64.test(data) || data.length % 4 === 1 || (padded && data.length % 4 !== 0)) {
    return `the ${kind} block at ${where} has data that is not base64; encode the ${kind} with base64 (A-Z, a-z, 0-9, +, /)`;
  }
  return undefined;
}

/**
 * Takes image and audio blocks out of a script's return value (searched 4 levels deep) so they
 * reach the agent as real content blocks, not base64 inside the text. Each is replaced by
 * `{ type, mimeType, attachment: n }` (1-based, the n-th extra content block). A block whose
 * `mimeType` is not `image/*` (`audio/*`) or whose `data` is not base64 is not handed on: the
 * first such block is described in `problem` (the run then fails with that message).
 *
 * @returns The value with placeholders (the input when nothing was found), the blocks in order,
 *   and the first invalid block's description, e.g. `the image block at result.shot has mimeType ...`.
 */
export function extractMedia(value: unknown): { value: unknown; blocks: MediaBlock[]; problem?: string } {
  const blocks: MediaBlock[] = [];
  let problem: string | undefined;
  const walk = (v: unknown, depth: number, where: string): unknown => {
    if (isMediaCandidate(v)) {
      problem ??= mediaBlockProblem(v, where);
      if (problem !== undefined) return v;
      const block = { type: v.type, data: v.data as string, mimeType: v.mimeType as string };
      blocks.push(block);
      return { type: block.type, mimeType: block.mimeType, attachment: blocks.length };
    }
    if (depth >= 4 || typeof v !== "object" || v === null) return v;
    if (Array.isArray(v)) return v.map((x, i) => walk(x, depth + 1, `${where}[${i}]`));
    return Object.fromEntries(
      Object.entries(v).map((
        [k, x],
      ) => [
        k,
        walk(x, depth + 1, /^[A-Za-z_$][\w$]*$/.test(k) ? `${where}.${k}` : `${where}[${JSON.stringify(k)}]`),
      ]),
    );
  };
  const replaced = walk(value, 0, "result");
  if (problem !== undefined) return { value, blocks: [], problem };
  return blocks.length === 0 ? { value, blocks } : { value: replaced, blocks };
}

/** The argument object sent for a script's argument: `{}` for none/null, `{ value: x }` for non-objects. */
export function toolArguments(args: unknown): Record<string, unknown> {
  if (args === undefined || args === null) return {};
  if (typeof args === "object" && !Array.isArray(args)) return args as Record<string, unknown>;
  return { value: args };
}

/** One progress report of an `execute` run (see {@link ExecuteOptions.onProgress}). */
export interface ExecuteProgress {
  /**
   * Backing calls completed so far (a whole number when a call completes), plus a fraction below
   * 1 while a running call reports its own progress. Strictly increasing within a run.
   */
  progress: number;
  /** What happened, naming the tool: `fx.echo done (2 calls completed)`, `fx.sleep: 300/500`. */
  message: string;
}

/** Options of {@link runExecute}. */
export interface ExecuteOptions {
  signal?: AbortSignal | undefined;
  /**
   * Receives progress: one report per completed backing call (successful or not) and the backing
   * servers' own progress notifications for the calls this run makes. A forwarded report that
   * would not increase `progress` (two calls reporting at once) is dropped: MCP requires progress
   * to increase. Default: none (and then no progress is forwarded).
   */
  onProgress?: ((progress: ExecuteProgress) => void) | undefined;
  /** One checker per session, so a schema is compiled once. */
  checker?: OutputShapeChecker | undefined;
  /**
   * Asks the user before calls `[mcp] confirm-tools` covers (one per agent session, so "allow for the
   * rest of the session" lasts). Default: none, and a call needing confirmation fails saying why.
   */
  confirmer?: ToolConfirmer | undefined;
  /**
   * Notices for this run's output beyond its own (read once, when the script ended), e.g. the
   * session's `config.toml` problems on its first `execute`. Default: none.
   */
  sessionNotices?: (() => string[]) | undefined;
  logger?: Logger | undefined;
  /**
   * For a run that may wait for a modern agent across `execute` requests (`suspended_runs.ts`): the
   * run's hooks (each backing call is reported to them, so a backing server's question reaches this run)
   * and the channel its confirmations go through. Default: none (questions go to the agent as requests).
   */
  waiting?: { hooks: RunHooks; confirmations: ConfirmationChannel } | undefined;
  /**
   * The agent's W3C trace context (`traceparent`, `tracestate` from its `tools/call` `_meta`), forwarded
   * to every backing call of the run (modern servers get it in their request's `_meta`; its shape is
   * checked there). Default: none.
   */
  trace?: { traceparent?: string | undefined; tracestate?: string | undefined } | undefined;
  /**
   * Add the run's trace of its backing calls to the answer (`execute { trace: true }`, see
   * `call_trace.ts:withTrace`). The session log records it either way. @default false
   */
  returnTrace?: boolean | undefined;
  /**
   * The script as the session log records it, when not the one run: a saved script's run or save, whose
   * driver script holds the `args` values (`_saved_script_exec.ts:loggedScript`). Default: the script.
   */
  loggedScript?: string | undefined;
  /**
   * The agent session's `$session` store (one per session, shared by its `execute`s). Default: a store of
   * this run alone (`cargo-agents mcp exec`).
   */
  session?: SessionStore | undefined;
  /**
   * Answers the run's `scripts.name()` calls with the saved script's forms (`_saved_script_exec.ts`).
   * Default: none, and such a call fails saying saved scripts are not available here.
   */
  answerScripts?: ((name: string) => Promise<unknown>) | undefined;
  /**
   * The saved scripts a `symposium.search(query, { limit })` finds (`{ server: "scripts", tool, ... }`), put
   * before the tools it finds, the whole cut at its limit. Default: none (tools only).
   */
  searchScripts?: ((args: unknown, limit: number) => Promise<unknown[]>) | undefined;
}

/** Share of a running call's own progress, in [0, 0.99]: `progress/total`, else `p/(p+1)`. */
function progressFraction(p: { progress: number; total?: number | undefined }): number {
  const value = Math.max(0, Number.isFinite(p.progress) ? p.progress : 0);
  const fraction = p.total !== undefined && p.total > 0 ? value / p.total : value / (value + 1);
  return Math.min(0.99, fraction);
}

/**
 * Runs `script` exactly as the `execute` tool does (also `cargo-agents mcp exec`).
 *
 * @param options.signal Cancels the run: the script is interrupted (`{"error":"cancelled"}`) and
 *   its in-flight backing calls are cancelled (each server gets `notifications/cancelled`).
 * @returns The `CallToolResult` for the agent.
 */
export async function runExecute(
  catalog: Catalog,
  runner: ScriptRunner,
  script: string,
  options: ExecuteOptions = {},
): Promise<CallToolResult> {
  await catalog.refreshIfChanged({ trustWatch: true });
  if (catalog.servers.length === 0) {
    const lines = [...catalog.refused.map((r) => `  ${describeRefusal(r)}`), ...dormantLines(catalog)];
    return {
      content: [{
        type: "text",
        text: [
          "No MCP tools are in scope, so there is nothing to call.",
          ...lines,
          lines.length === 0
            ? "No plugin declares an MCP server: add a SYMPOSIUM.toml under the plugins folder of the " +
              "configuration (see `cargo agents status` for where it is), or a registry in config.toml."
            : "Run `cargo agents status` for every plugin and why each server applies here or not.",
        ].join("\n"),
      }],
      isError: true,
    };
  }
  // The servers the script names start now, while the sandbox gets ready, not at the first call.
  startNamedServers(catalog, script);
  const calls = new CallTrace();
  const checker = options.checker ?? new OutputShapeChecker();
  const logger = options.logger ?? NULL_LOGGER;
  const offShape = new Set<string>();
  const onProgress = options.onProgress;
  let completed = 0;
  let lastProgress = 0;
  const report = (progress: number, message: string) => {
    if (!onProgress || progress <= lastProgress) return;
    lastProgress = progress;
    onProgress({ progress, message });
  };
  const searchNotices = new Set<string>();
  const session = options.session ??
    new SessionStore({ maxStoreBytes: () => catalog.config.sessionStoreMb * MIB });
  const confirmer = options.confirmer ?? new ToolConfirmer(undefined);
  const hostCall = async (
    request: HostCallRequest,
    signal: AbortSignal,
    control?: HostCallControl,
  ): Promise<unknown> => {
    if (request.namespace === HELPER_GLOBAL) {
      const hits = await answerHelperCall(catalog, request.key, request.args, searchNotices);
      const limit = helperLimit(request.args);
      const saved = options.searchScripts ? await options.searchScripts(request.args, limit) : [];
      return saved.length === 0 ? hits : [...saved, ...hits].slice(0, limit);
    }
    if (request.namespace === SCRIPTS_GLOBAL) {
      if (!options.answerScripts) {
        throw new Error(`${SCRIPTS_GLOBAL}.${request.key}: saved scripts are not available here`);
      }
      return await options.answerScripts(request.key);
    }
    if (request.namespace === SESSION_GLOBAL) {
      return answerSessionCall(session, request, catalog.workspace.root ?? "");
    }
    let label = `${request.namespace}.${request.key}`;
    let status = "failed";
    const callEnded = options.waiting?.hooks.callStarted(request.namespace);
    const traced = calls.begin(request);
    let names: { server: string; tool: string } | undefined;
    try {
      if (request.key.startsWith(RESOURCES_KEY_PREFIX)) {
        const value = await callResources(catalog, request, signal);
        status = "done";
        return value;
      }
      const { outcome, unwrapped } = await dispatchToolCall(catalog, {
        namespace: request.namespace,
        key: request.key,
        args: toolArguments(request.args),
      }, {
        signal,
        confirmer,
        channel: options.waiting?.confirmations,
        holdDeadline: control ? () => control.holdDeadline() : undefined,
        trace: options.trace,
        checker,
        logger,
        offShape,
        onProgress: onProgress
          ? (p) => {
            const detail = p.message ?? `${p.progress}${p.total === undefined ? "" : `/${p.total}`}`;
            report(completed + progressFraction(p), `${label}: ${detail}`);
          }
          : undefined,
      });
      if (onProgress) label = `${namespaceKey(outcome.server)}.${outcome.tool}`;
      names = outcome;
      // Named as the uncaught form names it, so a script that catches it knows which call failed.
      if (!unwrapped.ok) {
        const message = `${namespaceKey(outcome.server)}.${outcome.tool}: ${unwrapped.message}`;
        throw Object.assign(new Error(message), { code: TOOL_ERROR_CODE });
      }
      status = "done";
      return unwrapped.value;
    } catch (error) {
      calls.fail(traced, error, signal);
      throw error;
    } finally {
      calls.end(traced, names);
      callEnded?.();
      completed++;
      if (onProgress && !signal.aborted) {
        report(completed, `${label} ${status} (${completed} call${completed === 1 ? "" : "s"} completed)`);
      }
    }
  };
  const refusals = catalog.refused.map((r) => `\`${r.server}\`: ${r.reason}`);
  const outcome = await runner.run({
    script,
    // Dormant and refused servers are globals too: a call says why it cannot work here.
    namespaces: [
      ...catalog.servers.map((s) => namespaceKey(s.name)),
      ...catalog.unavailableNamespaces(),
      SCRIPTS_GLOBAL,
    ],
    hostCall,
    notices: () => [...(options.sessionNotices?.() ?? []), ...refusals, ...offShape, ...searchNotices],
    signal: options.signal,
    onCallReplied: calls.replied,
  });
  const answer: CallToolResult = {
    content: [{ type: "text", text: outcome.text }, ...(outcome.extraContent ?? [])],
    ...(outcome.structured && !outcome.isError ? { structuredContent: outcome.structured } : {}),
    ...(outcome.isError ? { isError: true } : {}),
  };
  return recordExecute(answer, calls, script, options);
}

/**
 * Ends the trace of a run, records the `execute` in the session log (names and sizes, never values) and
 * adds the trace to the answer when the agent asked for it.
 */
function recordExecute(
  answer: CallToolResult,
  calls: CallTrace,
  script: string,
  options: ExecuteOptions,
): CallToolResult {
  const trace = calls.finish(answer);
  const returnTrace = options.returnTrace === true;
  const execute = {
    id: crypto.randomUUID().slice(0, 8),
    script: options.loggedScript ?? script,
    outcome: outcomeOf(answer),
    traced: returnTrace,
    startedAtEpochMs: calls.startedAtEpochMs,
  };
  logExecuteRecord(options.logger ?? NULL_LOGGER, execute, trace);
  return returnTrace ? withTrace(answer, trace) : answer;
}

/** The `limit` of a `symposium.search` call as the catalog's search takes it (1...max, default 10). */
function helperLimit(args: unknown): number {
  const limit = (typeof args === "object" && args !== null ? args as Record<string, unknown> : {}).limit;
  return typeof limit === "number" && limit >= 1
    ? Math.min(SEARCH_MAX_LIMIT, Math.floor(limit))
    : SEARCH_DEFAULT_LIMIT;
}

/** `srv.$resources.list()` and `srv.$resources.read({ uri })`. */
async function callResources(
  catalog: Catalog,
  request: HostCallRequest,
  signal: AbortSignal,
): Promise<unknown> {
  const method = request.key.slice(RESOURCES_KEY_PREFIX.length);
  if (method === "list") return await catalog.listResources(request.namespace, { signal });
  if (method === "read") {
    const args = toolArguments(request.args);
    return await catalog.readResource(request.namespace, args.uri, { signal });
  }
  throw new TypeError(
    `\`${request.namespace}.$resources\` has list() and read({ uri }); there is no ${method}()`,
  );
}
