// The sandbox's pure text functions: the `execute` answer text, limits from `[mcp]`, script normalization
// and UTF-8 cutting.
import assert from "node:assert/strict";
import { DEFAULT_MCP_CONFIG } from "../../lib/plugins/config_types.ts";
import {
  clampStackBytes,
  limitsFromConfig,
  MAX_SCRIPT_STACK_BYTES,
  renderExecuteText,
  type SandboxResult,
} from "../../lib/sandbox/mod.ts";
import {
  extractFencedBlock,
  javascriptCandidates,
  normalizeScript,
  startsWithStatement,
} from "../../lib/sandbox/guest/normalize.ts";
import { truncateJsonString, truncateUtf8, utf8ByteLength } from "../../lib/sandbox/protocol/utf8.ts";
import { jsonNestingDepth, nestsDeeperThan } from "../../lib/sandbox/protocol/json_depth.ts";

const base = { console: [], consoleDropped: false, toolCalls: 0, durationMs: 1 };

Deno.test("renderExecuteText() renders a plain success as { result } in text and structured content alike", () => {
  const result: SandboxResult = {
    ok: true,
    valueJson: '["a",1]',
    originalBytes: 7,
    truncated: false,
    ...base,
  };
  assert.deepEqual(renderExecuteText(result, []), {
    text: '{"result":["a",1]}',
    isError: false,
    structured: { result: ["a", 1] },
  });
});

Deno.test("renderExecuteText() answers {} for undefined, so it reads apart from null", () => {
  const result: SandboxResult = {
    ok: true,
    valueJson: "undefined",
    originalBytes: 9,
    truncated: false,
    ...base,
  };
  assert.deepEqual(renderExecuteText(result, []), { text: "{}", isError: false, structured: {} });
});

Deno.test("renderExecuteText() wraps every kind of value in an object", () => {
  for (const valueJson of ['"text"', "42", "null", "true", '{"result":1}']) {
    const result: SandboxResult = { ok: true, valueJson, originalBytes: 4, truncated: false, ...base };
    const { text, structured } = renderExecuteText(result, []);
    assert.deepEqual(structured, { result: JSON.parse(valueJson) });
    assert.equal(text, `{"result":${valueJson}}`);
  }
});

Deno.test("renderExecuteText() renders truncation, console, dropped output and notices", () => {
  const result: SandboxResult = {
    ok: true,
    valueJson: '[{"id":1},{"i',
    originalBytes: 40000,
    truncated: true,
    console: ["first", "[warn] two\nlines"],
    consoleDropped: true,
    toolCalls: 2,
    durationMs: 5,
  };
  const { text, isError, structured } = renderExecuteText(result, [
    "github.search: result off-shape, treat as unknown",
  ]);
  assert.equal(isError, false);
  assert.deepEqual(structured, {
    result: '[{"id":1},{"i',
    truncated: "cut from 40000 bytes. Return less data — filter or select fields inside the script.",
    console: ["first", "[warn] two", "lines", "[further output dropped]"],
    notices: ["github.search: result off-shape, treat as unknown"],
  });
  assert.equal(text, JSON.stringify(structured));
});

Deno.test("renderExecuteText() says how much console output was dropped when it is known", () => {
  const result: SandboxResult = {
    ok: true,
    valueJson: "1",
    originalBytes: 1,
    truncated: false,
    ...base,
    console: ["cut"],
    consoleDropped: true,
    consoleDroppedAmount: { lines: 3, bytes: 1200 },
  };
  assert.equal(
    renderExecuteText(result, []).text,
    '{"result":1,"console":["cut","[further output dropped: 1200 bytes in 3 lines]"]}',
  );
});

Deno.test("renderExecuteText() renders a failure as its tagged object and keeps console and notices", () => {
  const result: SandboxResult = {
    ok: false,
    failure: { error: "script_timeout", limit_secs: 2 },
    console: ["before"],
    consoleDropped: false,
    toolCalls: 0,
    durationMs: 2500,
  };
  assert.deepEqual(renderExecuteText(result, ["srv: needs sign-in"]), {
    text: '{"error":"script_timeout","limit_secs":2}\n\nconsole:\n  before\n[srv: needs sign-in]',
    isError: true,
  });
  const plain: SandboxResult = { ok: false, failure: { error: "cancelled" }, ...base };
  assert.deepEqual(renderExecuteText(plain, []), { text: '{"error":"cancelled"}', isError: true });
});

