import assert from "node:assert/strict";
import { TypeRenderer, type TypeRendererOptions } from "../../lib/declarations/_schema_to_ts.ts";
import { inputArity } from "../../lib/declarations/_schema_shape.ts";

const TARGET = { path: "tools.t.input", rootName: "TInput", toolPrefix: "T" };

/** Renders one schema with a fresh renderer: the type text, the hoisted types and the warnings. */
function ts(
  schema: unknown,
  options: TypeRendererOptions = {},
): { type: string; named: string; warnings: string[] } {
  const renderer = new TypeRenderer(options);
  const type = renderer.render(schema, TARGET);
  return { type, named: renderer.renderNamedTypes(), warnings: renderer.warnings };
}

function type(schema: unknown): string {
  return ts(schema).type;
}

Deno.test("TypeRenderer.render() renders scalar types, integer as number", () => {
  assert.equal(type({ type: "string" }), "string");
  assert.equal(type({ type: "integer" }), "number");
  assert.equal(type({ type: "number" }), "number");
  assert.equal(type({ type: "boolean" }), "boolean");
  assert.equal(type({ type: "null" }), "null");
});

Deno.test("TypeRenderer.render() renders unconstrained schemas as unknown and false as never", () => {
  assert.equal(type(true), "unknown");
  assert.equal(type({}), "unknown");
  assert.equal(type({ description: "anything", format: "uri" }), "unknown");
  assert.equal(type(false), "never");
});

Deno.test("TypeRenderer.render() replaces a non-schema value by unknown with a warning", () => {
  assert.deepEqual(ts(42), {
    type: "unknown",
    named: "",
    warnings: ["tools.t.input: invalid schema (number) replaced by unknown"],
  });
});

Deno.test("TypeRenderer.render() renders a type array as a union", () => {
  assert.equal(type({ type: ["boolean", "string"] }), "boolean | string");
  assert.equal(type({ type: ["integer", "number"] }), "number");
  assert.equal(type({ type: ["object", "null"] }), "Record<string, unknown> | null");
});

Deno.test("TypeRenderer.render() renders arrays and parenthesizes composite elements", () => {
  assert.equal(type({ type: "array", items: { type: "string" } }), "string[]");
  assert.equal(type({ type: "array" }), "unknown[]");
  assert.equal(type({ type: "array", items: { type: ["string", "null"] } }), "(string | null)[]");
  const intersection = { allOf: [{ $ref: "#/$defs/A" }, { $ref: "#/$defs/B" }] };
  const $defs = { A: { type: "object", properties: { a: { type: "string" } } }, B: { type: "object" } };
  assert.equal(type({ type: "array", items: intersection, $defs }), "(A & B)[]");
});

Deno.test("TypeRenderer.render() renders prefixItems as a tuple with rest and optional elements", () => {
  const pair = { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] };
  assert.equal(type({ ...pair, items: false, minItems: 2 }), "[string, number]");
  assert.equal(type({ ...pair, items: { type: "boolean" }, minItems: 2 }), "[string, number, ...boolean[]]");
  assert.equal(type({ ...pair, minItems: 1 }), "[string, number?, ...unknown[]]");
  assert.equal(type({ ...pair, minItems: 1, maxItems: 1 }), "[string]");
});

Deno.test("TypeRenderer.render() renders a draft-07 items array as a tuple", () => {
  const schema = {
    type: "array",
    items: [{ type: "string" }, { type: ["integer", "null"] }],
    additionalItems: false,
  };
  assert.equal(type(schema), "[string?, (number | null)?]");
});

Deno.test("TypeRenderer.render() renders const and enum as literals, ignoring the declared type", () => {
  assert.equal(type({ const: "v1" }), '"v1"');
  assert.equal(type({ type: "string", const: 3 }), "3");
  assert.equal(
    type({ type: "string", enum: ["New York", 1, true, null, "*/*"] }),
    '"New York" | 1 | true | null | "*/*"',
  );
  assert.equal(type({ enum: [] }), "never");
  assert.equal(type({ const: { a: [1, "x"] } }), '{ "a": [1, "x"]; }');
});

Deno.test("TypeRenderer.render() adds null for OpenAPI nullable without repeating it", () => {
  assert.equal(type({ type: "string", nullable: true }), "string | null");
  assert.equal(type({ type: "null", nullable: true }), "null");
  assert.equal(type({ type: ["string", "null"], nullable: true }), "string | null");
});

