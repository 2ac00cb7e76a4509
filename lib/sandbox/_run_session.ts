/**
 * One run on one sandbox Worker, seen from the host: the deadline timer, cancellation, host calls, console
 * lines, and the kill when a stopped Worker does not answer within the grace period.
 *
 * @module
 */
import { type EngineOutcome, type HostReply, MAX_TOOL_ARGS_BYTES, type StopReason } from "./_run_types.ts";
import { encodeStopReason, type FromSandbox, STOP_REASON, STOP_RUN_ID } from "./_protocol.ts";
import type { RunOptions, SandboxFailure, SandboxResult } from "./types.ts";
import type { SlotSession, WorkerSlot } from "./_worker_slot.ts";

/** How a session ended. */
export interface SessionEnd {
  result: SandboxResult;
  /** `false` when the Worker was killed, crashed or its module is poisoned. */
  slotUsable: boolean;
  /** Size of the Worker's WASM memory after the run, bytes; `undefined` when the Worker did not answer. */
  wasmBytes: number | undefined;
}

/** One run on one Worker: deadline, cancellation, host calls, console, and the kill if the Worker hangs. */
export class RunSession implements SlotSession {
  /** The result, whether the Worker can serve another run, and its WASM memory size when it said so. */
  readonly result: Promise<SessionEnd>;
  readonly #slot: WorkerSlot;
  readonly #runId: number;
  readonly #options: RunOptions;
  readonly #graceMs: number;
  readonly #startedAt: number;
  readonly #calls = new AbortController();
  readonly #console: string[] = [];
  #consoleDropped = false;
  #droppedAmount: { lines: number; bytes: number } | undefined;
  #toolCalls = 0;
  #stopping: StopReason | undefined;
  #finished = false;
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  /** `performance.now()` at which the deadline passes (while the clock runs). */
  #deadlineAt: number;
  /** Deadline holds not yet released (see `HostCallControl.holdDeadline`). */
  #holds = 0;
  /** Milliseconds left when the clock was held. */
  #heldRemainingMs = 0;
  #killTimer: ReturnType<typeof setTimeout> | undefined;
  #resolve: (value: SessionEnd) => void = () => {};
  #wasmBytes: number | undefined;
  readonly #onAbort = () => this.#stop("cancelled");

