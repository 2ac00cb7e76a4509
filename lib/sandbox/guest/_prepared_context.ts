/**
 * A run's QuickJS runtime and context, made ahead of the run: a fresh runtime, a fresh context, the
 * native functions and the prelude evaluated (the 1.5-2 ms a run would otherwise spend before its
 * script), then handed to exactly one run, which binds its limits and effects to it and disposes it at
 * the end. A vessel is never reused: every script still gets a runtime and context no other script saw.
 *
 * @module
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { Internal, NativeOp, PRELUDE_FILE, PRELUDE_PART_SOURCES, PRELUDE_SOURCE } from "./_prelude.ts";
import type { Internals } from "../protocol/run_types.ts";
import { newLeanFunction } from "./_lean_native.ts";
import type { SandboxModule } from "./wasm_module.ts";

/** What the prelude's native functions and the interrupt handler reach once a run is bound. */
export interface PreparedContextHost {
  /** `native.call(ns, key, argsJson)`: a call id (number) or the error to reject the call with. */
  call(ns: QuickJSHandle, key: QuickJSHandle, argsJson: QuickJSHandle): QuickJSHandle;
  log(line: string): void;
  /** `native.startTimer(id, delayMs)`: `true`, or `false` when too many timers are pending. */
  startTimer(id: number, delayMs: number): QuickJSHandle;
  cancelTimer(id: number): void;
  /** QuickJS's interrupt handler: `true` stops the script (uncatchably). */
  shouldInterrupt(): boolean;
}

/**
 * How the prelude's sources are evaluated: as a global script (no module detection) without debug info and
 * source text (~10% less to compile; the prelude's frames are never shown, and its functions' toString()
 * shows no source).
 */
const PRELUDE_EVAL = { type: "global", strip: true } as const;

/**
 * The globals the vessels of a module install ahead (see {@link PreparedContext.installedFor}): those of the
 * module's last run, as {@link installKey} gives them.
 */
const AHEAD = new WeakMap<SandboxModule, { key: string; namespacesJson: string; heapLimitBytes: number }>();

/** The text that tells two runs' namespace globals apart: the namespaces and the heap limit `install` gets. */
export function installKey(namespaces: readonly string[], heapLimitBytes: number): string {
  return `${heapLimitBytes}:${JSON.stringify(namespaces)}`;
}

/**
 * Vessels of `module` made from now on install these namespace globals ahead (the servers of an agent's
 * session rarely change between its scripts); a run whose namespaces differ makes its own vessel.
 */
export function installAhead(
  module: SandboxModule,
  namespaces: readonly string[],
  heapLimitBytes: number,
): void {
  const key = installKey(namespaces, heapLimitBytes);
  if (AHEAD.get(module)?.key !== key) {
    AHEAD.set(module, { key, namespacesJson: JSON.stringify(namespaces), heapLimitBytes });
  }
}

/** Longest a prelude may run before a run is bound (it is our own code; this only guards a bug), ms. */
const PREPARE_BUDGET_MS = 5_000;

/**
 * A prepared runtime + context + prelude core. `internals` are the prelude's functions (owned by the vessel);
 * `setupError` is set instead when evaluating the prelude threw inside QuickJS.
 */
export class PreparedContext {
  readonly rt: QuickJSRuntime;
  readonly ctx: QuickJSContext;
  readonly internals: Internals | undefined;
  /** What the prelude threw (owned by the vessel), when it failed. */
  readonly setupError: QuickJSHandle | undefined;
  /**
   * The {@link installKey} of the namespace globals installed ahead (the module's last run's, see
   * {@link installAhead}); `undefined` when none were, and `"failed"` when installing them threw (the vessel
   * must not serve a run then: some globals may be defined).
   */
  readonly installedFor: string | undefined;
  readonly #owned: QuickJSHandle[] = [];
  readonly #loadedParts = new Set<number>();
  #host: PreparedContextHost | undefined;
  #disposed = false;

