/**
 * Which of a backing server's `sampling/createMessage` and `elicitation/create` requests may be relayed
 * to the agent: only those sent while one of our tool calls to that server is in flight, at most
 * {@link MAX_RELAYED_PER_CALL} per call and {@link MAX_RELAYED_REQUEST_BYTES} each; each is cancelled
 * when the call it was counted against ends. Unbounded, 5,000 requests from one tool call all reached the
 * agent within 8 s, and 10,000 unanswered 100 KB ones held 1.4 GB for the 10-minute relay timeout.
 *
 * @module
 */

/** Most requests one tool call may relay to the agent (50); past it the server gets an error. */
export const MAX_RELAYED_PER_CALL = 50;

/** Largest relayed request, characters of its params as JSON (256 KiB); a larger one is refused. */
export const MAX_RELAYED_REQUEST_BYTES = 256 * 1024;

/** One tool call in flight, as the relayed requests counted against it see it. */
interface CallScope {
  relayed: number;
  /** Aborted when the call ends: every request counted against it is cancelled towards the agent. */
  controller: AbortController;
}

/** Why a request is not relayed, or the signal that ends it (the server's cancel, or its call's end). */
export type Admission = { ok: true; signal: AbortSignal } | { ok: false; reason: string };

/** The tool calls in flight on one connection and the requests relayed within them. */
export class RelayAdmission {
  readonly #open: CallScope[] = [];
  readonly #server: string;

  /** @param server The server's manifest name, for the refusals. */
  constructor(server: string) {
    this.#server = server;
  }

  /** A tool call starts; call the returned function when it ended (its relayed requests are cancelled). */
  begin(): () => void {
    const scope: CallScope = { relayed: 0, controller: new AbortController() };
    this.#open.push(scope);
    return () => {
      const at = this.#open.indexOf(scope);
      if (at >= 0) this.#open.splice(at, 1);
      scope.controller.abort(new Error(`the tool call of ${this.#server} that asked ended`));
    };
  }

  /**
   * Whether a `method` request with `params` may be relayed now: it is counted against the oldest call
   * in flight with room left.
   *
   * @param signal The server's own cancellation of its request.
   * @returns The signal the relayed request ends with, or the reason (for the server's error answer).
   */
  admit(method: string, params: unknown, signal: AbortSignal): Admission {
    const scope = this.#open.find((s) => s.relayed < MAX_RELAYED_PER_CALL);
    if (scope === undefined) {
      return {
        ok: false,
        reason: this.#open.length === 0
          ? `${method} is relayed to the user only while a tool call of ${this.#server} is in flight`
          : `${method}: more than the ${MAX_RELAYED_PER_CALL} requests one tool call may relay (MAX_RELAYED_PER_CALL)`,
      };
    }
    const chars = JSON.stringify(params ?? {}).length;
    if (chars > MAX_RELAYED_REQUEST_BYTES) {
      return {
        ok: false,
        reason: `${method}: ${chars} characters, more than the ${MAX_RELAYED_REQUEST_BYTES} one relayed ` +
          `request may be (MAX_RELAYED_REQUEST_BYTES)`,
      };
    }
    scope.relayed++;
    return { ok: true, signal: AbortSignal.any([signal, scope.controller.signal]) };
  }
}