  constructor(slot: WorkerSlot, runId: number, options: RunOptions, graceMs: number, startedAt: number) {
    this.#slot = slot;
    this.#runId = runId;
    this.#options = options;
    this.#graceMs = graceMs;
    this.#startedAt = startedAt;
    this.result = new Promise((resolve) => this.#resolve = resolve);
    slot.session = this;
    const { script, namespaces, limits } = options;
    slot.post({ type: "run", runId, script, namespaces, limits, channel: slot.beginRun() });
    this.#deadlineAt = performance.now() + limits.timeoutMs;
    this.#deadlineTimer = setTimeout(() => this.#stop("timeout"), limits.timeoutMs);
    options.signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  receive(message: FromSandbox): void {
    if (this.#finished || !("runId" in message) || message.runId !== this.#runId) return;
    switch (message.type) {
      case "call":
        this.#slot.consumed(message.head);
        this.#call(message.callId, message.namespace, message.key, message.argsJson);
        break;
      case "console":
        this.#console.push(message.line);
        break;
      case "consoleDropped":
        this.#consoleDropped = true;
        break;
      case "done":
        this.#wasmBytes = message.wasmBytes;
        this.#finishWith(message.outcome);
        break;
    }
  }

  /** The Worker died or cannot run: the run fails and the Worker is replaced. */
  crash(reason: string): void {
    if (this.#finished) return;
    const failure: SandboxFailure = this.#stopping
      ? this.#stopFailure(this.#stopping)
      : { error: "internal", message: `The sandbox worker failed: ${reason}` };
    this.#end(failure, false);
  }

  /** The pool is closing: end now as cancelled. */
  abandon(): void {
    if (!this.#finished) this.#end({ error: "cancelled" }, false);
  }

  #call(callId: number, namespace: string, key: string, argsJson: string | undefined): void {
    this.#toolCalls++;
    const reply = (value: HostReply) => {
      if (!this.#finished) this.#slot.send({ type: "reply", runId: this.#runId, callId, reply: value });
    };
    // The Worker refuses larger arguments already; this guards the host thread's JSON.parse regardless.
    if (argsJson !== undefined && argsJson.length > MAX_TOOL_ARGS_BYTES) {
      return reply({
        ok: false,
        message: `The arguments of ${namespace}.${key}() are larger than ${MAX_TOOL_ARGS_BYTES} bytes`,
      });
    }
    let args: unknown;
    try {
      args = argsJson === undefined ? undefined : JSON.parse(argsJson);
    } catch (error) {
      return reply({ ok: false, message: `Cannot read the tool arguments: ${messageOf(error)}` });
    }
    const signal = this.#calls.signal;
    Promise.resolve()
      .then(() =>
        this.#options.hostCall({ namespace, key, args }, signal, { holdDeadline: () => this.#hold() })
      )
      .then((value) => {
        let json: string | undefined;
        try {
          json = value === undefined ? undefined : JSON.stringify(value);
        } catch (error) {
          return reply({
            ok: false,
            message: `The tool result cannot be represented as JSON: ${messageOf(error)}`,
          });
        }
        reply({ ok: true, json });
      }, (error: unknown) => reply({ ok: false, message: messageOf(error) }));
  }

  /** Stops the deadline clock until the returned release (see `HostCallControl.holdDeadline`). */
  #hold(): () => void {
    if (this.#finished || this.#stopping) return () => {};
    if (this.#holds++ === 0) {
      clearTimeout(this.#deadlineTimer);
      this.#heldRemainingMs = Math.max(0, this.#deadlineAt - performance.now());
      this.#slot.send({ type: "deadline", runId: this.#runId, remainingMs: null });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holds > 0 || this.#finished || this.#stopping) return;
      this.#deadlineAt = performance.now() + this.#heldRemainingMs;
      this.#deadlineTimer = setTimeout(() => this.#stop("timeout"), this.#heldRemainingMs);
      this.#slot.send({ type: "deadline", runId: this.#runId, remainingMs: this.#heldRemainingMs });
    };
  }

  #stop(reason: StopReason): void {
    if (this.#finished || this.#stopping) return;
    this.#stopping = reason;
    // The flags reach a script that is busy (polled by QuickJS's interrupt handler); the message and the
    // aborted host calls reach one that waits on a promise.
    Atomics.store(this.#slot.stopFlags, STOP_REASON, encodeStopReason(reason));
    Atomics.store(this.#slot.stopFlags, STOP_RUN_ID, this.#runId);
    this.#slot.post({ type: "stop", runId: this.#runId, reason });
    // A Worker blocked on its reply channel wakes and reads the flags.
    this.#slot.ring();
    this.#calls.abort(reason);
    this.#killTimer = setTimeout(() => {
      if (this.#stopping) this.#end(this.#stopFailure(this.#stopping), false);
    }, this.#graceMs);
  }

  #finishWith(outcome: EngineOutcome): void {
    this.#droppedAmount = outcome.consoleDropped;
    if (outcome.ok) {
      this.#resolveWith({
        ok: true,
        valueJson: outcome.valueJson,
        originalBytes: outcome.originalBytes,
        truncated: outcome.truncated,
        ...this.#common(),
      }, !outcome.poisoned);
      return;
    }
    const { failure } = outcome;
    const stoppedByWorker = failure.error === "script_timeout" || failure.error === "cancelled";
    // The host's reason wins when both ends stopped the run (e.g. cancelled just as the deadline passed).
    this.#end(
      stoppedByWorker && this.#stopping ? this.#stopFailure(this.#stopping) : failure,
      !outcome.poisoned,
    );
  }

  #stopFailure(reason: StopReason): SandboxFailure {
    return reason === "timeout"
      ? { error: "script_timeout", limit_secs: this.#options.limits.timeoutMs / 1000 }
      : { error: "cancelled" };
  }

  #end(failure: SandboxFailure, slotUsable: boolean): void {
    this.#resolveWith({ ok: false, failure, ...this.#common() }, slotUsable);
  }

  #common() {
    return {
      console: this.#console,
      consoleDropped: this.#consoleDropped || this.#droppedAmount !== undefined,
      ...(this.#droppedAmount ? { consoleDroppedAmount: this.#droppedAmount } : {}),
      toolCalls: this.#toolCalls,
      durationMs: performance.now() - this.#startedAt,
    };
  }

  #resolveWith(result: SandboxResult, slotUsable: boolean): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#deadlineTimer);
    clearTimeout(this.#killTimer);
    this.#options.signal?.removeEventListener("abort", this.#onAbort);
    // Calls still pending when the script ended are abandoned: tell their owners.
    this.#calls.abort("finished");
    if (this.#slot.session === this) this.#slot.session = undefined;
    this.#resolve({ result, slotUsable, wasmBytes: this.#wasmBytes });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