Deno.test("limitsFromConfig() converts [mcp] units and clamps the stack limit", () => {
  assert.deepEqual(limitsFromConfig(DEFAULT_MCP_CONFIG), {
    timeoutMs: 120_000,
    memoryLimitBytes: 64 * 1024 * 1024,
    stackLimitBytes: MAX_SCRIPT_STACK_BYTES,
    maxConsoleBytes: 8192,
    maxResultBytes: 32768,
    maxToolCalls: 100,
    maxInFlightChars: 64 * 1024 * 1024,
  });
  assert.equal(
    limitsFromConfig({ ...DEFAULT_MCP_CONFIG, scriptStackLimitKb: 128 }).stackLimitBytes,
    128 * 1024,
  );
});

Deno.test("clampStackBytes() never returns 0 (unlimited) or more than the safe maximum", () => {
  assert.equal(clampStackBytes(0), 16 * 1024);
  assert.equal(clampStackBytes(10 * 1024 * 1024), MAX_SCRIPT_STACK_BYTES);
  assert.equal(clampStackBytes(Number.NaN), MAX_SCRIPT_STACK_BYTES);
});

Deno.test("normalizeScript() strips fences, export default and trailing semicolons", () => {
  const cases: Array<[string, string]> = [
    ["  1 + 1;  ", "1 + 1"],
    ["```js\nreturn 1;\n```", "return 1"],
    ["```\nreturn 2\n```\n", "return 2"],
    ["```ts\nexport default async () => 3;;\n```", "async () => 3"],
    ["```", ""],
    ["```js return 1```", ""],
    ["export default { a: 1 }", "{ a: 1 }"],
    ["return 'a;'", "return 'a;'"],
  ];
  for (const [input, expected] of cases) {
    assert.equal(normalizeScript(input), expected, JSON.stringify(input));
  }
});

Deno.test("javascriptCandidates() keeps the script on line 1 in both forms", () => {
  assert.deepEqual(javascriptCandidates("x"), [
    { form: "expression", source: "(async () => (x\n))" },
    { form: "statements", source: "(async () => {x\n})" },
  ]);
});

Deno.test("startsWithStatement() finds statement keywords after comments and never an expression", () => {
  for (
    const code of [
      "return 1",
      "const a = 1",
      "  // note\n/* more */ for (const x of y) {}",
      "let x = 1",
      "let [a] = b",
      "let {a} = b",
      "if (a) b",
      "try {} catch {}",
      "throw new Error('x')",
    ]
  ) assert.equal(startsWithStatement(code), true, code);
  for (
    const code of [
      "1 + 1",
      "returned",
      "return$",
      "await fx.echo({})",
      "let",
      "(() => { return 1 })()",
      "async function main() {}",
      "// only a comment",
      "/* open",
    ]
  ) assert.equal(startsWithStatement(code), false, code);
});

Deno.test("truncateUtf8() cuts on a character boundary and reports the original size", () => {
  assert.deepEqual(truncateUtf8("abc", 3), { text: "abc", originalBytes: 3, truncated: false });
  assert.deepEqual(truncateUtf8("aé€😀", 6), { text: "aé€", originalBytes: 10, truncated: true });
  assert.deepEqual(truncateUtf8("aé€😀", 5), { text: "aé", originalBytes: 10, truncated: true });
  assert.deepEqual(truncateUtf8("😀", 3), { text: "", originalBytes: 4, truncated: true });
});

