/**
 * The shapes shared by one QuickJS run's modules: what the engine is given (request, effects), what it
 * returns (outcome), and the internal ending and prelude handles its run loop, host bridge and outcome
 * reader pass between them. Types and constants only, so every sandbox module can import it.
 *
 * @module
 */
import type { QuickJSHandle } from "quickjs-emscripten-core";
import type { SandboxFailure, SandboxLimits } from "./types.ts";

/** Timers one run may have pending at once. */
export const MAX_PENDING_TIMERS = 1000;

/**
 * Largest JSON text of one tool call's arguments, UTF-8 bytes (8 MiB). A call with more is rejected in the
 * script (a catchable `RangeError`) and never reaches the host, whose thread would otherwise parse it.
 */
export const MAX_TOOL_ARGS_BYTES = 8 * 1024 * 1024;

/** Default of `SandboxLimits.maxInFlightChars`: 64 Mi code units (`[mcp] max-in-flight-mb` 64). */
export const DEFAULT_MAX_IN_FLIGHT_CHARS = 64 * 1024 * 1024;

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
  /** Polled by the interrupt handler, so that a busy script can be stopped from outside (tests use it). */
  pollStop?: (() => StopReason | undefined) | undefined;
  /**
   * Sends the tool calls `hostCall` held back (calls made in a row leave in one write, see the sandbox
   * process's `GuestServer`). Called by the interrupt handler, so that the calls of a script that keeps
   * computing still leave; the effects send them too before they block or send anything else.
   */
  flush?: (() => void) | undefined;
  /**
   * Blocks this thread until the host sends the run something (replies are then delivered by resolving
   * their `hostCall` promises, deadline changes through the `onDeadline` setter, a stop through `signal`)
   * or, when `timeoutMs` (>= 0) is finite, about that long (the next timer is due). Optional: without it the
   * run waits for replies in its event loop. Called only when nothing else can run in QuickJS; must not
   * throw.
   *
   * @returns `"woken"` (something arrived) or `"timeout"` (timers may be due: the run goes through its
   *   event loop once, where they fire).
   */
  waitForHost?: ((timeoutMs: number) => "woken" | "timeout") | undefined;
  /**
   * Registers the run's deadline setter: the host calls it with `null` when a host call holds the
   * deadline clock, then with the milliseconds left when the clock runs again.
   */
  onDeadline?: ((set: (remainingMs: number | null) => void) => void) | undefined;
}

/** What `QuickJSEngine.run()` needs besides its effects. */
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

/** The prelude's functions the host calls into (see `_prelude.ts`), owned by the run. */
export interface Internals {
  /** `install(namespacesJson, heapLimitBytes)`: defines one namespace global per server. */
  readonly install: QuickJSHandle;
  /** `run(main) -> promise` of the script's value. */
  readonly run: QuickJSHandle;
  /** `settle(id, ok, payload)`: delivers a host call's reply. */
  readonly settle: QuickJSHandle;
  /** `fireTimer(id)`: runs a due `setTimeout` callback. */
  readonly fireTimer: QuickJSHandle;
  /** `serialize(value) -> JSON text` (frees the memory reserve first). */
  readonly serialize: QuickJSHandle;
  /** `describe(thrown) -> JSON text` for `readThrown`. */
  readonly describe: QuickJSHandle;
  /** `unobserved() -> ""` when nothing is to report, else the report lines as a JSON array. */
  readonly unobserved: QuickJSHandle;
  /** `release()`: frees the memory reserve. */
  readonly release: QuickJSHandle;
  /** `part(index) -> part`: compiles a prelude part unless it is loaded (see `_prelude_parts.ts`). */
  readonly part: QuickJSHandle;
  /** `define(target, key, value)`: an own writable, configurable, non-enumerable property (no setter runs). */
  readonly define: QuickJSHandle;
}

/** How the running part of a run ended, before the outcome is assembled. */
export type Ending =
  | { kind: "settled" }
  | { kind: "stopped"; reason: StopReason }
  | { kind: "failed"; failure: SandboxFailure }
  | { kind: "thrown"; prefix: string; error: QuickJSHandle };
