/**
 * `execute`'s engine: runs one JavaScript (or TypeScript) script in QuickJS against host-call callbacks under
 * hard limits, in child processes the host can always kill. It must never import servers, MCP or the
 * catalog: it knows only namespaces, a `hostCall` callback and `SandboxLimits` (`limitsFromConfig()` reads
 * just the `[mcp]` type).
 *
 * Three sides, one folder each:
 * - `host/`: in `mcp-serve`'s process. The pool of sandbox processes (`pool.ts`), one run's deadline,
 *   cancellation and host calls (`_run_session.ts`), starting and killing a process (`_guest_process.ts`,
 *   `guest_launch.ts`), and the text the agent sees (`render.ts`).
 * - `guest/`: in the sandbox process, which holds no permission. Its entry (`main.ts`), the QuickJS engine
 *   (`engine.ts`), one run's state machine (`_script_run.ts`), contexts prepared ahead
 *   (`_prepared_context.ts`), the prelude, compile, and the bridge the script's calls cross
 *   (`_script_bridge.ts`).
 * - `protocol/`: what both sides share. The messages (`messages.ts`) and their framing (`frames.ts`), the
 *   public shapes (`types.ts`), limits, and the engine's outcome types.
 *
 * @example
 * ```ts ignore
 * import { limitsFromConfig, renderExecuteText, SandboxPool } from "./lib/sandbox/mod.ts";
 * const pool = new SandboxPool();
 * const result = await pool.run({
 *   script: "const r = await github.search({ q: 'deno' }); return r.items.length",
 *   namespaces: ["github"],
 *   limits: limitsFromConfig(config),
 *   hostCall: ({ namespace, key, args }, signal) => dispatch(namespace, key, args, signal),
 * });
 * const { text, isError } = renderExecuteText(result, notices);
 * await pool.close();
 * ```
 *
 * Other faces, each loaded on its own:
 * - `guest/main.ts`: the sandbox process's entry, which `main.ts` loads only in that process.
 *
 * @module
 */
export type {
  HostCall,
  HostCallControl,
  HostCallRequest,
  RunOptions,
  SandboxFailure,
  SandboxLimits,
  SandboxResult,
} from "./protocol/types.ts";
export { clampStackBytes, limitsFromConfig, MAX_SCRIPT_STACK_BYTES } from "./protocol/limits.ts";
export {
  DEFAULT_HARD_KILL_GRACE_MS,
  DEFAULT_IDLE_RETIRE_MS,
  DEFAULT_POOL_SIZE,
  DEFAULT_RECYCLE_WASM_BYTES,
  DEFAULT_SPAWN_TIMEOUT_MS,
  SandboxPool,
  type SandboxPoolOptions,
} from "./host/pool.ts";
export { type GuestLaunch, guestLaunch } from "./host/guest_launch.ts";
export { type ExecuteStructured, renderExecuteText } from "./host/render.ts";
export { MAX_TOOL_ARGS_BYTES } from "./protocol/run_types.ts";
export { MAX_RESULT_DEPTH } from "./protocol/json_depth.ts";
export { truncateJsonString, truncateUtf8, utf8ByteLength } from "./protocol/utf8.ts";
export { mayHoldMediaBlocks } from "./protocol/media_json.ts";
export { GUEST_SUBCOMMAND } from "./protocol/messages.ts";
export {
  HELPER_GLOBAL,
  MAX_SCRIPTS_DEPTH,
  SCRIPTS_GLOBAL,
  SESSION_GLOBAL,
  SESSION_VALUE_MAX_BYTES,
  sessionValueRefusal,
  UNREACHABLE_TOOL_KEYS,
} from "./protocol/globals.ts";
// How the guest reads script text (pure), for the host's saved scripts (`lib/meta_server/_saved_script_forms.ts`).
export {
  createTypeStripper,
  normalizeScriptWithOrigin,
  startsWithStatement,
  type TypeStripper,
} from "./guest/normalize.ts";
