/**
 * The state machine of one run inside a QuickJS context: a fresh runtime and context with the prelude
 * (prepared ahead, see `_prepared_context.ts`) put under the run's memory and stack limits, its namespaces (see
 * `_script_bridge.ts`), compile, the event loop that delivers host-call answers and timers, the deadline,
 * stop signals and interrupt handler, and handing the ending to `_run_outcome.ts`.
 *
 * @module
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { clampStackBytes } from "../protocol/limits.ts";
import type { TypeStripper } from "./normalize.ts";
import { compileScript } from "./_compile.ts";
import type { PositionMap } from "./_positions.ts";
import { ConsoleBudget } from "./_console_budget.ts";
import { crashFailure } from "./_guest_errors.ts";
import { ScriptBridge } from "./_script_bridge.ts";
import { EXTRACTION_BUDGET_MS, OutcomeReader } from "./_run_outcome.ts";
import type { Ending, EngineIo, EngineOutcome, EngineRequest, StopReason } from "../protocol/run_types.ts";
import { installAhead, installKey, PreparedContext } from "./_prepared_context.ts";
import type { SandboxModule } from "./wasm_module.ts";

/**
 * One run: create it, call `execute()` once. It owns its vessel (runtime and context) and disposes it at the
 * end; a vessel prepared ahead is used only when it never served another run.
 */
export class ScriptRun {
  readonly #module: SandboxModule;
  readonly #request: EngineRequest;
  readonly #io: EngineIo;
  readonly #stripTypes: TypeStripper | undefined;
  /** Epoch ms; `Infinity` while a host call holds the deadline clock. */
  #deadline: number;
  /**
   * While the clock is held: the milliseconds the run had left, which its computing (not its waiting)
   * spends; a script that keeps busy while a person is asked is stopped when they are spent.
   */
  #heldBudgetMs = 0;
  /** Milliseconds computed while the clock is held, up to the last time the run went idle. */
  #heldBusyMs = 0;
  /** `performance.now()` at which the run last started computing; `undefined` while it waits. */
  #busyAt: number | undefined;
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #console: ConsoleBudget;
  #vessel: PreparedContext | undefined;
  #rt: QuickJSRuntime | undefined;
  #ctx: QuickJSContext | undefined;
  #bridge: ScriptBridge | undefined;
  #stopReason: StopReason | undefined;
  #extractionDeadline = 0;
  #finished = false;
  #events: Array<() => Ending | undefined> = [];
  #wake: (() => void) | undefined;
  #growFailuresAtStart = 0;
  #extractionInterrupted = false;
  #positions: PositionMap | undefined;

  constructor(
    module: SandboxModule,
    request: EngineRequest,
    io: EngineIo,
    stripTypes: TypeStripper | undefined,
    vessel?: PreparedContext,
  ) {
    this.#module = module;
    this.#vessel = vessel;
    this.#request = request;
    this.#io = io;
    this.#stripTypes = stripTypes;
    this.#deadline = Date.now() + request.limits.timeoutMs;
    this.#console = new ConsoleBudget(request.limits.maxConsoleBytes, io);
  }

  /**
   * Runs the script to its outcome, then frees the runtime.
   *
   * @param onOutcome Receives the outcome before the runtime is freed (freeing takes a while), unless the
   *   module is already known to be poisoned; if freeing then fails, the returned outcome says `poisoned`
   *   although the one given to `onOutcome` did not.
   */
  async execute(onOutcome?: (outcome: EngineOutcome) => void): Promise<EngineOutcome> {
    let outcome = await this.#execute();
    const dropped = this.#console.dropped;
    if (dropped) outcome = { ...outcome, consoleDropped: dropped };
    if (outcome.poisoned) return outcome;
    onOutcome?.(outcome);
    try {
      this.#dispose();
    } catch {
      // Disposal failing (e.g. QuickJS's gc_obj_list assertion) means the module is no longer trustworthy;
      // the outcome itself is still right.
      return { ...outcome, poisoned: true };
    }
    return outcome;
  }

  /** Indices of the prelude parts the run's context compiled (empty before its vessel exists). */
  get loadedParts(): ReadonlySet<number> {
    return this.#vessel?.loadedParts ?? new Set();
  }

