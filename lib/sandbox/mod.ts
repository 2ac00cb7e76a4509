/**
 * `execute`'s engine: JavaScript (or TypeScript) scripts in QuickJS with hard limits, inside a pool of
 * Workers that the host can kill. Each server in scope is a global namespace whose methods call the host.
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
  DEFAULT_POOL_SIZE,
  DEFAULT_RECYCLE_WASM_BYTES,
  DEFAULT_SPAWN_TIMEOUT_MS,
  SandboxPool,
  type SandboxPoolOptions,
} from "./pool.ts";
export { renderExecuteText } from "./render.ts";
export { MAX_TOOL_ARGS_BYTES } from "./engine.ts";
export { MAX_RESULT_DEPTH } from "./_json_depth.ts";
export { UNREACHABLE_TOOL_KEYS } from "./_prelude.ts";
