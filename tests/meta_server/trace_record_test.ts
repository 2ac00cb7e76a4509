/**
 * The trace of one `execute` (`lib/meta_server/call_trace.ts`) and its record in the session log
 * (`lib/meta_server/trace_record.ts`), through the real session logger and its file.
 */
import assert from "node:assert/strict";
import { createLogger } from "../../lib/log.ts";
import { processSecrets } from "../../lib/secrets/mod.ts";
import { CallTrace, type ExecuteTrace, withTrace } from "../../lib/meta_server/call_trace.ts";
import {
  logExecuteRecord,
  LOGGED_SCRIPT_MAX_CHARS,
  outcomeOf,
  parseSessionLog,
} from "../../lib/meta_server/trace_record.ts";

const request = (key: string) => ({ namespace: "srv", key, args: {} });
const answer = { content: [{ type: "text" as const, text: '{"result":1}' }] };

/** Writes one record through a real session logger (its file) and returns the file's text. */
async function loggedText(
  script: string,
  trace: ExecuteTrace,
  extra: { outcome?: string } = {},
): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "trace-record-" });
  const logger = createLogger({ logDir: dir, coalesceMs: 0 });
  try {
    logExecuteRecord(logger, {
      id: "0a1b2c3d",
      script,
      outcome: extra.outcome ?? "ok",
      traced: false,
      startedAtEpochMs: 1_765_000_000_000,
    }, trace);
    await logger.close();
    return await Deno.readTextFile(logger.filePath!);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function traceOf(calls: number): ExecuteTrace {
  const trace = new CallTrace(3);
  for (let i = 0; i < calls; i++) {
    const r = request(`tool_${i}`);
    const call = trace.begin(r);
    trace.end(call, { server: "server", tool: `tool_${i}` });
    trace.replied(r, `{"i":${i}}`, '"é"');
  }
  return trace.finish(answer);
}

Deno.test("CallTrace describes the first calls, counts the rest and sums their sizes", () => {
  const trace = traceOf(5);
  assert.equal(trace.calls.length, 3);
  assert.equal(trace.omittedCalls, 2);
  assert.deepEqual(trace.calls.map((c) => [c.tool, c.argsBytes, c.resultBytes, c.ok]), [
    ["tool_0", 7, 4, true],
    ["tool_1", 7, 4, true],
    ["tool_2", 7, 4, true],
  ]);
  assert.equal(trace.totals.calls, 5);
  assert.equal(trace.totals.bytesFromServers, 20); // '"é"' is 4 UTF-8 bytes, for all 5 calls
  assert.equal(trace.totals.bytesToAgent, 12);
});

Deno.test("CallTrace names a failure by its code, CANCELLED once aborted, FAILED for anything else", () => {
  const trace = new CallTrace();
  const coded = trace.begin(request("a"));
  trace.fail(coded, Object.assign(new Error("x"), { code: "CALL_TIMEOUT" }));
  trace.end(coded);
  const plain = trace.begin(request("b"));
  trace.fail(plain, Object.assign(new Error("x"), { code: "not a code: it has spaces" }));
  trace.end(plain);
  const aborted = trace.begin(request("c"));
  const controller = new AbortController();
  controller.abort();
  trace.fail(aborted, new Error("x"), controller.signal);
  trace.end(aborted);
  const running = trace.begin(request("d"));
  const done = trace.finish(answer);
  assert.deepEqual(done.calls.map((c) => c.error), ["CALL_TIMEOUT", "FAILED", "CANCELLED", "UNFINISHED"]);
  assert.equal(done.totals.errors, 4);
  trace.end(running, { server: "late", tool: "late" }); // after the end: ignored
  assert.equal(done.calls[3]!.server, "srv");
});

Deno.test("withTrace() keeps the text the serialized structured content, and appends a block to a failure", () => {
  const trace = traceOf(1);
  const ok = withTrace({ ...answer, structuredContent: { result: 1 } }, trace);
  assert.deepEqual(ok.structuredContent, { result: 1, trace });
  assert.equal((ok.content[0] as { text: string }).text, JSON.stringify(ok.structuredContent));
  const empty = withTrace({ content: [{ type: "text", text: "{}" }], structuredContent: {} }, trace);
  assert.equal((empty.content[0] as { text: string }).text, JSON.stringify({ trace }));
  const failed = withTrace(
    { content: [{ type: "text", text: '{"error":"cancelled"}' }], isError: true },
    trace,
  );
  assert.equal(failed.content.length, 2);
  assert.deepEqual(JSON.parse((failed.content[1] as { text: string }).text), { trace });
  assert.equal(outcomeOf(failed), "cancelled");
});

Deno.test("logExecuteRecord() writes lines under the log's cap that parseSessionLog() reads back", async () => {
  // Quotes, a bidi control (escaped by the log), astral characters and a long script: cut and split.
  const unit = 'say("\u202Ehi") 🦀\n';
  const script = unit.repeat(Math.ceil(40_000 / unit.length));
  const trace = traceOf(5);
  const text = await loggedText(script, trace);
  for (const line of text.split("\n")) {
    assert.ok(!line.endsWith("…"), `a record line was cut: ${line.slice(0, 80)}`);
  }
  const read = parseSessionLog(text);
  assert.equal(read.unreadableLines, 0);
  assert.equal(read.executes.length, 1);
  const [record] = read.executes;
  assert.equal(record!.isScriptCut, true);
  assert.equal(record!.scriptChars, script.length);
  assert.ok(record!.script.length <= LOGGED_SCRIPT_MAX_CHARS);
  assert.ok(script.startsWith(record!.script));
  assert.deepEqual(record!.trace, trace);
});

Deno.test("logExecuteRecord() masks a secret in the script even where the script is split over lines", async () => {
  const secret = "Zq8-trace-record-secret-41";
  processSecrets.register(secret);
  const script = `${"x".repeat(2_990)}${secret}${"y".repeat(3_000)}`;
  const text = await loggedText(script, traceOf(0));
  assert.ok(!text.includes(secret));
  assert.ok(!text.includes(secret.slice(0, 10)) || !text.includes(secret.slice(10)));
  assert.match(parseSessionLog(text).executes[0]!.script, /x\*\*\*y/);
});

Deno.test("parseSessionLog() counts a record line it cannot read and keeps the rest", async () => {
  const text = await loggedText(`return ${"1".repeat(5_000)}`, traceOf(2)); // long: a record of several lines
  const broken = text.replace(/"part":"calls","calls":\[/, '"part":"calls","calls":[***');
  const read = parseSessionLog(`2026-01-01T00:00:00.000Z INFO agent: claude-code 2.1\n${broken}`);
  assert.equal(read.unreadableLines, 1);
  assert.equal(read.agent, "claude-code 2.1");
  assert.equal(read.executes.length, 1);
  assert.equal(read.executes[0]!.trace.calls.length, 0);
  assert.equal(read.executes[0]!.trace.totals.calls, 2);
  assert.equal(read.executes[0]!.script.length, 5_007);
});

Deno.test("parseSessionLog() does not take a record quoted by another line (a server's stderr)", async () => {
  const text = await loggedText("return 1", traceOf(1));
  const record = text.split("\n").find((line) => line.includes("[trace]"))!;
  const quoted = `2026-01-01T00:00:00.000Z DEBUG [everything] stderr: ${
    record.replace('"0a1b2c3d"', '"forged00"')
  }`;
  const read = parseSessionLog(`${quoted}\n${text}`);
  assert.deepEqual(read.executes.map((e) => e.id), ["0a1b2c3d"]);
});

Deno.test("logExecuteRecord() writes a short execute as one line", async () => {
  const text = await loggedText("return 1", traceOf(2));
  const lines = text.split("\n").filter((line) => line.includes("[trace]"));
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /"part":"end","text":"return 1","calls":\[\["server","tool_0",/);
  assert.equal(parseSessionLog(text).executes[0]!.script, "return 1");
});
