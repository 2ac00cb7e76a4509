// The frames between mcp-serve and its sandbox processes: a 4-byte length, then JSON, read from pipe chunks.
import assert from "node:assert/strict";
import {
  encodeFrame,
  FRAME_TEXT_KEY,
  FrameDecoder,
  FrameError,
  MIN_TAIL_CHARS,
} from "../../lib/sandbox/protocol/frames.ts";
import {
  checkFromGuest,
  encodeFromGuest,
  encodeToGuest,
  liftToGuest,
} from "../../lib/sandbox/protocol/messages.ts";

const PIPE_READ_BYTES = 64 * 1024;

/** Pushes `bytes` in pipe-sized chunks; returns the messages and the time spent in `push`, milliseconds. */
function pushInChunks(decoder: FrameDecoder, bytes: Uint8Array): { messages: unknown[]; ms: number } {
  const messages: unknown[] = [];
  const started = performance.now();
  for (let at = 0; at < bytes.length; at += PIPE_READ_BYTES) {
    messages.push(...decoder.push(bytes.subarray(at, at + PIPE_READ_BYTES)));
  }
  return { messages, ms: performance.now() - started };
}

Deno.test("FrameDecoder returns the messages of frames split anywhere, in order", () => {
  const frames = [encodeFrame({ a: 1 }), encodeFrame({ b: "é".repeat(100_000) }), encodeFrame([null])];
  const all = new Uint8Array(frames.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const frame of frames) all.set(frame, (at += frame.length) - frame.length);
  const decoder = new FrameDecoder(1 << 20);
  const messages: unknown[] = [];
  for (let i = 0; i < all.length; i += 7_777) messages.push(...decoder.push(all.subarray(i, i + 7_777)));
  assert.deepEqual(messages, [{ a: 1 }, { b: "é".repeat(100_000) }, [null]]);
  assert.equal(decoder.pendingBytes, 0);
});

Deno.test("FrameDecoder refuses a frame past its budget from the length prefix alone", () => {
  const decoder = new FrameDecoder(1_000);
  const frame = encodeFrame({ text: "x".repeat(2_000) });
  assert.throws(() => decoder.push(frame.subarray(0, 8)), (error: unknown) => {
    assert.ok(error instanceof FrameError);
    assert.equal(error.code, "oversized");
    return true;
  });
});

Deno.test("FrameDecoder reads a 32 MiB frame from 64 KiB chunks in about the time of one push (one copy)", () => {
  // A `done` of 16 MiB of `"` is a 32 MiB frame; the buffer grew by 1 MiB at a time, copying the frame
  // read so far each time (~0.5 GB in all: 2.8x the time of one push here, 250 ms of mcp-serve's thread
  // under its V8 flags): now it grows to the frame at once.
  const frame = encodeFrame({ type: "done", valueJson: "x".repeat(32 * 1024 * 1024) });
  let wholeMs = Infinity;
  let chunkedMs = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    assert.equal(new FrameDecoder(128 << 20).push(frame).length, 1);
    wholeMs = Math.min(wholeMs, performance.now() - started);
    const chunked = pushInChunks(new FrameDecoder(128 << 20), frame);
    assert.equal(chunked.messages.length, 1);
    chunkedMs = Math.min(chunkedMs, chunked.ms);
  }
  assert.ok(
    chunkedMs < 1.7 * wholeMs + 10,
    `in chunks ${chunkedMs.toFixed(0)} ms, at once ${wholeMs.toFixed(0)} ms`,
  );
});

Deno.test("a frame's text tail travels unescaped and comes back as the message's $text", () => {
  const text = JSON.stringify(Array.from({ length: 100 }, () => ({ path: '/a/"b"\\c', rows: ["é", "\n"] })));
  const frame = encodeFrame({ type: "reply", callId: 1 }, text);
  const header = JSON.stringify({ type: "reply", callId: 1 });
  // Not escaped inside the JSON: the prefix, the header, the NUL and the text's own bytes, nothing more.
  assert.equal(frame.length, 4 + header.length + 1 + new TextEncoder().encode(text).length);
  assert.deepEqual(new FrameDecoder(1 << 20).push(frame), [{
    type: "reply",
    callId: 1,
    [FRAME_TEXT_KEY]: text,
  }]);
});

