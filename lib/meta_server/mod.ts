/**
 * The MCP server the agent talks to: `symposium`, with two tools. `list_tools` describes what the
 * servers in scope offer (index, declarations, problems); `execute` runs a script in the sandbox
 * with one global per server and dispatches its calls through the catalog. Stdout carries
 * JSON-RPC only.
 *
 * @module
 */
import { ProtocolError, ProtocolErrorCode, Server } from "@modelcontextprotocol/server";
import type { CallToolResult, Transport } from "@modelcontextprotocol/server";
import type { Catalog, ServerTools } from "../catalog/mod.ts";
import { renderDeclarations, renderIndex } from "../declarations/mod.ts";
import { buildBindingTable, resolveToolKey } from "../declarations/tool_binding.ts";
import type { Logger } from "../log.ts";
import { NULL_LOGGER } from "../log.ts";
import { namespaceKey, type Refusal } from "../plugins/server_spec.ts";
import { offShapeNotice, OutputShapeChecker, unwrapToolResult } from "../catalog/result_unwrap.ts";

/** Version announced in `serverInfo`. */
export const META_SERVER_VERSION = "0.1.0";

/** What the agent reads at `initialize`. */
export const INSTRUCTIONS =
  "Symposium exposes the MCP tools of this Rust workspace through two tools. Start with `execute`: " +
  "its description names the servers in scope, and one script can call several tools and return only " +
  "what matters. Call `list_tools` for the tools of a server and their TypeScript signatures.";

/** `list_tools`' description (upstream wording). */
export const LIST_TOOLS_DESCRIPTION =
  "Describe the MCP tools available in this workspace. Returns names and descriptions by default; " +
  "pass a filter or a higher detail level for full TypeScript signatures.";

const LIST_TOOLS_SCHEMA = {
  type: "object" as const,
  properties: {
    servers: { type: "array", items: { type: "string" }, description: "Restrict to these servers." },
    tools: { type: "array", items: { type: "string" }, description: "Restrict to these tool names." },
    pattern: { type: "string", description: "Glob matched against tool names." },
    detail: {
      type: "string",
      enum: ["names", "signatures", "full"],
      description: "How much to return. Defaults to names.",
    },
  },
};

const EXECUTE_SCHEMA = {
  type: "object" as const,
  properties: { script: { type: "string", description: "The JavaScript program to run." } },
  required: ["script"],
};

/** A parsed `list_tools` request. */
export interface ListToolsQuery {
  servers?: string[] | undefined;
  tools?: string[] | undefined;
  pattern?: string | undefined;
  detail?: "names" | "signatures" | "full" | undefined;
}

/**
 * Reads `list_tools` arguments leniently: unknown keys ignored, non-string list items dropped,
 * an unknown `detail` means `names`.
 */
export function parseListToolsArgs(args: unknown): ListToolsQuery {
  const a = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
  const list = (v: unknown) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : undefined;
  const detail = ["names", "signatures", "full"].includes(a.detail as string)
    ? a.detail as ListToolsQuery["detail"]
    : undefined;
  return {
    servers: list(a.servers),
    tools: list(a.tools),
    pattern: typeof a.pattern === "string" ? a.pattern : undefined,
    detail,
  };
}

