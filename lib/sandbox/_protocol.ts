/**
 * Messages between `SandboxPool` (host thread) and `worker.ts` (one sandbox Worker), and the layout of the
 * shared stop flags that let the host interrupt a script that keeps the Worker's event loop busy.
 *
 * @module
 */
import type { EngineOutcome, HostReply, StopReason } from "./engine.ts";
import type { SandboxLimits } from "./types.ts";

/** Host → Worker. */
export type ToWorker =
  /** First message: the shared stop flags, and the memory limit to prepare a QuickJS module for. */
  | { type: "init"; stopFlags: SharedArrayBuffer; heapLimitBytes: number }
  | { type: "run"; runId: number; script: string; namespaces: string[]; limits: SandboxLimits }
  | { type: "reply"; runId: number; callId: number; reply: HostReply }
  /** The run must end; sent with the stop flags set, for a script that waits on a promise. */
  | { type: "stop"; runId: number; reason: StopReason };

/** Worker → Host. */
export type FromWorker =
  | { type: "ready" }
  /** The Worker cannot run scripts (e.g. the WASM module failed to load). */
  | { type: "fatal"; message: string }
  | { type: "call"; runId: number; callId: number; namespace: string; key: string; argsJson: string | undefined }
  | { type: "console"; runId: number; line: string }
  | { type: "consoleDropped"; runId: number }
  | { type: "done"; runId: number; outcome: EngineOutcome };

/** Int32 slots of the stop-flags buffer. */
export const STOP_RUN_ID = 0;
export const STOP_REASON = 1;
/** Bytes of the stop-flags buffer. */
export const STOP_FLAGS_BYTES = 8;

/** Encodes a stop reason for the shared flags (0 means none). */
export function encodeStopReason(reason: StopReason): number {
  return reason === "timeout" ? 1 : 2;
}

/** Decodes a stop reason from the shared flags. */
export function decodeStopReason(code: number): StopReason | undefined {
  return code === 1 ? "timeout" : code === 2 ? "cancelled" : undefined;
}
