// Golden files live in testdata/declarations/golden/. After an intended change, regenerate them with
//   UPDATE_GOLDEN=1 deno test -P --v8-flags=--stack-size=1800 tests/declarations/declarations_test.ts
// and review the diff.
import assert from "node:assert/strict";
import { renderDeclarations, renderIndex, type ToolInfo } from "../../lib/declarations/mod.ts";
import { buildBindingTable } from "../../lib/declarations/tool_binding.ts";
import { DECLARATIONS_TESTDATA, loadCorpus } from "../_fakes_declarations.ts";

const UPDATE_GOLDEN = Deno.env.get("UPDATE_GOLDEN") === "1";
const GOLDEN = new URL("golden/", DECLARATIONS_TESTDATA);

function assertGolden(file: string, actual: string): void {
  const url = new URL(file, GOLDEN);
  if (UPDATE_GOLDEN) Deno.writeTextFileSync(url, actual);
  assert.equal(actual, Deno.readTextFileSync(url), `golden ${file} differs (UPDATE_GOLDEN=1 to regenerate)`);
}

const corpus = loadCorpus();

for (const server of corpus) {
  Deno.test(`renderDeclarations() matches the golden full declarations of ${server.name}`, () => {
    assertGolden(`${server.name}.full.d.ts`, `${renderDeclarations(server.name, server.tools).text}\n`);
  });
  Deno.test(`renderDeclarations() matches the golden signatures of ${server.name}`, () => {
    const { text } = renderDeclarations(server.name, server.tools, { detail: "signatures" });
    assertGolden(`${server.name}.signatures.d.ts`, `${text}\n`);
  });
  Deno.test(`renderIndex() matches the golden index of ${server.name}`, () => {
    assertGolden(`${server.name}.index.txt`, `${renderIndex(server.name, server.tools)}\n`);
  });
}

Deno.test("renderDeclarations() warns exactly as the golden warnings list for the corpus", () => {
  const warnings: Record<string, string[]> = {};
  for (const server of corpus) warnings[server.name] = renderDeclarations(server.name, server.tools).warnings;
  assertGolden("warnings.json", `${JSON.stringify(warnings, null, 2)}\n`);
});

Deno.test("renderDeclarations() gives no warning for any real server of the corpus", () => {
  const real = corpus.filter((s) => !["constructs", "stitch", "hostinger"].includes(s.name));
  assert.equal(real.length, 15);
  for (const server of real) {
    assert.deepEqual(renderDeclarations(server.name, server.tools).warnings, [], server.name);
  }
});

Deno.test("renderDeclarations() gives the same types at both detail levels", () => {
  const stripComments = (text: string) => text.replace(/^ *\/\*\*[\s\S]*?\*\/\n/gm, "");
  for (const server of corpus) {
    const full = renderDeclarations(server.name, server.tools).text;
    const signatures = renderDeclarations(server.name, server.tools, { detail: "signatures" }).text;
    assert.equal(stripComments(full), signatures, server.name);
  }
});

// ---------------------------------------------------------------------------------------------------------
// Unit behaviour

const sum: ToolInfo = {
  name: "get-sum",
  description: "Returns the sum of two numbers",
  inputSchema: {
    type: "object",
    properties: { a: { type: "number", description: "First number" }, b: { type: "number" } },
    required: ["a", "b"],
  },
};

Deno.test("renderDeclarations() renders a tool with parameters and its description as JSDoc", () => {
  const { text } = renderDeclarations("calc", [{ ...sum, name: "add" }]);
  assert.equal(
    text,
    [
      "declare const calc: {",
      "  /** Returns the sum of two numbers */",
      "  add(params: {",
      "    /** First number */",
      "    a: number;",
      "    b: number;",
      "  }): Promise<unknown>;",
      "};",
    ].join("\n"),
  );
});

