import assert from "node:assert/strict";
import { ConfigShapeError, ConfigSyntaxError } from "../../lib/sync/formats/config_format.ts";
import { JSONC, STRICT_JSON } from "../../lib/sync/formats/json_format.ts";
import { offsetToLineColumn } from "../../lib/sync/formats/_text.ts";
import { catchError } from "../_fakes_sync.ts";

const at = { containerPath: ["mcpServers"], name: "symposium" };
const entry = { command: "/bin/ca", args: ["mcp-serve"] };

Deno.test("offsetToLineColumn() counts \\n, \\r\\n and a lone \\r as one line break each, 1-based", () => {
  const text = "ab\r\ncd\ref\ngh";
  assert.deepEqual(offsetToLineColumn(text, 0), { line: 1, column: 1 });
  assert.deepEqual(offsetToLineColumn(text, 4), { line: 2, column: 1 });
  assert.deepEqual(offsetToLineColumn(text, 7), { line: 3, column: 1 });
  assert.deepEqual(offsetToLineColumn(text, 11), { line: 4, column: 2 });
});

Deno.test("JSONC.setEntry() keeps a neighbour written on one line exactly as it was", () => {
  const text = '{\n  "mcpServers": {\n    "a": { "command": "x" }\n  }\n}\n';
  const after = JSONC.setEntry(text, at, entry, "f.json");
  assert.ok(after.includes('    "a": { "command": "x" },\n    "symposium": {\n'));
});

Deno.test("JSONC.setEntry() puts the entry after the last property's same-line comment", () => {
  const text = '{\n  "mcpServers": {\n    "a": {} // note about a\n  }\n}\n';
  const after = JSONC.setEntry(text, at, entry, "f.json");
  assert.equal(
    after,
    '{\n  "mcpServers": {\n    "a": {}, // note about a\n    "symposium": {\n      "command": "/bin/ca",\n' +
      '      "args": ["mcp-serve"]\n    }\n  }\n}\n',
  );
  assert.equal(JSONC.removeEntry(after, at, "f.json"), text);
});

Deno.test("JSONC.setEntry() appends inline to a one-line file, matching its spacing", () => {
  assert.equal(
    JSONC.setEntry('{"mcpServers":{"a":1}}', at, entry, "f"),
    '{"mcpServers":{"a":1,"symposium":{"command":"/bin/ca","args":["mcp-serve"]}}}',
  );
  assert.equal(
    JSONC.setEntry('{ "mcpServers": { "a": 1 } }', at, entry, "f"),
    '{ "mcpServers": { "a": 1, "symposium": {"command": "/bin/ca", "args": ["mcp-serve"]} } }',
  );
});

Deno.test("JSONC.setEntry() keeps CRLF line endings and tab indentation", () => {
  const text = '{\r\n\t"x": 1\r\n}\r\n';
  const after = JSONC.setEntry(text, at, entry, "f");
  assert.equal(
    after,
    '{\r\n\t"x": 1,\r\n\t"mcpServers": {\r\n\t\t"symposium": {\r\n\t\t\t"command": "/bin/ca",\r\n' +
      '\t\t\t"args": ["mcp-serve"]\r\n\t\t}\r\n\t}\r\n}\r\n',
  );
  assert.equal(JSONC.removeEntry(after, at, "f"), text);
});

Deno.test("JSONC.setEntry() keeps a byte-order mark", () => {
  const after = JSONC.setEntry('\uFEFF{\n  "x": 1\n}\n', at, entry, "f");
  assert.ok(after.startsWith('\uFEFF{\n  "x": 1,\n  "mcpServers"'));
});

Deno.test("JSONC.setEntry() fills an empty container and a comment-only one", () => {
  assert.equal(
    JSONC.setEntry('{\n  "mcpServers": {}\n}\n', at, { a: 1 }, "f"),
    '{\n  "mcpServers": {\n    "symposium": {\n      "a": 1\n    }\n  }\n}\n',
  );
  assert.equal(
    JSONC.setEntry('{\n  "mcpServers": {\n    // none yet\n  }\n}\n', at, { a: 1 }, "f"),
    '{\n  "mcpServers": {\n    // none yet\n    "symposium": {\n      "a": 1\n    }\n  }\n}\n',
  );
});

Deno.test("JSONC.setEntry() writes a whole document into a blank file and after leading comments", () => {
  assert.equal(
    JSONC.setEntry("  \n", at, { a: 1 }, "f"),
    '{\n  "mcpServers": {\n    "symposium": {\n      "a": 1\n    }\n  }\n}\n',
  );
  assert.ok(JSONC.setEntry("// settings\n", at, { a: 1 }, "f").startsWith('// settings\n{\n  "mcpServers"'));
});

