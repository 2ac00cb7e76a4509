/**
 * Scripts that wait for the agent's answer across `execute` requests, for an agent that speaks MCP
 * 2026-07-28 (no request from server to client): when a backing call of a script needs input (a backing
 * server's `elicitation/create` or `sampling/createMessage`, or our own `confirm-tools` question), only that
 * call waits; `execute` answers `resultType: "input_required"` with the questions and a `requestState`
 * naming the run (`_request_state.ts`), and the agent's retry with `inputResponses` hands the answers to
 * the waiting calls of the same run, which goes on (the script is not run again). The run keeps its
 * deadline: at it the run ends as any other does (its sandbox process stopped, killed if it does not stop),
 * and its state is then refused as expired.
 *
 * Bounds: {@link MAX_INPUT_ROUNDS_PER_RUN}, {@link MAX_INPUT_REQUESTS_BYTES}, {@link MAX_INPUT_RESPONSES_BYTES},
 * {@link MAX_SUSPENDED_RUNS_PER_SESSION}; past each, the questions concerned fail (the backing server gets
 * the error, the script goes on) or the retry is refused, saying which bound.
 *
 * @module
 */
import { ProtocolError, ProtocolErrorCode, specTypeSchemas } from "@modelcontextprotocol/server";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { PROCESS_REQUEST_STATE_CODEC, requestDigest, type RequestStateCodec } from "./_request_state.ts";

/** Most `input_required` answers one run gives (16); past it its open questions fail and the run goes on. */
export const MAX_INPUT_ROUNDS_PER_RUN = 16;

/**
 * Largest `inputRequests` of one `input_required` answer, UTF-16 code units of its JSON (1 MiB); a question
 * that would pass it fails (its backing server is told why). One relayed question is at most 256 KiB.
 */
export const MAX_INPUT_REQUESTS_BYTES = 1024 * 1024;

/** Largest `inputResponses` of one retry, UTF-16 code units of its JSON (1 MiB); a larger retry is refused. */
export const MAX_INPUT_RESPONSES_BYTES = 1024 * 1024;

/**
 * Most runs of one session waiting for the agent at once (8); a further run that needs input has its
 * questions fail at once, saying so, and goes on.
 */
export const MAX_SUSPENDED_RUNS_PER_SESSION = 8;

/**
 * How long `execute` waits for more questions after the first before it answers `input_required`, ms:
 * calls under `Promise.all` that ask at once reach the agent in one round.
 */
export const INPUT_GATHER_MS = 25;

/**
 * Longest wait for an answer to a question that holds the script's deadline (a `confirm-tools`
 * question), in ms (10 min, as for a legacy agent); other questions wait until the run's deadline.
 */
export const HELD_ANSWER_WAIT_MS = 600_000;

/** One question for the agent, as `inputRequests` carries it. */
export interface InputRequest {
  method: "elicitation/create" | "sampling/createMessage";
  params: Record<string, unknown>;
}

/** `execute`'s answer while its run waits for the agent. */
export interface InputRequiredAnswer {
  resultType: "input_required";
  inputRequests: Record<string, InputRequest>;
  requestState: string;
  /** Kept for clients that read `content` of any `tools/call` result: what the run waits for. */
  content: CallToolResult["content"];
}

/** One progress report of a run (`ExecuteProgress`). */
export interface ProgressReport {
  progress: number;
  message: string;
}

/** What a run gets to ask the agent and to say which backing calls it has in flight. */
export interface RunHooks {
  /** Aborted when the agent cancels the request the run is attached to. */
  signal: AbortSignal;
  /** Hands a progress report to the request attached to the run, if any and if it asked for progress. */
  progress(report: ProgressReport): void;
  /** A call to the server of namespace `namespace` starts; call the returned function when it ended. */
  callStarted(namespace: string): () => void;
  /**
   * Asks the agent `request` on behalf of `asker` (a namespace, or `symposium` for our own question).
   * Rejects when `options.signal` aborts, when a bound is passed, or after the wait allowed.
   * @param options.signal Ends the question (its call ended, or the run).
   * @param options.holdsDeadline The question stops the script's clock (confirmation). @default false
   */
  ask(
    asker: string,
    request: InputRequest,
    options: { signal: AbortSignal; holdsDeadline?: boolean | undefined },
  ): Promise<unknown>;
}

