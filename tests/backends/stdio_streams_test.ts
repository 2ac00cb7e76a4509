import assert from "node:assert/strict";
import {
  LINE_SLICE_MS,
  pumpStdout,
  STDIN_WRITE_BYTES,
  StdinQueue,
  STDOUT_READ_BYTES,
} from "../../lib/backends/_stdio_streams.ts";
import { NULL_LOGGER } from "../../lib/log.ts";

/** A byte stream (as a child's stdout is) that hands out `chunks` one read at a time. */
function byteStream(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      if (next === chunks.length) {
        controller.close();
        return controller.byobRequest?.respond(0); // ends the pending read (as a pipe at EOF does)
      }
      controller.enqueue(encoder.encode(chunks[next++]!));
    },
  });
}

async function linesOf(chunks: string[]): Promise<string[]> {
  const lines: string[] = [];
  await pumpStdout(byteStream(chunks), {
    maxMessageBytes: 1 << 20,
    onLine: (line) => lines.push(line),
    onOversize: () => assert.fail("no line is over budget"),
    logger: NULL_LOGGER,
  });
  return lines;
}

Deno.test("pumpStdout() reads into one reused buffer, yet a line spanning reads arrives intact", async () => {
  // The second read would overwrite `{"b":` if the buffer holding it were reused.
  const chunks = ['{"a":1}\n{"b":', '22}\n{"c":3}\n', '{"d":', "4", "}\n", "tail"];
  assert.deepEqual(await linesOf(chunks), ['{"a":1}', '{"b":22}', '{"c":3}', '{"d":4}', "tail"]);
});

Deno.test("pumpStdout() takes a line longer than one read buffer whole", async () => {
  const long = `{"x":"${"y".repeat(STDOUT_READ_BYTES * 2 + 17)}"}`;
  const parts = [
    long.slice(0, 10),
    long.slice(10, STDOUT_READ_BYTES + 5),
    long.slice(STDOUT_READ_BYTES + 5) + "\n{}\n",
  ];
  assert.deepEqual(await linesOf(parts), [long, "{}"]);
});

Deno.test("StdinQueue encodes into one reused buffer, yet every message arrives whole and in order", async () => {
  const received: string[] = [];
  const decoder = new TextDecoder();
  // Like a pipe, the sink has taken the bytes once its write resolved.
  const sink = new WritableStream<Uint8Array>({
    write: (chunk) => void received.push(decoder.decode(chunk)),
  });
  const queue = new StdinQueue(sink.getWriter(), NULL_LOGGER);
  const long = "é".repeat(STDIN_WRITE_BYTES); // 2 bytes each: twice the buffer
  const messages = [
    { jsonrpc: "2.0" as const, id: 1, method: "a", params: { text: "first" } },
    { jsonrpc: "2.0" as const, id: 2, method: "b", params: { text: long } },
    { jsonrpc: "2.0" as const, method: "c" },
  ];
  await Promise.all(messages.map((m) => queue.send(m)));
  assert.deepEqual(received.map((line) => JSON.parse(line)), messages);
  assert.ok(received.every((line) => line.endsWith("\n")));
});

Deno.test("pumpStdout() reads on after an answer that followed a pause, without waiting a timer turn", async () => {
  const encoder = new TextEncoder();
  const order: string[] = [];
  let pulls = 0;
  const stream = new ReadableStream({
    type: "bytes",
    async pull(controller: ReadableByteStreamController) {
      pulls++;
      if (pulls === 1) {
        await new Promise((resolve) => setTimeout(resolve, LINE_SLICE_MS * 3)); // the server thinks
        controller.enqueue(encoder.encode('{"id":1}\n'));
      } else {
        order.push("next read");
        controller.close();
        controller.byobRequest?.respond(0);
      }
    },
  });
  await pumpStdout(stream, {
    maxMessageBytes: 1 << 20,
    onLine: () => void setTimeout(() => order.push("timer turn"), 0),
    onOversize: () => {},
    logger: NULL_LOGGER,
  });
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.deepEqual(order, ["next read", "timer turn"]);
});
