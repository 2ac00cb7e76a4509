/**
 * The sandbox's public data shapes: the limits of one run, the host-call seam through which a script
 * reaches tools, and the result that a run always returns (it never throws).
 *
 * @module
 */

/** The limits of one `execute` run, taken from `[mcp]` by `limitsFromConfig()`. */
export interface SandboxLimits {
  /** Wall-clock deadline of the run, milliseconds. Default 120_000. */
  timeoutMs: number;
  /** QuickJS heap limit, bytes. Default 64 MiB. */
  memoryLimitBytes: number;
  /** QuickJS stack limit, bytes; clamped to `MAX_SCRIPT_STACK_BYTES`. Default 384 KiB (after the clamp). */
  stackLimitBytes: number;
  /** Budget of captured console output, UTF-8 bytes (each line costs its length plus one). Default 8192. */
  maxConsoleBytes: number;
  /** Cap on the serialized return value, UTF-8 bytes; longer values are cut, not refused. Default 32768. */
  maxResultBytes: number;
  /**
   * Cap on the serialized return value when it may hold image or audio blocks (`mayHoldMediaBlocks`), UTF-8
   * bytes: such a value leaves the sandbox process whole up to this size, for the host to move its media
   * out before it cuts the rest at `maxResultBytes`. Any other value is cut at `maxResultBytes` in the
   * sandbox process. Default `maxResultBytes` (no value crosses larger).
   */
  maxMediaResultBytes?: number | undefined;
  /** Tool calls one run may make; the call past it throws `ToolCallLimitError` in the script. Default 100. */
  maxToolCalls: number;
  /**
   * JSON of tool-call arguments in flight at once (sent, not yet answered), UTF-16 code units; a call
   * that would pass it is not sent and throws a catchable `RangeError`. Default 64 Mi (`[mcp]
   * max-in-flight-mb`).
   */
  maxInFlightChars?: number | undefined;
}

/** One call a script made: `await <namespace>.<key>(args)`. */
export interface HostCallRequest {
  /** The global the script called through, one of `RunOptions.namespaces`. */
  namespace: string;
  /** The property the script called, exactly as written (`"create-entities"`, `"createEntities"`). */
  key: string;
  /** The script's first argument as a JSON value (BigInt became a decimal string), or `undefined` when absent. */
  args: unknown;
}

/**
 * Performs one host call. The resolved value must be JSON-serializable; it is handed back into the script.
 * A rejection becomes a catchable `Error` in the script whose message is the rejection's message.
 * A result nested deeper than `MAX_RESULT_DEPTH` (1000) levels becomes such a rejection too, and a call
 * whose arguments exceed `MAX_TOOL_ARGS_BYTES` (8 MiB of JSON) never reaches the host.
 * `signal` is aborted when the run ends, times out or is cancelled while the call is pending.
 */
export type HostCall = (
  req: HostCallRequest,
  signal: AbortSignal,
  control: HostCallControl,
) => Promise<unknown>;

/** What a host call may do to its run besides answering. */
export interface HostCallControl {
  /**
   * Stops the run's deadline clock (e.g. while a person is asked to confirm the call) until the
   * returned function is called; with several holds, the clock runs again when the last is released,
   * with the time that was left. Releasing twice is harmless. The hard kill follows the same clock.
   */
  holdDeadline(): () => void;
}

/** What `SandboxPool.run()` needs. */
export interface RunOptions {
  /** The script text as the agent sent it (Markdown fences, `export default`, TypeScript syntax allowed). */
  script: string;
  /** Global names to install, one namespace object each (e.g. `["github", "sqlx"]`). */
  namespaces: string[];
  /** Limits of this run. */
  limits: SandboxLimits;
  /** Where tool calls go. */
  hostCall: HostCall;
  /** Cancels the run: the script is interrupted and pending host calls are aborted. */
  signal?: AbortSignal | undefined;
  /**
   * Told once per call that reached `hostCall`, after its reply was sent (or dropped because the run
   * ended): the very `request` object `hostCall` got, the arguments' JSON text as the script sent it
   * (`undefined` when it passed none) and the JSON text of the value handed back (`undefined` for a
   * rejection or no value). For measuring (`execute`'s trace); it must not throw. Default: none.
   */
  onCallReplied?:
    | ((request: HostCallRequest, argsJson: string | undefined, resultJson: string | undefined) => void)
    | undefined;
}

/** Why a run failed, as the tagged object the agent sees (`error` names the kind, the rest its facts). */
export type SandboxFailure =
  | {
    error: "script_timeout";
    limit_secs: number;
    /** `true` when the whole limit passed while the script waited for a free sandbox process. */
    never_ran?: true;
    /** What happened and how to fix it, for a script that never ran. */
    message?: string;
  }
  | { error: "memory_exhausted"; limit_mb: number }
  | { error: "script_error"; message: string }
  | { error: "tool_call_limit"; limit: number }
  | { error: "cancelled" }
  | { error: "internal"; message: string };

/** The outcome of one run. Console lines are those captured before the end, also on failure. */
export type SandboxResult =
  | {
    ok: true;
    /** Compact JSON of the return value (`undefined` -> `null`), cut to `maxResultBytes` on a character boundary. */
    valueJson: string;
    /** UTF-8 length of the whole serialized value before any cut, bytes. */
    originalBytes: number;
    /** Whether `valueJson` is a cut prefix (then it is not valid JSON). */
    truncated: boolean;
    /** Captured console lines, `[warn] ` / `[error] ` prefixed where the level says so. */
    console: string[];
    /** Whether some console output did not fit `maxConsoleBytes`. */
    consoleDropped: boolean;
    /** How much console output was dropped, when known (absent if the sandbox process was killed). */
    consoleDroppedAmount?: { lines: number; bytes: number } | undefined;
    /** Host calls dispatched. */
    toolCalls: number;
    /** Wall-clock time from `run()` to the result, including any wait for a free sandbox process, milliseconds. */
    durationMs: number;
  }
  | {
    ok: false;
    failure: SandboxFailure;
    console: string[];
    consoleDropped: boolean;
    consoleDroppedAmount?: { lines: number; bytes: number } | undefined;
    toolCalls: number;
    durationMs: number;
  };
