/**
 * How a failed request to a backing server is told: the {@link BackendError} for what the SDK, the
 * transport or the message budget threw, in the words of the request (`github.search`, `github tools/list`).
 *
 * @module
 */
import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { BackendError, clipErrorDetail } from "./connection_types.ts";
import { formatBytes, isTooLargeData, MESSAGE_BUDGET_KEY, MessageTooLargeError } from "../jsonrpc/mod.ts";

/** `ms` as seconds with one decimal, e.g. `"2.5s"`. */
export function secondsText(ms: number): string {
  return `${Math.round(ms / 100) / 10}s`;
}

/**
 * The budget an answer passed, when `error` says so: a made-up JSON-RPC error answer whose `data`
 * is `TooLargeData` (stdio, the answer read to its end: `exact`), or a {@link MessageTooLargeError}
 * anywhere in the cause chain (http, reading stopped at the budget).
 */
function answerTooLarge(error: unknown): { bytes: number; maxBytes: number; exact: boolean } | undefined {
  for (
    let e = error, depth = 0;
    e !== undefined && depth < 10;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (e instanceof MessageTooLargeError) return { bytes: e.bytes, maxBytes: e.maxBytes, exact: false };
    const data = (e as { data?: unknown } | null)?.data;
    if (isTooLargeData(data)) return { ...data.tooLarge, exact: data.tooLarge.exact === true };
    if (typeof e !== "object" || e === null) break;
  }
  return undefined;
}

/** `message`, then `: detail` when there is a detail. */
export function withDetail(message: string, detail: string | undefined): string {
  const d = detail?.trim();
  return d ? `${message}: ${d}` : message;
}

/** What {@link requestError} needs to know of the request and its connection. */
export interface RequestFailure {
  server: string;
  /** The request in messages, e.g. `"github.search"` or `"github tools/list"`. */
  what: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Whether the connection had ended when the error was mapped. */
  isClosed: boolean;
  describeEnd: (() => string | undefined) | undefined;
}

/**
 * Maps a failed request to a {@link BackendError}: `ANSWER_TOO_LARGE` (over the message budget),
 * `CANCELLED`, `CALL_TIMEOUT`, `CONNECTION_LOST`, else `REQUEST_FAILED`; one of ours is returned as it is.
 */
export function requestError(error: unknown, failure: RequestFailure): BackendError {
  const { server, what, timeoutMs, signal, isClosed } = failure;
  if (error instanceof BackendError) return error;
  const tooLarge = answerTooLarge(error);
  if (tooLarge) {
    return new BackendError(
      "ANSWER_TOO_LARGE",
      server,
      `${what} answered ${tooLarge.exact ? `${formatBytes(tooLarge.bytes)}, ` : ""}more than the ` +
        `${formatBytes(tooLarge.maxBytes)} one answer may be (${MESSAGE_BUDGET_KEY}); ` +
        (tooLarge.exact ? "the answer was dropped unread" : "reading stopped there"),
      {
        cause: error,
        hint: `ask the tool for less (a page, a range, a filter), or raise ${MESSAGE_BUDGET_KEY}`,
      },
    );
  }
  if (signal?.aborted) {
    return new BackendError("CANCELLED", server, `${what} was cancelled`, { cause: error });
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    return new BackendError(
      "CALL_TIMEOUT",
      server,
      `${what} did not answer within ${secondsText(timeoutMs)}`,
      {
        cause: error,
        hint: "raise tool-call-timeout-secs for this server if the tool is legitimately slow",
      },
    );
  }
  const lost = error instanceof SdkError &&
    (error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected);
  if (lost || isClosed) {
    return new BackendError(
      "CONNECTION_LOST",
      server,
      withDetail(`${server}: connection lost`, failure.describeEnd?.()),
      { cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new BackendError("REQUEST_FAILED", server, `${what} failed: ${clipErrorDetail(message)}`, {
    cause: error,
  });
}