Deno.test("TypeRenderer.render() renders anyOf/oneOf as unions and allOf as an intersection", () => {
  assert.equal(type({ anyOf: [{ type: "string" }, { type: "null" }] }), "string | null");
  assert.equal(
    type({ oneOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] }),
    "string | string[]",
  );
  const allOf = {
    allOf: [{ properties: { a: { type: "string" } } }, { properties: { b: { type: "number" } } }],
  };
  assert.equal(type(allOf), "{\n  a?: string;\n} & {\n  b?: number;\n}");
  assert.equal(type({ allOf: [{ type: "string" }] }), "string", "a single member collapses");
});

Deno.test("TypeRenderer.render() lets unknown absorb a union and drops duplicates", () => {
  assert.equal(type({ anyOf: [{ type: "string" }, {}] }), "unknown");
  assert.equal(
    type({ anyOf: [{ type: "string" }, { type: "string" }, { type: "number" }] }),
    "string | number",
  );
});

Deno.test("TypeRenderer.render() folds sibling properties into oneOf branches that only require", () => {
  const schema = {
    type: "object",
    properties: { id: { type: "string" }, url: { type: "string" } },
    oneOf: [{ required: ["id"] }, { required: ["url"] }],
  };
  assert.equal(type(schema), "{\n  id: string;\n  url?: string;\n} | {\n  id?: string;\n  url: string;\n}");
});

Deno.test("TypeRenderer.render() merges sibling properties with branch properties and const discriminators", () => {
  const schema = {
    type: "object",
    properties: { kind: { type: "string" } },
    required: ["kind"],
    anyOf: [{ properties: { kind: { const: "a" }, x: { type: "number" } } }, {
      properties: { kind: { const: "b" } },
    }],
  };
  assert.equal(type(schema), '{\n  kind: "a";\n  x?: number;\n} | {\n  kind: "b";\n}');
});

Deno.test("TypeRenderer.render() keeps local properties next to allOf", () => {
  const schema = {
    properties: { extra: { type: "boolean" } },
    allOf: [{ $ref: "#/$defs/Base" }],
    $defs: { Base: { properties: { base: { type: "string" } }, required: ["base"] } },
  };
  assert.equal(type(schema), "{\n  extra?: boolean;\n} & Base");
});

Deno.test("TypeRenderer.render() drops a union branch whose type cannot meet the sibling type", () => {
  assert.equal(type({ type: "string", anyOf: [{ type: "number" }, { minLength: 1 }] }), "string");
});

Deno.test("TypeRenderer.render() renders objects with required and optional properties in schema order", () => {
  const schema = {
    type: "object",
    properties: { zeta: { type: "string" }, alpha: { type: "number" }, mid: { type: "boolean" } },
    required: ["alpha"],
  };
  assert.equal(type(schema), "{\n  zeta?: string;\n  alpha: number;\n  mid?: boolean;\n}");
});

Deno.test("TypeRenderer.render() treats properties without a type as an object", () => {
  assert.equal(type({ properties: { a: { type: "string" } }, required: ["a"] }), "{\n  a: string;\n}");
});

Deno.test("TypeRenderer.render() declares required names missing from properties as unknown", () => {
  assert.equal(
    type({ type: "object", properties: { a: { type: "string" } }, required: ["b"] }),
    "{\n  a?: string;\n  b: unknown;\n}",
  );
});

Deno.test("TypeRenderer.render() renders maps as Record and open, closed and typed objects apart", () => {
  assert.equal(type({ type: "object" }), "Record<string, unknown>");
  assert.equal(type({ type: "object", additionalProperties: false }), "Record<string, never>");
  assert.equal(type({ type: "object", additionalProperties: { type: "string" } }), "Record<string, string>");
  assert.equal(
    type({ type: "object", propertyNames: { type: "string" }, additionalProperties: {} }),
    "Record<string, unknown>",
  );
  assert.equal(
    type({ type: "object", patternProperties: { "^x-": { type: "boolean" } } }),
    "Record<string, boolean>",
  );
});

Deno.test("TypeRenderer.render() does not let additionalProperties false degrade an object", () => {
  const schema = { type: "object", properties: { a: { type: "string" } }, additionalProperties: false };
  assert.equal(type(schema), "{\n  a?: string;\n}");
});

Deno.test("TypeRenderer.render() adds an index signature admitting the property types next to properties", () => {
  const schema = {
    properties: { id: { type: "integer" } },
    required: ["id"],
    additionalProperties: { type: "string" },
  };
  assert.equal(type(schema), "{\n  id: number;\n  [key: string]: string | number;\n}");
});

