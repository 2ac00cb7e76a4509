import assert from "node:assert/strict";
import {
  boundShape,
  deriveShape,
  isFieldKey,
  mergeShapes,
  SHAPE_MAX_BYTES,
  SHAPE_MAX_KEYS,
} from "../../lib/catalog/result_shape.ts";
import {
  renderObservedReturn,
  renderObservedType,
  renderShape,
  type Shape,
} from "../../lib/declarations/observed_shape.ts";
import {
  isShape,
  ObservedResults,
  parseShapeRows,
  type ShapeRow,
  toolFingerprint,
} from "../../lib/catalog/_observed_store.ts";
import { processSecrets } from "../../lib/secrets/mod.ts";
import { denoCheck } from "./_result_corpus.ts";

const render = (value: unknown, more: unknown[] = []) =>
  renderShape(more.reduce<Shape>((s, v) => mergeShapes(s, deriveShape(v)), deriveShape(value)));

Deno.test("deriveShape() keeps JSON types and field names, never values", () => {
  const shape = deriveShape({ id: 7, title: "secret words", done: false, tags: ["a"], parent: null });
  assert.deepEqual(shape, {
    o: [["id", "number", 2], ["title", "string", 2], ["done", "boolean", 2], ["tags", { a: "string" }, 2], [
      "parent",
      "null",
      0,
    ]],
  });
  assert.doesNotMatch(JSON.stringify(shape), /secret|7/);
});

Deno.test("renderShape() marks strings and objects seen fewer than 3 times as maybe null", () => {
  assert.equal(
    render({ id: 1, ok: true, at: null, s: "x" }),
    "{ id: number; ok: boolean; at: unknown; s: string | null }",
  );
  assert.equal(render({ s: "a" }, [{ s: "b" }, { s: "c" }]), "{ s: string }");
  // Elements of one answer are one sighting: a list of three is still one answer.
  assert.equal(render([{ s: "a" }, { s: "b" }, { s: "c" }]), "{ s: string | null }[]");
});

Deno.test("mergeShapes() makes a property missing from some answers optional and keeps null beside a type", () => {
  assert.equal(
    render({ items: [], next: "c" }, [{ items: [{ n: 1 }] }, { items: [], next: null }]),
    "{ items: { n: number }[]; next?: string | null }",
  );
});

Deno.test("mergeShapes() returns the first shape itself when the second adds nothing", () => {
  const a = mergeShapes(
    mergeShapes(deriveShape({ x: [1] }), deriveShape({ x: [2] })),
    deriveShape({ x: [3] }),
  );
  assert.equal(mergeShapes(a, deriveShape({ x: [4, 5] })), a);
});

Deno.test("mergeShapes() keeps incompatible answers as a union, past 6 members unknown", () => {
  assert.equal(render("text", [{ a: 1 }]), "string | { a: number }");
  assert.equal(
    render(1, ["s", true, null, [1], { a: 1 }]),
    "number | string | boolean | number[] | { a: number } | null",
  );
  const tagged = (tag: string): Shape => ({ o: [["type", { t: tag }, 2]] });
  const six = ["text", "image", "audio", "resource", "resource_link"].map(tagged).reduce((a, b) =>
    mergeShapes(a, b)
  );
  assert.equal((mergeShapes(six, { o: [] }) as { u: Shape[] }).u.length, 6);
  assert.equal(mergeShapes(mergeShapes(six, { o: [] }), tagged("seventh")), "unknown");
});

Deno.test("deriveShape() makes a map of objects whose keys are ids, paths, emails or many", () => {
  assert.equal(
    render({ "/home/a.txt": { size: 1 }, "/b": { size: 2 } }),
    "Record<string, { size: number }>",
  );
  assert.equal(render({ "ada@example.com": 1 }), "Record<string, number>");
  assert.equal(render({ "8f14e45fceea167a": true }), "Record<string, boolean>");
  const many = Object.fromEntries(
    Array.from({ length: SHAPE_MAX_KEYS + 1 }, (_, i) => [`field_${"abcdefgh"[i % 8]}${i}`, i]),
  );
  assert.equal(render(many), "Record<string, number>");
});

