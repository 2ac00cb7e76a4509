/**
 * The bridge between a running script and the host: what the prelude's native functions do (tool calls,
 * console lines, timers) once the run is bound to its prepared context (`_prepared_context.ts`), marshalling tool
 * arguments out of QuickJS and replies back in, and the per-call budgets (tool-call count, arguments size,
 * result depth, pending timers).
 *
 * @module
 */
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import { jsonNestingDepth, MAX_RESULT_DEPTH, nestsDeeperThan } from "../protocol/json_depth.ts";
import {
  DEFAULT_MAX_IN_FLIGHT_CHARS,
  type Ending,
  type EngineIo,
  type EngineRequest,
  type HostReply,
  type Internals,
  MAX_PENDING_TIMERS,
  MAX_TOOL_ARGS_BYTES,
} from "../protocol/run_types.ts";
import { utf8ByteLength } from "../protocol/utf8.ts";
import {
  maxCallArgsBytes,
  SESSION_GLOBAL,
  SESSION_VALUE_MAX_BYTES,
  sessionValueRefusal,
} from "../protocol/globals.ts";

/** What the bridge needs from the run that owns it. */
export interface BridgeHooks {
  readonly request: EngineRequest;
  readonly io: EngineIo;
  /** Whether the run is over (late replies and timers are then dropped). */
  isFinished(): boolean;
  /** Queues guest work for the run loop, which runs it and stops on the ending it returns. */
  push(event: () => Ending | undefined): void;
  /** Emits one console line (within the run's console budget). */
  log(line: string): void;
  /** Keeps a handle alive until the run disposes its context. */
  own(handle: QuickJSHandle): QuickJSHandle;
}

/**
 * The host side of one run's prelude: installs the run's namespaces, then serves its tool calls and timers
 * (the `call`/`log`/`startTimer`/`cancelTimer` of `PreparedContextHost`).
 */
export class ScriptBridge {
  readonly #ctx: QuickJSContext;
  readonly #hooks: BridgeHooks;
  readonly #internals: Internals;
  #limitError: QuickJSHandle | undefined;
  #toolCalls = 0;
  #nextCallId = 1;
  #pendingCalls = 0;
  /** Arguments JSON of the calls sent and not yet answered, UTF-16 code units. */
  #inFlightChars = 0;
  readonly #timers = new Map<number, ReturnType<typeof setTimeout>>();
  /** `Date.now()` at which each pending timer is due. */
  readonly #timerDue = new Map<number, number>();

  /** @param internals The prelude's functions, evaluated in `ctx` (owned by the context's vessel). */
  constructor(ctx: QuickJSContext, internals: Internals, hooks: BridgeHooks) {
    this.#ctx = ctx;
    this.#internals = internals;
    this.#hooks = hooks;
  }

  /** Tool calls dispatched so far. */
  get toolCalls(): number {
    return this.#toolCalls;
  }

  /** The prelude's functions. */
  get internals(): Internals {
    return this.#internals;
  }

  /** The `ToolCallLimitError` thrown at the call past `maxToolCalls`, once a call passed it. */
  get limitError(): QuickJSHandle | undefined {
    return this.#limitError;
  }

  /** Whether no tool call and no timer is pending. */
  get idle(): boolean {
    return this.#pendingCalls === 0 && this.#timers.size === 0;
  }