Deno.test("truncateJsonString() keeps the longest start whose JSON string fits, escapes and surrogates included", () => {
  const bytes = (text: string) => new TextEncoder().encode(JSON.stringify(text)).length;
  const texts = ['"\\', "a\n\u0001\u2028é😀", "x\ud800y\udfff", "\t\u007f€"].map((t) => t.repeat(40));
  for (const text of texts) {
    assert.equal(truncateJsonString(text, 1).text, ""); // not even the quotes fit
    for (const max of [2, 3, 7, 50, 101, 400, 10_000]) {
      const cut = truncateJsonString(text, max);
      assert.ok(text.startsWith(cut.text));
      assert.equal(cut.truncated, cut.text !== text);
      assert.equal(cut.originalBytes, utf8ByteLength(text));
      if (bytes(text) <= max) assert.equal(cut.text, text);
      else {
        assert.ok(bytes(cut.text) <= max, `${JSON.stringify(cut.text)} within ${max}`);
        // One character more would not fit (a pair counts as one).
        const isPair = /^[\ud800-\udbff][\udc00-\udfff]/.test(
          text.slice(cut.text.length, cut.text.length + 2),
        );
        const next = cut.text.length + (isPair ? 2 : 1);
        assert.ok(bytes(text.slice(0, next)) > max, `${JSON.stringify(text.slice(0, next))} over ${max}`);
      }
    }
  }
});

Deno.test("utf8ByteLength() counts like TextEncoder, lone surrogates included", () => {
  for (const text of ["", "abc", "é", "€", "😀", "a\ud800b", "\udfff", "x\ud83d"]) {
    assert.equal(utf8ByteLength(text), new TextEncoder().encode(text).length, JSON.stringify(text));
  }
});

Deno.test("jsonNestingDepth() counts array and object levels but not brackets inside strings", () => {
  assert.equal(jsonNestingDepth("1"), 0);
  assert.equal(jsonNestingDepth('"[[{"'), 0);
  assert.equal(jsonNestingDepth("[]"), 1);
  assert.equal(jsonNestingDepth('{"a":[1,{"b":"]]\\"[["}],"c":[[]]}'), 3);
  assert.equal(jsonNestingDepth("[[],[[]],[]]"), 3);
});

Deno.test("nestsDeeperThan() is exact at the bound, however the text's brackets are spread", () => {
  const nested = (levels: number) => "[".repeat(levels) + "]".repeat(levels);
  assert.equal(nestsDeeperThan(nested(1000), 1000), false);
  assert.equal(nestsDeeperThan(nested(1001), 1000), true);
  assert.equal(nestsDeeperThan(`{"a":${nested(1000)}}`, 1000), true);
  // Many brackets, shallow: an array of 3,000 objects, and a long text full of brackets.
  const rows = JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ i, tags: [i] })));
  assert.equal(nestsDeeperThan(rows, 1000), false);
  assert.equal(nestsDeeperThan(JSON.stringify("[{".repeat(5000)), 1000), false);
  assert.equal(nestsDeeperThan(JSON.stringify("x".repeat(100_000)), 1000), false);
  assert.equal(nestsDeeperThan(`["${"[".repeat(1500)}", ${nested(3)}]`, 1000), false);
  assert.equal(nestsDeeperThan(`["${"[".repeat(1500)}", ${nested(1001)}]`, 1000), true);
});

Deno.test("normalizeScript() blanks a shebang line so later lines keep their numbers", () => {
  assert.equal(normalizeScript("#!/usr/bin/env node\nreturn 1;"), "\nreturn 1");
  assert.equal(normalizeScript("#!/usr/bin/env -S deno run\nexport default 2"), "\n2");
  assert.equal(normalizeScript("#!/usr/bin/env node"), "");
});

Deno.test("extractFencedBlock() returns the one fenced block of prose and nothing otherwise", () => {
  assert.equal(extractFencedBlock("Here is the script:\n```js\nreturn 1\n```\nDone."), "return 1");
  assert.equal(
    extractFencedBlock("Intro\r\n```typescript\r\nconst a = 1;\r\nreturn a\r\n```"),
    "const a = 1;\r\nreturn a\r",
  );
  assert.equal(extractFencedBlock("return 1"), undefined);
  assert.equal(extractFencedBlock("```js\na\n```\n```js\nb\n```"), undefined);
});
