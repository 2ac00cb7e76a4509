import assert from "node:assert/strict";
import fc from "fast-check";
import { deserializeMessage as sdkDeserializeMessage } from "@modelcontextprotocol/client";
import { deserializeMessage } from "../../lib/backends/_wire_message.ts";

/** What the SDK makes of a line: the message, or the error's class and message. */
function outcome(parse: (line: string) => unknown, line: string): unknown {
  try {
    return { ok: parse(line) };
  } catch (error) {
    return { error: (error as Error).name, message: (error as Error).message };
  }
}

const LINES = [
  '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}]}}',
  '{"jsonrpc":"2.0","id":"a-1","result":{}}',
  '{"jsonrpc":"2.0","id":7,"result":{"content":[],"_meta":{"k":1}}}',
  '{"jsonrpc":"2.0","id":7,"result":{"_meta":"not an object"}}',
  '{"jsonrpc":"2.0","id":1.5,"result":{}}',
  '{"jsonrpc":"2.0","id":9007199254740993,"result":{}}',
  '{"jsonrpc":"2.0","id":null,"result":{}}',
  '{"jsonrpc":"2.0","id":1,"result":[]}',
  '{"jsonrpc":"2.0","id":1,"result":null}',
  '{"jsonrpc":"2.0","id":1,"result":{},"extra":true}',
  '{"jsonrpc":"1.0","id":1,"result":{}}',
  '{"id":1,"result":{}}',
  '{"jsonrpc":"2.0","id":1,"result":{"__proto__":{"polluted":true}}}',
  // `__proto__` spelled with JSON escapes is the same key once parsed.
  String.raw`{"jsonrpc":"2.0","id":1,"result":{"content":[],"\u005f_proto__":{"isError":true}}}`,
  String
    .raw`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x","\u005F\u005Fproto\u005f\u005f":1}]}}`,
  String.raw`{"jsonrpc":"2.0","id":1,"result":{"content":[],"\u005fmeta":{"k":1}}}`,
  '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}',
  '{"jsonrpc":"2.0","id":4,"method":"roots/list"}',
  "[1,2]",
  '"text"',
  "{oops",
];

Deno.test("deserializeMessage() accepts and refuses exactly what the SDK's does, with the same result", () => {
  for (const line of LINES) {
    assert.deepEqual(outcome(deserializeMessage, line), outcome(sdkDeserializeMessage, line), line);
  }
});

Deno.test("deserializeMessage() agrees with the SDK on generated responses", () => {
  const json = fc.jsonValue({ maxDepth: 3 });
  const id = fc.oneof(fc.integer(), fc.string(), fc.double(), fc.constant(null), fc.constant(2 ** 60));
  const message = fc.record({
    jsonrpc: fc.constantFrom("2.0", "2.1"),
    id,
    result: fc.oneof(fc.dictionary(fc.string(), json), json),
  }, { requiredKeys: [] });
  fc.assert(
    fc.property(message, fc.option(fc.dictionary(fc.string(), json)), (m, extra) => {
      const line = JSON.stringify(extra ? { ...m, ...extra } : m);
      assert.deepEqual(outcome(deserializeMessage, line), outcome(sdkDeserializeMessage, line), line);
    }),
    { numRuns: 500 },
  );
});

Deno.test("deserializeMessage() reads a plain result response as it was written", () => {
  const message = deserializeMessage('{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":false}}');
  assert.deepEqual(message, { jsonrpc: "2.0", id: 2, result: { content: [], isError: false } });
});
