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
 * given to QuickJS, which counts allocations rather than bytes in this build.
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

  constructor(module: SandboxModule, options: EngineOptions = {}) {
    this.#module = module;
    this.#stripTypes = options.stripTypes;
  }

  /**
   * Runs one script. Never throws: every failure, including a crash of the WASM module, is an outcome.
   *
   * @param request Script, namespaces and limits (the deadline starts now).
   * @param io Host calls, console sink and stop signals.
   */
  run(request: EngineRequest, io: EngineIo): Promise<EngineOutcome> {
    return new ScriptRun(this.#module, request, io, this.#stripTypes).execute();
  }
}
