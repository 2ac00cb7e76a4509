/**
 * The messages between the host (`SandboxPool`, in `mcp-serve`'s process) and a sandbox process (the guest,
 * `guest/main.ts`), one frame each (`frames.ts`) on the guest's stdin (host -> guest) and stdout (guest ->
 * host). Plain JSON data only: the two sides share no memory, so the host stops a busy guest by killing it.
 *
 * @module
 */
import type { EngineOutcome, HostReply, StopReason } from "./run_types.ts";
import type { SandboxLimits } from "./types.ts";
import { encodeFrame, FRAME_TEXT_KEY, MIN_TAIL_CHARS } from "./frames.ts";

/** Host -> guest: its first message. */
export interface GuestInit {
  type: "init";
  /** Memory limit to prepare a QuickJS module for, bytes. */
  heapLimitBytes: number;
}

/** Host -> guest, after `init`. */
export type ToGuest =
  | { type: "run"; runId: number; script: string; namespaces: string[]; limits: SandboxLimits }
  | { type: "reply"; runId: number; callId: number; reply: HostReply }
  /** The run must end (a script that waits on a promise stops; a busy one is killed after the grace). */
  | { type: "stop"; runId: number; reason: StopReason }
  /** The deadline clock stopped (`remainingMs: null`, a host call holds it) or runs again with `remainingMs` left. */
  | { type: "deadline"; runId: number; remainingMs: number | null }
  /** The wake-up the run asked for with `wake` is due (its next timer). */
  | { type: "tick"; runId: number };

/** Guest -> host. */
export type FromGuest =
  /** QuickJS is loaded and every permission is revoked: the guest can take runs. */
  | { type: "ready" }
  /** The guest cannot run scripts (e.g. the WASM module failed to load); it exits after this. */
  | { type: "fatal"; message: string }
  | {
    type: "call";
    runId: number;
    callId: number;
    namespace: string;
    key: string;
    argsJson: string | undefined;
  }
  | { type: "console"; runId: number; line: string }
  | { type: "consoleDropped"; runId: number }
  /**
   * The run blocks on its stdin until the host writes, and has a timer due in `delayMs`: the host sends a
   * `tick` then (a guest that waits only on the host reads its pipe synchronously, with no timeout).
   */
  | { type: "wake"; runId: number; delayMs: number }
  /**
   * While the deadline clock is held: the run has nothing to do and blocks on its pipe. From the host's
   * message that woke it until this, it was computing, and that time is spent from what it had left.
   */
  | { type: "waiting"; runId: number }
  /** The run ended; `wasmBytes` is the size the guest's WASM memory has grown to (it never shrinks). */
  | { type: "done"; runId: number; outcome: EngineOutcome; wasmBytes: number };

/**
 * Largest frame the host accepts from a guest, bytes (128 MiB): a `done` carrying a 16 MiB result (the
 * runner's transfer cap) whose every character JSON escapes as `\uXXXX` (a lone surrogate sends the text
 * escaped, see `encodeFrame`) is 96 MiB; a tool call's arguments are at most 8 MiB. A guest that sends more
 * is killed and its run reported.
 */
export const MAX_GUEST_FRAME_BYTES = 128 * 1024 * 1024;

/** Largest frame a guest accepts from the host, bytes of JSON (1 GiB: the host is trusted). */
export const MAX_HOST_FRAME_BYTES = 1024 * 1024 * 1024;

/** The hidden subcommand of this program that runs a guest (`cargo-agents __sandbox-guest`). */
export const GUEST_SUBCOMMAND = "__sandbox-guest";

/**
 * The frame of a message to a guest. A `run`'s script and a successful `reply`'s JSON, when long, travel as
 * the frame's text tail (`frames.ts`), unescaped; {@link liftToGuest} puts them back.
 */
export function encodeToGuest(message: GuestInit | ToGuest): Uint8Array {
  if (message.type === "run" && isLong(message.script)) {
    const { type, runId, namespaces, limits } = message;
    return encodeFrame({ type, runId, namespaces, limits }, message.script);
  }
  if (message.type === "reply" && message.reply.ok && isLong(message.reply.json)) {
    const { type, runId, callId } = message;
    return encodeFrame({ type, runId, callId, reply: { ok: true } }, message.reply.json!);
  }
  return encodeFrame(message);
}

/** Whether `text` is long enough to travel as a frame's tail (a short one goes inside the JSON as it is). */
function isLong(text: string | undefined): boolean {
  return text !== undefined && text.length >= MIN_TAIL_CHARS;
}

