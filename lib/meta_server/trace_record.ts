/**
 * The record of one `execute` in the session log, and reading it back (`cargo agents report`): its
 * script (masked, cut at {@link LOGGED_SCRIPT_MAX_CHARS}), its calls by server and tool name with their
 * times and sizes, its outcome and totals. Never an argument or a result value. A record is a few lines
 * of JSON, each well under the log's line cap, written at once so they stay together; usually one:
 *
 * ```text
 * 2026-12-07T17:00:00.000Z DEBUG [trace] {"v":1,"id":"3f9c0a1b","part":"end","text":"const a = ...","calls":[["everything","echo",41.2,3.1,19,20,null]],"at":1765126800000,"outcome":"ok",...}
 * ```
 *
 * A longer one has `script` lines (`text`: the script's next piece), `calls` lines (`calls`: the next
 * calls) and then the `end` line; a reader takes `text` and `calls` from any line of the record.
 *
 * A call is `[server, tool, startMs, ms, argsBytes, resultBytes, errorCode | null]`; the `end` line holds
 * `at` (epoch ms of the start), `outcome` (`ok`, or the failure's kind: `script_error`, `script_timeout`,
 * ...), `traced` (the agent asked for the trace), `scriptChars`, `scriptCut`, `omittedCalls` and `totals`
 * (see `call_trace.ts:TraceTotals`).
 *
 * @module
 */
import type { Logger } from "../log.ts";
import { maskSecrets } from "../secrets/mod.ts";
import type { ExecuteTrace, TracedCall } from "./call_trace.ts";

export type { ExecuteTrace, TracedCall, TraceTotals } from "./call_trace.ts";

/** Longest script kept in the log, UTF-16 code units (16 Ki): a longer one is cut and says so. */
export const LOGGED_SCRIPT_MAX_CHARS = 16_384;

/** Scope of the record's lines (`[trace] `). */
export const TRACE_LOG_SCOPE = "trace";

/** Version of the record's lines (`"v"`). */
const RECORD_VERSION = 1;

/** Most characters of one record line as the log writes it (the log cuts lines at 4,096). */
const LINE_BUDGET_CHARS = 3_000;

/** One `execute` as the session log records it. */
export interface ExecuteRecord {
  /** 8 hex digits, unique within the session. */
  id: string;
  /** When the `execute` started, epoch ms. */
  startedAtEpochMs: number;
  /** `ok`, or the failure's kind (`script_error`, `script_timeout`, `memory_exhausted`, ...; `error` when unknown). */
  outcome: string;
  /** The agent asked for the trace (`trace: true`). */
  traced: boolean;
  /** The script, masked, at most {@link LOGGED_SCRIPT_MAX_CHARS}. */
  script: string;
  /** Length of the whole script, UTF-16 code units. */
  scriptChars: number;
  /** `script` is a cut prefix. */
  isScriptCut: boolean;
  trace: ExecuteTrace;
}

/** What an answer's failure kind is: the `error` member its text starts with. */
const FAILURE_KIND = /^\{"error":"([a-z_]{1,40})"/;

/** The outcome of an answer for the record: `ok`, or its failure's kind. */
export function outcomeOf(
  answer: { isError?: boolean | undefined; content: { type: string; text?: string }[] },
): string {
  if (!answer.isError) return "ok";
  const first = answer.content[0];
  return (first?.type === "text" ? FAILURE_KIND.exec(first.text ?? "")?.[1] : undefined) ?? "error";
}

/** A script this short is never split over lines (each character costs at most 6 as logged). */
const ONE_LINE_SCRIPT_CHARS = Math.floor(LINE_BUDGET_CHARS / 6);

/**
 * Writes the record of one `execute` to `logger` (debug level: the file always, stderr with `--verbose`):
 * one line when it fits, else the script's lines, the calls' lines and the `end` line. A script that may be
 * split over lines is masked whole first, so that no secret is cut in two (the log masks each line).
 */
export function logExecuteRecord(
  logger: Logger,
  execute: { id: string; script: string; outcome: string; traced: boolean; startedAtEpochMs: number },
  trace: ExecuteTrace,
): void {
  const log = logger.child(TRACE_LOG_SCOPE);
  const head = (part: string) => `{"v":${RECORD_VERSION},"id":${JSON.stringify(execute.id)},"part":"${part}"`;
  const masked = execute.script.length > ONE_LINE_SCRIPT_CHARS ? maskSecrets(execute.script) : execute.script;
  const kept = cutChars(masked, LOGGED_SCRIPT_MAX_CHARS);
  const pieces = splitForLines(kept).map((piece) => `"text":${JSON.stringify(piece)}`);
  const batches = callBatches(trace.calls);
  const end = JSON.stringify({
    at: execute.startedAtEpochMs,
    outcome: execute.outcome,
    traced: execute.traced,
    scriptChars: execute.script.length,
    scriptCut: kept.length < masked.length,
    omittedCalls: trace.omittedCalls,
    totals: trace.totals,
  }).slice(1, -1);
  const all = [...pieces, ...batches, end];
  if (
    pieces.length <= 1 && batches.length <= 1 &&
    all.reduce((n, f) => n + lineCost(f) + 1, 0) <= LINE_BUDGET_CHARS
  ) {
    log.debug(`${head("end")},${all.join(",")}}`);
    return;
  }
  for (const piece of pieces) log.debug(`${head("script")},${piece}}`);
  for (const batch of batches) log.debug(`${head("calls")},${batch}}`);
  log.debug(`${head("end")},${end}}`);
}

/** The calls as `"calls":[...]` fields, each within a line's budget. */
function callBatches(calls: TracedCall[]): string[] {
  const batches: string[] = [];
  let batch: string[] = [], batchChars = 0;
  const flush = () => {
    if (batch.length > 0) batches.push(`"calls":[${batch.join(",")}]`);
    batch = [];
    batchChars = 0;
  };
  for (const call of calls) {
    const json = JSON.stringify(compactCall(call));
    if (batchChars + lineCost(json) > LINE_BUDGET_CHARS - 100) flush();
    batch.push(json);
    batchChars += lineCost(json) + 1;
  }
  flush();
  return batches;
}

type CompactCall = [string, string, number, number, number, number, string | null];

/** Names are cut to 200 characters (a call's line is masked by the log whole: a name is never split). */
function compactCall(call: TracedCall): CompactCall {
  const name = (text: string) => cutChars(text, 200);
  return [
    name(call.server),
    name(call.tool),
    call.startMs,
    call.ms,
    call.argsBytes,
    call.resultBytes,
    call.ok ? null : call.error ?? "FAILED",
  ];
}

/** What the log writes for `json`: characters it escapes (C1 controls, bidi controls) take 6. */
function lineCost(json: string): number {
  // The log escapes exactly these (lib/log.ts).
  const escaped = json.match(/[\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g)?.length ?? 0;
  return json.length + 5 * escaped;
}

/** `text` cut to at most `max` code units, never between the two halves of a surrogate pair. */
function cutChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1] ?? "") ? max - 1 : max;
  return text.slice(0, end);
}

