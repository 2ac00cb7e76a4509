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
import type { SandboxFailure, SandboxLimits } from "./types.ts";
import type { SandboxModule } from "./wasm_module.ts";

/** Timers one run may have pending at once. */
export const MAX_PENDING_TIMERS = 1000;

/**
 * Largest JSON text of one tool call's arguments, UTF-8 bytes (8 MiB). A call with more is rejected in the
 * script (a catchable `RangeError`) and never reaches the host, whose thread would otherwise parse it.
 */
export const MAX_TOOL_ARGS_BYTES = 8 * 1024 * 1024;

/** Why a run was stopped from outside. */
export type StopReason = "timeout" | "cancelled";

/** A host call's answer: the result as JSON text (`undefined` for no value), or the failure's message. */
export type HostReply = { ok: true; json: string | undefined } | { ok: false; message: string };

/** The effects one run needs. */
export interface EngineIo {
  /** Performs a tool call; must not throw synchronously. */
  hostCall(namespace: string, key: string, argsJson: string | undefined): Promise<HostReply>;
  /** Receives each console line that fit the budget, as it is logged. */
  onConsole(line: string): void;
  /**
   * Called once, when the first console line did not fit the budget (after that line's cut start, if any,
   * went to `onConsole`). The totals dropped are in the outcome's `consoleDropped`.
   */
  onConsoleDropped(): void;
  /** Aborted (reason: a {@link StopReason}) to stop a run that is waiting on a promise. */
  signal?: AbortSignal | undefined;
  /** Polled by the interrupt handler, so that a busy script can be stopped from another thread. */
  pollStop?: (() => StopReason | undefined) | undefined;
}

/** What {@link QuickJSEngine.run} needs besides its effects. */
export interface EngineRequest {
  script: string;
  namespaces: string[];
  limits: SandboxLimits;
}

/** How a run ended. `poisoned` means the WASM module is in an unknown state and must not be used again. */
export type EngineOutcome =
  & ({ ok: true; valueJson: string; originalBytes: number; truncated: boolean } | {
    ok: false;
    failure: SandboxFailure;
  })
  & {
    toolCalls: number;
    poisoned: boolean;
    /**
     * Console output past `maxConsoleBytes`: lines cut or dropped, and their UTF-8 bytes not shown (each
     * line's newline counted); absent when nothing was dropped.
     */
    consoleDropped?: ConsoleDropped;
  };

/** How much console output did not fit the budget. */
export interface ConsoleDropped {
  /** Lines dropped whole or cut short. */
  lines: number;
  /** UTF-8 bytes not shown, one per line for its newline included. */
  bytes: number;
}

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
