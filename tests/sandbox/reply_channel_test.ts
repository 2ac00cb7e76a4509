// The reply channel's ring (lib/sandbox/_reply_channel.ts) on one thread: order and sequence numbers across
// the ring and posted messages, wrapping, a full ring, and a reader that never trusts what it reads.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type ChannelMessage,
  ChannelReader,
  ChannelWriter,
  REPLY_CHANNEL_BYTES,
  REPLY_RING_BYTES,
} from "../../lib/sandbox/_reply_channel.ts";

/** A writer and a reader over one buffer, with the posted messages kept as the Worker would get them. */
function pair() {
  const buffer = new SharedArrayBuffer(REPLY_CHANNEL_BYTES);
  const writer = new ChannelWriter(buffer);
  const reader = new ChannelReader(buffer);
  const mailbox: Array<{ seq: number; message: ChannelMessage }> = [];
  const send = (message: ChannelMessage) => writer.send(message, (seq) => mailbox.push({ seq, message }));
  /** Reads everything in order, taking posted messages when the reader asks for its mailbox. */
  const readAll = (): ChannelMessage[] => {
    const got: ChannelMessage[] = [];
    for (;;) {
      const taken = reader.take();
      if (taken.type === "message") got.push(taken.message);
      else if (taken.type === "mailbox") {
        const next = mailbox.shift();
        assert.ok(next, "the reader asked for a posted message that was never posted");
        reader.posted(next.seq, next.message);
      } else {
        assert.equal(taken.type, "empty", JSON.stringify(taken));
        return got;
      }
    }
  };
  return { buffer, writer, reader, mailbox, send, readAll };
}

const reply = (runId: number, callId: number, json: string | undefined): ChannelMessage => ({
  type: "reply",
  runId,
  callId,
  reply: { ok: true, json },
});

Deno.test("reply channel: messages of every kind arrive once, in order, with their run and call ids", () => {
  const { writer, reader, send, readAll, mailbox } = pair();
  reader.beginRun(7, writer.beginRun());
  const sent: ChannelMessage[] = [
    reply(7, 1, '{"a":"é😀"}'),
    reply(7, 2, undefined),
    { type: "reply", runId: 7, callId: 3, reply: { ok: false, message: "boom" } },
    { type: "deadline", runId: 7, remainingMs: null },
    { type: "deadline", runId: 7, remainingMs: 812.25 },
    reply(7, 4, ""),
  ];
  for (const message of sent) send(message);
  assert.equal(mailbox.length, 0);
  assert.deepEqual(readAll(), sent);
});

Deno.test("reply channel: a message larger than the ring, or any when it is full, goes by message in its turn", () => {
  const { writer, reader, send, readAll, mailbox } = pair();
  reader.beginRun(1, writer.beginRun());
  const big = JSON.stringify("x".repeat(REPLY_RING_BYTES));
  const medium = JSON.stringify("m".repeat(40_000));
  const sent = [reply(1, 1, "1"), reply(1, 2, big), reply(1, 3, "3")];
  for (let i = 4; i < 14; i++) sent.push(reply(1, i, medium)); // ~400 KB: the ring fills on the way
  sent.push(reply(1, 14, "14"));
  for (const message of sent) send(message);
  assert.ok(mailbox.length >= 5, `posted ${mailbox.length}`);
  assert.deepEqual(readAll(), sent);
  // Reported consumption frees the ring again.
  writer.consumed(reader.head);
  send(reply(1, 15, medium));
  assert.equal(mailbox.length, 0);
  assert.deepEqual(readAll(), [reply(1, 15, medium)]);
});

Deno.test("reply channel: any interleaving of sizes, reads and runs keeps order across many wraps", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          runs: fc.integer({ min: 0, max: 1 }),
          batch: fc.array(fc.oneof(fc.string({ maxLength: 40 }), fc.nat(120_000)), { maxLength: 12 }),
        }),
        { maxLength: 25 },
      ),
      (steps) => {
        const { writer, reader, send, readAll } = pair();
        let runId = 1;
        reader.beginRun(runId, writer.beginRun());
        let callId = 0;
        for (const step of steps) {
          if (step.runs === 1) {
            // Leftovers of the old run are skipped by the new run's start.
            send(reply(runId, ++callId, "left over"));
            reader.beginRun(++runId, writer.beginRun());
          }
          const sent = step.batch.map((item) =>
            reply(runId, ++callId, typeof item === "string" ? JSON.stringify(item) : "n".repeat(item))
          );
          for (const message of sent) send(message);
          assert.deepEqual(readAll(), sent);
          writer.consumed(reader.head);
        }
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("reply channel: the reader reports a scribbled ring as corrupt and never throws or loops", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(REPLY_CHANNEL_BYTES / 4 - 1), fc.integer()), { minLength: 1, maxLength: 20 }),
      fc.array(fc.nat(3_000), { minLength: 1, maxLength: 20 }),
      (scribbles, sizes) => {
        const { buffer, writer, reader, mailbox } = pair();
        reader.beginRun(3, writer.beginRun());
        sizes.forEach((size, i) =>
          writer.send(
            reply(3, i + 1, "y".repeat(size)),
            (seq) => mailbox.push({ seq, message: reply(3, i, "") }),
          )
        );
        const words = new Int32Array(buffer);
        for (const [index, value] of scribbles) words[index] = value;
        for (let i = 0; i < sizes.length + 5; i++) {
          const taken = reader.take();
          if (taken.type !== "message") {
            assert.ok(["empty", "mailbox", "corrupt"].includes(taken.type));
            return;
          }
          const { message } = taken;
          assert.ok(message.type === "reply" || message.type === "deadline");
        }
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("reply channel: the writer ignores read positions outside what it wrote", () => {
  const { writer, reader, send, readAll, mailbox } = pair();
  reader.beginRun(1, writer.beginRun());
  const medium = "m".repeat(100_000);
  send(reply(1, 1, medium));
  send(reply(1, 2, medium));
  for (const bogus of [-8, 2 ** 40, 1e9, NaN, "0", { valueOf: () => 0 }, REPLY_RING_BYTES * 3]) {
    writer.consumed(bogus);
  }
  // None of those freed the space still unread: the third goes by message instead of over the first two.
  send(reply(1, 3, medium));
  assert.equal(mailbox.length, 1);
  assert.deepEqual(readAll().map((m) => m.type === "reply" && m.callId), [1, 2, 3]);
});

Deno.test("reply channel: a buffer of the wrong size is refused", () => {
  assert.throws(() => new ChannelWriter(new SharedArrayBuffer(1024)), RangeError);
  assert.throws(() => new ChannelReader(new SharedArrayBuffer(REPLY_CHANNEL_BYTES + 8)), RangeError);
});