function globToRegExp(glob: string): RegExp {
  const escaped = glob.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${escaped}$`);
}

/**
 * Longest wait for one server's tools in an unfiltered `list_tools`, in ms. A server still
 * starting after it is reported under Problems as still starting (its start goes on, for the
 * next call); a call naming the server in `servers` waits for it as long as its start takes.
 */
export const LIST_TOOLS_UNFILTERED_WAIT_MS = 5_000;

/** Options of {@link renderListTools}. */
export interface RenderListToolsOptions {
  /** Wait per server when `servers` is not given, in ms. @default LIST_TOOLS_UNFILTERED_WAIT_MS */
  unfilteredWaitMs?: number | undefined;
}

/**
 * The text `list_tools` answers (also what `cargo-agents mcp tools` prints). Answers from the
 * tool cache when fresh, else starts the servers it lists; never throws for a failing server:
 * it goes under `Problems:` with its error (stderr tail included). Without a `servers` filter,
 * a server not ready within {@link LIST_TOOLS_UNFILTERED_WAIT_MS} is reported as still starting.
 */
export async function renderListTools(
  catalog: Catalog,
  query: ListToolsQuery,
  signal?: AbortSignal,
  options: RenderListToolsOptions = {},
): Promise<string> {
  await catalog.refreshIfChanged();
  const problems: string[] = [];
  if (catalog.configError) problems.push(`config.toml: ${catalog.configError.message}`);
  for (const r of catalog.refused) problems.push(describeRefusal(r));
  if (catalog.servers.length === 0 && catalog.refused.length === 0) {
    return ["No MCP servers apply to this workspace.", ...dormantLines(catalog)].join("\n");
  }
  const narrowed = query.servers !== undefined || query.tools !== undefined;
  const detail = (query.detail ?? "names") === "names" && narrowed ? "full" : query.detail ?? "names";
  const wanted = query.servers;
  const chosen = catalog.servers.filter((s) =>
    wanted === undefined || wanted.includes(s.name) || wanted.includes(namespaceKey(s.name))
  );
  for (const name of wanted ?? []) {
    if (!catalog.servers.some((s) => s.name === name || namespaceKey(s.name) === name)) {
      const unavailable = catalog.unavailableReason(name);
      if (unavailable !== undefined) {
        // A refused server is already under Problems with its reason; a dormant one is explained here.
        if (catalog.dormant.some((d) => d.server === name || namespaceKey(d.server) === name)) {
          problems.push(unavailable);
        }
        continue;
      }
      problems.push(
        `no server named \`${name}\`. Available: ${catalog.servers.map((s) => s.name).join(", ") || "none"}`,
      );
    }
  }
  const pattern = query.pattern === undefined ? undefined : globToRegExp(query.pattern);
  const waitMs = wanted === undefined ? options.unfilteredWaitMs ?? LIST_TOOLS_UNFILTERED_WAIT_MS : undefined;
  const listed = await Promise.all(chosen.map(async (spec) => {
    try {
      if (waitMs === undefined) return await catalog.listServerTools(spec, signal ? { signal } : {});
      // Not tied to this request's signal: a start outlives the bounded wait, for the next call.
      const listing = catalog.listServerTools(spec);
      listing.catch(() => {}); // A late failure is seen by the next call (under Problems then).
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), waitMs)));
      try {
        const first = await Promise.race([listing, late]);
        if (first !== "late") return first;
      } finally {
        clearTimeout(timer);
      }
      problems.push(`\`${spec.name}\`: still starting; call list_tools again or name it in \`servers\``);
      return undefined;
    } catch (error) {
      problems.push(`\`${spec.name}\`: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }));
  const sections: string[] = [];
  for (const entry of listed) {
    if (!entry) continue;
    problems.push(...entry.warnings);
    const shown = selectTools(entry, query, pattern);
    if (shown.length === 0) {
      if (query.tools === undefined && pattern === undefined && entry.hiddenCount > 0) {
        problems.push(`\`${entry.spec.name}\`: no tools visible (${entry.hiddenCount} hidden by filters)`);
      }
      if (query.tools !== undefined || pattern !== undefined) continue;
    }
    if (detail === "names") {
      sections.push(renderIndex(entry.spec.name, shown));
    } else {
      // Bind over every visible tool, not the filtered subset, so the declared keys are exactly
      // the keys `execute` resolves (aliases depend on the whole set).
      const table = buildBindingTable(entry.tools.map((t) => t.name));
      const rendered = renderDeclarations(entry.spec.name, shown, { detail, table });
      sections.push(rendered.text);
      problems.push(...rendered.warnings.map((w) => `\`${entry.spec.name}\`: ${w}`));
    }
  }
  if (sections.length === 0 && problems.length === 0) return "No tools matched.";
  const parts = [sections.join(detail === "names" ? "\n" : "\n\n")];
  if (problems.length > 0) parts.push(`Problems:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  return parts.filter((p) => p !== "").join("\n\n");
}

/**
 * The tools of `entry` that `query.tools` and `pattern` select. A `tools` name is resolved as
 * `execute` resolves a key (exact, then tolerant spelling: `getSum` finds `get-sum`).
 */
/** Why each declared server that does not apply here is out of scope, one indented line each. */
function dormantLines(catalog: Catalog): string[] {
  return catalog.dormant.map((d) => `  \`${d.server}\` does not apply in this workspace: ${d.reason}`);
}

/** Pause between the last progress report of an `execute` and its result, in milliseconds. */
export const PROGRESS_FLUSH_MS = 15;

/** A refusal as one Problems line: what, where (file:line:col) and how to fix, as `status` shows it. */
function describeRefusal(r: Refusal): string {
  const where = r.location ? ` (${r.location.file}:${r.location.line}:${r.location.column})` : "";
  const hint = r.hint ? `; hint: ${r.hint}` : "";
  return `\`${r.server}\`: ${r.reason}${where}${hint}`;
}

function selectTools(entry: ServerTools, query: ListToolsQuery, pattern: RegExp | undefined) {
  let named: Set<string> | undefined;
  if (query.tools !== undefined) {
    const table = buildBindingTable(entry.tools.map((t) => t.name));
    named = new Set(query.tools.flatMap((key) => {
      const resolved = resolveToolKey(table, entry.spec.name, key);
      return resolved.ok ? [resolved.value] : [];
    }));
  }
  return entry.tools.filter((t) =>
    (named === undefined || named.has(t.name)) && (pattern === undefined || pattern.test(t.name))
  );
}

