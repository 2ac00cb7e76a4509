import assert from "node:assert/strict";
import { indexTomlPositions, parseTomlDocument, suggestKey } from "../lib/toml_position.ts";
import { UserError } from "../lib/diagnostics.ts";

const TEXT = `# comment with "quotes" and [brackets]
title = """
multi-line = "not a key"
[not.a.table]
"""
literal = '''
[[still.not]]
'''
"quoted key" = 1
a.b."c d" = { x = 1, y = [1, { z = 2 }] }

[server]
args = [
  "one", # a comment, then a newline
  "two",
]

[[list]]
name = "first"
[list.env]
K = "v"

  [[list]]
name = 'second'
`;

Deno.test("indexTomlPositions() locates keys after multi-line strings and comments", () => {
  const index = indexTomlPositions(TEXT);
  assert.deepEqual(index.locate(["literal"]), { line: 6, column: 1 });
  assert.deepEqual(index.locate(["quoted key"]), { line: 9, column: 1 });
  assert.deepEqual(index.locate(["not"]), { line: 1, column: 1 });
});

Deno.test("indexTomlPositions() locates each segment of a dotted key", () => {
  const index = indexTomlPositions(TEXT);
  assert.deepEqual(index.locate(["a"]), { line: 10, column: 1 });
  assert.deepEqual(index.locate(["a", "b", "c d"]), { line: 10, column: 5 });
});

Deno.test("indexTomlPositions() locates keys and elements inside inline tables and arrays", () => {
  const index = indexTomlPositions(TEXT);
  assert.deepEqual(index.locate(["a", "b", "c d", "y"]), { line: 10, column: 22 });
  assert.deepEqual(index.locate(["a", "b", "c d", "y", 1, "z"]), { line: 10, column: 32 });
  assert.deepEqual(index.locate(["server", "args", 1]), { line: 15, column: 3 });
});

Deno.test("indexTomlPositions() numbers the entries of an array of tables", () => {
  const index = indexTomlPositions(TEXT);
  assert.deepEqual(index.locate(["list", 0]), { line: 18, column: 1 });
  assert.deepEqual(index.locate(["list", 0, "env", "K"]), { line: 21, column: 1 });
  assert.deepEqual(index.locate(["list", 1, "name"]), { line: 24, column: 1 });
  assert.deepEqual(index.locate(["list", 1]), { line: 23, column: 3 });
});

Deno.test("indexTomlPositions() falls back to the longest written prefix", () => {
  const index = indexTomlPositions(TEXT);
  assert.deepEqual(index.locate(["server", "missing"]), { line: 12, column: 2 });
  assert.deepEqual(index.locate(["nowhere"]), { line: 1, column: 1 });
});

Deno.test("indexTomlPositions() counts columns after a CRLF line break from 1", () => {
  const index = indexTomlPositions('a = 1\r\n  b = "x"\r\n');
  assert.deepEqual(index.locate(["b"]), { line: 2, column: 3 });
});

Deno.test("parseTomlDocument() turns a syntax error into the given code with a 1-based position", () => {
  assert.throws(
    () => parseTomlDocument("a = 1\nb = = 2\n", "f.toml", { code: "X_SYNTAX", what: "f" }),
    (e: unknown) => {
      assert.ok(e instanceof UserError);
      assert.equal(e.code, "X_SYNTAX");
      assert.equal(e.location?.file, "f.toml");
      assert.equal(e.location?.line, 2);
      return true;
    },
  );
});

Deno.test("suggestKey() proposes the closest key, or a key the word is a prefix of", () => {
  assert.equal(suggestKey("comand", ["command", "args"]), "command");
  assert.equal(
    suggestKey("restart-stable-reset", ["restart-stable-reset-secs"]),
    "restart-stable-reset-secs",
  );
  assert.equal(suggestKey("zzz", ["command"]), undefined);
});

Deno.test("TomlIndex.locateValue() points at the value after `=`, else where the key is", () => {
  const index = indexTomlPositions('[[mcp_servers]]\n  command =  5\nenv = { A = 1 }\nargs = ["a", 2]\n');
  assert.deepEqual(index.locateValue(["mcp_servers", 0, "command"]), { line: 2, column: 14 });
  assert.deepEqual(index.locateValue(["mcp_servers", 0, "env", "A"]), { line: 3, column: 13 });
  assert.deepEqual(index.locateValue(["mcp_servers", 0, "args", 1]), { line: 4, column: 14 });
  assert.deepEqual(index.locateValue(["mcp_servers", 0]), { line: 1, column: 1 });
});
