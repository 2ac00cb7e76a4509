/**
 * `execute`'s engine: runs one JavaScript (or TypeScript) script in QuickJS against host-call callbacks under
 * hard limits, in Workers the host can kill. It must never import servers, MCP or the catalog: it knows only
 * namespaces, a `hostCall` callback and `SandboxLimits` (`limitsFromConfig()` reads just the `[mcp]` type).
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
 * @module
 */
export type {
  HostCall,
  HostCallRequest,
  RunOptions,
  SandboxFailure,
  SandboxLimits,
  SandboxResult,
} from "./types.ts";
export { clampStackBytes, limitsFromConfig, MAX_SCRIPT_STACK_BYTES } from "./limits.ts";
export {
  DEFAULT_HARD_KILL_GRACE_MS,
  DEFAULT_IDLE_RETIRE_MS,
  DEFAULT_POOL_SIZE,
  DEFAULT_RECYCLE_WASM_BYTES,
  DEFAULT_SPAWN_TIMEOUT_MS,
  SandboxPool,
  type SandboxPoolOptions,
} from "./pool.ts";
export { type ExecuteStructured, renderExecuteText } from "./render.ts";
export { MAX_TOOL_ARGS_BYTES } from "./_run_types.ts";
export { MAX_RESULT_DEPTH } from "./_json_depth.ts";
export { HELPER_GLOBAL, UNREACHABLE_TOOL_KEYS } from "./_prelude.ts";