  get #toolCalls(): number {
    return this.#bridge?.toolCalls ?? 0;
  }

  async #execute(): Promise<EngineOutcome> {
    const onAbort = () => this.#stop(stopReasonOf(this.#io.signal?.reason));
    this.#io.signal?.addEventListener("abort", onAbort);
    this.#armDeadline();
    this.#io.onDeadline?.((remainingMs) => {
      if (this.#finished) return;
      if (remainingMs === null) {
        if (this.#deadline !== Infinity) {
          this.#heldBudgetMs = Math.max(0, this.#deadline - Date.now());
          this.#heldBusyMs = 0;
        }
        this.#deadline = Infinity;
      } else {
        // What was computed while held is spent, whatever the host counted.
        this.#deadline = Date.now() +
          Math.max(0, Math.min(remainingMs, this.#heldBudgetMs - this.#heldBusyMs));
      }
      this.#armDeadline();
      // A loop waiting in the event loop waits again with the new deadline.
      this.#wake?.();
    });
    this.#busySince();
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
      return outcome;
    } finally {
      this.#finished = true;
      clearTimeout(this.#deadlineTimer);
      this.#bridge?.clearTimers();
      this.#io.signal?.removeEventListener("abort", onAbort);
    }
  }

  async #runToOutcome(): Promise<EngineOutcome> {
    const { limits } = this.#request;
    if (this.#stopReason) return this.#conclude({ kind: "stopped", reason: this.#stopReason }, undefined);
    this.#growFailuresAtStart = this.#module.heapGrowFailures();
    const vessel = this.#vesselFor(limits.memoryLimitBytes);
    const rt = this.#rt = vessel.rt;
    const ctx = this.#ctx = vessel.ctx;
    rt.setMemoryLimit(Math.max(1024 * 1024, Math.floor(limits.memoryLimitBytes)));
    rt.setMaxStackSize(clampStackBytes(limits.stackLimitBytes));
    if (vessel.setupError) {
      return this.#conclude(
        { kind: "thrown", prefix: "Cannot start the sandbox: ", error: vessel.setupError.dup() },
        undefined,
      );
    }
    const bridge = this.#bridge = new ScriptBridge(ctx, vessel.internals!, {
      request: this.#request,
      io: this.#io,
      isFinished: () => this.#finished,
      push: (event) => this.#push(event),
      log: (line) => this.#console.log(line),
      own: (handle) => vessel.own(handle),
    });
    vessel.bind({
      call: (ns, key, argsJson) => bridge.call(ns, key, argsJson),
      log: (line) => bridge.log(line),
      startTimer: (id, delayMs) => bridge.startTimer(id, delayMs),
      cancelTimer: (id) => bridge.cancelTimer(id),
      shouldInterrupt: () => this.#shouldInterrupt(),
    });
    // Globals installed ahead are this run's (see `#vesselFor`): the prelude's install is not run twice.
    const setupEnding = vessel.installedFor === undefined ? bridge.install() : undefined;
    if (setupEnding) return this.#conclude(setupEnding, undefined);

    const compiled = await this.#compile(ctx);
    if ("ending" in compiled) return this.#conclude(compiled.ending, undefined);

    const internals = bridge.internals!;
    const started = ctx.callFunction(internals.run, ctx.undefined, compiled.main);
    compiled.main.dispose();
    if (started.error) return this.#conclude({ kind: "thrown", prefix: "", error: started.error }, undefined);
    const mainPromise = this.#vessel!.own(started.value);

    const ending = await this.#loop(rt, ctx, mainPromise);
    return this.#conclude(ending, mainPromise);
  }

  /**
   * The run's vessel: the one prepared ahead when it has no globals installed or this run's, else (the
   * servers in scope changed) a fresh one, without globals. Vessels made after this run install its
   * namespaces ahead.
   *
   * @throws What QuickJS throws when freeing the unsuitable vessel fails (the module is then poisoned).
   */
  #vesselFor(heapLimitBytes: number): PreparedContext {
    const { namespaces } = this.#request;
    installAhead(this.#module, namespaces, heapLimitBytes);
    const ready = this.#vessel;
    const installed = ready?.installedFor;
    if (ready && installed !== undefined && installed !== installKey(namespaces, heapLimitBytes)) {
      this.#vessel = undefined;
      ready.dispose();
    }
    return this.#vessel ??= new PreparedContext(this.#module, { installAhead: false });
  }

  /** Compiles the script into its async main function; returns an ending if it cannot. */
  async #compile(ctx: QuickJSContext): Promise<{ main: QuickJSHandle } | { ending: Ending }> {
    const compiled = await compileScript(ctx, this.#request.script, {
      describe: this.#bridge?.internals.describe,
      stripTypes: this.#stripTypes,
    });
    if (this.#stopReason) {
      if ("main" in compiled) compiled.main.dispose();
      else if ("error" in compiled) compiled.error.dispose();
      return { ending: { kind: "stopped", reason: this.#stopReason } };
    }
    if ("positions" in compiled) this.#positions = compiled.positions;
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
      if (this.#bridge!.idle && !rt.hasPendingJob()) {
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
      this.#idleSince();
      const waitForHost = this.#io.waitForHost;
      if (waitForHost) await this.#blockForHost(waitForHost);
      else {
        await new Promise<void>((resolve) => this.#wake = resolve);
        this.#wake = undefined;
      }
      this.#busySince();
    }
  }

  /**
   * Waits for the host by blocking this thread (see `EngineIo.waitForHost`), at most until the next timer
   * is due; a wait that timed out goes through the event loop once, where due timers fire.
   */
  async #blockForHost(waitForHost: NonNullable<EngineIo["waitForHost"]>): Promise<void> {
    const waited = waitForHost(this.#bridge!.nextTimerInMs());
    const polled = this.#io.pollStop?.();
    if (polled) this.#stop(polled);
    if (waited === "woken") {
      // The replies resolved their calls' promises; the reactions queued before this one push the events.
      await Promise.resolve();
      return;
    }
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
      setTimeout(resolve, 0);
    });
    this.#wake = undefined;
  }

  /** Turns the ending into an outcome (see `OutcomeReader`). */
  #conclude(ending: Ending, mainPromise: QuickJSHandle | undefined): EngineOutcome {
    return new OutcomeReader({
      module: this.#module,
      limits: this.#request.limits,
      rt: this.#rt,
      ctx: this.#ctx,
      internals: this.#bridge?.internals,
      limitError: this.#bridge?.limitError,
      toolCalls: this.#toolCalls,
      growFailuresAtStart: this.#growFailuresAtStart,
      stopReason: () => this.#stopReason,
      beginExtraction: () => this.#extractionDeadline = Date.now() + EXTRACTION_BUDGET_MS,
      extractionInterrupted: () => this.#extractionInterrupted,
      log: (line) => this.#console.log(line),
      positions: this.#positions,
    }).conclude(ending, mainPromise);
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

  /** (Re)starts the deadline timer for `#deadline`; none while the clock is held. */
  #armDeadline(): void {
    clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = this.#deadline === Infinity
      ? undefined
      : setTimeout(() => this.#stop("timeout"), Math.max(0, this.#deadline - Date.now()));
  }

  #shouldInterrupt(): boolean {
    this.#io.flush?.();
    if (this.#extractionDeadline > 0) {
      if (Date.now() <= this.#extractionDeadline) return false;
      this.#extractionInterrupted = true;
      return true;
    }
    if (this.#stopReason) return true;
    if (Date.now() >= this.#deadline || this.#heldBudgetSpent()) {
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

  /** The run starts computing (it left the event loop). */
  #busySince(): void {
    this.#busyAt = performance.now();
  }

  /** The run waits in the event loop: what it computed since it last started counts while held. */
  #idleSince(): void {
    if (this.#busyAt !== undefined && this.#deadline === Infinity) {
      this.#heldBusyMs += performance.now() - this.#busyAt;
    }
    this.#busyAt = undefined;
  }

  /** Whether the clock is held and the run has computed the time it had left. */
  #heldBudgetSpent(): boolean {
    if (this.#deadline !== Infinity || this.#busyAt === undefined) return false;
    return this.#heldBusyMs + (performance.now() - this.#busyAt) >= this.#heldBudgetMs;
  }

  #dispose(): void {
    this.#vessel?.dispose();
  }
}

function stopReasonOf(reason: unknown): StopReason {
  return reason === "timeout" ? "timeout" : "cancelled";
}
