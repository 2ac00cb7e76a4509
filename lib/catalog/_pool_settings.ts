/**
 * The `[mcp]` settings the server pool works under: restart, shutdown and call bounds
 * ({@link poolLimits}, applied again on re-resolution) and the message budget handed to every
 * connection as it starts ({@link budgetedConnect}).
 *
 * @module
 */
import type { McpConfig } from "../plugins/mod.ts";
import { connectBySpec, type ConnectFn, type PoolLimits } from "../backends/mod.ts";

const MIB = 1024 * 1024;

/** The pool's part of `[mcp]`, in the pool's units (ms). */
export function poolLimits(config: McpConfig): PoolLimits {
  return {
    maxRestarts: config.maxServerRestarts,
    restartStableResetMs: config.restartStableResetSecs * 1000,
    shutdownGraceMs: config.shutdownGraceSecs * 1000,
    maxCallsInFlight: config.maxCallsInFlightPerServer,
  };
}

/**
 * `connect` (default {@link connectBySpec}) with `maxMessageBytes` set from `[mcp]
 * max-message-mb` as it is when each server starts.
 *
 * @param config The current settings, read at every start.
 */
export function budgetedConnect(connect: ConnectFn | undefined, config: () => McpConfig): ConnectFn {
  const base = connect ?? connectBySpec;
  return (spec, ctx) => base(spec, { ...ctx, maxMessageBytes: config().maxMessageMb * MIB });
}
