/**
 * The SDK's MCP `Client` with two of its per-request costs (SDK 2.4) taken out, behaviour unchanged:
 * - request timeouts: the SDK arms a node-compat `setTimeout` for every request and clears it at the
 *   answer (~10-20 µs per request on the host's main thread); here every request of one connection
 *   shares one timer, armed for the earliest deadline and re-armed only when it fires, and each request
 *   keeps its own deadline, `resetTimeoutOnProgress` and `maxTotalTimeout` exactly as the SDK does
 *   (the same `onTimeout`, so the same `Request timed out` error and `notifications/cancelled`);
 * - answers: the SDK checks every response again with zod (`isJSONRPCResultResponse`, ~10 µs) though
 *   every response reaching `_onresponse` was checked already (by the SDK's own dispatch, or by a
 *   transport that {@link ChecksMessages}); here a result answer to one of our numeric request ids goes
 *   straight to its handler.
 *
 * Both rely on SDK internals (`_timeoutInfo`, `_responseHandlers`, `_progressHandlers`, `_setupTimeout`,
 * `_resetTimeout`, `_cleanupTimeout`); `tests/backends/lean_client_test.ts` pins them, so an
 * SDK that changes them fails there first.
 *
 * @module
 */
import { Client, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import type { JSONRPCErrorResponse, JSONRPCResponse } from "@modelcontextprotocol/client";

/** Longest delay one `setTimeout` can take (2^31 - 1 ms); a later deadline is reached in steps. */
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** One request's timeout, as the SDK's `_timeoutInfo` holds it, plus its deadline (`performance.now()` ms). */
interface TimeoutEntry {
  timeoutId: undefined;
  startTime: number;
  timeout: number;
  maxTotalTimeout: number | undefined;
  resetTimeoutOnProgress: boolean;
  onTimeout: () => void;
  deadline: number;
}

/** The SDK `Protocol` internals this module reads (see the module doc). */
export interface ProtocolInternals {
  _timeoutInfo: Map<number, TimeoutEntry>;
  _responseHandlers: Map<number, (response: JSONRPCResponse | Error) => void>;
  _progressHandlers: Map<number, unknown>;
  _setupTimeout(
    messageId: number,
    timeout: number,
    maxTotalTimeout: number | undefined,
    onTimeout: () => void,
    resetTimeoutOnProgress?: boolean,
  ): void;
  _resetTimeout(messageId: number): boolean;
  _cleanupTimeout(messageId: number): void;
}

/**
 * An SDK `Client` (same constructor) with one shared request timer per connection and no second zod
 * check of result answers. See the module doc.
 */
export class LeanClient extends Client {
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Deadline the timer is armed for (`performance.now()` ms); `Infinity` when unarmed. */
  #timerAt = Infinity;
  #held = false;

  /**
   * Whether a result answer without `resultType` is taken as complete (set once a modern era is negotiated:
   * MCP 2026-07-28, "a missing `resultType` means complete"). Default: `false` (results pass unchanged).
   */
  completesResults = false;

  /** Timers armed so far (one per connection in steady use; the SDK arms one per request), for tests. */
  timersArmed = 0;

  /** Whether the shared timer is armed, for tests. */
  get timerArmed(): boolean {
    return this.#timer !== undefined;
  }

  /** A result answer to one of our requests goes to its handler without the SDK's zod re-check. */
  protected override _onresponse(response: JSONRPCResponse | JSONRPCErrorResponse): void {
    const id = response.id;
    if (typeof id === "number" && !("error" in response)) {
      const result = (response as { result?: unknown }).result;
      const self = this as unknown as ProtocolInternals;
      const handler = self._responseHandlers.get(id);
      if (handler !== undefined && typeof result === "object" && result !== null && !Array.isArray(result)) {
        self._responseHandlers.delete(id);
        self._cleanupTimeout(id);
        self._progressHandlers.delete(id);
        // The spec: a result without `resultType` is complete (the SDK refuses it from a modern server).
        if (this.completesResults && !("resultType" in result)) {
          handler({ ...response, result: { ...result, resultType: "complete" } } as JSONRPCResponse);
        } else handler(response);
        return;
      }
    }
    super._onresponse(response);
  }

  /** The connection closed: the shared timer stops, then the SDK settles what was in flight. */
  protected override _onclose(): void {
    this.disarm();
    super._onclose();
  }

  /** Arms the shared timer for `deadline` unless it is armed for that time or earlier already. */
  arm(deadline: number): void {
    if (this.#timer !== undefined && this.#timerAt <= deadline) return;
    clearTimeout(this.#timer);
    this.#timerAt = deadline;
    this.timersArmed++;
    const delay = Math.min(MAX_TIMER_DELAY_MS, Math.max(0, deadline - performance.now()));
    this.#timer = setTimeout(() => this.#fire(), delay);
    this.#held = true;
    this.hold((this as unknown as ProtocolInternals)._timeoutInfo.size > 0);
  }

  /**
   * Whether the shared timer keeps the process alive: while a request waits (as the SDK's per-request
   * timer did), not once none does (it stays armed, for the next request, until it fires or the
   * connection closes).
   */
  hold(waiting: boolean): void {
    if (this.#timer === undefined || waiting === this.#held) return;
    this.#held = waiting;
    if (waiting) this.#timer.ref();
    else this.#timer.unref();
  }

  /** Stops the shared timer (the connection closed). */
  disarm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
    this.#held = false;
  }

  /** Times out every request past its deadline (as the SDK's own timer would), then re-arms for the next. */
  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const entries = (this as unknown as ProtocolInternals)._timeoutInfo;
    const now = performance.now();
    let next = Infinity;
    const due: TimeoutEntry[] = [];
    for (const [id, entry] of entries) {
      if (entry.deadline <= now) {
        entries.delete(id);
        due.push(entry);
      } else if (entry.deadline < next) next = entry.deadline;
    }
    if (next !== Infinity) this.arm(next);
    for (const entry of due) entry.onTimeout();
  }
}

/** What the timeout methods below see as `this`. */
type Shared = ProtocolInternals & Pick<LeanClient, "arm" | "hold">;

Object.defineProperties(LeanClient.prototype, {
  _setupTimeout: {
    value: function (
      this: Shared,
      messageId: number,
      timeout: number,
      maxTotalTimeout: number | undefined,
      onTimeout: () => void,
      resetTimeoutOnProgress = false,
    ): void {
      const deadline = performance.now() + timeout;
      this._timeoutInfo.set(messageId, {
        timeoutId: undefined,
        startTime: Date.now(),
        timeout,
        maxTotalTimeout,
        resetTimeoutOnProgress,
        onTimeout,
        deadline,
      });
      this.arm(deadline);
      this.hold(true);
    },
  },
  _resetTimeout: {
    value: function (this: Shared, messageId: number): boolean {
      const entry = this._timeoutInfo.get(messageId);
      if (!entry) return false;
      const totalElapsed = Date.now() - entry.startTime;
      if (entry.maxTotalTimeout && totalElapsed >= entry.maxTotalTimeout) {
        this._timeoutInfo.delete(messageId);
        throw new SdkError(SdkErrorCode.RequestTimeout, "Maximum total timeout exceeded", {
          maxTotalTimeout: entry.maxTotalTimeout,
          totalElapsed,
        });
      }
      // Later than before: the armed timer finds it not due and re-arms for it.
      entry.deadline = performance.now() + entry.timeout;
      return true;
    },
  },
  _cleanupTimeout: {
    value: function (this: Shared, messageId: number): void {
      if (this._timeoutInfo.delete(messageId) && this._timeoutInfo.size === 0) this.hold(false);
    },
  },
});
