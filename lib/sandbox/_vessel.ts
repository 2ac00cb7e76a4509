/**
 * A run's QuickJS runtime and context, made ahead of the run: a fresh runtime, a fresh context, the
 * native functions and the prelude evaluated (the 1.5–2 ms a run would otherwise spend before its
 * script), then handed to exactly one run, which binds its limits and effects to it and disposes it at
 * the end. A vessel is never reused: every script still gets a runtime and context no other script saw.
 *
 * @module
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { PRELUDE_FILE, PRELUDE_SOURCE, UNREACHABLE_TOOL_KEYS } from "./_prelude.ts";
import type { Internals } from "./_run_types.ts";
import type { SandboxModule } from "./wasm_module.ts";

/** What the prelude's native functions and the interrupt handler reach once a run is bound. */
export interface VesselHost {
  /** `native.call(ns, key, argsJson)`: a call id (number) or the error to reject the call with. */
  call(ns: QuickJSHandle, key: QuickJSHandle, argsJson: QuickJSHandle): QuickJSHandle;
  log(line: string): void;
  /** `native.startTimer(id, delayMs)`: `true`, or `false` when too many timers are pending. */
  startTimer(id: number, delayMs: number): QuickJSHandle;
  cancelTimer(id: number): void;
  /** QuickJS's interrupt handler: `true` stops the script (uncatchably). */
  shouldInterrupt(): boolean;
}

/** Longest a prelude may run before a run is bound (it is our own code; this only guards a bug), ms. */
const PREPARE_BUDGET_MS = 5_000;

/**
 * A prepared runtime + context + prelude. `internals` are the prelude's functions (owned by the vessel);
 * `setupError` is set instead when evaluating the prelude threw inside QuickJS.
 */
export class RunVessel {
  readonly rt: QuickJSRuntime;
  readonly ctx: QuickJSContext;
  readonly internals: Internals | undefined;
  /** What the prelude threw (owned by the vessel), when it failed. */
  readonly setupError: QuickJSHandle | undefined;
  readonly #owned: QuickJSHandle[] = [];
  #host: VesselHost | undefined;
  #disposed = false;

  /**
   * Makes a runtime and context in `module` and evaluates the prelude in it. The memory and stack limits
   * are the run's to set when it binds; until then the prelude runs under QuickJS's defaults.
   *
   * @throws Whatever the quickjs-emscripten API throws (a WASM trap): the module is then unusable.
   */
  constructor(module: SandboxModule) {
    const preparedBy = Date.now() + PREPARE_BUDGET_MS;
    const rt = this.rt = module.module.newRuntime();
    rt.setInterruptHandler(() => this.#host ? this.#host.shouldInterrupt() : Date.now() > preparedBy);
    const ctx = this.ctx = rt.newContext();
    const native = this.#own(ctx.newObject());
    const fn = (name: string, impl: (...args: QuickJSHandle[]) => QuickJSHandle | undefined) => {
      const handle = ctx.newFunction(name, impl);
      ctx.setProp(native, name, handle);
      handle.dispose();
    };
    // Until a run is bound, nothing calls these: the prelude only captures them.
    fn("call", (ns, key, argsJson) => this.#bound().call(ns!, key!, argsJson!));
    fn("log", (line) => void this.#bound().log(ctx.getString(line!)));
    fn("startTimer", (id, delay) => this.#bound().startTimer(ctx.getNumber(id!), ctx.getNumber(delay!)));
    fn("cancelTimer", (id) => void this.#bound().cancelTimer(ctx.getNumber(id!)));
    const factory = ctx.evalCode(PRELUDE_SOURCE, PRELUDE_FILE);
    if (factory.error) {
      this.setupError = this.#own(factory.error);
      return;
    }
    const unreachable = ctx.newString(JSON.stringify(UNREACHABLE_TOOL_KEYS));
    const made = ctx.callFunction(factory.value, ctx.undefined, native, unreachable);
    factory.value.dispose();
    unreachable.dispose();
    if (made.error) {
      this.setupError = this.#own(made.error);
      return;
    }
    const obj = made.value;
    const get = (key: string) => this.#own(ctx.getProp(obj, key));
    this.internals = {
      install: get("install"),
      run: get("run"),
      settle: get("settle"),
      fireTimer: get("fireTimer"),
      serialize: get("serialize"),
      describe: get("describe"),
      unobserved: get("unobserved"),
      release: get("release"),
    };
    obj.dispose();
  }

  /**
   * Binds the one run that will use this vessel.
   *
   * @throws {Error} When a run is already bound or the vessel was disposed (a bug).
   */
  bind(host: VesselHost): void {
    if (this.#host || this.#disposed) throw new Error("A sandbox context serves exactly one run");
    this.#host = host;
  }

  /** Keeps `handle` alive until {@link dispose}. */
  own(handle: QuickJSHandle): QuickJSHandle {
    return this.#own(handle);
  }

  /**
   * Frees every owned handle, the context and the runtime.
   *
   * @throws What QuickJS throws when its state is broken (e.g. the `gc_obj_list` assertion).
   */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const handle of this.#owned) if (handle.alive) handle.dispose();
    this.#owned.length = 0;
    this.ctx.dispose();
    this.rt.dispose();
  }

  #own(handle: QuickJSHandle): QuickJSHandle {
    this.#owned.push(handle);
    return handle;
  }

  #bound(): VesselHost {
    if (!this.#host) throw new Error("No run is bound to this sandbox context");
    return this.#host;
  }
}