Deno.test("TypeRenderer.render() renders nested objects with indentation", () => {
  const schema = {
    properties: { outer: { properties: { inner: { type: "array", items: { properties: { x: {} } } } } } },
  };
  assert.equal(type(schema), "{\n  outer?: {\n    inner?: {\n      x?: unknown;\n    }[];\n  };\n}");
});

Deno.test("TypeRenderer.render() quotes non-identifier and reserved property names", () => {
  const names = ["class", "function", "my-key", "with space", "0abc", "$ok", "type", "é"];
  const schema = { properties: Object.fromEntries(names.map((n) => [n, { type: "string" }])) };
  assert.equal(
    type(schema),
    '{\n  "class"?: string;\n  "function"?: string;\n  "my-key"?: string;\n  "with space"?: string;\n' +
      '  "0abc"?: string;\n  $ok?: string;\n  type?: string;\n  "é"?: string;\n}',
  );
});

Deno.test("TypeRenderer.render() renders property descriptions as JSDoc, comment-safe and line-preserving", () => {
  const schema = {
    properties: { a: { type: "string", description: "Glob like **/*.ts\r\nsecond line\n\n\n\nlast" } },
  };
  assert.equal(
    type(schema),
    "{\n  /**\n   * Glob like **\\/*.ts\n   * second line\n   *\n   * last\n   */\n  a?: string;\n}",
  );
  assert.equal(ts(schema, { withDocs: false }).type, "{\n  a?: string;\n}");
});

Deno.test("TypeRenderer.render() resolves a $ref into a hoisted named type, keeping the sibling description", () => {
  const schema = {
    properties: { c: { $ref: "#/$defs/Config", description: "Where to go." } },
    $defs: { Config: { description: "A config.", properties: { a: { type: "string" } } } },
  };
  const out = ts(schema);
  assert.equal(out.type, "{\n  /** Where to go. */\n  c?: Config;\n}");
  assert.equal(out.named, "/** A config. */\ntype Config = {\n  a?: string;\n};\n\n");
});

Deno.test("TypeRenderer.render() resolves legacy definitions, escaped pointers and anchors", () => {
  const schema = {
    properties: { a: { $ref: "#/definitions/Old" }, b: { $ref: "#/$defs/x~1y" }, c: { $ref: "#thing" } },
    definitions: { Old: { type: "string" } },
    $defs: { "x/y": { type: "number" }, Anchored: { $anchor: "thing", type: "boolean" } },
  };
  const out = ts(schema);
  assert.equal(out.type, "{\n  a?: Old;\n  b?: x_y;\n  c?: Anchored;\n}");
  assert.equal(out.named, "type Anchored = boolean;\n\ntype Old = string;\n\ntype x_y = number;\n\n");
});

Deno.test("TypeRenderer.render() resolves a $ref that spells out the document's own $id", () => {
  const schema = {
    $id: "https://example.com/s.json",
    properties: { a: { $ref: "https://example.com/s.json#/$defs/A" } },
    $defs: { A: { type: "string" } },
  };
  assert.deepEqual(ts(schema).warnings, []);
  assert.equal(ts(schema).type, "{\n  a?: A;\n}");
});

Deno.test("TypeRenderer.render() never follows a remote or file $ref and warns instead", () => {
  const schema = {
    properties: { r: { $ref: "https://example.com/x.json" }, f: { $ref: "file:///etc/passwd#/a" } },
  };
  assert.deepEqual(ts(schema), {
    type: "{\n  r?: unknown;\n  f?: unknown;\n}",
    named: "",
    warnings: [
      'tools.t.input.r: external $ref "https://example.com/x.json" replaced by unknown',
      'tools.t.input.f: external $ref "file:///etc/passwd#/a" replaced by unknown',
    ],
  });
});

Deno.test("TypeRenderer.render() replaces an unresolvable local $ref by unknown with a warning", () => {
  assert.deepEqual(ts({ properties: { d: { $ref: "#/$defs/Missing" } } }).warnings, [
    'tools.t.input.d: unresolvable $ref "#/$defs/Missing" replaced by unknown',
  ]);
});

Deno.test("TypeRenderer.render() prefixes reserved words and digits in type names", () => {
  const names = ["string", "default", "Promise", "Record", "1st", "unknown"];
  const schema = {
    properties: Object.fromEntries(names.map((n) => [n, { $ref: `#/$defs/${n}` }])),
    $defs: Object.fromEntries(names.map((n) => [n, { type: "boolean" }])),
  };
  assert.equal(
    ts(schema).named,
    ["_1st", "_Promise", "_Record", "_default", "_string", "_unknown"].map((n) => `type ${n} = boolean;\n\n`)
      .join(""),
  );
});