/** `text` in pieces whose JSON string, as logged, fits a line. */
function splitForLines(text: string): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < text.length;) {
    let piece = cutChars(text.slice(at), LINE_BUDGET_CHARS);
    while (piece.length > 1 && lineCost(JSON.stringify(piece)) > LINE_BUDGET_CHARS) {
      piece = cutChars(piece, Math.ceil(piece.length / 2));
    }
    pieces.push(piece);
    at += piece.length;
  }
  return pieces;
}

/** A session log read back: its executes (in the order they ended) and what could not be read. */
export interface SessionRecords {
  executes: ExecuteRecord[];
  /** The agent that connected (`agent: <name> <version>` line), when the log says. */
  agent?: string | undefined;
  /** Time of the log's first line, ISO 8601. */
  startedAt?: string | undefined;
  /** Record lines that were not JSON (cut, or a secret mask landed in a number) or lost their `end`. */
  unreadableLines: number;
}

/** A record line: the scope right after the level (a server's stderr line quoting one has its own scope first). */
const RECORD_LINE = /^\S+ DEBUG \[trace\] (\{.*)$/;
const AGENT_LINE = /^\S+ INFO agent(?: \([^)]*\))?: (.{1,200})$/;

/**
 * Reads the execute records of a session log's text (see the module's format). Lines of other kinds are
 * skipped; a record line that cannot be read is counted, and its execute kept as far as it was read.
 */
export function parseSessionLog(text: string): SessionRecords {
  const pending = new Map<string, { script: string[]; calls: TracedCall[] }>();
  const out: SessionRecords = { executes: [], unreadableLines: 0 };
  for (const line of text.split("\n")) {
    if (out.startedAt === undefined && /^\d{4}-\d\d-\d\dT\S+Z /.test(line)) {
      out.startedAt = line.split(" ")[0];
    }
    out.agent ??= AGENT_LINE.exec(line)?.[1];
    const json = RECORD_LINE.exec(line)?.[1];
    if (json === undefined) continue;
    let part: Record<string, unknown>;
    try {
      part = JSON.parse(json);
    } catch {
      out.unreadableLines++;
      continue;
    }
    if (part.v !== RECORD_VERSION || typeof part.id !== "string") continue;
    const slot = pending.get(part.id) ?? { script: [], calls: [] };
    pending.set(part.id, slot);
    if (typeof part.text === "string") slot.script.push(part.text);
    if (Array.isArray(part.calls)) slot.calls.push(...part.calls.map(readCall));
    if (part.part === "end") {
      out.executes.push(readEnd(part, part.id, slot));
      pending.delete(part.id);
    }
  }
  for (const slot of pending.values()) {
    out.unreadableLines += slot.script.length + (slot.calls.length ? 1 : 0);
  }
  return out;
}

const num = (v: unknown): number => typeof v === "number" && Number.isFinite(v) ? v : 0;
const str = (v: unknown, fallback: string): string => typeof v === "string" ? v : fallback;

function readCall(raw: unknown): TracedCall {
  const c = Array.isArray(raw) ? raw : [];
  const error = typeof c[6] === "string" ? c[6] : undefined;
  return {
    server: str(c[0], "?"),
    tool: str(c[1], "?"),
    startMs: num(c[2]),
    ms: num(c[3]),
    argsBytes: num(c[4]),
    resultBytes: num(c[5]),
    ok: error === undefined,
    ...(error === undefined ? {} : { error }),
  };
}

function readEnd(
  end: Record<string, unknown>,
  id: string,
  slot: { script: string[]; calls: TracedCall[] },
): ExecuteRecord {
  const totals = (typeof end.totals === "object" && end.totals !== null ? end.totals : {}) as Record<
    string,
    unknown
  >;
  const script = slot.script.join("");
  return {
    id,
    startedAtEpochMs: num(end.at),
    outcome: str(end.outcome, "error"),
    traced: end.traced === true,
    script,
    scriptChars: Math.max(num(end.scriptChars), script.length),
    isScriptCut: end.scriptCut === true,
    trace: {
      calls: slot.calls,
      omittedCalls: num(end.omittedCalls),
      totals: {
        calls: num(totals.calls),
        errors: num(totals.errors),
        ms: num(totals.ms),
        bytesFromServers: num(totals.bytesFromServers),
        bytesToAgent: num(totals.bytesToAgent),
      },
    },
  };
}
