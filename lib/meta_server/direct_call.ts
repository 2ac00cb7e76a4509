/**
 * Answers the agent's `tools/call` of a direct tool (`direct_tools.ts`): the call goes through the same
 * path as a script's call (`tool_dispatch.ts`: lazy start, `confirm-tools`, per-server slots and call
 * timeout, observed shapes; a backing server's questions relayed to the agent in either era) and the
 * agent gets what the backing server returned, bounded like an `execute` result (`_direct_result.ts`).
 *
 * @module
 */
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/server";
import type { Catalog } from "../catalog/mod.ts";
import type { Logger } from "../log.ts";
import { namespaceKey } from "../plugins/mod.ts";
import type { OutputShapeChecker } from "../catalog/result_unwrap.ts";
import type { ConfirmationChannel, ToolConfirmer } from "./_confirm.ts";
import type { InputRequiredAnswer, RunHooks } from "./suspended_runs.ts";
import type { AgentRelay } from "./agent_relay.ts";
import { answerWaitingExecute } from "./waiting_execute.ts";
import { dispatchToolCall } from "./tool_dispatch.ts";
import { boundDirectResult, DIRECT_MEDIA_MAX_BYTES } from "./_direct_result.ts";
import type { DirectTool } from "./direct_tools.ts";

/** Options of {@link answerDirectCall}. */
export interface DirectCallOptions {
  /** The agent's request signal (or its modern run's): cancels the question and the call. */
  signal: AbortSignal;
  confirmer: ToolConfirmer;
  checker: OutputShapeChecker;
  logger: Logger;
  /** A modern agent's run: the call is reported to its hooks, questions go through its channel. @default none */
  waiting?: { hooks: RunHooks; confirmations: ConfirmationChannel } | undefined;
  /** The agent's W3C trace context, forwarded to the server. @default none */
  trace?: { traceparent?: string | undefined; tracestate?: string | undefined } | undefined;
}

/**
 * Calls the backing tool of `tool` with the agent's `args` and answers what the server returned, bounded
 * by `[mcp] max-result-bytes` (media by `DIRECT_MEDIA_MAX_BYTES`). Never throws: a call that cannot be
 * made (server fails to start, tool gone, the user declined, cancelled) is an `isError` result naming the
 * tool, what happened and how to fix it.
 */
export async function answerDirectCall(
  catalog: Catalog,
  tool: DirectTool,
  args: Record<string, unknown>,
  options: DirectCallOptions,
): Promise<CallToolResult> {
  const label = `${namespaceKey(tool.server)}.${tool.definition.name}`;
  const started = Date.now();
  const callEnded = options.waiting?.hooks.callStarted(namespaceKey(tool.server));
  try {
    const { outcome, shape } = await dispatchToolCall(catalog, {
      namespace: namespaceKey(tool.server),
      key: tool.definition.name,
      args,
    }, {
      signal: options.signal,
      confirmer: options.confirmer,
      channel: options.waiting?.confirmations,
      caller: "The agent",
      trace: options.trace,
      checker: options.checker,
      logger: options.logger,
      offShape: new Set(),
    });
    const config = catalog.config;
    const result = boundDirectResult(
      outcome.definition.outputSchema !== undefined && shape !== undefined && shape !== "conforms"
        ? offShape(outcome.result, label)
        : outcome.result,
      {
        maxResultBytes: config.maxResultBytes,
        maxMediaBytes: Math.max(config.maxResultBytes, DIRECT_MEDIA_MAX_BYTES),
        hasOutputSchema: outcome.definition.outputSchema !== undefined,
        label,
      },
    );
    options.logger.debug(
      `${tool.name} (direct): ${result.isError ? "error" : "ok"} in ${Date.now() - started} ms`,
    );
    return result;
  } catch (error) {
    const why = options.signal.aborted ? "cancelled" : error instanceof Error ? error.message : String(error);
    // Its code only: the message may quote the arguments (a server's error echoing them).
    const code = (error as { code?: unknown } | null)?.code;
    const shown = options.signal.aborted
      ? "CANCELLED"
      : typeof code === "string" && /^[A-Za-z][A-Za-z0-9_]{0,39}$/.test(code)
      ? code
      : "FAILED";
    options.logger.info(
      `${tool.name} (direct): failed in ${Date.now() - started} ms: ${shown} (message not logged)`,
    );
    return { content: [{ type: "text", text: `${label}: ${why}` }], isError: true };
  } finally {
    callEnded?.();
  }
}

/** One agent `tools/call` of a direct tool, as {@link answerDirectRequest} reads it. */
export interface DirectRequest {
  /** The agent's `arguments` (`{}` when absent). */
  args: Record<string, unknown>;
  signal: AbortSignal;
  /** Set for a modern (2026-07-28) agent: its retry fields and declared capabilities. */
  modern?: { requestState: unknown; inputResponses: unknown; capabilities: ClientCapabilities } | undefined;
}

/**
 * Answers a direct tool's `tools/call` in the agent's era: a legacy agent is asked (confirmation, a
 * backing server's elicitation) with requests over the session; a modern agent's call runs as a run of
 * the session's suspended runs (`waiting_execute.ts`), so a question makes the call answer
 * `input_required` and the agent's retry resumes it (the state is bound to the tool and its arguments).
 *
 * @throws {ProtocolError} `-32602` for a modern retry whose `requestState` or answers are invalid.
 */
export async function answerDirectRequest(
  relay: AgentRelay,
  catalog: Catalog,
  tool: DirectTool,
  request: DirectRequest,
  options: Omit<DirectCallOptions, "signal" | "waiting">,
): Promise<CallToolResult | InputRequiredAnswer> {
  if (request.modern === undefined) {
    return await answerDirectCall(catalog, tool, request.args, { ...options, signal: request.signal });
  }
  return await answerWaitingExecute(relay, {
    ...request.modern,
    tool: tool.name,
    script: JSON.stringify(request.args),
    signal: request.signal,
    timeoutMs: catalog.config.scriptTimeoutSecs * 1000,
    run: (extra) =>
      answerDirectCall(catalog, tool, request.args, {
        ...options,
        signal: extra.signal ?? request.signal,
        waiting: extra.waiting,
      }),
  });
}

/**
 * A result of a tool with an `outputSchema` that is not known to match it (off the schema, or a schema
 * our linear-time check cannot compile, e.g. a lookahead) as the agent gets it: without
 * `structuredContent`, marked an error, saying so. The agent's client checks `structuredContent` against
 * the schema with its own regular expressions, which backtrack: a server's `pattern` and a value built to
 * defeat it would stall the agent; and an off-schema value it would refuse anyway.
 */
function offShape(result: CallToolResult, label: string): CallToolResult {
  const { structuredContent: _left, ...rest } = result;
  const note = `[${label} answered a structuredContent that does not match its outputSchema, or that ` +
    `cannot be checked; it is left out and the result marked an error. Call ${label}(\u2026) from execute to use ` +
    `the value]`;
  return { ...rest, content: [...(result.content ?? []), { type: "text", text: note }], isError: true };
}