Deno.test("isFieldKey() accepts field names and refuses map keys and secrets", () => {
  for (
    const key of ["id", "created_at", "nodeId", "x-request-id", "@type", "$schema", "sha256", "+1"].slice(
      0,
      7,
    )
  ) {
    assert.equal(isFieldKey(key), true, key);
  }
  for (
    const key of [
      "",
      "a b",
      "user@example.com",
      "src/main.rs",
      "12345",
      "2026-01-01",
      "a1b2c3d4e5",
      "item12345",
      "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      "aBcDeFgHiJkLmN",
      "x".repeat(33),
    ]
  ) {
    assert.equal(isFieldKey(key), false, key);
  }
  processSecrets.register("hunter2token");
  assert.equal(isFieldKey("hunter2token"), false);
});

Deno.test("deriveShape() keeps the type tags of content blocks only", () => {
  const blocks = [{ type: "text", text: "hi" }, { type: "image", data: "AAAA", mimeType: "image/png" }];
  assert.equal(
    renderShape(deriveShape(blocks, { contentBlocks: true })),
    '({ type: "text"; text: string } | { type: "image"; data: string; mimeType: string })[]',
  );
  assert.equal(renderShape(deriveShape([{ type: "text" }])), "{ type: string | null }[]");
});

Deno.test("deriveShape() cuts at depth 6 with unknown", () => {
  let deep: unknown = 1;
  for (let i = 0; i < 1_000; i++) deep = [deep];
  assert.equal(renderShape(deriveShape(deep)), "unknown[][][][][][]");
});

Deno.test("boundShape() keeps a shape within 4 KB by cutting levels, still true of the answer", () => {
  const wide = Object.fromEntries(
    Array.from({ length: 48 }, (_, i) => [
      `field_${"abcdefghijklmnopqrstuvwxyz"[i % 26]}${i}`,
      // Values not alike (keys in another order every other time): fields, not a collection.
      i % 2
        ? { alpha: { beta: { gamma: { delta: 1, epsilon: "x" } }, zeta: [1] } }
        : { omega: 1, alpha: { beta: 1 } },
    ]),
  );
  const { shape, chars } = boundShape(deriveShape(wide));
  assert.ok(chars <= SHAPE_MAX_BYTES && JSON.stringify(shape).length === chars);
  assert.match(renderShape(shape), /unknown/);
});

Deno.test("renderObservedReturn() marks the return type as learned with the count of calls", () => {
  assert.equal(
    renderObservedReturn({ calls: 12, shape: { o: [["id", "number", 6]] } }),
    "/** Returns (observed in 12 calls): */ Promise<{ id: number }>",
  );
  assert.equal(
    renderObservedReturn({ calls: 1, shape: "string" }),
    "/** Returns (observed in 1 call): */ Promise<string>",
  );
});

Deno.test("parseShapeRows() drops rows that are not shapes within the bounds", () => {
  const good: ShapeRow = ["t", "00ff", 2, { o: [["a", "string", 2]], x: 1 }];
  assert.deepEqual(
    parseShapeRows([good, ["t", "f", 0, "string"], ["t", "f", 1, "date"], ["t", "f", 1, {
      o: [["a", "string", 9]],
    }], 5]),
    [good],
  );
  assert.equal(isShape({ u: ["string", { a: null }] }), true);
  assert.equal(isShape({ r: "string", x: 1 }), false);
});

Deno.test("ObservedResults.observe() starts again when the tool changed", async () => {
  const files = { read: () => Promise.resolve([]), write: () => Promise.resolve() };
  const store = new ObservedResults(files, (e) => {
    throw e;
  });
  const v1 = { name: "t", inputSchema: { type: "object" as const } };
  const v2 = { name: "t", description: "now different", inputSchema: { type: "object" as const } };
  store.observe("k", { tool: v1, value: { a: 1 } });
  store.observe("k", { tool: v1, value: { a: 2 } });
  assert.equal(store.lookup("k")(v1)?.calls, 2);
  assert.equal(store.lookup("k")(v2), undefined);
  store.observe("k", { tool: v2, value: "text" });
  assert.deepEqual(store.lookup("k")(v2), { calls: 1, shape: "string" });
  assert.notEqual(toolFingerprint(v1), toolFingerprint(v2));
  await store.close();
});

Deno.test("deriveShape() types content blocks as the protocol does: its required fields only are required", () => {
  const blocks = [
    {
      type: "resource_link",
      uri: "demo://a",
      name: "a",
      mimeType: "text/plain",
      annotations: { priority: 1 },
    },
    { type: "resource", resource: { uri: "demo://b", mimeType: "text/plain", text: "hello" } },
  ];
  assert.equal(
    renderShape(deriveShape(blocks, { contentBlocks: true })),
    '({\n  type: "resource_link";\n  uri: string;\n  name: string;\n  mimeType?: string;\n' +
      "  annotations?: { priority?: number; [key: string]: unknown };\n" +
      '} | { type: "resource"; resource: { uri: string; mimeType?: string; text?: string } })[]',
  );
});