Deno.test("a text tail with a lone surrogate or a NUL comes back whole", () => {
  for (const text of ['"\ud800"', "a\u0000b", "", `"${"\ud800".repeat(600)}"`, `${"\u0000".repeat(600)}`]) {
    const [message] = new FrameDecoder(1 << 20).push(encodeFrame({ type: "x" }, text));
    assert.deepEqual(message, { type: "x", [FRAME_TEXT_KEY]: text });
  }
});

Deno.test("a text tail that is not UTF-8, or after a message that is not an object, is malformed", () => {
  const frameOf = (body: Uint8Array) => {
    const frame = new Uint8Array(4 + body.length);
    new DataView(frame.buffer).setUint32(0, body.length);
    frame.set(body, 4);
    return frame;
  };
  const bad = [
    new Uint8Array([...new TextEncoder().encode('{"a":1}'), 0, 0xff, 0xfe]),
    new Uint8Array([...new TextEncoder().encode("[1]"), 0, 0x41]),
  ];
  for (const body of bad) {
    assert.throws(() => new FrameDecoder(1 << 20).push(frameOf(body)), (error: unknown) => {
      assert.ok(error instanceof FrameError);
      assert.equal(error.code, "malformed");
      return true;
    });
  }
});

for (const size of ["short", "long"]) {
  Deno.test(`messages put their ${size} text in the frame and back: run, reply, call, done`, () => {
    const long = (text: string) => size === "long" ? `${text}${" ".repeat(MIN_TAIL_CHARS)}` : text;
    const limits = {
      timeoutMs: 1,
      memoryLimitBytes: 1,
      stackLimitBytes: 1,
      maxConsoleBytes: 1,
      maxResultBytes: 1,
      maxToolCalls: 1,
    };
    const toGuest = [
      { type: "run" as const, runId: 1, script: long('return "x"'), namespaces: ["a"], limits },
      {
        type: "reply" as const,
        runId: 1,
        callId: 2,
        reply: { ok: true as const, json: long('{"q":"\\""}') },
      },
      { type: "reply" as const, runId: 1, callId: 3, reply: { ok: true as const, json: undefined } },
      { type: "reply" as const, runId: 1, callId: 4, reply: { ok: false as const, message: "no" } },
    ];
    for (const message of toGuest) {
      const [raw] = new FrameDecoder(1 << 20).push(encodeToGuest(message));
      // As plain JSON would carry it (an undefined member dropped).
      assert.deepEqual(liftToGuest(raw), JSON.parse(JSON.stringify(message)));
    }
    const outcome = {
      ok: true as const,
      valueJson: '"\ud800"',
      originalBytes: 3,
      truncated: false,
      toolCalls: 0,
      poisoned: false,
    };
    const fromGuest = [
      {
        type: "call" as const,
        runId: 1,
        callId: 2,
        namespace: "n",
        key: "k",
        argsJson: long('{"a":"\\"b"}'),
      },
      { type: "done" as const, runId: 1, outcome, wasmBytes: 5 },
      { type: "done" as const, runId: 1, outcome: { ...outcome, valueJson: long("[1]") }, wasmBytes: 5 },
    ];
    for (const message of fromGuest) {
      const [raw] = new FrameDecoder(1 << 20).push(encodeFromGuest(message));
      assert.deepEqual(checkFromGuest(raw), message);
    }
    // A call without arguments has no tail, and keeps `argsJson` undefined.
    const bare = {
      type: "call" as const,
      runId: 1,
      callId: 2,
      namespace: "n",
      key: "k",
      argsJson: undefined,
    };
    const [raw] = new FrameDecoder(1 << 20).push(encodeFromGuest(bare));
    assert.equal((checkFromGuest(raw) as { argsJson?: string }).argsJson, undefined);
  });
}

Deno.test("a guest's text tail on a message that has no place for it is refused", () => {
  const [raw] = new FrameDecoder(1 << 20).push(encodeFrame({ type: "console", runId: 1, line: "x" }, "tail"));
  assert.match(String(checkFromGuest(raw)), /^a text tail on a message of type "console"/);
  const [done] = new FrameDecoder(1 << 20).push(encodeFrame({ type: "done", runId: 1, outcome: 5 }, "1"));
  assert.equal(typeof checkFromGuest(done), "string");
});