Deno.test("renderDeclarations() declares a hyphenated tool under both spellings with the alias by reference", () => {
  const { text } = renderDeclarations("everything", [sum]);
  assert.match(text, /^ {2}"get-sum"\(params: \{$/m);
  assert.match(
    text,
    /^ {2}\/\*\* Alias for get-sum\. \*\/\n {2}get_sum: \(typeof everything\)\["get-sum"\];$/m,
  );
  assert.equal(text.split("Returns the sum").length - 1, 1, "the alias does not repeat the description");
});

Deno.test("renderDeclarations() does not alias an identifier or reserved-word tool name", () => {
  const { text } = renderDeclarations("redis", [{ name: "get" }, { name: "delete" }]);
  assert.equal(
    text,
    'declare const redis: {\n  get(): Promise<unknown>;\n  "delete"(): Promise<unknown>;\n};',
  );
});

Deno.test("renderDeclarations() declares exactly the binding table's keys in its order", () => {
  const tools: ToolInfo[] = ["get_sum", "get-sum", "1st.tool", "echo", "a b"].map((name) => ({ name }));
  const { text } = renderDeclarations("srv", tools);
  const declared = [...text.matchAll(/^ {2}("(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$]*)[(:]/gm)].map((m) =>
    m[1]!.startsWith('"') ? JSON.parse(m[1]!) as string : m[1]!
  );
  assert.deepEqual(declared, buildBindingTable(tools.map((t) => t.name)).entries.map((e) => e.key));
  assert.ok(declared.includes("get_sum_2"), "the colliding alias is disambiguated");
});

Deno.test("renderDeclarations() omits params when the input schema declares no properties", () => {
  for (const inputSchema of [undefined, true, {}, { type: "object" }, { type: "object", properties: {} }]) {
    const { text } = renderDeclarations("s", [{ name: "t", inputSchema }]);
    assert.equal(text, "declare const s: {\n  t(): Promise<unknown>;\n};", JSON.stringify(inputSchema));
  }
});

Deno.test("renderDeclarations() makes params optional when nothing is required", () => {
  const { text } = renderDeclarations("s", [{
    name: "t",
    inputSchema: { properties: { q: { type: "string" } } },
  }]);
  assert.match(text, /t\(params\?: \{\n {4}q\?: string;\n {2}\}\): Promise<unknown>;/);
});

Deno.test("renderDeclarations() keeps the params of a root-level $ref input schema", () => {
  const inputSchema = {
    $ref: "#/$defs/Args",
    $defs: { Args: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } },
  };
  const { text } = renderDeclarations("s", [{ name: "t", inputSchema }]);
  assert.match(text, /^type Args = \{\n {2}q: string;\n\};\n\ndeclare const s/);
  assert.match(text, / {2}t\(params: Args\): Promise<unknown>;/);
});

Deno.test("renderDeclarations() returns the output schema's type, else unknown", () => {
  const tools: ToolInfo[] = [
    {
      name: "typed",
      outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    },
    { name: "scalar", outputSchema: { type: "string" } },
    { name: "untyped" },
  ];
  const { text } = renderDeclarations("s", tools);
  assert.match(text, /typed\(\): Promise<\{\n {4}n: number;\n {2}\}>;/);
  assert.match(text, /scalar\(\): Promise<string>;/);
  assert.match(text, /untyped\(\): Promise<unknown>;/);
});

Deno.test("renderDeclarations() declares the inner type of a FastMCP result envelope", () => {
  const outputSchema = { type: "object", properties: { result: { type: "integer" } }, required: ["result"] };
  assert.match(renderDeclarations("s", [{ name: "t", outputSchema }]).text, /t\(\): Promise<number>;/);
  const notEnvelope = { type: "object", properties: { result: { type: "integer" } } };
  assert.match(renderDeclarations("s", [{ name: "t", outputSchema: notEnvelope }]).text, /result\?: number;/);
});

Deno.test("renderDeclarations() hoists a named type of an output schema above the server", () => {
  const outputSchema = {
    type: "object",
    properties: { user: { $ref: "#/$defs/User" } },
    $defs: { User: { type: "object", properties: { id: { type: "string" } } } },
  };
  const { text } = renderDeclarations("s", [{ name: "t", outputSchema }]);
  assert.ok(text.startsWith("type User = {\n  id?: string;\n};\n\ndeclare const s: {"));
  assert.match(text, /user\?: User;/);
});

Deno.test("renderDeclarations() keeps two tools' different $defs of one name apart", () => {
  const tool = (name: string, prop: string): ToolInfo => ({
    name,
    inputSchema: {
      properties: { c: { $ref: "#/$defs/Config" } },
      $defs: { Config: { type: "object", properties: { [prop]: { type: "string" } } } },
    },
  });
  const { text } = renderDeclarations("s", [tool("first", "a"), tool("second-one", "b"), tool("third", "a")]);
  assert.match(text, /^type Config = \{\n {2}a\?: string;\n\};$/m);
  assert.match(text, /^type SecondOne_Config = \{\n {2}b\?: string;\n\};$/m);
  assert.match(text, /first\(params\?: \{\n {4}c\?: Config;/);
  assert.match(text, /"second-one"\(params\?: \{\n {4}c\?: SecondOne_Config;/);
  assert.match(text, /third\(params\?: \{\n {4}c\?: Config;/, "an identical body shares the name");
});

Deno.test("renderDeclarations() degrades an output schema that admits nothing to unknown with a warning", () => {
  const { text, warnings } = renderDeclarations("s", [{ name: "t", outputSchema: false }]);
  assert.match(text, /t\(\): Promise<unknown>;/);
  assert.deepEqual(warnings, ["tools.t.output: schema admits no value; return type replaced by unknown"]);
});

Deno.test("renderDeclarations() reports an external $ref by path and replaces it by unknown", () => {
  const inputSchema = { properties: { filter: { $ref: "https://example.com/f.json" } } };
  const { text, warnings } = renderDeclarations("s", [{ name: "search", inputSchema }]);
  assert.match(text, /filter\?: unknown;/);
  assert.deepEqual(warnings, [
    'tools.search.input.filter: external $ref "https://example.com/f.json" replaced by unknown',
  ]);
});

Deno.test("renderDeclarations() declares a repeated wire name once and says so", () => {
  const { text, warnings } = renderDeclarations("s", [{ name: "t", description: "first" }, { name: "t" }]);
  assert.equal(text, "declare const s: {\n  /** first */\n  t(): Promise<unknown>;\n};");
  assert.deepEqual(warnings, ["tools.t: listed more than once; declared once"]);
});

Deno.test("renderDeclarations() sanitizes the server name into the declared constant", () => {
  assert.equal(renderDeclarations("my-server.v2", []).text, "declare const my_server_v2: {};");
  assert.equal(renderDeclarations("9lives", []).text, "declare const _9lives: {};");
});

Deno.test("renderDeclarations() prefixes a server whose name is a reserved word, so the declaration parses", () => {
  const { text, warnings } = renderDeclarations("class", []);
  assert.equal(text, "declare const _class: {};");
  assert.deepEqual(warnings, []);
});

Deno.test("renderDeclarations() at signatures keeps parameter and return types and drops every comment", () => {
  const tools: ToolInfo[] = [
    sum,
    {
      name: "out",
      description: "d",
      outputSchema: { type: "object", properties: { x: { type: "string" } } },
    },
  ];
  const { text } = renderDeclarations("s", tools, { detail: "signatures" });
  assert.ok(!text.includes("/*"), text);
  assert.match(text, /"get-sum"\(params: \{\n {4}a: number;\n {4}b: number;\n {2}\}\): Promise<unknown>;/);
  assert.match(text, /out\(\): Promise<\{\n {4}x\?: string;\n {2}\}>;/);
});

Deno.test("renderDeclarations() neutralises comment terminators in tool, property and alias text", () => {
  const tools: ToolInfo[] = [{
    name: "a*/b",
    description: "matches **/*.ext */",
    inputSchema: { properties: { f: { type: "string", description: "() => { /* code */ }" } } },
  }];
  const { text } = renderDeclarations("s", tools);
  for (const comment of text.matchAll(/\/\*[\s\S]*?\*\//g)) {
    assert.equal(text[comment.index + comment[0].length], "\n", `comment closes early: ${comment[0]}`);
  }
  assert.match(text, /\/\*\* matches \*\*\\\/\*\.ext \*\\\/ \*\//);
  assert.match(text, /\/\*\* \(\) => \{ \/\* code \*\\\/ \} \*\//);
  assert.match(text, /\/\*\* Alias for a\*\\\/b\. \*\//);
});

Deno.test("renderDeclarations() never starts an output line with a Markdown fence", () => {
  const description = 'Example:\n```json\n{"a": `${x}`}\n```\n~~~\nend';
  const { text } = renderDeclarations("s", [{ name: "t", description }]);
  for (const line of text.split("\n")) assert.ok(!/^ {0,3}(```|~~~)/.test(line), line);
  assert.match(text, /^ {3}\* ```json$/m);
  assert.match(text, /^ {3}\* \{"a": `\$\{x\}`\}$/m);
});

Deno.test("renderIndex() lists each tool with the first line of its description", () => {
  const tools: ToolInfo[] = [
    { name: "echo", description: "  Echoes back\nthe input  " },
    { name: "get-sum" },
    { name: "echo", description: "repeat" },
  ];
  assert.equal(renderIndex("everything", tools), "everything:\n  echo - Echoes back\n  get-sum");
});

Deno.test("renderIndex() names the global a script uses when it differs from the server name", () => {
  assert.equal(renderIndex("my-server", [{ name: "t" }]), "my-server (as my_server):\n  t");
});

Deno.test("renderIndex() says so when a server has no tools", () => {
  assert.equal(renderIndex("empty", []), "empty:\n  (no tools)");
});

Deno.test("renderIndex() quotes a tool name that would break its line", () => {
  assert.equal(renderIndex("s", [{ name: "a\nb", description: "x" }]), 's:\n  "a\\nb" - x');
});

Deno.test("renderDeclarations() declares a filtered subset under the full table's keys when given it", () => {
  const table = buildBindingTable(["get_sum", "get-sum"]);
  const { text, warnings } = renderDeclarations("s", [{ name: "get-sum" }, { name: "other" }], { table });
  assert.equal(
    text,
    'declare const s: {\n  "get-sum"(): Promise<unknown>;\n  /** Alias for get-sum. */\n' +
      '  get_sum_2: (typeof s)["get-sum"];\n};',
  );
  assert.deepEqual(warnings, ["tools.other: not in the binding table; not declared"]);
});