Deno.test("TypeRenderer.render() keeps recursion through an array or a property", () => {
  const schema = {
    $ref: "#/$defs/Node",
    $defs: {
      Node: {
        properties: {
          kids: { type: "array", items: { $ref: "#/$defs/Node" } },
          next: { $ref: "#/$defs/Node" },
        },
      },
    },
  };
  const out = ts(schema);
  assert.equal(out.type, "Node");
  assert.equal(out.named, "type Node = {\n  kids?: Node[];\n  next?: Node;\n};\n\n");
});

Deno.test("TypeRenderer.render() terminates on mutually recursive refs", () => {
  const schema = {
    properties: { a: { $ref: "#/$defs/A" } },
    $defs: {
      A: { properties: { b: { $ref: "#/$defs/B" } } },
      B: { properties: { a: { $ref: "#/$defs/A" } } },
    },
  };
  assert.equal(ts(schema).named, "type A = {\n  b?: B;\n};\n\ntype B = {\n  a?: A;\n};\n\n");
});

Deno.test("TypeRenderer.render() drops a direct self-reference from a union-bodied alias", () => {
  const schema = {
    $ref: "#/$defs/Json",
    $defs: {
      Json: {
        anyOf: [
          { type: ["string", "number"] },
          { type: "array", items: { $ref: "#/$defs/Json" } },
          { additionalProperties: { $ref: "#/$defs/Json" } },
          { $ref: "#/$defs/Json" },
        ],
      },
    },
  };
  const out = ts(schema);
  assert.equal(out.named, "type Json = string | number | Json[] | { [key: string]: Json };\n\n");
  assert.deepEqual(out.warnings, []);
});

Deno.test("TypeRenderer.render() breaks an alias cycle through several names", () => {
  const schema = {
    properties: { a: { $ref: "#/$defs/A" } },
    $defs: {
      A: { anyOf: [{ $ref: "#/$defs/B" }, { type: "string" }] },
      B: { anyOf: [{ $ref: "#/$defs/A" }, { type: "number" }] },
    },
  };
  assert.equal(ts(schema).named, "type A = B | string;\n\ntype B = number;\n\n");
});

Deno.test("TypeRenderer.render() degrades a type whose body is only itself", () => {
  const out = ts({ properties: { l: { $ref: "#/$defs/Loop" } }, $defs: { Loop: { $ref: "#/$defs/Loop" } } });
  assert.equal(out.named, "type Loop = unknown;\n\n");
  assert.deepEqual(out.warnings, [
    "tools.t.input.$defs.Loop: self-referencing type alias replaced by unknown",
  ]);
  const root = ts({ $ref: "#" });
  assert.equal(root.type, "TInput");
  assert.equal(root.named, "type TInput = unknown;\n\n");
});

Deno.test("TypeRenderer.render() names the root when a $ref points back at it", () => {
  const out = ts({ properties: { kids: { type: "array", items: { $ref: "#" } } } });
  assert.equal(out.type, "TInput");
  assert.equal(out.named, "type TInput = {\n  kids?: TInput[];\n};\n\n");
});

Deno.test("TypeRenderer.render() uses an index signature, not Record, for a map of a named type", () => {
  const schema = { $ref: "#/$defs/M", $defs: { M: { additionalProperties: { $ref: "#/$defs/M" } } } };
  assert.equal(ts(schema).named, "type M = { [key: string]: M };\n\n");
});

Deno.test("TypeRenderer.render() intersects a $ref with sibling constraints and ignores sibling annotations", () => {
  const $defs = { B: { properties: { b: { type: "string" } } } };
  assert.equal(
    type({ properties: { x: { $ref: "#/$defs/B", title: "T", default: {} } }, $defs }),
    "{\n  x?: B;\n}",
  );
  assert.equal(
    type({ properties: { x: { $ref: "#/$defs/B", properties: { c: { type: "number" } } } }, $defs }),
    "{\n  x?: B & {\n    c?: number;\n  };\n}",
  );
});

