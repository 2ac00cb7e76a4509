// One run seen from the host (`RunSession`), driven through its seam, the guest process: a script's call
// reaches `hostCall` in the turn its frame is read (no microtask hop on the path of every tool call), a
// `hostCall` that throws at once fails only that call, the reply carries the value's JSON, and the trace
// hears of a reply only after it was written.
import assert from "node:assert/strict";
import { RunSession } from "../../lib/sandbox/host/_run_session.ts";
import type { GuestProcess } from "../../lib/sandbox/host/_guest_process.ts";
import type { FromGuest, ToGuest } from "../../lib/sandbox/protocol/messages.ts";
import type { HostCall } from "../../lib/sandbox/protocol/types.ts";
import { testLimits } from "../_fakes_sandbox.ts";

/**
 * A session on a stand-in process that keeps what the host posts to it and, like `GuestProcess.post`, writes
 * what was posted in one turn a microtask later (`written`); `refuse` names the messages whose posting throws.
 */
function session(
  hostCall: HostCall,
  onCallReplied?: (argsJson?: string, resultJson?: string) => void,
  refuse?: (message: ToGuest) => string | undefined,
) {
  const posted: ToGuest[] = [];
  const written: ToGuest[] = [];
  let outbox: ToGuest[] = [];
  const post = (message: ToGuest) => {
    const refusal = refuse?.(message);
    if (refusal !== undefined) throw new Error(refusal);
    posted.push(message);
    outbox.push(message);
    if (outbox.length === 1) {
      queueMicrotask(() => {
        written.push(...outbox);
        outbox = [];
      });
    }
  };
  const slot = { session: undefined, post };
  const run = new RunSession(slot as unknown as GuestProcess, 1, {
    script: "",
    namespaces: ["srv"],
    limits: testLimits(),
    hostCall,
    onCallReplied: (_request, argsJson, resultJson) => onCallReplied?.(argsJson, resultJson),
  }, { graceMs: 100, startedAt: performance.now(), timeoutMs: 2000 });
  return { run, replies: () => posted.filter((m) => m.type === "reply"), written };
}

const call = (callId: number, argsJson?: string): FromGuest => ({
  type: "call",
  runId: 1,
  callId,
  namespace: "srv",
  key: "echo",
  argsJson,
});

Deno.test("a script's call reaches hostCall in the turn its frame is read", async () => {
  const seen: unknown[] = [];
  const { run } = session((request) => {
    seen.push(request.args);
    return Promise.resolve("ok");
  });
  run.receive(call(1, '{"message":"x"}'));
  run.receive(call(2, '{"message":"y"}'));
  assert.deepEqual(seen, [{ message: "x" }, { message: "y" }], "hostCall waited for a later turn");
  run.abandon();
  await run.result;
});

Deno.test("a hostCall that throws at once fails that call only, with its message", async () => {
  const { run, replies } = session((request) => {
    if (request.key === "echo" && (request.args as { boom?: boolean }).boom) throw new Error("no such thing");
    return Promise.resolve(7);
  });
  run.receive(call(1, '{"boom":true}'));
  run.receive(call(2, "{}"));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(replies().map((m) => m.type === "reply" && [m.callId, m.reply]), [
    [1, { ok: false, message: "no such thing" }],
    [2, { ok: true, json: "7" }],
  ]);
  run.abandon();
  await run.result;
});

Deno.test("a call's reply carries its value as JSON, and onCallReplied is told both texts", async () => {
  const told: [string | undefined, string | undefined][] = [];
  const { run, replies } = session(
    () => Promise.resolve({ content: "Echo: x" }),
    (argsJson, resultJson) => told.push([argsJson, resultJson]),
  );
  run.receive(call(1, '{"message":"x"}'));
  run.receive(call(2));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(replies().map((m) => m.type === "reply" && m.reply), [
    { ok: true, json: '{"content":"Echo: x"}' },
    { ok: true, json: '{"content":"Echo: x"}' },
  ]);
  assert.deepEqual(told, [['{"message":"x"}', '{"content":"Echo: x"}'], [
    undefined,
    '{"content":"Echo: x"}',
  ]]);
  run.abandon();
  await run.result;
});

Deno.test("the trace hears of a call's reply only once the reply was written to the guest", async () => {
  const writtenWhenTold: number[] = [];
  let sessionWritten: ToGuest[] = [];
  const { run, written } = session(
    () => Promise.resolve("x".repeat(100)),
    () => writtenWhenTold.push(sessionWritten.filter((m) => m.type === "reply").length),
  );
  sessionWritten = written;
  run.receive(call(1, "{}"));
  run.receive(call(2, "{}"));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(writtenWhenTold, [2, 2], "the trace was told before the replies left");
  run.abandon();
  await run.result;
});

Deno.test("a reply that cannot be sent (its frame refused) fails that call only, and the session goes on", async () => {
  // The stand-in process refuses the first ok reply, as `GuestProcess.post` does a frame past its cap.
  let refused = 0;
  const refuse = (message: ToGuest) =>
    message.type === "reply" && message.reply.ok && refused++ === 0 ? "frame too large" : undefined;
  const { run, replies } = session(() => Promise.resolve("big"), undefined, refuse);
  run.receive(call(1, "{}"));
  run.receive(call(2, "{}"));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(replies().map((m) => m.type === "reply" && [m.callId, m.reply.ok]), [[1, false], [
    2,
    true,
  ]]);
  const failed = replies()[0]!;
  assert.match(
    failed.type === "reply" && !failed.reply.ok ? failed.reply.message : "",
    /could not be sent.*frame too large/,
  );
  run.abandon();
  await run.result;
});
