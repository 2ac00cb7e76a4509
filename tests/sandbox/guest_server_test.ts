// The sandbox process's server, through its pipes seam: how many writes a burst of tool calls costs the host
// (each write wakes the host and costs it a read), and when an idle one compacts its heap.
import assert from "node:assert/strict";
import { GuestServer } from "../../lib/sandbox/guest/main.ts";
import { HeapTrim } from "../../lib/sandbox/guest/_heap_trim.ts";
import { FrameDecoder } from "../../lib/sandbox/protocol/frames.ts";
import { checkFromGuest, encodeToGuest, type FromGuest } from "../../lib/sandbox/protocol/messages.ts";
import { testLimits } from "../_fakes_sandbox.ts";

/**
 * Runs `script` in a `GuestServer` whose host answers every call with its arguments; returns the frames
 * of each write the guest made, in order (each also given to `onWrite` as it is made).
 */
async function writesOf(
  script: string,
  onWrite: (frames: FromGuest[]) => void = () => {},
): Promise<FromGuest[][]> {
  const limits = testLimits({ maxToolCalls: 1000 });
  let input: Uint8Array | undefined = new Uint8Array([
    ...encodeToGuest({ type: "init", heapLimitBytes: limits.memoryLimitBytes }),
    ...encodeToGuest({ type: "run", runId: 1, script, namespaces: ["srv"], limits }),
  ]);
  const writes: FromGuest[][] = [];
  const decoder = new FrameDecoder(1 << 30);
  const answered = new Set<number>();
  let finished: () => void = () => {};
  const done = new Promise<void>((resolve) => finished = resolve);
  const copyInto = (buffer: Uint8Array, bytes: Uint8Array) => {
    buffer.set(bytes);
    return bytes.length;
  };
  const server = new GuestServer({
    read: async (buffer) => {
      if (input) {
        const bytes = input;
        input = undefined;
        return copyInto(buffer, bytes);
      }
      await done;
      return null;
    },
    readSync: (buffer) => {
      const replies: number[] = [];
      for (const message of writes.flat()) {
        if (message.type !== "call" || answered.has(message.callId)) continue;
        answered.add(message.callId);
        replies.push(...encodeToGuest({
          type: "reply",
          runId: 1,
          callId: message.callId,
          reply: { ok: true, json: message.argsJson },
        }));
      }
      assert.ok(replies.length > 0, "the guest blocked with no call to answer");
      return copyInto(buffer, new Uint8Array(replies));
    },
    writeSync: (bytes) => {
      const frames = decoder.push(bytes).map((raw) => checkFromGuest(raw) as FromGuest);
      writes.push(frames);
      onWrite(frames);
      if (frames.some((frame) => frame.type === "done")) finished();
      return bytes.length;
    },
  });
  await server.serve();
  return writes;
}

Deno.test("100 tool calls under Promise.all reach the host in two writes: the first at once, the rest together", async () => {
  const writes = await writesOf(
    "return (await Promise.all(Array.from({ length: 100 }, (_, i) => srv.echo({ i })))).length",
  );
  const withCalls = writes.filter((frames) => frames.some((frame) => frame.type === "call"));
  assert.deepEqual(withCalls.map((frames) => frames.length), [1, 99]);
  const done = writes.flat().find((frame) => frame.type === "done");
  assert.deepEqual(done?.type === "done" && done.outcome.ok ? done.outcome.valueJson : done, "100");
});

Deno.test("sequential tool calls each leave at once, and a console line is never held behind", async () => {
  const writes = await writesOf(
    "let n = 0; for (let i = 0; i < 5; i++) { console.log('c' + i); n += (await srv.echo({ i })).i } return n",
  );
  const kinds = writes.map((frames) => frames.map((frame) => frame.type).join("+"));
  assert.deepEqual(kinds.filter((kind) => kind.includes("call") || kind.includes("console")), [
    "console",
    "call",
    "console",
    "call",
    "console",
    "call",
    "console",
    "call",
    "console",
    "call",
  ]);
});

Deno.test("calls held back leave while the script keeps computing (from the interrupt handler)", async () => {
  // 1,000,000 loop steps poll the interrupt handler about 100 times; the second call must have been written
  // before the loop ended (without the flush there, it left only when the run blocked after the loop).
  const writtenAt: number[] = [];
  const writes = await writesOf(
    "srv.echo({ a: 1 }); const late = srv.echo({ b: 2 }); for (let i = 0; i < 1000000; i++) {} " +
      "const loopEnd = Date.now(); await late; return loopEnd",
    (frames) => {
      if (frames.some((frame) => frame.type === "call")) writtenAt.push(Date.now());
    },
  );
  const done = writes.flat().find((frame) => frame.type === "done");
  const loopEnd = Number(done?.type === "done" && done.outcome.ok ? done.outcome.valueJson : NaN);
  assert.equal(writtenAt.length, 2);
  assert.ok(
    writtenAt[1]! < loopEnd,
    `the second call left ${writtenAt[1]! - loopEnd} ms after the loop ended`,
  );
});

/**
 * A `GuestServer` that is sent `init` and then nothing until the test ends its input; its heap trim records
 * each compaction (a fake `gc`: tests run without `--expose-gc`).
 */
function idleGuest(idleCompactMs: number) {
  const compactions: unknown[] = [];
  const heapTrim = new HeapTrim({
    gc: (options) => void (options && compactions.push(options)),
    heapUsed: () => 6 * 1024 * 1024,
    heapTotal: () => 12 * 1024 * 1024,
  });
  let input: Uint8Array | undefined = encodeToGuest({
    type: "init",
    heapLimitBytes: testLimits().memoryLimitBytes,
  });
  let endInput: () => void = () => {};
  const ended = new Promise<void>((resolve) => endInput = resolve);
  let readyNow: () => void = () => {};
  const ready = new Promise<void>((resolve) => readyNow = resolve);
  const decoder = new FrameDecoder(1 << 30);
  const server = new GuestServer({
    read: async (buffer) => {
      if (input) {
        buffer.set(input);
        const length = input.length;
        input = undefined;
        return length;
      }
      await ended;
      return null;
    },
    readSync: () => null,
    writeSync: (bytes) => {
      if (decoder.push(bytes).some((raw) => (raw as { type?: string }).type === "ready")) readyNow();
      return bytes.length;
    },
  }, { heapTrim, idleCompactMs });
  return { server, compactions, ready, endInput, serving: server.serve() };
}

Deno.test("an idle guest compacts its V8 heap once its spare contexts are made (V8's memory-reducing collection)", async () => {
  const guest = idleGuest(10);
  await guest.ready;
  for (let waited = 0; guest.compactions.length === 0 && waited < 10_000; waited += 10) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.deepEqual(guest.compactions, [{ type: "major", execution: "sync", flavor: "last-resort" }]);
  guest.endInput();
  await guest.serving;
});

Deno.test("a guest whose host closed its stdin before it was idle long enough never compacts", async () => {
  const guest = idleGuest(300);
  await guest.ready;
  guest.endInput();
  await guest.serving;
  await new Promise((resolve) => setTimeout(resolve, 600));
  assert.deepEqual(guest.compactions, []);
});
