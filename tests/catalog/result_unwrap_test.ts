import assert from "node:assert/strict";
import fc from "fast-check";
import { offShapeNotice, OutputShapeChecker, unwrapToolResult } from "../../lib/catalog/result_unwrap.ts";

const text = (t: string) => ({ type: "text", text: t });

Deno.test("unwrapToolResult() turns isError into a failure carrying the server's text", () => {
  assert.deepEqual(unwrapToolResult({ content: [text("no such file"), text("really")], isError: true }), {
    ok: false,
    message: "no such file\nreally",
  });
});

Deno.test("unwrapToolResult() gives a generic message for isError without text", () => {
  assert.deepEqual(unwrapToolResult({ content: [], isError: true }), {
    ok: false,
    message: "the tool reported an error",
  });
});

Deno.test("unwrapToolResult() checks isError before structured content", () => {
  const result = { content: [text("bad")], structuredContent: { ok: 1 }, isError: true };
  assert.deepEqual(unwrapToolResult(result), { ok: false, message: "bad" });
});

Deno.test("unwrapToolResult() prefers structured content over text", () => {
  const result = { content: [text("ignored")], structuredContent: { results: { web: [{ title: "r1" }] } } };
  assert.deepEqual(unwrapToolResult(result), { ok: true, value: { results: { web: [{ title: "r1" }] } } });
});

Deno.test("unwrapToolResult() unwraps a lone {result} envelope", () => {
  assert.deepEqual(unwrapToolResult({ content: [], structuredContent: { result: [1, 2] } }), {
    ok: true,
    value: [1, 2],
  });
  assert.deepEqual(unwrapToolResult({ content: [], structuredContent: { result: 1, more: 2 } }), {
    ok: true,
    value: { result: 1, more: 2 },
  });
});

Deno.test("unwrapToolResult() parses JSON text so scripts get values", () => {
  const result = { content: [text(JSON.stringify([{ id: 1 }, { id: 2 }, { id: 3 }], null, 2))] };
  const unwrapped = unwrapToolResult(result);
  assert.ok(unwrapped.ok);
  assert.equal((unwrapped.value as { id: number }[]).filter((i) => i.id > 1).length, 2);
});

Deno.test("unwrapToolResult() keeps every text block when several arrive", () => {
  const result = { content: [text('{"document":{"title":"T"}}'), text("## Body markdown")] };
  assert.deepEqual(unwrapToolResult(result), {
    ok: true,
    value: '{"document":{"title":"T"}}\n## Body markdown',
  });
});

Deno.test("unwrapToolResult() keeps plain text as a string", () => {
  assert.deepEqual(unwrapToolResult({ content: [text("count: 7")] }), { ok: true, value: "count: 7" });
});

Deno.test("unwrapToolResult() hands images and mixed content over as blocks", () => {
  const blocks = [text("Here:"), { type: "image", data: "iVBO", mimeType: "image/png" }];
  assert.deepEqual(unwrapToolResult({ content: blocks }), { ok: true, value: blocks });
  assert.deepEqual(unwrapToolResult({ content: [] }), { ok: true, value: [] });
});

const COUNT_SCHEMA = {
  type: "object",
  properties: { count: { type: "number" }, bin: { type: "string" } },
  required: ["count", "bin"],
};

Deno.test("OutputShapeChecker.check() accepts a conforming result", async () => {
  const checker = new OutputShapeChecker();
  const result = { content: [], structuredContent: { count: 1, bin: "A" } };
  assert.equal(await checker.check(COUNT_SCHEMA, result, { count: 1, bin: "A" }), "conforms");
});

Deno.test("OutputShapeChecker.check() flags structured content missing a required key", async () => {
  const checker = new OutputShapeChecker();
  const result = { content: [], structuredContent: { bin: "A1" } };
  assert.equal(await checker.check(COUNT_SCHEMA, result, { bin: "A1" }), "off-shape");
});