/** `execute`'s description: how scripts work, then the servers in scope. */
export function executeDescription(catalog: Catalog): string {
  const head = "Run a JavaScript program with this workspace's MCP tools in scope. Each server is a global " +
    "object whose methods are its tools and return promises, e.g.\n" +
    '  const rows = await sqlx.query({ sql: "select 1" });\n' +
    "  return rows.filter((r) => r.ok);\n" +
    "Write an async arrow function or a statement body that returns a value. Only the returned value " +
    "(and console output) comes back, so filter inside the script. Calls under Promise.all run concurrently.";
  const names = catalog.servers.map((s) =>
    namespaceKey(s.name) === s.name ? s.name : `${s.name} (as ${namespaceKey(s.name)})`
  );
  const tail = names.length > 0
    ? `Servers in scope: ${names.join(", ")}.\nCall \`list_tools\` for their tools and signatures.`
    : "No MCP servers apply to this workspace. Nothing is in scope for `execute`.";
  return `${head}\n\n${tail}`;
}

/** A host call from the sandbox: the script's `namespace.key(args)`. */
export interface HostCallRequest {
  namespace: string;
  key: string;
  /** The script's first argument as JSON, or `undefined`. */
  args: unknown;
}

/** What `execute` needs from the sandbox (adapter over `lib/sandbox/`). */
export interface ScriptRunner {
  /**
   * Runs one script; never throws. `notices()` is read once the script ended (off-shape tags).
   * @returns The text for the agent, whether it is an error, and extra content blocks (images).
   */
  run(request: {
    script: string;
    namespaces: string[];
    hostCall: (request: HostCallRequest, signal: AbortSignal) => Promise<unknown>;
    notices: () => string[];
    signal?: AbortSignal | undefined;
  }): Promise<{ text: string; isError: boolean; extraContent?: CallToolResult["content"] | undefined }>;
}

/** An image or audio content block found in a script's return value. */
export interface MediaBlock {
  type: "image" | "audio";
  data: string;
  mimeType: string;
}

function isMediaBlock(value: unknown): value is MediaBlock {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (v.type === "image" || v.type === "audio") && typeof v.data === "string" &&
    typeof v.mimeType === "string";
}

/**
 * Takes image and audio blocks out of a script's return value (searched 4 levels deep) so they
 * reach the agent as real content blocks, not base64 inside the text. Each is replaced by
 * `{ type, mimeType, attachment: n }` (1-based, the n-th extra content block).
 *
 * @returns The value with placeholders (the input when nothing was found) and the blocks in order.
 */
export function extractMedia(value: unknown): { value: unknown; blocks: MediaBlock[] } {
  const blocks: MediaBlock[] = [];
  const walk = (v: unknown, depth: number): unknown => {
    if (isMediaBlock(v)) {
      blocks.push({ type: v.type, data: v.data, mimeType: v.mimeType });
      return { type: v.type, mimeType: v.mimeType, attachment: blocks.length };
    }
    if (depth >= 4 || typeof v !== "object" || v === null) return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, depth + 1)]));
  };
  const replaced = walk(value, 0);
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
  logger?: Logger | undefined;
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
  await catalog.refreshIfChanged();
  if (catalog.servers.length === 0) {
    const lines = [...catalog.refused.map((r) => `  ${describeRefusal(r)}`), ...dormantLines(catalog)];
    return {
      content: [{
        type: "text",
        text: ["No MCP tools are in scope, so there is nothing to call.", ...lines].join("\n"),
      }],
      isError: true,
    };
  }
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
  const hostCall = async (request: HostCallRequest, signal: AbortSignal): Promise<unknown> => {
    let label = `${request.namespace}.${request.key}`;
    let status = "failed";
    try {
      const outcome = await catalog.call(request.namespace, request.key, toolArguments(request.args), {
        signal,
        onProgress: onProgress
          ? (p) => {
            const detail = p.message ?? `${p.progress}${p.total === undefined ? "" : `/${p.total}`}`;
            report(completed + progressFraction(p), `${label}: ${detail}`);
          }
          : undefined,
      });
      label = `${namespaceKey(outcome.server)}.${outcome.tool}`;
      const unwrapped = unwrapToolResult(outcome.result);
      if (!unwrapped.ok) throw new Error(unwrapped.message);
      if (checker.check(outcome.definition.outputSchema, outcome.result, unwrapped.value) === "off-shape") {
        const notice = offShapeNotice(outcome.server, outcome.tool);
        if (!offShape.has(notice)) logger.debug(notice);
        offShape.add(notice);
      }
      status = "done";
      return unwrapped.value;
    } finally {
      completed++;
      if (!signal.aborted) {
        report(completed, `${label} ${status} (${completed} call${completed === 1 ? "" : "s"} completed)`);
      }
    }
  };
  const refusals = catalog.refused.map((r) => `\`${r.server}\`: ${r.reason}`);
  const outcome = await runner.run({
    script,
    // Dormant and refused servers are globals too: a call says why it cannot work here.
    namespaces: [...catalog.servers.map((s) => namespaceKey(s.name)), ...catalog.unavailableNamespaces()],
    hostCall,
    notices: () => [...refusals, ...offShape],
    signal: options.signal,
  });
  return {
    content: [{ type: "text", text: outcome.text }, ...(outcome.extraContent ?? [])],
    ...(outcome.isError ? { isError: true } : {}),
  };
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

