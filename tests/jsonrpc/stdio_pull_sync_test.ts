// The agent stdio transport's default ends: stdin read by pulls into one reused buffer, stdout written
// synchronously for small messages, asynchronously (in order) for large ones and after a full
// non-blocking pipe. Fakes stand in for Deno.stdin / Deno.stdout (the seam); the real pipes are covered
// by the mcp-serve process tests (stdin_eof_test.ts, stdin_members_test.ts).
import assert from "node:assert/strict";
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import {
  LineStdioServerTransport,
  type PullSource,
  SYNC_WRITE_MAX_BYTES,
  type SyncSink,
} from "../../lib/jsonrpc/stdio_server_transport.ts";

const decoder = new TextDecoder();

/** A sink recording how each piece was written; `write()` resolves when `release()` is called. */
class RecordingSink implements SyncSink {
  readonly pieces: { how: "sync" | "async"; text: string }[] = [];
  /** Bytes `writeSync` accepts before it throws WouldBlock (once), or Infinity. */
  wouldBlockAfter = Infinity;
  readonly #held: (() => void)[] = [];
  holdAsync = false;

  writeSync(p: Uint8Array): number {
    if (this.wouldBlockAfter !== Infinity) {
      const n = Math.min(p.length, this.wouldBlockAfter);
      this.wouldBlockAfter = Infinity;
      if (n === 0) throw new Deno.errors.WouldBlock("Resource temporarily unavailable (os error 11)");
      this.pieces.push({ how: "sync", text: decoder.decode(p.subarray(0, n)) });
      this.wouldBlockAfterNext = true;
      return n;
    }
    if (this.wouldBlockAfterNext) {
      this.wouldBlockAfterNext = false;
      throw new Deno.errors.WouldBlock("Resource temporarily unavailable (os error 11)");
    }
    this.pieces.push({ how: "sync", text: decoder.decode(p) });
    return p.length;
  }
  wouldBlockAfterNext = false;

  async write(p: Uint8Array): Promise<number> {
    if (this.holdAsync) await new Promise<void>((resolve) => this.#held.push(resolve));
    // Partial writes happen: take at most 40,000 bytes at a time.
    const n = Math.min(p.length, 40_000);
    this.pieces.push({ how: "async", text: decoder.decode(p.subarray(0, n)) });
    return n;
  }

  release(): void {
    this.holdAsync = false;
    for (const resolve of this.#held.splice(0)) resolve();
  }

  get text(): string {
    return this.pieces.map((p) => p.text).join("");
  }
}

/** A source that never yields (the agent sends nothing); `close()` is recorded. */
class SilentSource implements PullSource {
  closed = false;
  read(): Promise<number | null> {
    return new Promise(() => {});
  }
  close(): void {
    this.closed = true;
  }
}

const note = (n: number, pad = 0): JSONRPCMessage =>
  ({
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { n, pad: "x".repeat(pad) },
  }) as JSONRPCMessage;

Deno.test("small messages are written synchronously, a large one asynchronously, and order holds", async () => {
  const sink = new RecordingSink();
  const source = new SilentSource();
  const transport = new LineStdioServerTransport({ input: source, output: sink });
  await transport.start();
  await transport.send(note(1));
  assert.deepEqual(sink.pieces.map((p) => p.how), ["sync"]);
  sink.holdAsync = true;
  const big = transport.send(note(2, SYNC_WRITE_MAX_BYTES));
  // Sent while the large one is still going: must wait behind it, not jump ahead synchronously.
  const after = transport.send(note(3));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(sink.pieces.length, 1, "nothing written past the held asynchronous write");
  sink.release();
  await Promise.all([big, after]);
  await transport.send(note(4));
  const lines = sink.text.trimEnd().split("\n").map((line) => JSON.parse(line).params.n);
  assert.deepEqual(lines, [1, 2, 3, 4]);
  assert.equal(sink.pieces.at(-1)!.how, "sync", "once the queue is empty, writes are synchronous again");
  assert.ok(sink.pieces.slice(1, -1).every((p) => p.how === "async"));
  await transport.close();
  assert.ok(source.closed, "close() ends the pending read");
});

Deno.test("a non-blocking pipe that is full: the rest of the message and the next ones go asynchronously, whole", async () => {
  const sink = new RecordingSink();
  const transport = new LineStdioServerTransport({ input: new SilentSource(), output: sink });
  await transport.start();
  sink.wouldBlockAfter = 7;
  await Promise.all([transport.send(note(1, 100)), transport.send(note(2)), transport.send(note(3))]);
  assert.equal(sink.pieces[0]!.how, "sync");
  assert.equal(sink.pieces[0]!.text.length, 7);
  assert.equal(sink.pieces[1]!.how, "async", "the rest of the first message went asynchronously");
  const lines = sink.text.trimEnd().split("\n").map((line) => JSON.parse(line).params.n);
  assert.deepEqual(lines, [1, 2, 3]);
  await transport.close();
});

Deno.test("a write error fails that send only; the next message is written", async () => {
  let fail = true;
  const written: string[] = [];
  const sink: SyncSink = {
    writeSync(p) {
      if (fail) {
        fail = false;
        throw new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
      }
      written.push(decoder.decode(p));
      return p.length;
    },
    write: () => Promise.reject(new Error("not used")),
  };
  const transport = new LineStdioServerTransport({ input: new SilentSource(), output: sink });
  await transport.start();
  await assert.rejects(transport.send(note(1)), Deno.errors.BrokenPipe);
  await transport.send(note(2));
  assert.deepEqual(written.map((line) => JSON.parse(line).params.n), [2]);
  await transport.close();
});

Deno.test("stdin read by pulls into one buffer: a line split across reads arrives whole", async () => {
  const text = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
  const whole = new TextEncoder().encode(`${text}\n${text}\n`);
  // Three reads: the first line's head, then its tail with the second line, then EOF. The transport
  // reuses its buffer, so a kept piece that were not copied would be overwritten by the second read.
  const cuts = [10, whole.length, -1];
  let at = 0;
  const source: PullSource = {
    read(p) {
      const end = cuts.shift()!;
      if (end === -1) return Promise.resolve(null);
      p.set(whole.subarray(at, end));
      const n = end - at;
      at = end;
      return Promise.resolve(n);
    },
    close() {},
  };
  const transport = new LineStdioServerTransport({ input: source, output: new RecordingSink() });
  const seen: unknown[] = [];
  transport.onmessage = (message) => seen.push(message);
  const closed = new Promise<void>((resolve) => transport.onclose = resolve);
  await transport.start();
  await closed;
  assert.deepEqual(seen, [JSON.parse(text), JSON.parse(text)]);
});
