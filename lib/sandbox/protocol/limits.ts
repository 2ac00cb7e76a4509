/**
 * `[mcp]` keys -> the limits of one sandbox run, with the stack limit clamped to what QuickJS can
 * enforce by itself on the sandbox process's thread.
 *
 * @module
 */
import type { McpConfig } from "../../plugins/mod.ts";
import type { SandboxLimits } from "./types.ts";

/**
 * The largest QuickJS stack limit the sandbox uses, bytes (384 KiB).
 *
 * QuickJS counts its stack in WASM linear memory, but every interpreter frame also occupies the native
 * stack of the sandbox process's main thread (8 MiB on Linux; it was a 4 MiB Worker thread when this was
 * measured), whose V8 limit is
 * `--v8-flags=--stack-size=1800` (KiB; the deno.json tasks, `selfCommand()` and the guest launch pass it). Measured with that
 * flag, QuickJS's own "stack overflow" (a catchable `InternalError`) fires first for recursion through
 * functions, getters, `toString`, proxies, generators and `sort` up to 512 KiB; 384 KiB leaves a margin.
 * Beyond the clamp, and for parser or `JSON` nesting at any useful limit, V8's `RangeError` escapes the
 * WASM module instead: the run then fails with a stack-overflow `script_error` and its sandbox process is
 * replaced.
 */
export const MAX_SCRIPT_STACK_BYTES = 384 * 1024;

const MIB = 1024 * 1024;

/**
 * Maps the `[mcp]` table to sandbox limits.
 *
 * @param c The validated `[mcp]` table; only the `script-*` and `max-*` keys are read.
 * @returns Milliseconds and bytes; `script-stack-limit-kb` is clamped to {@link MAX_SCRIPT_STACK_BYTES}
 *   (the default 1024 KiB becomes 384 KiB).
 * @example
 * ```ts
 * import { DEFAULT_MCP_CONFIG } from "../../plugins/config_types.ts";
 * const limits = limitsFromConfig(DEFAULT_MCP_CONFIG);
 * if (limits.timeoutMs !== 120_000) throw new Error("unexpected default");
 * ```
 */
export function limitsFromConfig(c: McpConfig): SandboxLimits {
  return {
    timeoutMs: c.scriptTimeoutSecs * 1000,
    memoryLimitBytes: c.scriptMemoryLimitMb * MIB,
    stackLimitBytes: clampStackBytes(c.scriptStackLimitKb * 1024),
    maxConsoleBytes: c.maxConsoleBytes,
    maxResultBytes: c.maxResultBytes,
    maxToolCalls: c.maxToolCalls,
    maxInFlightChars: c.maxInFlightMb * MIB,
  };
}

/**
 * The stack limit actually given to QuickJS: at least 16 KiB (0 would mean "unlimited" to QuickJS and let
 * deep recursion overrun its 5 MiB WASM stack), at most {@link MAX_SCRIPT_STACK_BYTES}.
 *
 * @param bytes Requested limit, bytes.
 * @returns The clamped limit, bytes.
 */
export function clampStackBytes(bytes: number): number {
  if (!Number.isFinite(bytes)) return MAX_SCRIPT_STACK_BYTES;
  return Math.min(MAX_SCRIPT_STACK_BYTES, Math.max(16 * 1024, Math.floor(bytes)));
}