/** Re-resolves if files changed; a failure is logged and the last resolution stays in use. */
async function refreshQuietly(catalog: Catalog, logger: Logger): Promise<void> {
  try {
    await catalog.refreshIfChanged();
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
}

/**
 * Builds the `symposium` MCP server (not connected). Tells the agent `tools/list_changed` when
 * the catalog changes (workspace re-resolved, a backing server's tools changed).
 */
export function createMetaServer(options: MetaServerOptions): Server {
  const { catalog, runner } = options;
  const logger = options.logger ?? NULL_LOGGER;
  const checker = new OutputShapeChecker();
  const server = new Server(
    { name: "symposium", version: META_SERVER_VERSION },
    { capabilities: { tools: { listChanged: true } }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler("tools/list", async () => {
    await refreshQuietly(catalog, logger); // `execute`'s description names the servers in scope now
    return { tools: listedTools(catalog) };
  });
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const name = request.params.name;
    const signal = ctx.mcpReq.signal;
    if (name === "list_tools") {
      const text = await renderListTools(catalog, parseListToolsArgs(request.params.arguments), signal);
      return { content: [{ type: "text", text }] };
    }
    if (name === "execute") {
      const script = (request.params.arguments as Record<string, unknown> | undefined)?.script;
      if (typeof script !== "string") {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, "`execute` requires a `script` string");
      }
      const progressToken = ctx.mcpReq._meta?.progressToken;
      const started = Date.now();
      // Progress notifications still being written when the script ends are awaited before the result, so
      // the agent never receives a report after the response (its progress handler is gone by then).
      const sending: Promise<void>[] = [];
      const result = await runExecute(catalog, runner, script, {
        signal,
        checker,
        logger,
        onProgress: progressToken === undefined ? undefined : ({ progress, message }) => {
          sending.push(
            ctx.mcpReq.notify({
              method: "notifications/progress",
              params: { progressToken, progress, message },
            }).catch(() => {}), // The agent may be gone; progress is best effort.
          );
        },
      });
      await Promise.all(sending);
      // The SDK client runs notification handlers a microtask later but handles a response at once and
      // drops the request's progress handler then: a report read in the same chunk as the response is
      // lost. A short pause lets the last report reach the agent in its own read.
      if (sending.length > 0) await new Promise((resolve) => setTimeout(resolve, PROGRESS_FLUSH_MS));
      const outcome = signal.aborted ? "cancelled by the agent" : result.isError ? "error" : "ok";
      logger.info(`execute: ${outcome} in ${Date.now() - started} ms`);
      return result;
    }
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `no such tool: ${name}. Available: list_tools, execute`,
    );
  });
  catalog.onChange(() => {
    logger.info("tools changed; telling the agent");
    server.sendToolListChanged().catch(() => {}); // Not connected yet or gone: nothing to tell.
  });
  return server;
}

/**
 * Serves the meta-server on `transport` until the agent disconnects (stdin closes) or `signal`
 * aborts, then shuts every backing server down.
 *
 * @param options.watchIntervalMs How often the workspace, plugin and config files are checked for
 *   changes (then re-resolved, and the agent told), in ms. @default 2000
 */
export async function serveMetaServer(
  options: MetaServerOptions & {
    transport: Transport;
    signal?: AbortSignal | undefined;
    watchIntervalMs?: number;
  },
): Promise<void> {
  const logger = options.logger ?? NULL_LOGGER;
  const server = createMetaServer(options);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    options.signal?.addEventListener("abort", () => resolve(), { once: true });
  });
  await server.connect(options.transport);
  logger.info(
    `serving; servers in scope: ${options.catalog.servers.map((s) => s.name).join(", ") || "none"}`,
  );
  const watch = setInterval(
    () => void refreshQuietly(options.catalog, logger),
    options.watchIntervalMs ?? 2_000,
  );
  try {
    await closed;
  } finally {
    clearInterval(watch);
    logger.info("client gone; shutting down backing servers");
    await options.catalog.close();
    await server.close().catch(() => {}); // Already closed when stdin ended.
  }
}
