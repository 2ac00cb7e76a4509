/**
 * The trace of one `execute`: every backing call its script made (server, tool, when it started and how
 * long it took, bytes of its arguments and of its result, ok or its error code) and the totals. Every
 * execute keeps one (the session log records it, `trace_record.ts`); the agent gets it when it asked
 * (`execute { script, trace: true }`). While nobody asks it costs a few numbers per call.
 *
 * @module
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { HostCallRequest } from "../sandbox/mod.ts";
import { utf8ByteLength } from "../sandbox/mod.ts";

/** Calls described one by one in a trace (the first ones); later calls are only counted. */
export const TRACE_MAX_CALLS = 200;

/** Error code of a call whose server answered `isError: true`. */
export const TOOL_ERROR_CODE = "TOOL_ERROR";

/** One backing call of a script, as the trace describes it. */
export interface TracedCall {
  /** The server as its manifest names it (the script's global when the call never resolved to one). */
  server: string;
  /** The tool's own name (the name the script used when the call never resolved to a tool). */
  tool: string;
  /** When the call started, ms after the start of the `execute` (0.1 ms steps). */
  startMs: number;
  /** How long it took, ms (0.1 ms steps); for a call still running when the script ended, until then. */
  ms: number;
  /** UTF-8 bytes of the arguments' JSON as the script sent them (0 when it passed none). */
  argsBytes: number;
  /** UTF-8 bytes of the JSON of the value the script got back (0 for a failed call). */
  resultBytes: number;
  ok: boolean;
  /**
   * Why it failed: the backing error's code (`CALL_TIMEOUT`, `CONNECTION_LOST`, `START_FAILED`, ...),
   * `TOOL_ERROR` (the server answered `isError`), `CANCELLED`, `UNFINISHED` (still running when the
   * script ended) or `FAILED` (anything else, e.g. no such tool). Absent when `ok`.
   */
  error?: string;
}

/** The totals of one `execute`. */
export interface TraceTotals {
  /** Backing calls made, those past {@link TRACE_MAX_CALLS} included. */
  calls: number;
  /** Calls that failed. */
  errors: number;
  /** The whole `execute`, ms (0.1 ms steps). */
  ms: number;
  /** UTF-8 bytes of every value handed back to the script from servers (sum of `resultBytes`). */
  bytesFromServers: number;
  /** UTF-8 bytes of the answer the agent gets, the trace itself left out (text, and media data). */
  bytesToAgent: number;
}

/** The trace of one `execute`, as the agent gets it in `trace`. */
export interface ExecuteTrace {
  /** The first {@link TRACE_MAX_CALLS} calls, in the order they started. */
  calls: TracedCall[];
  /** Calls past the first {@link TRACE_MAX_CALLS}: counted in the totals, not described. */
  omittedCalls: number;
  totals: TraceTotals;
}

const round = (ms: number) => Math.round(ms * 10) / 10;
/** A code worth passing on: a short identifier (never a message, which may hold values). */
const CODE = /^[A-Za-z][A-Za-z0-9_]{0,39}$/;

/**
 * Collects the trace of one `execute`: `begin()` when a backing call starts, `fail()` when it throws,
 * `end()` when it settled (its `finally`), `replied` with the JSON texts that crossed the sandbox's
 * boundary, then `finish()` once the script ended.
 */
export class CallTrace {
  /** Epoch ms at which the `execute` started (for the session log). */
  readonly startedAtEpochMs: number = Date.now();
  readonly #startedAt = performance.now();
  readonly #maxCalls: number;
  readonly #calls: TracedCall[] = [];
  readonly #open = new Map<HostCallRequest, TracedCall>();
  #count = 0;
  #errors = 0;
  #bytesFromServers = 0;
  #finished: ExecuteTrace | undefined;

  /** @param maxCalls Calls described one by one. @default TRACE_MAX_CALLS */
  constructor(maxCalls: number = TRACE_MAX_CALLS) {
    this.#maxCalls = maxCalls;
  }