/**
 * A decoded frame from the host as its message: the text tail back in its place (see
 * {@link encodeToGuest}). The host is trusted: no other check.
 */
export function liftToGuest(raw: unknown): GuestInit | ToGuest {
  const m = raw as Record<string, unknown>;
  const text = m[FRAME_TEXT_KEY];
  if (typeof text === "string") {
    delete m[FRAME_TEXT_KEY];
    if (m.type === "run") m.script = text;
    else if (m.type === "reply") (m.reply as Record<string, unknown>).json = text;
  }
  return m as unknown as GuestInit | ToGuest;
}

/**
 * The frame of a message to the host. A `call`'s arguments and a successful `done`'s value (JSON text both),
 * when long, travel as the frame's text tail (`frames.ts`), unescaped; {@link checkFromGuest} puts them back.
 */
export function encodeFromGuest(message: FromGuest): Uint8Array {
  if (message.type === "call" && isLong(message.argsJson)) {
    const { type, runId, callId, namespace, key } = message;
    return encodeFrame({ type, runId, callId, namespace, key }, message.argsJson!);
  }
  if (message.type === "done" && message.outcome.ok && isLong(message.outcome.valueJson)) {
    const { valueJson, ...outcome } = message.outcome;
    return encodeFrame(
      { type: "done", runId: message.runId, outcome, wasmBytes: message.wasmBytes },
      valueJson,
    );
  }
  return encodeFrame(message);
}

/**
 * Checks that a frame from a guest has the shape of a {@link FromGuest} message, field by field, since a
 * guest is never trusted (a script that escaped QuickJS could write any JSON). A text tail (see
 * {@link encodeFromGuest}) is put back in its place first: as a `call`'s `argsJson` or a `done`'s
 * `outcome.valueJson`; on any other message it is refused.
 *
 * @returns The message, or why it is not one.
 */
export function checkFromGuest(raw: unknown): FromGuest | string {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return "a message that is not an object";
  const m = raw as Record<string, unknown>;
  if (Object.hasOwn(m, FRAME_TEXT_KEY)) {
    const text = m[FRAME_TEXT_KEY];
    delete m[FRAME_TEXT_KEY];
    const outcome = m.outcome;
    if (typeof text !== "string") return "a text tail that is not a string";
    if (m.type === "call") m.argsJson = text;
    else if (
      m.type === "done" && typeof outcome === "object" && outcome !== null && !Array.isArray(outcome)
    ) {
      (outcome as Record<string, unknown>).valueJson = text;
    } else return `a text tail on a message of type ${JSON.stringify(String(m.type)).slice(0, 40)}`;
  }
  const isRunId = Number.isSafeInteger(m.runId);
  switch (m.type) {
    case "ready":
      return { type: "ready" };
    case "fatal":
      return { type: "fatal", message: String(m.message).slice(0, 2000) };
    case "call":
      return isRunId && Number.isSafeInteger(m.callId) && typeof m.namespace === "string" &&
          typeof m.key === "string" && (m.argsJson === undefined || typeof m.argsJson === "string")
        ? raw as FromGuest
        : "a malformed call";
    case "console":
      return isRunId && typeof m.line === "string" ? raw as FromGuest : "a malformed console line";
    case "consoleDropped":
      return isRunId ? raw as FromGuest : "a malformed consoleDropped";
    case "waiting":
      return isRunId ? raw as FromGuest : "a malformed waiting";
    case "wake":
      return isRunId && typeof m.delayMs === "number" && m.delayMs >= 0
        ? raw as FromGuest
        : "a malformed wake";
    case "done":
      return isRunId && isOutcome(m.outcome) && typeof m.wasmBytes === "number"
        ? raw as FromGuest
        : "a malformed result";
    default:
      return `a message of unknown type ${JSON.stringify(String(m.type)).slice(0, 40)}`;
  }
}

function isOutcome(raw: unknown): boolean {
  if (typeof raw !== "object" || raw === null) return false;
  const o = raw as Record<string, unknown>;
  if (typeof o.toolCalls !== "number" || typeof o.poisoned !== "boolean") return false;
  if (o.ok === true) {
    return typeof o.valueJson === "string" && typeof o.originalBytes === "number" &&
      typeof o.truncated === "boolean";
  }
  if (o.ok !== false || typeof o.failure !== "object" || o.failure === null) return false;
  const failure = o.failure as Record<string, unknown>;
  return ["script_timeout", "memory_exhausted", "script_error", "tool_call_limit", "cancelled", "internal"]
    .includes(failure.error as string);
}