interface Question {
  asker: string;
  request: InputRequest;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** One script run that may wait for the agent. */
class WaitingRun {
  readonly id = crypto.randomUUID();
  readonly controller = new AbortController();
  readonly questions = new Map<string, Question>();
  /** Per namespace, the sequence numbers of the calls in flight to its server, oldest first. */
  readonly calls = new Map<string, number[]>();
  result!: Promise<CallToolResult>;
  settled: CallToolResult | undefined;
  attached = false;
  suspended = false;
  rounds = 0;
  held = 0;
  /** What the run's script and the relay use (made once). */
  hooks: RunHooks | undefined;
  /** Where the attached request takes progress reports. */
  progressSink: ((report: ProgressReport) => void) | undefined;
  /** Expiry of the latest `requestState` issued for the run, ms since the epoch. */
  stateExpiresAtMs: number | undefined;
  #asked = 0;
  #wake: (() => void) | undefined;

  constructor(readonly digest: string, public deadlineAtMs: number) {}

  /** Resolves at the next question or the run's end. */
  changed(): Promise<void> {
    return new Promise((resolve) => this.#wake = resolve);
  }

  notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  nextKey(asker: string): string {
    return `${asker}/${++this.#asked}`;
  }
}

/** Options of {@link SuspendedRuns}. */
export interface SuspendedRunsOptions {
  /** @default INPUT_GATHER_MS */
  gatherMs?: number | undefined;
  /** @default HELD_ANSWER_WAIT_MS */
  heldAnswerWaitMs?: number | undefined;
  /** @default MAX_SUSPENDED_RUNS_PER_SESSION */
  maxSuspended?: number | undefined;
  /** The codec. @default PROCESS_REQUEST_STATE_CODEC (one random key per process) */
  codec?: RequestStateCodec | undefined;
}

/** The runs of one agent session that may wait for it (see the module doc). */
export class SuspendedRuns {
  /** This session's identifier, bound into every `requestState`. */
  readonly session = crypto.randomUUID();
  readonly #runs = new Map<string, WaitingRun>();
  /** Numbers the backing calls of the session's runs in the order they start. */
  #callSeq = 0;
  readonly #codec: RequestStateCodec;
  readonly #gatherMs: number;
  readonly #heldWaitMs: number;
  readonly #maxSuspended: number;

  constructor(options: SuspendedRunsOptions = {}) {
    this.#codec = options.codec ?? PROCESS_REQUEST_STATE_CODEC;
    this.#gatherMs = options.gatherMs ?? INPUT_GATHER_MS;
    this.#heldWaitMs = options.heldAnswerWaitMs ?? HELD_ANSWER_WAIT_MS;
    this.#maxSuspended = options.maxSuspended ?? MAX_SUSPENDED_RUNS_PER_SESSION;
  }

  /** Runs alive, or ended and holding their result for a retry until their state expires. */
  get size(): number {
    return this.#runs.size;
  }

  /** Ends the session's runs: each is cancelled as when the agent cancels its request. Idempotent. */
  close(): void {
    for (const run of this.#runs.values()) run.controller.abort(new Error("the agent session ended"));
  }

  /**
   * The hooks of the run a question of the server of `namespace` belongs to, or `undefined` when no run of
   * this session calls that server (the question then has no run to go to). A stdio server's question
   * does not say which of our calls it is for: questions are matched to calls in the order the calls
   * were sent (a run's first calls to the server are taken to ask first), as a server that handles its
   * calls in order asks.
   */
  callingRun(namespace: string): RunHooks | undefined {
    let best: { run: WaitingRun; seq: number } | undefined;
    for (const run of this.#runs.values()) {
      const calls = run.calls.get(namespace);
      if (run.settled !== undefined || !calls?.length) continue;
      const asked = [...run.questions.values()].filter((q) => q.asker === namespace).length;
      // The run's first call to the server that has no question yet (or its last, when all asked).
      const seq = calls[Math.min(asked, calls.length - 1)]! +
        (asked < calls.length ? 0 : Number.MAX_SAFE_INTEGER / 2);
      if (best === undefined || seq < best.seq) best = { run, seq };
    }
    return best && this.#hooks(best.run);
  }

  /**
   * Answers an `execute` request: starts the script (no `requestState`) or resumes the run the state names,
   * then waits for the run's result or its next questions.
   *
   * @param request.tool The tool name (`execute`), bound into the state with the script.
   * @param request.timeoutMs The script's deadline from now, ms (the state's expiry).
   * @param start Runs the script with the hooks (called only for a new run).
   * @throws {ProtocolError} `-32602` for an invalid, tampered, foreign or expired state, `inputResponses`
   *   without a state or over {@link MAX_INPUT_RESPONSES_BYTES}, an answer of the wrong shape, or a run
   *   already being resumed by another request.
   */
  async answer(
    request: {
      tool: string;
      script: string;
      timeoutMs: number;
      requestState?: unknown;
      inputResponses?: unknown;
      signal: AbortSignal;
      onProgress?: ((report: ProgressReport) => void) | undefined;
    },
    start: (hooks: RunHooks) => Promise<CallToolResult>,
  ): Promise<CallToolResult | InputRequiredAnswer> {
    const digest = await requestDigest(request.tool, request.script);
    let run: WaitingRun;
    if (request.requestState === undefined) {
      if (request.inputResponses !== undefined) {
        throw invalidParams(
          "inputResponses came without requestState; send back the requestState of the answer",
        );
      }
      run = new WaitingRun(digest, Date.now() + request.timeoutMs);
      this.#runs.set(run.id, run);
      run.result = start(this.#hooks(run)).catch((error): CallToolResult => ({
        content: [{
          type: "text",
          text: `Cannot run the script: ${error instanceof Error ? error.message : String(error)}`,
        }],
        isError: true,
      })).then((result) => {
        run.settled = result;
        run.notify();
        return result;
      });
    } else {
      run = await this.#resume(request.requestState, digest, request.inputResponses);
    }
    return await this.#wait(run, request.signal, request.onProgress);
  }