  /**
   * Makes a runtime and context in `module` and evaluates the prelude in it. The memory and stack limits
   * are the run's to set when it binds; until then the prelude runs under QuickJS's defaults.
   *
   * @param options.installAhead Install the namespace globals of {@link installAhead} (~0.1 ms less on
   *   the run's path). @default true
   * @throws Whatever the quickjs-emscripten API throws (a WASM trap): the module is then unusable.
   */
  constructor(module: SandboxModule, options: { installAhead?: boolean } = {}) {
    const preparedBy = Date.now() + PREPARE_BUDGET_MS;
    const rt = this.rt = module.module.newRuntime();
    rt.setInterruptHandler(() => this.#host ? this.#host.shouldInterrupt() : Date.now() > preparedBy);
    const ctx = this.ctx = rt.newContext();
    // One native function for every operation (see NativeOp): one crossing to make, none to attach.
    // Until a run is bound, nothing calls it: the core only captures it.
    const native = newLeanFunction(ctx, "native", (op, a, b, c) => {
      switch (ctx.getNumber(op!)) {
        case NativeOp.call:
          return this.#bound().call(a!, b!, c!);
        case NativeOp.log:
          this.#bound().log(ctx.getString(a!));
          return;
        case NativeOp.startTimer:
          return this.#bound().startTimer(ctx.getNumber(a!), ctx.getNumber(b!));
        case NativeOp.cancelTimer:
          this.#bound().cancelTimer(ctx.getNumber(a!));
          return;
        case NativeOp.load: {
          const index = ctx.getNumber(a!);
          const factory = loadPart(module, ctx, index);
          if (!("error" in factory)) this.#loadedParts.add(index);
          return factory;
        }
      }
      throw new Error("Unknown sandbox operation");
    });
    const factory = ctx.evalCode(PRELUDE_SOURCE, PRELUDE_FILE, PRELUDE_EVAL);
    if (factory.error) {
      native.dispose();
      this.setupError = this.#own(factory.error);
      return;
    }
    const made = ctx.callFunction(factory.value, ctx.undefined, native);
    factory.value.dispose();
    native.dispose();
    if (made.error) {
      this.setupError = this.#own(made.error);
      return;
    }
    this.internals = new PreludeInternals(ctx, this.#own(made.value), (handle) => this.#own(handle));
    const ahead = options.installAhead === false ? undefined : AHEAD.get(module);
    if (ahead) {
      this.installedFor = this.#install(ahead.namespacesJson, ahead.heapLimitBytes) ? ahead.key : "failed";
    }
  }

  /** `install(namespacesJson, heapLimitBytes)` of the prelude (no script code runs); whether it did not throw. */
  #install(namespacesJson: string, heapLimitBytes: number): boolean {
    const ctx = this.ctx;
    const names = ctx.newString(namespacesJson);
    const heap = ctx.newNumber(heapLimitBytes);
    const made = ctx.callFunction(this.internals!.install, ctx.undefined, names, heap);
    names.dispose();
    heap.dispose();
    if (made.error) {
      made.error.dispose();
      return false;
    }
    made.value.dispose();
    return true;
  }

  /**
   * Binds the one run that will use this vessel.
   *
   * @throws {Error} When a run is already bound or the vessel was disposed (a bug).
   */
  bind(host: PreparedContextHost): void {
    if (this.#host || this.#disposed) throw new Error("A sandbox context serves exactly one run");
    this.#host = host;
  }

  /** Indices of the prelude parts compiled in this context so far (see `_prelude_parts.ts`). */
  get loadedParts(): ReadonlySet<number> {
    return this.#loadedParts;
  }

  /**
   * Compiles prelude part `index` now, before any script runs in the context (our own code, as the core is):
   * a part the next script is likely to need then costs its run nothing. Never throws; a part that fails to
   * load here loads on first need instead.
   */
  preload(index: number): void {
    if (!this.internals || this.#host || this.#disposed || this.#loadedParts.has(index)) return;
    const ctx = this.ctx;
    const arg = ctx.newNumber(index);
    const result = ctx.callFunction(this.internals.part, ctx.undefined, arg);
    arg.dispose();
    if (result.error) result.error.dispose();
    else result.value.dispose();
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

  #bound(): PreparedContextHost {
    if (!this.#host) throw new Error("No run is bound to this sandbox context");
    return this.#host;
  }
}

/**
 * Heap a part's compile needs free, bytes (256 KiB: its source and QuickJS's compile of it, with room): a
 * part compiles while the script runs, maybe with the heap full. quickjs-emscripten copies source text into
 * the heap with an unchecked `malloc`, whose failure wrote the text over address 0 (the engine then failed,
 * or every later run in the module did).
 */
const PART_COMPILE_HEADROOM_BYTES = 256 * 1024;

/** The Emscripten module under quickjs-emscripten's `QuickJSWASMModule` (its `module` member). */
interface EmscriptenHeap {
  _malloc(bytes: number): number;
  _free(pointer: number): void;
}

/**
 * `native(load, index)`: evaluates the prelude part's source into its factory (or throws what it threw);
 * `undefined` when the heap lacks {@link PART_COMPILE_HEADROOM_BYTES} (the core then throws out of memory).
 */
function loadPart(
  module: SandboxModule,
  ctx: QuickJSContext,
  index: number,
): QuickJSHandle | { error: QuickJSHandle } {
  const source = PRELUDE_PART_SOURCES[index];
  if (source === undefined) throw new Error(`No sandbox prelude part ${index}`);
  const heap = (module.module as unknown as { module: EmscriptenHeap }).module;
  const probe = heap._malloc(PART_COMPILE_HEADROOM_BYTES);
  if (probe === 0) return ctx.undefined;
  heap._free(probe);
  const result = ctx.evalCode(source, PRELUDE_FILE, PRELUDE_EVAL);
  return result.error ? { error: result.error } : result.value;
}

/** The core's functions, each fetched from the array it returned on first use (owned by the vessel). */
class PreludeInternals implements Internals {
  readonly #ctx: QuickJSContext;
  readonly #array: QuickJSHandle;
  readonly #own: (handle: QuickJSHandle) => QuickJSHandle;
  readonly #fetched: Array<QuickJSHandle | undefined> = [];
  #settle: QuickJSHandle | undefined;

  constructor(ctx: QuickJSContext, array: QuickJSHandle, own: (handle: QuickJSHandle) => QuickJSHandle) {
    this.#ctx = ctx;
    this.#array = array;
    this.#own = own;
  }

  get install(): QuickJSHandle {
    return this.#get(Internal.install);
  }
  get run(): QuickJSHandle {
    return this.#get(Internal.run);
  }
  get serialize(): QuickJSHandle {
    return this.#get(Internal.serialize);
  }
  get release(): QuickJSHandle {
    return this.#get(Internal.release);
  }
  get describe(): QuickJSHandle {
    return this.#get(Internal.describe);
  }
  get unobserved(): QuickJSHandle {
    return this.#get(Internal.unobserved);
  }
  /** Part 0's settle once that part is loaded (a call was made), else the core's stub for it. */
  get settle(): QuickJSHandle {
    return this.#settle ??= this.#partFunction(0, "settle") ?? this.#get(Internal.settle);
  }
  get fireTimer(): QuickJSHandle {
    return this.#get(Internal.fireTimer);
  }
  get part(): QuickJSHandle {
    return this.#get(Internal.part);
  }
  get define(): QuickJSHandle {
    return this.#get(Internal.define);
  }

  /** `part(index)[name]`, owned; `undefined` when loading the part failed (the caller then uses the stub). */
  #partFunction(index: number, name: string): QuickJSHandle | undefined {
    const ctx = this.#ctx;
    const arg = ctx.newNumber(index);
    const loaded = ctx.callFunction(this.part, ctx.undefined, arg);
    arg.dispose();
    if (loaded.error) {
      loaded.error.dispose();
      return undefined;
    }
    const fn = this.#own(ctx.getProp(loaded.value, name));
    loaded.value.dispose();
    return fn;
  }

  #get(index: number): QuickJSHandle {
    return this.#fetched[index] ??= this.#own(this.#ctx.getProp(this.#array, index));
  }
}
