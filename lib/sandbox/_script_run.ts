/**
 * The state machine of one run inside a QuickJS context: prelude, compile, the event loop that delivers
 * host-call answers and timers, the stop rules, and reading the outcome back out.
 *
 * @module
 */
import type {
  DisposableResult,
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
} from "quickjs-emscripten-core";
import {
  type EngineIo,
  type EngineOutcome,
  type EngineRequest,
  type HostReply,
  MAX_PENDING_TIMERS,
  MAX_TOOL_ARGS_BYTES,
  type StopReason,
} from "./engine.ts";
import { clampStackBytes } from "./limits.ts";
import type { TypeStripper } from "./normalize.ts";
import { compileScript } from "./_compile.ts";
import { jsonNestingDepth, MAX_RESULT_DEPTH } from "./_json_depth.ts";
import { PRELUDE_FILE, PRELUDE_SOURCE, UNREACHABLE_TOOL_KEYS } from "./_prelude.ts";
import { crashFailure, readThrown } from "./_guest_errors.ts";
import { truncateUtf8, utf8ByteLength } from "./_utf8.ts";
import type { SandboxFailure } from "./types.ts";
import type { SandboxModule } from "./wasm_module.ts";

/** Time the engine allows itself to read the outcome out of QuickJS after the script ended, milliseconds. */
const EXTRACTION_BUDGET_MS = 250;

type Internals = {
  run: QuickJSHandle;
  settle: QuickJSHandle;
  fireTimer: QuickJSHandle;
  serialize: QuickJSHandle;
  describe: QuickJSHandle;
  unobserved: QuickJSHandle;
  release: QuickJSHandle;
};

/** A failure found while running, before the outcome is assembled. */
type Ending =
  | { kind: "settled" }
  | { kind: "stopped"; reason: StopReason }
  | { kind: "failed"; failure: SandboxFailure }
  | { kind: "thrown"; prefix: string; error: QuickJSHandle };

/** One run: create it, call `execute()` once. It owns the runtime and disposes it at the end. */
export class ScriptRun {
  readonly #module: SandboxModule;
  readonly #request: EngineRequest;
  readonly #io: EngineIo;
  readonly #stripTypes: TypeStripper | undefined;
  readonly #deadline: number;
  #rt: QuickJSRuntime | undefined;
  #ctx: QuickJSContext | undefined;
  #internals: Internals | undefined;
  #limitError: QuickJSHandle | undefined;
  #stopReason: StopReason | undefined;
  #extractionDeadline = 0;
  #finished = false;
  #toolCalls = 0;
  #nextCallId = 1;
  #pendingCalls = 0;
  #timers = new Map<number, ReturnType<typeof setTimeout>>();
  #events: Array<() => Ending | undefined> = [];
  #wake: (() => void) | undefined;
  #consoleBytes = 0;
  #consoleDropped = false;
  #droppedLines = 0;
  #droppedBytes = 0;
  #owned: QuickJSHandle[] = [];
  #growFailuresAtStart = 0;
  #released = false;
  #extractionInterrupted = false;

  constructor(
    module: SandboxModule,
    request: EngineRequest,
    io: EngineIo,
    stripTypes: TypeStripper | undefined,
  ) {
    this.#module = module;
    this.#request = request;
    this.#io = io;
    this.#stripTypes = stripTypes;
    this.#deadline = Date.now() + request.limits.timeoutMs;
  }