Deno.test("OutputShapeChecker.check() flags a text answer to a tool that declared an object", async () => {
  const checker = new OutputShapeChecker();
  assert.equal(await checker.check(COUNT_SCHEMA, { content: [text("count: 7")] }, "count: 7"), "off-shape");
  const parsed = { content: [text('{"name":"Site"}')] };
  const schema = { type: "object", properties: { name: {}, version: {} }, required: ["name", "version"] };
  assert.equal(await checker.check(schema, parsed, { name: "Site" }), "off-shape");
});

Deno.test("OutputShapeChecker.check() validates a {result} envelope before it is unwrapped", async () => {
  const checker = new OutputShapeChecker();
  const schema = { type: "object", properties: { result: { type: "number" } }, required: ["result"] };
  assert.equal(
    await checker.check(schema, { content: [], structuredContent: { result: 42 } }, 42),
    "conforms",
  );
});

Deno.test("OutputShapeChecker.check() does not check a schema it cannot compile", async () => {
  const checker = new OutputShapeChecker();
  const remote = { type: "object", properties: { a: { $ref: "https://example.com/schema.json" } } };
  assert.equal(
    await checker.check(remote, { content: [], structuredContent: { a: 1 } }, { a: 1 }),
    "unchecked",
  );
  assert.equal(await checker.check(undefined, { content: [] }, []), "unchecked");
});

Deno.test("OutputShapeChecker.check() accepts draft 2020-12 schemas with $defs", async () => {
  const checker = new OutputShapeChecker();
  const schema = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { item: { $ref: "#/$defs/Item" } },
    required: ["item"],
    $defs: { Item: { type: "object", properties: { id: { type: "number" } }, required: ["id"] } },
  };
  assert.equal(
    await checker.check(schema, { content: [], structuredContent: { item: { id: 1 } } }, null),
    "conforms",
  );
  assert.equal(
    await checker.check(schema, { content: [], structuredContent: { item: {} } }, null),
    "off-shape",
  );
});

Deno.test("offShapeNotice() names the server and the wire tool", () => {
  assert.equal(
    offShapeNotice("bricks", "get_site_info"),
    "bricks.get_site_info: result off-shape, treat as unknown",
  );
});

Deno.test("OutputShapeChecker.check() runs a backtracking pattern in linear time (RE2)", async () => {
  const checker = new OutputShapeChecker();
  const schema = {
    type: "object",
    properties: { v: { type: "string", pattern: "^(a|a)*$" } },
    patternProperties: { "^(b|b)*$": { type: "string" } },
  };
  const v = "a".repeat(100_000) + "!";
  const started = performance.now();
  assert.equal(await checker.check(schema, { structuredContent: { v } }, { v }), "off-shape");
  assert.equal(await checker.check(schema, { structuredContent: { v: "aaa" } }, { v: "aaa" }), "conforms");
  assert.ok(performance.now() - started < 5_000);
});

Deno.test("OutputShapeChecker.check() leaves a schema unchecked when RE2 cannot compile its pattern", async () => {
  const schema = { type: "object", properties: { v: { type: "string", pattern: "^(?=a)a$" } } };
  assert.equal(
    await new OutputShapeChecker().check(schema, { structuredContent: { v: "b" } }, { v: "b" }),
    "unchecked",
  );
});

Deno.test("unwrapToolResult() parses a text exactly when JSON.parse accepts it", () => {
  const reference = (text: string) => {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  };
  const text = fc.oneof(
    fc.string(),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.tuple(fc.constantFrom(" ", "\t", "\n", "\r", "\u00a0", ""), fc.jsonValue()).map(([w, v]) =>
      w + JSON.stringify(v)
    ),
  );
  fc.assert(
    fc.property(text, (t) => {
      assert.deepEqual(unwrapToolResult({ content: [{ type: "text", text: t }] }), {
        ok: true,
        value: reference(t),
      });
    }),
    { numRuns: 2_000 },
  );
});
