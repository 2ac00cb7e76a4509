/**
 * One call of a backing server's tool, as a script's call and a direct tool's call both make it: the
 * `confirm-tools` question on the very definition the call is sent with, the catalog's dispatch (lazy
 * start, per-server slots, call timeout, relays), the result unwrapped, checked against its
 * `outputSchema` and its shape learned. One path, so the two never drift apart.
 *
 * @module
 */
import type { BeforeSend, CallOutcome, Catalog } from "../catalog/mod.ts";
import type { CallOptions } from "../backends/mod.ts";
import type { Logger } from "../log.ts";
import {
  offShapeNotice,
  type OutputShapeChecker,
  type ShapeVerdict,
  type Unwrapped,
  unwrapToolResult,
} from "../catalog/result_unwrap.ts";
import type { ConfirmationChannel, ToolConfirmer } from "./_confirm.ts";

/** Options of {@link dispatchToolCall}. */
export interface DispatchOptions {
  /** Cancels the wait, the question or the call (the server gets `notifications/cancelled`). */
  signal: AbortSignal;
  /** Asks the user for the calls `[mcp] confirm-tools` covers (one per agent session). */
  confirmer: ToolConfirmer;
  /** Where the question goes for a modern agent's run (`suspended_runs.ts`). @default the confirmer's relay */
  channel?: ConfirmationChannel | undefined;
  /** Who makes the call, as the confirmation names it. @default "A script" */
  caller?: string | undefined;
  /** Stops the caller's deadline while the user is asked; returns the release. @default none */
  holdDeadline?: (() => () => void) | undefined;
  /** The agent's W3C trace context, forwarded to the server. @default none */
  trace?: CallOptions["trace"];
  /** Receives the server's progress notifications for this call. @default none */
  onProgress?: CallOptions["onProgress"];
  /** The session's checker of `outputSchema`s. */
  checker: OutputShapeChecker;
  logger: Logger;
  /** Notices of results off their `outputSchema`, one per tool (each logged at debug the first time). */
  offShape: Set<string>;
}

/**
 * Calls tool `key` of the server a script reaches as global `namespace` with `args`, through the catalog
 * (`Catalog.call`), after the `confirm-tools` question when `[mcp] confirm-tools` covers it.
 *
 * @returns The catalog's outcome (the raw result, the definition it was sent with), the result
 *   unwrapped to a script's value (`ok: false` with the server's message for an error result), and
 *   for a successful one, whether it matches the tool's `outputSchema` (`shape`).
 * @throws What `Catalog.call` throws (`UserError` `TOOL_UNKNOWN`..., `BackendError`) and the confirmer's
 *   refusal (the user declined, or no way to ask).
 */
export async function dispatchToolCall(
  catalog: Catalog,
  target: { namespace: string; key: string; args: Record<string, unknown> },
  options: DispatchOptions,
): Promise<{ outcome: CallOutcome; unwrapped: Unwrapped; shape?: ShapeVerdict }> {
  const { args, namespace, key } = target;
  const { signal, confirmer, checker } = options;
  const mode = catalog.config.confirmTools;
  // Decided on the very definition the call is sent with (the catalog checks again if it changed).
  const beforeSend: BeforeSend | undefined = mode === "never"
    ? undefined
    : async (spec, definition, toolNames) => {
      let release: (() => void) | undefined;
      await confirmer.confirm(mode, spec, definition, args, {
        signal,
        toolNames,
        channel: options.channel,
        caller: options.caller,
        onWait: (phase) => {
          if (phase === "start") release = options.holdDeadline?.();
          else release?.();
        },
      });
    };
  const outcome = await catalog.call(namespace, key, args, {
    signal,
    beforeSend,
    trace: options.trace,
    onProgress: options.onProgress,
  });
  const unwrapped = unwrapToolResult(outcome.result);
  if (!unwrapped.ok) return { outcome, unwrapped };
  const shape = await checker.check(outcome.definition.outputSchema, outcome.result, unwrapped.value);
  if (shape === "off-shape") {
    const notice = offShapeNotice(outcome.server, outcome.tool);
    if (!options.offShape.has(notice)) options.logger.debug(notice);
    options.offShape.add(notice);
  }
  catalog.observeResult(outcome, unwrapped.value); // a learned result shape, for declarations only
  return { outcome, unwrapped, shape };
}