  async #resume(state: unknown, digest: string, responses: unknown): Promise<WaitingRun> {
    const id = await this.#codec.open(state, { session: this.session, request: digest });
    const run = this.#runs.get(id);
    if (!run) {
      throw invalidParams(
        "the run requestState names has ended (it already answered, failed or was stopped); run the script again",
      );
    }
    if (run.attached) {
      throw invalidParams("another request is resuming this run; wait for its answer");
    }
    if (responses !== undefined) this.#deliver(run, responses);
    run.attached = true; // now, not after an await: a second retry with the same state is refused
    return run;
  }

  /** Checks every answer first, then hands each to its question (unknown keys are ignored, as MCP asks). */
  #deliver(run: WaitingRun, responses: unknown): void {
    if (typeof responses !== "object" || responses === null || Array.isArray(responses)) {
      throw invalidParams("inputResponses must be an object mapping each inputRequests key to its result");
    }
    const size = JSON.stringify(responses).length;
    if (size > MAX_INPUT_RESPONSES_BYTES) {
      throw invalidParams(
        `inputResponses is ${size} characters of JSON, more than ${MAX_INPUT_RESPONSES_BYTES} (MAX_INPUT_RESPONSES_BYTES); answer with less`,
      );
    }
    const ready: [Question, unknown][] = [];
    for (const [key, value] of Object.entries(responses)) {
      const question = run.questions.get(key);
      if (!question) continue;
      const schema = question.request.method === "elicitation/create"
        ? specTypeSchemas.ElicitResult
        : specTypeSchemas.CreateMessageResult;
      const checked = schema["~standard"].validate(value) as { issues?: readonly { message?: string }[] };
      if (checked.issues?.length) {
        throw invalidParams(
          `inputResponses[${JSON.stringify(key)}] is not a result of ${question.request.method}: ${
            checked.issues[0]?.message ?? "invalid"
          }`,
        );
      }
      ready.push([question, value]);
    }
    for (const [question, value] of ready) question.resolve(value);
  }

  /** Waits for the run's result, or answers `input_required` once it has questions (gathered a moment). */
  async #wait(
    run: WaitingRun,
    signal: AbortSignal,
    onProgress: ((report: ProgressReport) => void) | undefined,
  ): Promise<CallToolResult | InputRequiredAnswer> {
    run.attached = true;
    run.progressSink = onProgress;
    run.suspended = false;
    const cancel = () => run.controller.abort(signal.reason);
    if (signal.aborted) cancel();
    signal.addEventListener("abort", cancel, { once: true });
    try {
      for (;;) {
        if (run.settled === undefined && run.questions.size === 0) await run.changed();
        if (run.settled === undefined) await new Promise((resolve) => setTimeout(resolve, this.#gatherMs));
        if (run.settled !== undefined) {
          this.#runs.delete(run.id);
          return run.settled;
        }
        const answer = await this.#suspend(run);
        if (answer) return answer;
      }
    } finally {
      signal.removeEventListener("abort", cancel);
      run.attached = false;
      run.progressSink = undefined;
    }
  }

  /** The `input_required` answer for the run's open questions, or `undefined` when a bound failed them all. */
  async #suspend(run: WaitingRun): Promise<InputRequiredAnswer | undefined> {
    const fail = (reason: string) => {
      for (const question of [...run.questions.values()]) question.reject(new Error(reason));
    };
    if (++run.rounds > MAX_INPUT_ROUNDS_PER_RUN) {
      fail(
        `the script asked the agent more than ${MAX_INPUT_ROUNDS_PER_RUN} times (MAX_INPUT_ROUNDS_PER_RUN)`,
      );
      return undefined;
    }
    const suspended = [...this.#runs.values()].filter((r) => r.suspended && r.settled === undefined).length;
    if (suspended >= this.#maxSuspended) {
      fail(
        `${suspended} scripts of this session already wait for the agent (MAX_SUSPENDED_RUNS_PER_SESSION); answer them first`,
      );
      return undefined;
    }
    const inputRequests: Record<string, InputRequest> = {};
    let size = 2;
    for (const [key, question] of run.questions) {
      const bytes = JSON.stringify(question.request).length + key.length + 4;
      if (size + bytes > MAX_INPUT_REQUESTS_BYTES) {
        question.reject(
          new Error(
            `the question does not fit the ${MAX_INPUT_REQUESTS_BYTES} characters one answer to the agent carries (MAX_INPUT_REQUESTS_BYTES)`,
          ),
        );
        continue;
      }
      size += bytes;
      inputRequests[key] = question.request;
    }
    if (Object.keys(inputRequests).length === 0) return undefined;
    const expiresAtMs = Math.max(run.deadlineAtMs, run.held > 0 ? Date.now() + this.#heldWaitMs : 0);
    const requestState = await this.#codec.issue({
      session: this.session,
      run: run.id,
      request: run.digest,
      expiresAtMs,
    });
    run.suspended = true;
    if (run.stateExpiresAtMs === undefined) void run.result.then(() => this.#forget(run));
    run.stateExpiresAtMs = expiresAtMs;
    const keys = Object.keys(inputRequests);
    return {
      resultType: "input_required",
      inputRequests,
      requestState,
      content: [{
        type: "text",
        text: `The script waits for ${keys.length} answer(s) (${
          keys.join(", ")
        }); send the same execute again with inputResponses and requestState.`,
      }],
    };
  }

  /** A run that ended while suspended keeps its result for a retry until its latest state expires. */
  #forget(run: WaitingRun): void {
    if (run.attached || !this.#runs.has(run.id)) return;
    const timer = setTimeout(() => {
      if (!run.attached) this.#runs.delete(run.id);
    }, Math.max(0, (run.stateExpiresAtMs ?? 0) - Date.now()));
    Deno.unrefTimer(timer);
  }

  /** The run's hooks (one object per run). */
  #hooks(run: WaitingRun): RunHooks {
    return run.hooks ??= {
      signal: run.controller.signal,
      progress: (report) => run.progressSink?.(report),
      callStarted: (namespace) => {
        const seq = ++this.#callSeq;
        const calls = run.calls.get(namespace) ?? [];
        calls.push(seq);
        run.calls.set(namespace, calls);
        return () => {
          const at = calls.indexOf(seq);
          if (at >= 0) calls.splice(at, 1);
          if (calls.length === 0 && run.calls.get(namespace) === calls) run.calls.delete(namespace);
        };
      },
      ask: (asker, request, options) => this.#ask(run, asker, request, options),
    };
  }

  #ask(
    run: WaitingRun,
    asker: string,
    request: InputRequest,
    options: { signal: AbortSignal; holdsDeadline?: boolean | undefined },
  ): Promise<unknown> {
    const { signal, holdsDeadline = false } = options;
    const { promise, resolve, reject } = Promise.withResolvers<unknown>();
    const key = run.nextKey(asker);
    const heldSince = Date.now();
    if (holdsDeadline) run.held++;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = () => {
      if (!run.questions.delete(key)) return false;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      if (holdsDeadline) {
        run.held--;
        run.deadlineAtMs += Date.now() - heldSince; // the clock stood still meanwhile
      }
      return true;
    };
    const onAbort = () =>
      done() && reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    run.questions.set(key, {
      asker,
      request,
      resolve: (value) => done() && resolve(value),
      reject: (error) => done() && reject(error),
    });
    if (holdsDeadline) {
      timer = setTimeout(
        () => done() && reject(new Error(`the agent did not answer within ${this.#heldWaitMs} ms`)),
        this.#heldWaitMs,
      );
      Deno.unrefTimer(timer);
    }
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    run.notify();
    return promise;
  }
}

function invalidParams(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot resume execute: ${message}`);
}