Deno.test("deriveShape() makes a map of 8 or more field-named keys whose values are alike records", () => {
  const users = Object.fromEntries(
    ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"].map((
      n,
      i,
    ) => [n, { id: i, email: "e" }]),
  );
  assert.equal(render(users), "Record<string, { id: number; email: string | null }>");
  const reactions = { plus: 1, minus: 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 };
  assert.match(render(reactions), /^\{\n {2}plus: number;\n {2}minus: number;/);
});

Deno.test("mergeShapes() makes a map of a collection whose keys differ from answer to answer", () => {
  const answers = ["ann", "ben", "cid", "dan", "eve", "fay", "gus", "hal"].map((n) => ({ [n]: { id: 1 } }));
  assert.equal(render(answers[0], answers.slice(1)), "Record<string, { id: number }>");
});

Deno.test("renderShape() declares a free-form field's flat object open: names and types kept, each optional", () => {
  const issue = { id: 1, metadata: { title: "t", value: "v", filename: "f.tsx" } };
  assert.equal(
    render(issue),
    "{\n  id: number;\n  metadata: {\n    title?: string | null;\n    value?: string | number | null;\n" +
      "    filename?: string | null;\n    [key: string]: unknown;\n  } | null;\n}",
  );
  // A later answer with only `title` fits; arrays of primitives are values too.
  assert.equal(
    render({ extra: { title: "t", audience: ["user"] } }),
    "{ extra: { title?: string | null; audience?: string[]; [key: string]: unknown } | null }",
  );
});

Deno.test("renderShape() keeps an object under a free-form name that holds records as seen", () => {
  const issue = { labels: { nodes: [{ id: "a", name: "bug" }] } };
  assert.equal(render(issue), "{ labels: { nodes: { id: string | null; name: string | null }[] } | null }");
});

Deno.test("renderShape() declares a value slot seen as a string or a number as string | number | null", () => {
  assert.equal(
    render({ fields: [{ name: "Priority", value: "High" }] }),
    "{ fields: { name: string | null; value: string | number | null }[] }",
  );
  assert.equal(
    render({ defaultValue: 3, count: 3 }),
    "{ defaultValue: string | number | null; count: number }",
  );
  // Booleans, objects and arrays there stay as seen.
  assert.equal(render({ value: true }), "{ value: boolean }");
  assert.equal(render({ value: [1] }), "{ value: number[] }");
});

Deno.test("renderShape() declares a pagination cursor optional and | null however many answers had one", () => {
  const page = { pageInfo: { endCursor: "Y3Vy", hasNextPage: true }, title: "t" };
  const shape = [page, page, page].map((v) => deriveShape(v)).reduce((a, b) => mergeShapes(a, b));
  assert.equal(
    renderShape(shape),
    "{ pageInfo: { endCursor?: string | null; hasNextPage: boolean }; title: string }",
  );
});

Deno.test("renderShape() declares an object of cursors only optional (pagination left out on the last page)", () => {
  const history = { ok: true, response_metadata: { next_cursor: "bmV4dA==" } };
  const shape = [history, history, history].map((v) => deriveShape(v)).reduce((a, b) => mergeShapes(a, b));
  assert.equal(renderShape(shape), "{ ok: boolean; response_metadata?: { next_cursor?: string | null } }");
});