  /** A call starts: its entry, named as the script named it until {@link CallTrace.end} is told better. */
  begin(request: HostCallRequest): TracedCall {
    const call: TracedCall = {
      server: request.namespace,
      tool: request.key,
      startMs: round(performance.now() - this.#startedAt),
      ms: -1,
      argsBytes: 0,
      resultBytes: 0,
      ok: true,
    };
    if (this.#finished !== undefined) return call;
    if (++this.#count <= this.#maxCalls) this.#calls.push(call);
    this.#open.set(request, call);
    return call;
  }

  /** The call threw: its error code (see {@link TracedCall.error}), `CANCELLED` once `signal` aborted. */
  fail(call: TracedCall, error: unknown, signal?: AbortSignal): void {
    if (this.#finished !== undefined) return;
    const code = (error as { code?: unknown } | null)?.code;
    call.ok = false;
    call.error = signal?.aborted
      ? "CANCELLED"
      : typeof code === "string" && CODE.test(code)
      ? code
      : "FAILED";
  }

  /** The call settled; `server`/`tool` are its real names when it reached a tool. */
  end(call: TracedCall, names?: { server: string; tool: string }): void {
    if (this.#finished !== undefined) return;
    // The start was rounded: never a negative duration (nor -0).
    call.ms = Math.max(0, round(performance.now() - this.#startedAt - call.startMs));
    if (names !== undefined) {
      call.server = names.server;
      call.tool = names.tool;
    }
    if (!call.ok) this.#errors++;
  }

  /** `RunOptions.onCallReplied`: the sizes of a call, once its reply crossed to the script. */
  readonly replied = (request: HostCallRequest, argsJson?: string, resultJson?: string): void => {
    const call = this.#open.get(request);
    if (call === undefined) return; // a helper call (`symposium.search`), or one after the end
    this.#open.delete(request);
    call.argsBytes = argsJson === undefined ? 0 : utf8ByteLength(argsJson);
    if (resultJson !== undefined && call.ok) {
      call.resultBytes = utf8ByteLength(resultJson);
      this.#bytesFromServers += call.resultBytes;
    }
  };

  /**
   * The script ended: calls still running are `UNFINISHED` (timed until now), and the totals are made.
   * Later calls and replies are ignored. Idempotent (the first answer is kept).
   *
   * @param answer The agent's answer without the trace, for `bytesToAgent`.
   */
  finish(answer: CallToolResult): ExecuteTrace {
    if (this.#finished !== undefined) return this.#finished;
    const nowMs = round(performance.now() - this.#startedAt);
    for (const call of this.#open.values()) {
      if (call.ms >= 0) continue; // settled, its reply still on its way: its sizes stay 0
      call.ms = Math.max(0, round(nowMs - call.startMs));
      call.ok = false;
      call.error = "UNFINISHED";
      this.#errors++;
    }
    this.#open.clear();
    this.#finished = {
      calls: this.#calls,
      omittedCalls: Math.max(0, this.#count - this.#maxCalls),
      totals: {
        calls: this.#count,
        errors: this.#errors,
        ms: nowMs,
        bytesFromServers: this.#bytesFromServers,
        bytesToAgent: answerBytes(answer),
      },
    };
    return this.#finished;
  }
}

/** UTF-8 bytes of an answer's text blocks, plus the base64 data of its image and audio blocks. */
function answerBytes(answer: CallToolResult): number {
  let bytes = 0;
  for (const block of answer.content) {
    if (block.type === "text") bytes += utf8ByteLength(block.text);
    else if (block.type === "image" || block.type === "audio") bytes += block.data.length;
  }
  return bytes;
}

/**
 * `answer` with `trace` added, for `execute { trace: true }`: on success a `trace` member of the answer
 * object, in `structuredContent` and in its text block alike (the text stays exactly the serialized
 * object); on failure (no structured content) a second text block `{"trace":...}`.
 */
export function withTrace(answer: CallToolResult, trace: ExecuteTrace): CallToolResult {
  const json = JSON.stringify(trace);
  const [first, ...rest] = answer.content;
  if (answer.isError || answer.structuredContent === undefined || first?.type !== "text") {
    return { ...answer, content: [...answer.content, { type: "text", text: `{"trace":${json}}` }] };
  }
  // The text is the compact JSON of `structuredContent`: the member is appended in both the same way.
  const text = first.text === "{}" ? `{"trace":${json}}` : `${first.text.slice(0, -1)},"trace":${json}}`;
  return {
    ...answer,
    content: [{ type: "text", text }, ...rest],
    structuredContent: { ...answer.structuredContent, trace },
  };
}
