/**
 * Messages between `SandboxPool` (host thread) and its sandbox Workers (`worker.ts`), and the layout of the
 * shared stop flags that let the host interrupt a busy script.
 *
 * Sandbox Workers are created by the host itself: a Worker created inside another Worker starts about 1 s
 * late on Deno 2.9, while one created by the host starts in 15–40 ms but blocks the host's event loop that
 * long, so the pool creates them off the request path (at start, and replacements while no run is going).
 * The host talks to each sandbox over the Worker's own message channel, and hands a run's host-call replies
 * and deadline changes through the Worker's reply channel (`_reply_channel.ts`) when the Worker can block in
 * `Atomics.wait`; those messages then carry the sequence number that orders them with the ring's records.
 *
 * @module
 */
import type { EngineOutcome, HostReply, StopReason } from "./_run_types.ts";
import type { ChannelStart } from "./_reply_channel.ts";
import type { SandboxLimits } from "./types.ts";

/** Host → sandbox: its first message. */
export interface SandboxInit {
  type: "init";
  stopFlags: SharedArrayBuffer;
  /** Memory limit to prepare a QuickJS module for, bytes. */
  heapLimitBytes: number;
  /** The reply channel ({@link REPLY_CHANNEL_BYTES}); absent: replies come by message only. */
  replyChannel?: SharedArrayBuffer | undefined;
}

/** Host → sandbox, after `init`. */
export type ToSandbox =
  | {
    type: "run";
    runId: number;
    script: string;
    namespaces: string[];
    limits: SandboxLimits;
    /** Where the run's messages start in the reply channel, when the Worker uses it. */
    channel?: ChannelStart | undefined;
  }
  /** `seq`: the message's place in the reply channel's order (when the Worker uses it). */
  | { type: "reply"; runId: number; callId: number; reply: HostReply; seq?: number | undefined }
  /** The run must end; sent with the stop flags set, for a script that waits on a promise. */
  | { type: "stop"; runId: number; reason: StopReason }
  /** The deadline clock stopped (`remainingMs: null`, a host call holds it) or runs again with `remainingMs` left. */
  | { type: "deadline"; runId: number; remainingMs: number | null; seq?: number | undefined };

/** Sandbox → host. */
export type FromSandbox =
  /** `replyChannel`: whether the Worker reads replies from its reply channel (it can block in `Atomics.wait`). */
  | { type: "ready"; replyChannel: boolean }
  /** The sandbox cannot run scripts (e.g. the WASM module failed to load). */
  | { type: "fatal"; message: string }
  | {
    type: "call";
    runId: number;
    callId: number;
    namespace: string;
    key: string;
    argsJson: string | undefined;
    /** How far the Worker has read its reply channel (a byte position, see `ChannelWriter.consumed`). */
    head?: number | undefined;
  }
  | { type: "console"; runId: number; line: string }
  | { type: "consoleDropped"; runId: number }
  /** The run ended; `wasmBytes` is the size the Worker's WASM memory has grown to (it never shrinks). */
  | { type: "done"; runId: number; outcome: EngineOutcome; wasmBytes: number };

export { REPLY_CHANNEL_BYTES } from "./_reply_channel.ts";

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