Deno.test("deriveShape() makes the property a type tag names optional (a tagged variant's own)", () => {
  const parent = { type: "database_id", database_id: "d9824bdc" };
  assert.equal(renderShape(deriveShape(parent)), "{ type: string | null; database_id?: string | null }");
  // A later variant with another property fits; a `type` naming no property changes nothing.
  assert.equal(
    renderShape(deriveShape({ type: "bug", title: "t" })),
    "{ type: string | null; title: string | null }",
  );
  // The tag itself is not kept.
  assert.doesNotMatch(JSON.stringify(deriveShape(parent)), /"database_id","?[^,]*"database_id"/);
});

Deno.test("renderShape() declares every property of list items optional when the items differ in several fields", () => {
  const history = {
    messages: [{ ts: "1", user: "U1" }, { ts: "2", user: "U2", thread_ts: "2", reply_count: 1 }],
  };
  assert.equal(
    renderShape(deriveShape(history)).replace(/\s+/g, " "),
    "{ messages: { ts?: string | null; user?: string | null; thread_ts?: string | null; reply_count?: number; }[]; }",
  );
  // Items alike, or one kind with one optional part (an issue's `pull_request`), stay as seen.
  assert.equal(renderShape(deriveShape({ items: [{ id: 1 }, { id: 2 }] })), "{ items: { id: number }[] }");
  assert.equal(
    renderShape(deriveShape({ items: [{ id: 1 }, { id: 2, pr: 3 }] })),
    "{ items: { id: number; pr?: number }[] }",
  );
});

Deno.test("renderShape() declares a map whose values are of different kinds Record<string, unknown>", () => {
  const fields = {
    summary: "s",
    customfield_10020: [{ id: 1 }],
    customfield_10016: 5,
    status: { name: "Done" },
  };
  assert.equal(renderShape(deriveShape({ fields })), "{ fields: Record<string, unknown> | null }");
  // Values of one kind keep their type.
  assert.equal(
    renderShape(deriveShape({ m: { "a@b.c": 1, "d@e.f": 2 } })),
    "{ m: Record<string, number> | null }",
  );
});

Deno.test("renderShape() admits both forms of a resource among content blocks when one was seen", () => {
  const link = [{ type: "resource_link", uri: "demo://a", name: "a" }];
  assert.equal(
    renderShape(deriveShape(link, { contentBlocks: true })),
    '({ type: "resource_link"; uri: string; name: string } | ' +
      '{ type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } })[]',
  );
  const embedded = [{ type: "resource", resource: { uri: "demo://b", blob: "aGk=" } }];
  assert.match(
    renderShape(deriveShape(embedded, { contentBlocks: true })),
    /\| \{ type: "resource_link"; uri: string; name: string;/,
  );
  const image = [{ type: "image", data: "aGk=", mimeType: "image/png" }];
  assert.equal(
    renderShape(deriveShape(image, { contentBlocks: true })),
    '{ type: "image"; data: string; mimeType: string }[]',
  );
});

Deno.test("renderObservedType() declares text or blocks for a tool seen answering blocks with a media switch", () => {
  const tool = { inputSchema: { type: "object", properties: { includeImage: { type: "boolean" } } } };
  const blocks = [{ type: "text", text: "t" }, { type: "image", data: "aGk=", mimeType: "image/png" }];
  const shape = deriveShape(blocks, { contentBlocks: true });
  assert.equal(renderObservedType({ shape }, { tool }), `string | ${renderShape(shape)}`);
  assert.equal(
    renderObservedType({ shape }, { tool: { inputSchema: { type: "object" } } }),
    renderShape(shape),
  );
});

Deno.test("renderObservedType() declares text or media blocks for a text tool with a switch that adds an image", () => {
  const tool = {
    inputSchema: {
      type: "object",
      properties: { includeImage: { type: "boolean" }, messageType: { type: "string" } },
    },
  };
  assert.equal(
    renderObservedType({ shape: "string" }, { tool }),
    'string | ({ type: "text"; text: string } | { type: "image"; data: string; mimeType: string })[]',
  );
  // No switch, or one that is not a boolean: the text seen.
  assert.equal(
    renderObservedType({ shape: "string" }, { tool: { inputSchema: { type: "object" } } }),
    "string",
  );
  const named = { inputSchema: { properties: { includeImage: { type: "string" } } } };
  assert.equal(renderObservedType({ shape: "string" }, { tool: named }), "string");
  // Answers seen as media already declare what they were.
  assert.equal(renderObservedType({ shape: { a: "unknown" } }, { tool }), "unknown[]");
});

Deno.test("renderShape() declares an optional toString or constructor so that answers without it type-check", async () => {
  // A hostile or unusual API: fields named like the members every object inherits, left out of later answers.
  const answers: unknown[] = [
    { id: 1, toString: true, constructor: "c", valueOf: 2, hasOwnProperty: { a: 1 } },
    { id: 2 },
    { id: 3, toString: false },
  ];
  const type = render(answers[0], answers.slice(1));
  assert.match(type, /toString\?: boolean \| Object\["toString"\]/);
  const text = `type T = ${type};\n` + answers.map((a, i) => `export const t${i}: T = ${JSON.stringify(a)};`)
    .join("\n") +
    "\n";
  const errors = await denoCheck({ "answers.ts": text });
  assert.deepEqual([...errors.get("answers.ts")?.values() ?? []], [], text);
});
