/**
 * `execute` for an agent that speaks MCP 2026-07-28: the script runs as a run of the session's
 * `SuspendedRuns`, so a backing call that needs the agent's input (or our `confirm-tools` question) makes
 * `execute` answer `resultType: "input_required"`, and the agent's retry with `inputResponses` and
 * `requestState` resumes the same run. Nothing is ever sent to the agent as a request.
 *
 * @module
 */
import type { CallToolResult, ElicitResult } from "@modelcontextprotocol/server";
import type { ClientCapabilities } from "@modelcontextprotocol/server";
import { type AgentRelay, ownQuestion } from "./agent_relay.ts";
import type { ExecuteOptions, ExecuteProgress } from "./execute.ts";
import type { InputRequiredAnswer } from "./suspended_runs.ts";

/** One modern `execute` request as {@link answerWaitingExecute} reads it. */
export interface WaitingExecuteRequest {
  /** The `requestState` the agent sent back (`undefined` on a first request). */
  requestState: unknown;
  /** The agent's `inputResponses` (`undefined` on a first request). */
  inputResponses: unknown;
  script: string;
  /**
   * The tool called, bound into the run's `requestState` with `script`. @default "execute" (a direct
   * tool's call passes its name, and its arguments as JSON for `script`)
   */
  tool?: string | undefined;
  /** What the agent declared in this request's `_meta`. */
  capabilities: ClientCapabilities;
  /** The request's signal: its cancellation cancels the run. */
  signal: AbortSignal;
  /** The script's deadline, ms from now (`[mcp] script-timeout-secs`). */
  timeoutMs: number;
  /**
   * Receives the run's progress while this request is the one attached to it (a retry gets the reports
   * from its arrival on). Default: none.
   */
  onProgress?: ((report: ExecuteProgress) => void) | undefined;
  /** Runs the script with the given options (`runExecute` with the session's options). */
  run: (options: Pick<ExecuteOptions, "signal" | "waiting" | "onProgress">) => Promise<CallToolResult>;
}

/**
 * Answers a modern `execute`: starts the script through `run` (a first request) or resumes the run its
 * `requestState` names, and answers the run's result or `input_required` with its questions.
 *
 * @throws {ProtocolError} `-32602` for a state that is invalid, altered, another session's or request's,
 *   or expired, and for answers of the wrong shape or size (see `SuspendedRuns.answer`).
 */
export async function answerWaitingExecute(
  relay: AgentRelay,
  request: WaitingExecuteRequest,
): Promise<CallToolResult | InputRequiredAnswer> {
  relay.noteModernAgent(request.capabilities);
  return await relay.runs.answer(
    {
      tool: request.tool ?? "execute",
      script: request.script,
      timeoutMs: request.timeoutMs,
      requestState: request.requestState,
      inputResponses: request.inputResponses,
      signal: request.signal,
      onProgress: request.onProgress,
    },
    (hooks) =>
      request.run({
        signal: hooks.signal,
        onProgress: (report) => hooks.progress(report),
        waiting: {
          hooks,
          confirmations: {
            canElicitForm: () => relay.canElicitForm(),
            elicit: async (params, signal) =>
              await hooks.ask(
                "symposium",
                { method: "elicitation/create", params: { ...ownQuestion(params) } },
                { signal: signal ?? hooks.signal, holdsDeadline: true },
              ) as ElicitResult,
          },
        },
      }),
  );
}
