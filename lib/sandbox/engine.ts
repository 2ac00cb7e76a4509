/**
 * Runs one script in QuickJS on the current thread (inside a sandbox Worker, or a test): a fresh runtime
 * and context, the prelude, the script, then a loop that feeds host-call answers and timers back in until
 * the script's promise settles, the deadline passes or the run is stopped. Hard limits that QuickJS cannot
 * enforce by itself (native built-ins that never poll the interrupt handler, V8 stack overflows that escape
 * the WASM module) are the Worker pool's job: an outcome says `poisoned` when the module must be dropped.
 *
 * @module
 */
import type { TypeStripper } from "./normalize.ts";
import { ScriptRun } from "./_script_run.ts";
import type { EngineIo, EngineOutcome, EngineRequest } from "./_run_types.ts";
import { RunVessel } from "./_vessel.ts";
import type { SandboxModule } from "./wasm_module.ts";

export type {
  ConsoleDropped,
  EngineIo,
  EngineOutcome,
  EngineRequest,
  HostReply,
  StopReason,
} from "./_run_types.ts";
export { MAX_PENDING_TIMERS, MAX_TOOL_ARGS_BYTES } from "./_run_types.ts";

/** Options of {@link QuickJSEngine}. */
export interface EngineOptions {
  /** Strips TypeScript syntax when the script does not parse as JavaScript. Default: none (no stripping). */
  stripTypes?: TypeStripper | undefined;
}

/**
 * Runs scripts in a QuickJS WASM module (sync variant), one fresh runtime and context per run. The
 * module's heap cap (see `loadSandboxModule()`) is the memory limit; a run's `memoryLimitBytes` is also
 * given to QuickJS, which counts allocations rather than bytes in this build. `prepareNext()` makes the
 * next run's runtime, context and prelude while nothing waits (a sandbox Worker calls it after posting a
 * result), so that a run only binds its limits, namespaces and script.
 *
 * @example
 * ```ts ignore
 * const engine = new QuickJSEngine(await loadSandboxModule(limits.memoryLimitBytes));
 * const outcome = await engine.run({ script: "return 1 + 1", namespaces: [], limits }, io);
 * ```
 */
export class QuickJSEngine {
  #module: SandboxModule;
  #stripTypes: TypeStripper | undefined;
  #next: RunVessel | undefined;
  /** The prelude parts the last run compiled: the next vessel compiles them ahead. */
  #partsUsed: number[] = [];

  constructor(module: SandboxModule, options: EngineOptions = {}) {
    this.#module = module;
    this.#stripTypes = options.stripTypes;
  }

  /**
   * Runs one script. Never throws: every failure, including a crash of the WASM module, is an outcome.
   *
   * @param request Script, namespaces and limits (the deadline starts now).
   * @param io Host calls, console sink and stop signals.
   * @param options.onOutcome Receives the outcome as soon as it is known, before the run's runtime is freed
   *   (a sandbox Worker posts it from there). When freeing fails, the promise's outcome says `poisoned`
   *   although the early one did not: the module must then be dropped all the same.
   * @returns The outcome, once the runtime is freed.
   */
  run(
    request: EngineRequest,
    io: EngineIo,
    options: { onOutcome?: (outcome: EngineOutcome) => void } = {},
  ): Promise<EngineOutcome> {
    const vessel = this.#next;
    this.#next = undefined;
    const run = new ScriptRun(this.#module, request, io, this.#stripTypes, vessel);
    return run.execute(options.onOutcome).then((outcome) => {
      this.#partsUsed = [...run.loadedParts];
      return outcome;
    });
  }

  /**
   * Prepares the runtime, context and prelude core of the next run now, unless one is ready, with the
   * prelude parts the last run needed (a script that called a tool is likely followed by one that does).
   * Never throws: a failure leaves the next run to prepare its own (and report what fails).
   */
  prepareNext(): void {
    if (this.#next) return;
    try {
      const next = new RunVessel(this.#module);
      for (const index of this.#partsUsed) next.preload(index);
      this.#next = next;
    } catch {
      // The module failed (a WASM trap): the next run meets the same failure and reports it as a crash.
    }
  }
}