Deno.test("TypeRenderer.render() accumulates named types across renders and keeps different bodies apart", () => {
  const renderer = new TypeRenderer();
  const withConfig = (prop: string) => ({
    properties: { c: { $ref: "#/$defs/Config" } },
    $defs: { Config: { properties: { [prop]: { type: "string" } } } },
  });
  assert.equal(renderer.render(withConfig("a"), { ...TARGET, toolPrefix: "One" }), "{\n  c?: Config;\n}");
  assert.equal(renderer.render(withConfig("b"), { ...TARGET, toolPrefix: "Two" }), "{\n  c?: Two_Config;\n}");
  assert.equal(renderer.render(withConfig("a"), { ...TARGET, toolPrefix: "Three" }), "{\n  c?: Config;\n}");
  assert.equal(
    renderer.render(withConfig("c"), { ...TARGET, toolPrefix: "Two" }),
    "{\n  c?: Two_Config_2;\n}",
  );
  assert.match(
    renderer.renderNamedTypes(),
    /^type Config = [\s\S]*type Two_Config = [\s\S]*type Two_Config_2 = /,
  );
});

Deno.test("TypeRenderer.render() tells same-named defs apart by what they reference", () => {
  const renderer = new TypeRenderer();
  const schema = (leaf: string) => ({
    properties: { w: { $ref: "#/$defs/Wrapper" } },
    $defs: { Wrapper: { properties: { x: { $ref: "#/$defs/Leaf" } } }, Leaf: { type: leaf } },
  });
  renderer.render(schema("string"), { ...TARGET, toolPrefix: "One" });
  assert.equal(
    renderer.render(schema("number"), { ...TARGET, toolPrefix: "Two" }),
    "{\n  w?: Two_Wrapper;\n}",
  );
  assert.match(renderer.renderNamedTypes(), /type Two_Wrapper = \{\n {2}x\?: Two_Leaf;\n\};/);
});

Deno.test("TypeRenderer.render() replaces an unknown type name by unknown with a warning", () => {
  assert.deepEqual(ts({ properties: { f: { type: "file" } } }).warnings, [
    'tools.t.input.f: unknown type "file" replaced by unknown',
  ]);
});

Deno.test("TypeRenderer.render() bounds nesting depth", () => {
  let schema: unknown = { type: "string" };
  for (let i = 0; i < 10; i++) schema = { properties: { n: schema } };
  const out = ts(schema, { maxDepth: 4 });
  assert.match(out.type, /n\?: unknown;/);
  assert.deepEqual(out.warnings, [
    "tools.t.input.n.n.n.n.n: schema nested deeper than 4 levels replaced by unknown",
  ]);
});

Deno.test("TypeRenderer.render() bounds the number of nodes with a single warning", () => {
  const schema = {
    properties: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`p${i}`, { type: "string" }])),
  };
  const out = ts(schema, { maxNodes: 5 });
  assert.match(out.type, /p3\?: string;\n {2}p4\?: unknown;/);
  assert.deepEqual(out.warnings, ["tools.t.input: schema larger than 5 nodes; the rest replaced by unknown"]);
});

Deno.test("TypeRenderer.render() survives a schema nested far deeper than the stack-safe bound", () => {
  let schema: unknown = { type: "string" };
  for (let i = 0; i < 20_000; i++) schema = { properties: { n: schema }, $defs: { D: { type: "string" } } };
  const out = ts({
    properties: {
      d: { $ref: "#/properties/deep/properties/n/$defs/D" },
      again: { $ref: "#/properties/deep" },
      deep: schema,
    },
  });
  assert.match(out.type, /^\{\n {2}d\?: D;\n {2}again\?: deep;\n {2}deep\?: \{\n/);
  assert.equal(out.warnings.length, 2);
  for (const warning of out.warnings) {
    assert.match(warning, /nested deeper than 64 levels replaced by unknown$/);
  }
});

Deno.test("inputArity() says none, optional or required from the input schema", () => {
  assert.equal(inputArity(undefined), "none");
  assert.equal(inputArity({ type: "object", properties: {} }), "none");
  assert.equal(inputArity({ properties: { a: {} } }), "optional");
  assert.equal(inputArity({ properties: { a: {} }, required: ["a"] }), "required");
  assert.equal(inputArity({ type: "object", additionalProperties: { type: "string" } }), "optional");
  assert.equal(
    inputArity({ $ref: "#/$defs/A", $defs: { A: { properties: { a: {} }, required: ["a"] } } }),
    "required",
  );
  assert.equal(
    inputArity({ properties: { a: {}, b: {} }, oneOf: [{ required: ["a"] }, { required: ["b"] }] }),
    "required",
  );
  assert.equal(
    inputArity({ anyOf: [{ properties: { a: {} }, required: ["a"] }, { properties: { b: {} } }] }),
    "optional",
  );
});
