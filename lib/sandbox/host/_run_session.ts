/**
 * One run in one sandbox process, seen from the host: the deadline timer, cancellation, host calls, console
 * lines, and the kill when a stopped guest does not answer within the grace period. While a host call holds
 * the deadline clock (a person is asked to confirm), the guest's busy time is counted instead (from each
 * message that wakes it to its `waiting`): a script that keeps computing while it waits spends the time it
 * had left, and is then stopped, and killed if it is inside a native built-in.
 *
 * @module
 */
import {
  DEFAULT_MAX_IN_FLIGHT_CHARS,
  type EngineOutcome,
  type HostReply,
  MAX_TOOL_ARGS_BYTES,
  type StopReason,
} from "../protocol/run_types.ts";
import { maxCallArgsBytes } from "../protocol/globals.ts";
import type { FromGuest, ToGuest } from "../protocol/messages.ts";
import type {
  HostCallControl,
  HostCallRequest,
  RunOptions,
  SandboxFailure,
  SandboxResult,
} from "../protocol/types.ts";
import type { GuestProcess, GuestSession } from "./_guest_process.ts";

/**
 * Longest server or tool name a script's call may carry, UTF-16 code units (1,024; MCP asks tool names to be
 * at most 128 characters): a longer one is refused before it is matched against any listing.
 */
export const MAX_TOOL_KEY_CHARS = 1024;

/** How often the guest's busy time is checked while the deadline clock is held, milliseconds. */
export const HELD_BUSY_POLL_MS = 100;

/** How a session ended. */
export interface SessionEnd {
  result: SandboxResult;
  /** `false` when the guest was killed, crashed or its module is poisoned. */
  slotUsable: boolean;
  /** Size of the guest's WASM memory after the run, bytes; `undefined` when the guest did not answer. */
  wasmBytes: number | undefined;
}

/** One run in one guest: deadline, cancellation, host calls, console, and the kill if the guest hangs. */
export class RunSession implements GuestSession {
  /** The result, whether the guest can serve another run, and its WASM memory size when it said so. */
  readonly result: Promise<SessionEnd>;
  readonly #slot: GuestProcess;
  readonly #runId: number;
  readonly #options: RunOptions;
  readonly #graceMs: number;
  readonly #startedAt: number;
  readonly #calls = new AbortController();
  readonly #console: string[] = [];
  #consoleDropped = false;
  /** UTF-16 units of the arguments of the calls being answered. */
  #inFlightChars = 0;
  /** UTF-16 units of console lines received (each line one more for its newline). */
  #consoleChars = 0;
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
  /** Milliseconds the guest computed while the clock is held, up to its last `waiting`. */
  #heldBusyMs = 0;
  /** `performance.now()` of the message that woke the guest while the clock is held; `undefined` while it waits. */
  #heldBusySince: number | undefined;
  #heldBusyTimer: ReturnType<typeof setInterval> | undefined;
  #killTimer: ReturnType<typeof setTimeout> | undefined;
  /** The guest's next timer, when it blocks on its pipe (see the `wake` message). */
  #wakeTimer: ReturnType<typeof setTimeout> | undefined;
  #resolve: (value: SessionEnd) => void = () => {};
  #wasmBytes: number | undefined;
  readonly #onAbort = () => this.#stop("cancelled");
  /** What every host call of the run may do to it (one object for the run, not one per call). */
  readonly #control: HostCallControl = { holdDeadline: () => this.#hold() };