  /** Milliseconds until the next pending timer is due (0 if overdue), `Infinity` when none is pending. */
  nextTimerInMs(): number {
    let next = Infinity;
    for (const due of this.#timerDue.values()) next = Math.min(next, due);
    return next === Infinity ? next : Math.max(0, next - Date.now());
  }

  /** Cancels every pending timer (at the end of the run). */
  clearTimers(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#timerDue.clear();
  }

  /** Defines the run's namespaces; returns an ending if that failed. */
  install(): Ending | undefined {
    const ctx = this.#ctx;
    const { request } = this.#hooks;
    const names = ctx.newString(JSON.stringify(request.namespaces));
    const heap = ctx.newNumber(request.limits.memoryLimitBytes);
    const made = ctx.callFunction(this.#internals.install, ctx.undefined, names, heap);
    names.dispose();
    heap.dispose();
    if (made.error) return { kind: "thrown", prefix: "Cannot start the sandbox: ", error: made.error };
    made.value.dispose();
    return undefined;
  }

  /** `native.log(line)`. */
  log(line: string): void {
    this.#hooks.log(line);
  }

  /** `native.cancelTimer(id)`. */
  cancelTimer(id: number): void {
    clearTimeout(this.#timers.get(id));
    this.#timers.delete(id);
    this.#timerDue.delete(id);
  }

  /** `native.call(ns, key, argsJson)`: starts the host call; returns its id, or the error to reject with. */
  call(nsHandle: QuickJSHandle, keyHandle: QuickJSHandle, argsHandle: QuickJSHandle): QuickJSHandle {
    return this.#startCall(nsHandle, keyHandle, argsHandle);
  }

  /** `native.startTimer(id, delayMs)`. */
  startTimer(id: number, delayMs: number): QuickJSHandle {
    return this.#startTimer(id, delayMs);
  }

  #startCall(nsHandle: QuickJSHandle, keyHandle: QuickJSHandle, argsHandle: QuickJSHandle) {
    const ctx = this.#ctx;
    if (this.#toolCalls >= this.#hooks.request.limits.maxToolCalls) return this.#limitErrorHandle().dup();
    const namespace = ctx.getString(nsHandle);
    const key = ctx.getString(keyHandle);
    // The calls part passes JSON text or undefined, which reads as the word (never JSON text): one crossing.
    const argsText = ctx.getString(argsHandle);
    const argsJson = argsText === "undefined" ? undefined : argsText;
    const maxArgsBytes = maxCallArgsBytes(namespace, MAX_TOOL_ARGS_BYTES);
    if (argsJson !== undefined && tooLarge(argsJson, maxArgsBytes)) {
      return this.#newError({
        name: "RangeError",
        message: namespace === SESSION_GLOBAL
          ? sessionArgsRefusal(argsJson)
          : `The arguments of ${namespace}.${key}() are ${utf8ByteLength(argsJson)} bytes of JSON, more ` +
            `than the ${MAX_TOOL_ARGS_BYTES} bytes a tool call may carry; the call was not sent`,
      });
    }
    const chars = argsJson?.length ?? 0;
    const maxInFlight = this.#hooks.request.limits.maxInFlightChars ?? DEFAULT_MAX_IN_FLIGHT_CHARS;
    if (this.#inFlightChars + chars > maxInFlight) {
      return this.#newError({
        name: "RangeError",
        message:
          `${namespace}.${key}() was not sent: with its ${mib(chars)} MiB of arguments, the tool-call ` +
          `arguments in flight would pass the ${mib(maxInFlight)} MiB budget of a script ` +
          "([mcp] max-in-flight-mb); await some calls before starting more",
      });
    }
    this.#toolCalls++;
    this.#pendingCalls++;
    this.#inFlightChars += chars;
    const id = this.#nextCallId++;
    const deliver = (reply: HostReply) => {
      this.#pendingCalls--;
      this.#inFlightChars -= chars;
      if (this.#hooks.isFinished()) return;
      this.#hooks.push(() => this.#settle(id, admitted(namespace, key, reply)));
    };
    let started: Promise<HostReply>;
    try {
      started = this.#hooks.io.hostCall(namespace, key, argsJson);
    } catch (error) {
      started = Promise.resolve({
        ok: false,
        message: error instanceof Error ? error.message : String(error),
      });
    }
    started.then(
      deliver,
      (error: unknown) =>
        deliver({ ok: false, message: error instanceof Error ? error.message : String(error) }),
    );
    return ctx.newNumber(id);
  }

