// The schema-free path of classifyLine() (plain requests and notifications) hands on only messages the
// SDK's schemas accept as they are.
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseJSONRPCMessage, specTypeSchemas } from "@modelcontextprotocol/server";
import { classifyLine } from "../../lib/jsonrpc/mod.ts";

/** Whether the SDK's MCP schema of a `tools/call` request accepts `params`. */
function callToolAccepts(params: unknown): boolean {
  const outcome = specTypeSchemas.CallToolRequest["~standard"].validate({ method: "tools/call", params });
  return !(outcome instanceof Promise) && !outcome.issues;
}

const json = fc.jsonValue({ maxDepth: 2 });
const meta = fc.oneof(
  fc.constant(undefined),
  fc.record({ progressToken: fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constant(2 ** 60), json) }),
  fc.dictionary(fc.string(), json),
  json,
);
const params = fc.oneof(
  fc.constant(undefined),
  fc.record({
    name: fc.oneof(fc.string(), json),
    arguments: fc.oneof(fc.constant(undefined), fc.dictionary(fc.string(), json), json),
    _meta: meta,
    task: fc.oneof(fc.constant(undefined), json),
  }, { requiredKeys: [] }),
  json,
);
const message = fc.record({
  jsonrpc: fc.constantFrom("2.0", "1.0"),
  id: fc.oneof(fc.integer(), fc.string(), fc.constant(undefined), fc.constant(1.5)),
  method: fc.constantFrom("tools/call", "ping", "notifications/cancelled", "tools/list", "logging/setLevel"),
  params,
}, { requiredKeys: [] });

Deno.test("classifyLine() hands on only messages the SDK's schemas accept, unchanged", () => {
  fc.assert(
    fc.property(message, (m) => {
      const line = JSON.stringify(m);
      const classified = classifyLine(line);
      if (classified.kind !== "message") return;
      const sent = JSON.parse(line);
      assert.deepEqual(classified.message, parseJSONRPCMessage(sent), line);
      if (sent.method === "tools/call" && "id" in sent) assert.ok(callToolAccepts(sent.params), line);
    }),
    { numRuns: 3_000 },
  );
});

Deno.test("classifyLine() still answers bad tools/call params with -32602 and the reason", () => {
  const bad = [
    ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":3}}', /params\.name/],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}', /arguments/],
    [
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1.5}}}',
      /_meta/,
    ],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/call"}', /params/],
  ] as const;
  for (const [line, why] of bad) {
    const classified = classifyLine(line);
    assert.equal(classified.kind, "reply", line);
    if (classified.kind !== "reply") continue;
    assert.equal(classified.reply.error.code, -32602, line);
    assert.match(classified.reply.error.message, why, line);
  }
  const ok = classifyLine(
    '{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"execute","arguments":{"script":"return 1"},"_meta":{"progressToken":"t"}}}',
  );
  assert.deepEqual(ok, {
    kind: "message",
    message: {
      jsonrpc: "2.0",
      id: "a",
      method: "tools/call",
      params: { name: "execute", arguments: { script: "return 1" }, _meta: { progressToken: "t" } },
    },
  });
});

Deno.test("classifyLine() drops a `__proto__` member spelled with JSON escapes, as the plain one", () => {
  for (const key of [String.raw`\u005f_proto__`, String.raw`\u005F\u005Fproto\u005F\u005F`, "__proto__"]) {
    const line = String.raw`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute",` +
      String.raw`"arguments":{"script":"return 1","${key}":{"polluted":true}}}}`;
    const classified = classifyLine(line);
    assert.equal(classified.kind, "message", key);
    const message = (classified as { message: unknown }).message as { params: { arguments: object } };
    const params = message.params;
    assert.deepEqual(Object.keys(params.arguments), ["script"], key);
  }
});