  async execute(): Promise<EngineOutcome> {
    const outcome = await this.#execute();
    if (!this.#consoleDropped) return outcome;
    return { ...outcome, consoleDropped: { lines: this.#droppedLines, bytes: this.#droppedBytes } };
  }

  async #execute(): Promise<EngineOutcome> {
    const onAbort = () => this.#stop(stopReasonOf(this.#io.signal?.reason));
    this.#io.signal?.addEventListener("abort", onAbort);
    const deadlineTimer = setTimeout(() => this.#stop("timeout"), Math.max(0, this.#deadline - Date.now()));
    try {
      if (this.#io.signal?.aborted) onAbort();
      let outcome: EngineOutcome;
      try {
        outcome = await this.#runToOutcome();
      } catch (error) {
        // An exception out of the quickjs-emscripten API itself: most often V8's stack overflow escaping the
        // WASM module, or a WebAssembly trap. The module's C state is unknown from here on.
        this.#finished = true;
        return { ok: false, failure: crashFailure(error), toolCalls: this.#toolCalls, poisoned: true };
      }
      this.#finished = true;
      try {
        this.#dispose();
      } catch {
        // Disposal failing (e.g. QuickJS's gc_obj_list assertion) means the module is no longer trustworthy;
        // the outcome itself is still right.
        return { ...outcome, poisoned: true };
      }
      return outcome;
    } finally {
      this.#finished = true;
      clearTimeout(deadlineTimer);
      for (const timer of this.#timers.values()) clearTimeout(timer);
      this.#timers.clear();
      this.#io.signal?.removeEventListener("abort", onAbort);
    }
  }

  async #runToOutcome(): Promise<EngineOutcome> {
    const { limits } = this.#request;
    if (this.#stopReason) return this.#conclude({ kind: "stopped", reason: this.#stopReason }, undefined);
    this.#growFailuresAtStart = this.#module.heapGrowFailures();
    const rt = this.#rt = this.#module.module.newRuntime();
    rt.setMemoryLimit(Math.max(1024 * 1024, Math.floor(limits.memoryLimitBytes)));
    rt.setMaxStackSize(clampStackBytes(limits.stackLimitBytes));
    rt.setInterruptHandler(() => this.#shouldInterrupt());
    const ctx = this.#ctx = rt.newContext();

    const setupEnding = this.#installPrelude(ctx);
    if (setupEnding) return this.#conclude(setupEnding, undefined);

    const compiled = await this.#compile(ctx);
    if ("ending" in compiled) return this.#conclude(compiled.ending, undefined);

    const internals = this.#internals!;
    const started = ctx.callFunction(internals.run, ctx.undefined, compiled.main);
    compiled.main.dispose();
    if (started.error) return this.#conclude({ kind: "thrown", prefix: "", error: started.error }, undefined);
    const mainPromise = this.#own(started.value);

    const ending = await this.#loop(rt, ctx, mainPromise);
    return this.#conclude(ending, mainPromise);
  }

  /** Evaluates the prelude and keeps handles to its internals; returns an ending if that failed. */
  #installPrelude(ctx: QuickJSContext): Ending | undefined {
    const native = this.#own(ctx.newObject());
    const fn = (name: string, impl: (...args: QuickJSHandle[]) => QuickJSHandle | undefined) => {
      const handle = ctx.newFunction(name, impl);
      ctx.setProp(native, name, handle);
      handle.dispose();
    };
    fn("call", (ns, key, argsJson) => this.#startCall(ctx, ns!, key!, argsJson!));
    fn("log", (line) => {
      this.#log(ctx.getString(line!));
      return undefined;
    });
    fn("startTimer", (id, delay) => this.#startTimer(ctx, ctx.getNumber(id!), ctx.getNumber(delay!)));
    fn("cancelTimer", (id) => {
      const key = ctx.getNumber(id!);
      clearTimeout(this.#timers.get(key));
      this.#timers.delete(key);
      return undefined;
    });
    this.#limitError = this.#own(ctx.newError({
      name: "ToolCallLimitError",
      message:
        `This script reached its limit of ${this.#request.limits.maxToolCalls} tool calls (max-tool-calls)`,
    }));

    const factory = ctx.evalCode(PRELUDE_SOURCE, PRELUDE_FILE);
    if (factory.error) return { kind: "thrown", prefix: "Cannot start the sandbox: ", error: factory.error };
    const names = ctx.newString(JSON.stringify(this.#request.namespaces));
    const unreachable = ctx.newString(JSON.stringify(UNREACHABLE_TOOL_KEYS));
    const made = ctx.callFunction(factory.value, ctx.undefined, native, names, unreachable);
    factory.value.dispose();
    names.dispose();
    unreachable.dispose();
    if (made.error) return { kind: "thrown", prefix: "Cannot start the sandbox: ", error: made.error };
    const obj = made.value;
    const get = (key: string) => this.#own(ctx.getProp(obj, key));
    this.#internals = {
      run: get("run"),
      settle: get("settle"),
      fireTimer: get("fireTimer"),
      serialize: get("serialize"),
      describe: get("describe"),
      unobserved: get("unobserved"),
      release: get("release"),
    };
    obj.dispose();
    return undefined;
  }

  /** Compiles the script into its async main function; returns an ending if it cannot. */
  async #compile(ctx: QuickJSContext): Promise<{ main: QuickJSHandle } | { ending: Ending }> {
    const compiled = await compileScript(ctx, this.#request.script, {
      describe: this.#internals?.describe,
      stripTypes: this.#stripTypes,
    });
    if (this.#stopReason) {
      if ("main" in compiled) compiled.main.dispose();
      else if ("error" in compiled) compiled.error.dispose();
      return { ending: { kind: "stopped", reason: this.#stopReason } };
    }
    if ("main" in compiled) return compiled;
    if ("error" in compiled) return { ending: { kind: "thrown", prefix: "", error: compiled.error } };
    return { ending: { kind: "failed", failure: compiled.failure } };
  }

  /** Delivers events and runs jobs until the main promise settles or the run has to end. */
  async #loop(rt: QuickJSRuntime, ctx: QuickJSContext, mainPromise: QuickJSHandle): Promise<Ending> {
    for (;;) {
      while (this.#events.length > 0 && !this.#stopReason) {
        const ending = this.#events.shift()!();
        if (ending) return ending;
      }
      if (this.#stopReason) return { kind: "stopped", reason: this.#stopReason };
      const jobs = rt.executePendingJobs();
      if (jobs.error) {
        if (this.#stopReason) {
          jobs.error.dispose();
          return { kind: "stopped", reason: this.#stopReason };
        }
        return { kind: "thrown", prefix: "Uncaught exception in a promise job: ", error: jobs.error };
      }
      // Once the interrupt handler fired, the script's promise may be rejected with a stray TypeError or left
      // pending (QuickJS does not always surface "interrupted" from a job): the stop is the outcome.
      if (this.#stopReason) return { kind: "stopped", reason: this.#stopReason };
      const state = ctx.getPromiseState(mainPromise);
      if (state.type !== "pending") {
        if (state.type === "fulfilled") {
          if (state.value !== mainPromise) state.value.dispose();
        } else state.error.dispose();
        return { kind: "settled" };
      }
      if (this.#stopReason) return { kind: "stopped", reason: this.#stopReason };
      if (this.#events.length > 0) continue;
      if (this.#pendingCalls === 0 && this.#timers.size === 0 && !rt.hasPendingJob()) {
        return {
          kind: "failed",
          failure: {
            error: "script_error",
            message:
              "The script is waiting for a promise that nothing can settle: no tool call or timer is " +
              "pending. Await the tool calls and timers the result depends on.",
          },
        };
      }
      await new Promise<void>((resolve) => this.#wake = resolve);
      this.#wake = undefined;
    }
  }

  /** Turns the ending into an outcome, reading values out of QuickJS under a short extraction budget. */
  #conclude(ending: Ending, mainPromise: QuickJSHandle | undefined): EngineOutcome {
    const base = { toolCalls: this.#toolCalls, poisoned: false };
    if (this.#stopReason && ending.kind !== "stopped") {
      // Interrupted while running host-driven guest code (setup, a callback, a delivery): a stop, whatever
      // the thrown value looks like.
      if (ending.kind === "thrown") ending.error.dispose();
      ending = { kind: "stopped", reason: this.#stopReason };
    }
    if (ending.kind === "stopped") {
      const failure: SandboxFailure = ending.reason === "timeout"
        ? { error: "script_timeout", limit_secs: this.#request.limits.timeoutMs / 1000 }
        : { error: "cancelled" };
      return { ok: false, failure, ...base };
    }
    const ctx = this.#ctx!;
    // A fulfilled value is serialized first, still under the script's own limits: `toJSON` methods and
    // getters are script code, so they get the script's deadline, stop signals and memory limit.
    let serialized: DisposableResult<QuickJSHandle, QuickJSHandle> | undefined;
    let state: ReturnType<QuickJSContext["getPromiseState"]> | undefined;
    if (ending.kind === "settled") {
      state = ctx.getPromiseState(mainPromise!);
      if (state.type === "fulfilled") {
        this.#release(ctx);
        serialized = ctx.callFunction(this.#internals!.serialize, ctx.undefined, state.value);
        if (state.value !== mainPromise) state.value.dispose();
        if (this.#stopReason) {
          if (serialized.error) serialized.error.dispose();
          else serialized.value.dispose();
          const failure: SandboxFailure = this.#stopReason === "timeout"
            ? { error: "script_timeout", limit_secs: this.#request.limits.timeoutMs / 1000 }
            : { error: "cancelled" };
          return { ok: false, failure, ...base };
        }
      }
    }
    // The script is over: let the engine allocate and compute freely, but not forever.
    this.#extractionDeadline = Date.now() + EXTRACTION_BUDGET_MS;
    this.#rt!.setMemoryLimit(-1);
    this.#release(ctx);
    if (ending.kind === "failed") {
      this.#reportUnobserved(ctx);
      return { ok: false, failure: ending.failure, ...base };
    }
    if (ending.kind === "thrown") {
      const failure = this.#failureOf(ctx, ending.error, ending.prefix);
      ending.error.dispose();
      this.#reportUnobserved(ctx);
      return { ok: false, failure, ...base };
    }
    if (state!.type === "rejected") {
      const failure = this.#failureOf(ctx, state!.error, "");
      state!.error.dispose();
      this.#reportUnobserved(ctx);
      return { ok: false, failure, ...base };
    }
    if (state!.type !== "fulfilled" || !serialized) {
      return {
        ok: false,
        failure: { error: "internal", message: "The script's promise is still pending" },
        ...base,
      };
    }
    if (serialized.error) {
      const failure = this.#failureOf(ctx, serialized.error, "Cannot serialize the return value as JSON: ");
      serialized.error.dispose();
      return { ok: false, failure, ...base };
    }
    const json = ctx.getString(serialized.value);
    serialized.value.dispose();
    this.#reportUnobserved(ctx);
    const cut = truncateUtf8(json, this.#request.limits.maxResultBytes);
    return {
      ok: true,
      valueJson: cut.text,
      originalBytes: cut.originalBytes,
      truncated: cut.truncated,
      ...base,
    };
  }

  /** Frees the prelude's memory reserve (once), so the outcome can be read even from a full heap. */
  #release(ctx: QuickJSContext): void {
    if (!this.#internals || this.#released) return;
    this.#released = true;
    const released = ctx.callFunction(this.#internals.release, ctx.undefined);
    if (released.error) released.error.dispose();
    else released.value.dispose();
  }

  /** Classifies a thrown value: tool-call limit, memory, or a script error with the script's stack lines. */
  #failureOf(ctx: QuickJSContext, error: QuickJSHandle, prefix: string): SandboxFailure {
    const { limits } = this.#request;
    if (this.#limitError && ctx.sameValue(error, this.#limitError)) {
      return { error: "tool_call_limit", limit: limits.maxToolCalls };
    }
    const described = readThrown(ctx, this.#internals?.describe, error, false);
    const capHit = this.#module.heapGrowFailures() > this.#growFailuresAtStart;
    const opaque = described.isNullish || described.message === undefined;
    if (described.message === "out of memory" || (opaque && (capHit || this.#nearMemoryLimit()))) {
      return { error: "memory_exhausted", limit_mb: limits.memoryLimitBytes / (1024 * 1024) };
    }
    if (described.message === "interrupted") {
      if (this.#stopReason === "timeout") {
        return { error: "script_timeout", limit_secs: limits.timeoutMs / 1000 };
      }
      if (this.#stopReason === "cancelled") return { error: "cancelled" };
      if (this.#extractionInterrupted) {
        return {
          error: "script_error",
          message:
            `${prefix}reading the outcome out of the script took longer than ${EXTRACTION_BUDGET_MS} ms`,
        };
      }
      // quickjs-emscripten interrupts the script when the interrupt handler itself throws, which only a native
      // stack overflow on the host side can make it do.
      return crashFailure(new RangeError("Maximum call stack size exceeded"));
    }
    return { error: "script_error", message: prefix + described.text };
  }

  #nearMemoryLimit(): boolean {
    const rt = this.#rt!;
    const ctx = this.#ctx!;
    const usage = rt.computeMemoryUsage();
    try {
      const used = ctx.getProp(usage, "memory_used_size");
      const bytes = ctx.getNumber(used);
      used.dispose();
      return bytes >= 0.8 * this.#request.limits.memoryLimitBytes;
    } finally {
      usage.dispose();
    }
  }

  /** Adds console lines for rejections nobody handled and calls still pending when the script ended. */
  #reportUnobserved(ctx: QuickJSContext): void {
    const internals = this.#internals;
    if (!internals) return;
    const result = ctx.callFunction(internals.unobserved, ctx.undefined);
    if (result.error) {
      result.error.dispose();
      return;
    }
    const lines = JSON.parse(ctx.getString(result.value)) as string[];
    result.value.dispose();
    const counts = new Map<string, number>();
    for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
    for (const [line, count] of counts) this.#log(count > 1 ? `${line} (×${count})` : line);
  }

  #startCall(
    ctx: QuickJSContext,
    nsHandle: QuickJSHandle,
    keyHandle: QuickJSHandle,
    argsHandle: QuickJSHandle,
  ) {
    if (this.#toolCalls >= this.#request.limits.maxToolCalls) return this.#limitError!.dup();
    const namespace = ctx.getString(nsHandle);
    const key = ctx.getString(keyHandle);
    const argsJson = ctx.typeof(argsHandle) === "string" ? ctx.getString(argsHandle) : undefined;
    if (argsJson !== undefined && tooLarge(argsJson)) {
      return ctx.newError({
        name: "RangeError",
        message:
          `The arguments of ${namespace}.${key}() are ${utf8ByteLength(argsJson)} bytes of JSON, more ` +
          `than the ${MAX_TOOL_ARGS_BYTES} bytes a tool call may carry; the call was not sent`,
      });
    }
    this.#toolCalls++;
    this.#pendingCalls++;
    const id = this.#nextCallId++;
    const deliver = (reply: HostReply) => {
      this.#pendingCalls--;
      if (this.#finished) return;
      this.#push(() => this.#settle(ctx, id, admitted(namespace, key, reply)));
    };
    let started: Promise<HostReply>;
    try {
      started = this.#io.hostCall(namespace, key, argsJson);
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

  #settle(ctx: QuickJSContext, id: number, reply: HostReply): Ending | undefined {
    const idHandle = ctx.newNumber(id);
    const text = reply.ok ? reply.json : reply.message;
    const payload = text === undefined ? undefined : ctx.newString(text);
    const ok = reply.ok ? ctx.true : ctx.false;
    const result = ctx.callFunction(
      this.#internals!.settle,
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

  #startTimer(ctx: QuickJSContext, id: number, delayMs: number): QuickJSHandle {
    if (this.#timers.size >= MAX_PENDING_TIMERS) return ctx.false;
    const timer = setTimeout(() => {
      this.#timers.delete(id);
      if (this.#finished) return;
      this.#push(() => {
        const idHandle = ctx.newNumber(id);
        const result = ctx.callFunction(this.#internals!.fireTimer, ctx.undefined, idHandle);
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
    }, Math.min(delayMs, 2 ** 31 - 1));
    this.#timers.set(id, timer);
    return ctx.true;
  }

  /**
   * Emits a console line within the byte budget. The first line that does not fit is cut on a character
   * boundary to the budget left (its newline included); it and every later line count as dropped.
   */
  #log(line: string): void {
    const budget = this.#request.limits.maxConsoleBytes;
    const cost = utf8ByteLength(line) + 1;
    if (!this.#consoleDropped && this.#consoleBytes + cost <= budget) {
      this.#consoleBytes += cost;
      this.#io.onConsole(line);
      return;
    }
    this.#droppedLines++;
    this.#droppedBytes += cost;
    if (this.#consoleDropped) return;
    this.#consoleDropped = true;
    const left = budget - this.#consoleBytes - 1;
    if (left > 0) {
      const cut = truncateUtf8(line, left);
      const kept = utf8ByteLength(cut.text);
      if (kept > 0) {
        this.#consoleBytes += kept + 1;
        this.#droppedBytes -= kept + 1;
        this.#io.onConsole(cut.text);
      }
    }
    this.#io.onConsoleDropped();
  }

  #push(event: () => Ending | undefined): void {
    this.#events.push(event);
    this.#wake?.();
  }

  #stop(reason: StopReason): void {
    if (this.#finished || this.#stopReason) return;
    this.#stopReason = reason;
    this.#wake?.();
  }

  #shouldInterrupt(): boolean {
    if (this.#extractionDeadline > 0) {
      if (Date.now() <= this.#extractionDeadline) return false;
      this.#extractionInterrupted = true;
      return true;
    }
    if (this.#stopReason) return true;
    if (Date.now() >= this.#deadline) {
      this.#stopReason = "timeout";
      return true;
    }
    const polled = this.#io.pollStop?.();
    if (polled) {
      this.#stopReason = polled;
      return true;
    }
    return false;
  }

  #own(handle: QuickJSHandle): QuickJSHandle {
    this.#owned.push(handle);
    return handle;
  }

  #dispose(): void {
    for (const handle of this.#owned) if (handle.alive) handle.dispose();
    this.#owned = [];
    this.#ctx?.dispose();
    this.#rt?.dispose();
  }
}

/**
 * The reply as it may enter QuickJS: a result nested deeper than {@link MAX_RESULT_DEPTH} becomes a failure
 * of that one call (QuickJS would overflow the native stack parsing it and take the module down).
 */
function admitted(namespace: string, key: string, reply: HostReply): HostReply {
  if (!reply.ok || reply.json === undefined) return reply;
  const depth = jsonNestingDepth(reply.json);
  if (depth <= MAX_RESULT_DEPTH) return reply;
  return {
    ok: false,
    message: `The result of ${namespace}.${key} is nested too deeply (${depth} levels) to pass into the ` +
      `script; at most ${MAX_RESULT_DEPTH} levels can cross. Ask the tool for less deeply nested data.`,
  };
}

/** Whether arguments JSON exceeds {@link MAX_TOOL_ARGS_BYTES} (counting bytes only when it can matter). */
function tooLarge(argsJson: string): boolean {
  if (argsJson.length > MAX_TOOL_ARGS_BYTES) return true;
  return argsJson.length * 3 > MAX_TOOL_ARGS_BYTES && utf8ByteLength(argsJson) > MAX_TOOL_ARGS_BYTES;
}

function stopReasonOf(reason: unknown): StopReason {
  return reason === "timeout" ? "timeout" : "cancelled";
}