  /**
   * Starts the run in `slot` (which must be ready and serving nothing).
   *
   * @param timing.graceMs Time a stopped run gets before its process is killed, milliseconds.
   * @param timing.startedAt `performance.now()` when `SandboxPool.run()` was called (for `durationMs`).
   * @param timing.timeoutMs Time the run has left, milliseconds (its limit less the wait for a process);
   *   a timeout still reports the whole `limits.timeoutMs`.
   */
  constructor(
    slot: GuestProcess,
    runId: number,
    options: RunOptions,
    timing: { graceMs: number; startedAt: number; timeoutMs: number },
  ) {
    this.#slot = slot;
    this.#runId = runId;
    this.#options = options;
    this.#graceMs = timing.graceMs;
    this.#startedAt = timing.startedAt;
    this.result = new Promise((resolve) => this.#resolve = resolve);
    slot.session = this;
    const { script, namespaces } = options;
    const limits = { ...options.limits, timeoutMs: timing.timeoutMs };
    slot.post({ type: "run", runId, script, namespaces, limits });
    this.#deadlineAt = performance.now() + limits.timeoutMs;
    this.#deadlineTimer = setTimeout(() => this.#stop("timeout"), limits.timeoutMs);
    options.signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  receive(message: FromGuest): void {
    if (this.#finished || !("runId" in message) || message.runId !== this.#runId) return;
    switch (message.type) {
      case "call":
        this.#call(message.callId, message.namespace, message.key, message.argsJson);
        break;
      case "console":
        // The guest keeps its console within `maxConsoleBytes`; one that does not is not believed.
        this.#consoleChars += message.line.length + 1;
        if (this.#consoleChars <= this.#options.limits.maxConsoleBytes + 1) this.#console.push(message.line);
        else this.#consoleDropped = true;
        break;
      case "consoleDropped":
        this.#consoleDropped = true;
        break;
      case "waiting":
        if (this.#heldBusySince !== undefined) {
          this.#heldBusyMs += performance.now() - this.#heldBusySince;
          this.#heldBusySince = undefined;
        }
        break;
      case "wake":
        // One wake-up at a time: the guest asks again each time it blocks.
        clearTimeout(this.#wakeTimer);
        this.#wakeTimer = setTimeout(() => {
          if (!this.#finished) this.#post({ type: "tick", runId: this.#runId });
        }, Math.min(message.delayMs, 2 ** 31 - 1));
        break;
      case "done":
        this.#wasmBytes = message.wasmBytes;
        this.#finishWith(message.outcome);
        break;
    }
  }

  /** The guest died or cannot run: the run fails and the guest is replaced. */
  crash(reason: string): void {
    if (this.#finished) return;
    const failure: SandboxFailure = this.#stopping
      ? this.#stopFailure(this.#stopping)
      : { error: "internal", message: `The sandbox process failed: ${reason}` };
    this.#end(failure, false);
  }

  /** The pool is closing: end now as cancelled. */
  abandon(): void {
    if (!this.#finished) this.#end({ error: "cancelled" }, false);
  }

  #call(callId: number, namespace: string, key: string, argsJson: string | undefined): void {
    this.#toolCalls++;
    const reply = (value: HostReply) => this.#reply(callId, value);
    // The guest stops at `maxToolCalls` itself; calls past it from a guest that does not are refused here.
    const { maxToolCalls } = this.#options.limits;
    if (this.#toolCalls > maxToolCalls) {
      this.#toolCalls = maxToolCalls;
      return reply({
        ok: false,
        message: `This script reached its limit of ${maxToolCalls} tool calls (max-tool-calls)`,
      });
    }
    // A name is matched against the server's tools (and near misses suggested) on this thread: bounded.
    if (namespace.length > MAX_TOOL_KEY_CHARS || key.length > MAX_TOOL_KEY_CHARS) {
      const name = `${namespace.slice(0, 40)}.${key.slice(0, 40)}`;
      return reply({
        ok: false,
        message:
          `The tool name ${JSON.stringify(name)}\u2026 is ${
            namespace.length + key.length + 1
          } characters long; ` +
          `a server name and a tool name are each at most ${MAX_TOOL_KEY_CHARS} characters`,
      });
    }
    // The guest refuses larger arguments already; this guards the host thread's JSON.parse regardless.
    const maxArgsBytes = maxCallArgsBytes(namespace, MAX_TOOL_ARGS_BYTES);
    if (argsJson !== undefined && argsJson.length > maxArgsBytes) {
      return reply({
        ok: false,
        message: `The arguments of ${namespace}.${key}() are larger than ${maxArgsBytes} bytes`,
      });
    }
    // The guest keeps the arguments in flight within the budget itself; one that does not is refused here.
    const chars = argsJson?.length ?? 0;
    const maxInFlight = this.#options.limits.maxInFlightChars ?? DEFAULT_MAX_IN_FLIGHT_CHARS;
    if (this.#inFlightChars + chars > maxInFlight) {
      return reply({
        ok: false,
        message:
          `${namespace}.${key}() was not sent: the arguments in flight would pass ${maxInFlight} characters`,
      });
    }
    let args: unknown;
    try {
      args = argsJson === undefined ? undefined : JSON.parse(argsJson);
    } catch (error) {
      return reply({ ok: false, message: `Cannot read the tool arguments: ${messageOf(error)}` });
    }
    this.#inFlightChars += chars;
    const request = { namespace, key, args };
    // Called in this turn (no microtask hop before the backing server's write); a synchronous throw
    // answers the call like a rejection.
    let answer: Promise<unknown>;
    try {
      answer = Promise.resolve(this.#options.hostCall(request, this.#calls.signal, this.#control));
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer.then((value) => {
      // The reply's JSON, for `onCallReplied`.
      let json: string | undefined;
      try {
        json = this.#replyWith(callId, namespace, key, value);
      } catch (error) {
        // Sending it failed (a frame past the pipe's cap, no memory left to encode it): only this call fails.
        json = undefined;
        this.#reply(callId, {
          ok: false,
          message: `The tool result could not be sent to the script: ${messageOf(error)}`,
        });
      } finally {
        this.#settled(chars, request, argsJson, json);
      }
    }, (error: unknown) => {
      this.#reply(callId, { ok: false, message: messageOf(error) });
      this.#settled(chars, request, argsJson, undefined);
    });
  }

  /**
   * Answers call `callId` with the host call's `value` as JSON; returns that JSON when it was sent, or
   * `undefined` when the value cannot be JSON or would not fit the script's heap (the call fails instead).
   */
  #replyWith(callId: number, namespace: string, key: string, value: unknown): string | undefined {
    let json: string | undefined;
    try {
      json = value === undefined ? undefined : JSON.stringify(value);
    } catch (error) {
      this.#reply(callId, {
        ok: false,
        message: `The tool result cannot be represented as JSON: ${messageOf(error)}`,
      });
      return undefined;
    }
    // Its JSON alone would not fit the script's heap: sending it would only end the whole run as
    // memory_exhausted (after framing it, the host's longest task: 60 MB held it for 0.3 s).
    const memoryLimitBytes = this.#options.limits.memoryLimitBytes;
    if (json !== undefined && json.length > memoryLimitBytes) {
      this.#reply(callId, {
        ok: false,
        message: tooLargeForScript(`${namespace}.${key}()`, json, memoryLimitBytes),
      });
      return undefined;
    }
    this.#reply(callId, { ok: true, json });
    return json;
  }