Deno.test("JSONC.setEntry() returns the same string when the entry is equal in another key order", () => {
  const text = '{"mcpServers": {"symposium": {"args": ["mcp-serve"], "command": "/bin/ca"}}}';
  assert.equal(JSONC.setEntry(text, at, entry, "f"), text);
});

Deno.test("JSONC.setEntry() treats a dotted key as one literal key", () => {
  const amp = { containerPath: ["amp.mcpServers"], name: "symposium" };
  const after = JSONC.setEntry('{\n  "amp": {}\n}\n', amp, { a: 1 }, "f");
  assert.deepEqual(structuredClone(JSONC.read(after, "f")), {
    amp: {},
    "amp.mcpServers": { symposium: { a: 1 } },
  });
});

Deno.test("JSONC.removeEntry() drops a container left empty, but not one that keeps a comment", () => {
  assert.equal(
    JSONC.removeEntry('{\n  "x": 1,\n  "mcpServers": {\n    "symposium": {}\n  }\n}\n', at, "f"),
    '{\n  "x": 1\n}\n',
  );
  const commented = '{\n  "mcpServers": {\n    // keep me\n    "symposium": {}\n  }\n}\n';
  assert.equal(JSONC.removeEntry(commented, at, "f"), '{\n  "mcpServers": {\n    // keep me\n  }\n}\n');
});

Deno.test("JSONC.removeEntry() keeps the neighbours' trailing-comma style", () => {
  const text = '{\n  "mcpServers": {\n    "a": 1,\n    "symposium": {},\n  },\n}\n';
  assert.equal(JSONC.removeEntry(text, at, "f"), '{\n  "mcpServers": {\n    "a": 1,\n  },\n}\n');
});

Deno.test("JSONC.removeEntry() removes an inline entry between neighbours", () => {
  assert.equal(
    JSONC.removeEntry('{"mcpServers": {"a": 1, "symposium": {}, "b": 2}}', at, "f"),
    '{"mcpServers": {"a": 1, "b": 2}}',
  );
  assert.equal(
    JSONC.removeEntry('{"mcpServers": {"a": 1, "symposium": {}}}', at, "f"),
    '{"mcpServers": {"a": 1}}',
  );
});

Deno.test("JSONC.removeEntry() returns the same string when there is no entry or no file content", () => {
  const text = '{"mcpServers": {"a": 1}}';
  assert.equal(JSONC.removeEntry(text, at, "f"), text);
  assert.equal(JSONC.removeEntry("", at, "f"), "");
});

Deno.test("STRICT_JSON.setEntry() rejects a trailing comma with the comma's position", () => {
  const error = catchError(() => STRICT_JSON.setEntry('{\n  "a": 1,\n}\n', at, entry, "c.json"));
  assert.ok(error instanceof ConfigSyntaxError);
  assert.equal(error.code, "SYNC_CONFIG_SYNTAX");
  assert.match(error.message, /trailing commas are not allowed/);
  assert.deepEqual(error.location, { file: "c.json", line: 2, column: 9 });
});

Deno.test("STRICT_JSON.setEntry() rejects a comment that JSONC accepts", () => {
  const text = '{\n  // hi\n  "a": 1\n}\n';
  const error = catchError(() => STRICT_JSON.setEntry(text, at, entry, "c.json"));
  assert.ok(error instanceof ConfigSyntaxError);
  assert.deepEqual(error.location, { file: "c.json", line: 2, column: 3 });
  assert.ok(JSONC.setEntry(text, at, entry, "c.json").includes("// hi"));
});

Deno.test("JSONC.setEntry() refuses a container that is not an object, pointing at it", () => {
  const error = catchError(() => JSONC.setEntry('{\n  "mcpServers": []\n}', at, entry, "c.json"));
  assert.ok(error instanceof ConfigShapeError);
  assert.equal(error.code, "SYNC_CONFIG_SHAPE");
  assert.match(error.message, /"mcpServers" is an array, expected an object/);
  assert.deepEqual(error.location, { file: "c.json", line: 2, column: 17 });
});

Deno.test("JSONC.read() refuses a document whose top level is not an object", () => {
  const error = catchError(() => JSONC.read("[1]", "c.json"));
  assert.ok(error instanceof ConfigShapeError);
  assert.match(error.message, /top level is an array/);
});

Deno.test("JSONC.setEntry() refuses a duplicated entry key, pointing at the second one", () => {
  const error = catchError(() =>
    JSONC.setEntry('{"mcpServers": {\n"symposium": 1,\n"symposium": 2}}', at, entry, "c.json")
  );
  assert.ok(error instanceof ConfigShapeError);
  assert.match(error.message, /appears twice/);
  assert.deepEqual(error.location, { file: "c.json", line: 3, column: 1 });
});