  /** The `ToolCallLimitError` every call past `maxToolCalls` rejects with, made on the first such call. */
  #limitErrorHandle(): QuickJSHandle {
    return this.#limitError ??= this.#hooks.own(this.#newError({
      name: "ToolCallLimitError",
      message:
        `This script reached its limit of ${this.#hooks.request.limits.maxToolCalls} tool calls (max-tool-calls)`,
    }));
  }

  /**
   * An `Error` with own `name` and `message` defined by the core (`ctx.newError` assigns them, which runs
   * any setter the script put on `Error.prototype`, inside this native call: a setter that calls a tool
   * re-entered the host without end and overflowed its stack).
   */
  #newError(error: { name: string; message: string }): QuickJSHandle {
    const ctx = this.#ctx;
    const made = ctx.newError();
    for (const key of ["name", "message"] as const) {
      const keyHandle = ctx.newString(key);
      const value = ctx.newString(error[key]);
      const defined = ctx.callFunction(this.#internals.define, ctx.undefined, made, keyHandle, value);
      keyHandle.dispose();
      value.dispose();
      if (defined.error) defined.error.dispose();
      else defined.value.dispose();
    }
    return made;
  }

  #settle(id: number, reply: HostReply): Ending | undefined {
    const ctx = this.#ctx;
    const idHandle = ctx.newNumber(id);
    const text = reply.ok ? reply.json : reply.message;
    const payload = text === undefined ? undefined : ctx.newString(text);
    const ok = reply.ok ? ctx.true : ctx.false;
    const result = ctx.callFunction(
      this.#internals.settle,
      ctx.undefined,
      idHandle,
      ok,
      payload ?? ctx.undefined,
    );
    idHandle.dispose();
    payload?.dispose();
    if (result.error) {
      return { kind: "thrown", prefix: "Cannot deliver a tool result: ", error: result.error };
    }
    result.value.dispose();
    return undefined;
  }

  #startTimer(id: number, delayMs: number): QuickJSHandle {
    const ctx = this.#ctx;
    if (this.#timers.size >= MAX_PENDING_TIMERS) return ctx.false;
    const delay = Math.min(delayMs, 2 ** 31 - 1);
    const timer = setTimeout(() => {
      this.#timers.delete(id);
      this.#timerDue.delete(id);
      if (this.#hooks.isFinished()) return;
      this.#hooks.push(() => {
        const idHandle = ctx.newNumber(id);
        const result = ctx.callFunction(this.#internals.fireTimer, ctx.undefined, idHandle);
        idHandle.dispose();
        if (result.error) {
          return {
            kind: "thrown",
            prefix: "Uncaught exception in a setTimeout callback: ",
            error: result.error,
          };
        }
        result.value.dispose();
        return undefined;
      });
    }, delay);
    this.#timers.set(id, timer);
    this.#timerDue.set(id, Date.now() + (delay > 0 ? delay : 0));
    return ctx.true;
  }
}

/**
 * The reply as it may enter QuickJS: a result nested deeper than {@link MAX_RESULT_DEPTH} becomes a failure
 * of that one call (QuickJS would overflow the native stack parsing it and take the module down).
 */
function admitted(namespace: string, key: string, reply: HostReply): HostReply {
  if (!reply.ok || reply.json === undefined || !nestsDeeperThan(reply.json, MAX_RESULT_DEPTH)) return reply;
  const depth = jsonNestingDepth(reply.json);
  return {
    ok: false,
    message: `The result of ${namespace}.${key} is nested too deeply (${depth} levels) to pass into the ` +
      `script; at most ${MAX_RESULT_DEPTH} levels can cross. Ask the tool for less deeply nested data.`,
  };
}

/** Whether arguments JSON exceeds `maxBytes` (counting bytes only when it can matter). */
function tooLarge(argsJson: string, maxBytes: number): boolean {
  if (argsJson.length > maxBytes) return true;
  return argsJson.length * 3 > maxBytes && utf8ByteLength(argsJson) > maxBytes;
}

/**
 * The refusal of a `$session.set` whose arguments (`{"key":...,"value":...}`, as the prelude writes them) are
 * past what it may carry: names the key and the value's size, as the host's store would.
 */
function sessionArgsRefusal(argsJson: string): string {
  const head = /^\{"key":("(?:[^"\\]|\\.){0,1000}"),"value":/.exec(argsJson.slice(0, 8_000));
  let key = "?";
  try {
    if (head) key = JSON.parse(head[1]!) as string;
  } catch {
    // Not the prelude's envelope: the key stays unnamed.
  }
  const valueBytes = utf8ByteLength(argsJson) - (head ? utf8ByteLength(head[0]) + 1 : 0);
  return sessionValueRefusal(key, valueBytes, SESSION_VALUE_MAX_BYTES);
}

function mib(chars: number): string {
  return String(Math.round((chars / (1024 * 1024)) * 10) / 10);
}
