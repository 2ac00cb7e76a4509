/**
 * Runs one script in QuickJS on the current thread (inside a sandbox process, or a test): a fresh runtime
 * and context, the prelude, the script, then a loop that feeds host-call answers and timers back in until
 * the script's promise settles, the deadline passes or the run is stopped. Hard limits that QuickJS cannot
 * enforce by itself (native built-ins that never poll the interrupt handler, V8 stack overflows that escape
 * the WASM module) are the sandbox pool's job: an outcome says `poisoned` when the module must be dropped.
 *
 * @module
 */
import type { TypeStripper } from "./normalize.ts";
import { ScriptRun } from "./_script_run.ts";
import type { EngineIo, EngineOutcome, EngineRequest } from "../protocol/run_types.ts";
import { PreparedContext } from "./_prepared_context.ts";
import type { SandboxModule } from "./wasm_module.ts";

export type {
  ConsoleDropped,
  EngineIo,
  EngineOutcome,
  EngineRequest,
  HostReply,
  StopReason,
} from "../protocol/run_types.ts";
export { MAX_PENDING_TIMERS, MAX_TOOL_ARGS_BYTES } from "../protocol/run_types.ts";

/** Options of {@link QuickJSEngine}. */
export interface EngineOptions {
  /** Strips TypeScript syntax when the script does not parse as JavaScript. Default: none (no stripping). */
  stripTypes?: TypeStripper | undefined;
}

/**
 * How many runs' vessels (runtime + context + prelude core, see `_prepared_context.ts`) an engine keeps ready, at
 * most: 2, so that two scripts arriving close together (an agent's burst) both find one, while an idle
 * sandbox process holds only ~2 × 0.3 MB of QuickJS heap more. Each vessel still serves exactly one run.
 */
export const SPARE_VESSELS = 2;

/**
 * Runs scripts in a QuickJS WASM module (sync variant), one fresh runtime and context per run. The
 * module's heap cap (see `loadSandboxModule()`) is the memory limit; a run's `memoryLimitBytes` is also
 * given to QuickJS, which counts allocations rather than bytes in this build. Up to {@link SPARE_VESSELS}
 * runtimes, contexts and preludes are made ahead, one small step at a time (`refillStep()`, which a sandbox
 * sandbox process schedules as macrotasks while nothing waits), so that a run only binds its limits, namespaces and
 * script; a run that finds none ready makes its own.
 *
 * @example
 * ```ts ignore
 * const engine = new QuickJSEngine(await loadSandboxModule(limits.memoryLimitBytes));
 * const outcome = await engine.run({ script: "return 1 + 1", namespaces: [], limits }, io);
 * engine.dispose();
 * ```
 */
export class QuickJSEngine {
  #module: SandboxModule;
  #stripTypes: TypeStripper | undefined;
  /** Ready vessels, oldest first, each with the prelude parts still to preload into it. */
  #spares: Array<{ vessel: PreparedContext; parts: number[] }> = [];
  /** The prelude parts the last run compiled: vessels made after it compile them ahead. */
  #partsUsed: number[] = [];
  #disposed = false;

  constructor(module: SandboxModule, options: EngineOptions = {}) {
    this.#module = module;
    this.#stripTypes = options.stripTypes;
  }

  /** How many vessels are ready for the next runs (0 to {@link SPARE_VESSELS}). */
  get spareCount(): number {
    return this.#spares.length;
  }

  /**
   * Runs one script in the oldest ready vessel, or in one it makes now when none is ready. Never throws:
   * every failure, including a crash of the WASM module, is an outcome.
   *
   * @param request Script, namespaces and limits (the deadline starts now).
   * @param io Host calls, console sink and stop signals.
   * @param options.onOutcome Receives the outcome as soon as it is known, before the run's runtime is freed
   *   (a sandbox process posts it from there). When freeing fails, the promise's outcome says `poisoned`
   *   although the early one did not: the module must then be dropped all the same.
   * @returns The outcome, once the runtime is freed.
   */
  run(
    request: EngineRequest,
    io: EngineIo,
    options: { onOutcome?: (outcome: EngineOutcome) => void } = {},
  ): Promise<EngineOutcome> {
    const vessel = this.#spares.shift()?.vessel;
    const run = new ScriptRun(this.#module, request, io, this.#stripTypes, vessel);
    return run.execute(options.onOutcome).then((outcome) => {
      this.#partsUsed = [...run.loadedParts];
      // A poisoned module is not touched again (not even to free the spares: it goes with its sandbox process).
      if (outcome.poisoned) {
        this.#disposed = true;
        this.#spares.length = 0;
      }
      return outcome;
    });
  }

  /**
   * Does one step of making vessels ahead (~0.8-1.3 ms of this thread): preloads one prelude part the last
   * run used into a ready vessel that lacks it, else makes one new vessel core, unless
   * {@link SPARE_VESSELS} are ready (a script that called a tool is likely followed by one that does).
   * Call it from a macrotask: between two steps a run that arrived starts. Never throws: a failure (a WASM
   * trap) stops the making, and the next run meets the same failure and reports it as a crash.
   *
   * @returns Whether another step has work to do (`false` when full, disposed or failed).
   */
  refillStep(): boolean {
    if (this.#disposed) return false;
    try {
      const lacking = this.#spares.find((spare) => spare.parts.length > 0);
      if (lacking) lacking.vessel.preload(lacking.parts.shift()!);
      else if (this.#spares.length < SPARE_VESSELS) {
        this.#spares.push({ vessel: new PreparedContext(this.#module), parts: [...this.#partsUsed] });
      }
    } catch {
      return false;
    }
    return this.#spares.length < SPARE_VESSELS || this.#spares.some((spare) => spare.parts.length > 0);
  }

  /**
   * Makes vessels ahead until {@link SPARE_VESSELS} are ready, now (all the steps of `refillStep()` in a row;
   * tests and benchmarks use it). Never throws.
   */
  prepareNext(): void {
    while (this.refillStep());
  }

  /**
   * Frees the ready vessels and stops making more (later runs make their own). Call it when the engine is
   * dropped (another memory limit, a poisoned module, the sandbox process closing). Never throws: a vessel that fails
   * to free is left to the module, which is then dropped anyway.
   */
  dispose(): void {
    this.#disposed = true;
    for (const { vessel } of this.#spares.splice(0)) {
      try {
        vessel.dispose();
      } catch {
        // The module is broken; it goes with the sandbox process.
      }
    }
  }
}
