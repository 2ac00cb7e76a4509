/**
 * The sandbox limits of the benchmarks that drive the sandbox without MCP (`bench/sandbox_bench.ts`,
 * `bench/guest_memory.ts`), one set for both so that their figures compare: a 60 s deadline and 2,000 tool
 * calls, so that the longest series (200 calls per run) never meets a limit.
 *
 * @module
 */
import type { SandboxLimits } from "../lib/sandbox/protocol/types.ts";

/** Bytes in a MiB. */
export const MIB = 1024 * 1024;

/** Limits of every run of those benchmarks (memory 64 MiB, stack 384 KiB, console 8 KiB, result 32 KiB). */
export const BENCH_SANDBOX_LIMITS: SandboxLimits = {
  timeoutMs: 60_000,
  memoryLimitBytes: 64 * MIB,
  stackLimitBytes: 384 * 1024,
  maxConsoleBytes: 8192,
  maxResultBytes: 32768,
  maxToolCalls: 2000,
};