  /** Sends call `callId`'s reply, unless the run is over. */
  #reply(callId: number, value: HostReply): void {
    if (!this.#finished) this.#post({ type: "reply", runId: this.#runId, callId, reply: value });
  }

  /**
   * A call's reply was posted (or dropped): its arguments leave the in-flight budget, and its sizes are told
   * a microtask later, after the reply's write (queued first, see `GuestProcess.post`): measuring the texts
   * (a character loop, ~0.1 ms for a 100 KB result) is then off the path of the reply.
   */
  #settled(chars: number, request: HostCallRequest, argsJson?: string, resultJson?: string): void {
    this.#inFlightChars -= chars;
    const told = this.#options.onCallReplied;
    if (told) queueMicrotask(() => told(request, argsJson, resultJson));
  }

  /** Stops the deadline clock until the returned release (see `HostCallControl.holdDeadline`). */
  #hold(): () => void {
    if (this.#finished || this.#stopping) return () => {};
    if (this.#holds++ === 0) {
      clearTimeout(this.#deadlineTimer);
      this.#heldRemainingMs = Math.max(0, this.#deadlineAt - performance.now());
      // Busy from now until the guest says it waits (it may be computing, or blocked and woken by this).
      this.#heldBusyMs = 0;
      this.#heldBusySince = performance.now();
      this.#heldBusyTimer = setInterval(() => {
        if (this.#heldBusySpentMs() > this.#heldRemainingMs) this.#stop("timeout");
      }, HELD_BUSY_POLL_MS);
      this.#post({ type: "deadline", runId: this.#runId, remainingMs: null });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holds > 0 || this.#finished || this.#stopping) return;
      // The time left is what was left at the hold, less what the guest computed meanwhile.
      const leftMs = Math.max(0, this.#heldRemainingMs - this.#heldBusySpentMs());
      this.#unwatchHeld();
      this.#deadlineAt = performance.now() + leftMs;
      this.#deadlineTimer = setTimeout(() => this.#stop("timeout"), leftMs);
      this.#post({ type: "deadline", runId: this.#runId, remainingMs: leftMs });
    };
  }

  /** Sends the guest a message; while the clock is held, the guest is busy from then until its `waiting`. */
  #post(message: ToGuest): void {
    if (this.#heldBusyTimer !== undefined) this.#heldBusySince ??= performance.now();
    this.#slot.post(message);
  }

  #unwatchHeld(): void {
    clearInterval(this.#heldBusyTimer);
    this.#heldBusyTimer = undefined;
    this.#heldBusySince = undefined;
  }

  /** Milliseconds the guest computed since the clock was held. */
  #heldBusySpentMs(): number {
    const current = this.#heldBusySince === undefined ? 0 : performance.now() - this.#heldBusySince;
    return this.#heldBusyMs + current;
  }

  #stop(reason: StopReason): void {
    if (this.#finished || this.#stopping) return;
    this.#stopping = reason;
    this.#unwatchHeld();
    // The message and the aborted host calls reach a script that waits on a promise; a busy one has the
    // same deadline of its own (polled between interpreter steps), and one stuck in a native built-in is
    // killed when the grace ends.
    this.#post({ type: "stop", runId: this.#runId, reason });
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
    // The guest's deadline is what was left after the wait for a process; the agent hears the whole limit.
    const failure: SandboxFailure = outcome.failure.error === "script_timeout"
      ? this.#stopFailure("timeout")
      : outcome.failure;
    const stoppedByGuest = failure.error === "script_timeout" || failure.error === "cancelled";
    // The host's reason wins when both ends stopped the run (e.g. cancelled just as the deadline passed).
    this.#end(
      stoppedByGuest && this.#stopping ? this.#stopFailure(this.#stopping) : failure,
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
    clearTimeout(this.#wakeTimer);
    this.#unwatchHeld();
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

/**
 * The message of a tool result whose JSON is longer than the script's heap limit, so that the script cannot
 * receive it: what, how big against which limit, and how to get less.
 */
function tooLargeForScript(call: string, json: string, memoryLimitBytes: number): string {
  const count = (n: number) => n.toLocaleString("en-US");
  return `Cannot pass the result of ${call} into the script: its JSON has ${
    count(json.length)
  } characters, ` +
    `more than the script's memory limit of ${count(memoryLimitBytes)} bytes ([mcp] script-memory-limit-mb ` +
    `= ${
      memoryLimitBytes / (1024 * 1024)
    }). Ask the tool for less (a filter, a smaller page) or raise the limit`;
}
