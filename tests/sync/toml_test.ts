import assert from "node:assert/strict";
import { ConfigShapeError, ConfigSyntaxError } from "../../lib/sync/formats/config_format.ts";
import { scanTomlHeaders, TOML } from "../../lib/sync/formats/toml_format.ts";
import { catchError } from "../_fakes_sync.ts";

const at = { containerPath: ["mcp_servers"], name: "symposium" };
const entry = { command: "/bin/ca", args: ["mcp-serve"] };
const block = '[mcp_servers.symposium]\ncommand = "/bin/ca"\nargs = ["mcp-serve"]\n';

Deno.test("scanTomlHeaders() ignores brackets inside strings, multi-line strings and arrays", () => {
  const text = [
    'a = "[x]"',
    "b = [",
    '  ["nested"],',
    "]",
    's = """',
    "[not.a.header]",
    '"""',
    '[ real . "quoted.key" ] # comment',
    "[[arr]]",
    "",
  ].join("\n");
  const headers = scanTomlHeaders(text);
  assert.deepEqual(headers.map((h) => [h.keys, h.isArray]), [[["real", "quoted.key"], false], [
    ["arr"],
    true,
  ]]);
});

Deno.test("scanTomlHeaders() ends a block before its trailing blank and comment lines", () => {
  const text = "[a]\nx = 1\n\n# about b\n[b]\n";
  const [a] = scanTomlHeaders(text);
  assert.equal(text.slice(a!.lineStart, a!.blockEnd), "[a]\nx = 1\n");
});

Deno.test("TOML.setEntry() inserts the table after the last [mcp_servers.*] table", () => {
  const text = '[mcp_servers.a]\ncommand = "a"\n\n# next\n[other]\nk = 1\n';
  const after = TOML.setEntry(text, at, entry, "c.toml");
  assert.equal(after, `[mcp_servers.a]\ncommand = "a"\n\n${block}\n# next\n[other]\nk = 1\n`);
  assert.equal(TOML.removeEntry(after, at, "c.toml"), text);
});

Deno.test("TOML.setEntry() keeps the header line and its comment when replacing a stale table", () => {
  const text = '[mcp_servers.symposium] # ours\ncommand = "old"\n[mcp_servers.symposium.env]\nX = "1"\n';
  assert.equal(
    TOML.setEntry(text, at, entry, "c.toml"),
    '[mcp_servers.symposium] # ours\ncommand = "/bin/ca"\nargs = ["mcp-serve"]\n',
  );
});

Deno.test("TOML.setEntry() keeps CRLF line endings", () => {
  const after = TOML.setEntry('model = "x"\r\n', at, entry, "c.toml");
  assert.equal(after, 'model = "x"\r\n\r\n' + block.replaceAll("\n", "\r\n"));
});

Deno.test("TOML.setEntry() escapes what a TOML basic string needs", () => {
  const after = TOML.setEntry("", at, { command: 'C:\\Program Files\\"ca"', args: ["\x7f"] }, "c.toml");
  assert.equal(
    after,
    '[mcp_servers.symposium]\ncommand = "C:\\\\Program Files\\\\\\"ca\\""\nargs = ["\\u007f"]\n',
  );
});

Deno.test("TOML.setEntry() returns the same string when the table is equal", () => {
  assert.equal(TOML.setEntry(block, at, entry, "c.toml"), block);
});

Deno.test("TOML.setEntry() reports a syntax error with smol-toml's 1-based line and column", () => {
  const error = catchError(() => TOML.setEntry("a = 1\nb = \n", at, entry, "c.toml"));
  assert.ok(error instanceof ConfigSyntaxError);
  assert.equal(error.code, "SYNC_CONFIG_SYNTAX");
  assert.equal(error.message, 'Cannot read "c.toml": invalid TOML: invalid value');
  assert.deepEqual(error.location, { file: "c.toml", line: 2, column: 5 });
});

Deno.test("TOML.setEntry() refuses a duplicate [mcp_servers.symposium] table (Codex would not load it)", () => {
  const error = catchError(() => TOML.setEntry(block + block, at, entry, "c.toml"));
  assert.ok(error instanceof ConfigSyntaxError);
  assert.equal(error.location?.line, 4);
});

Deno.test("TOML.setEntry() refuses an entry written as an inline table, pointing at it", () => {
  const text = '[mcp_servers]\nsymposium = { command = "x" }\n';
  const error = catchError(() => TOML.setEntry(text, at, entry, "c.toml"));
  assert.ok(error instanceof ConfigShapeError);
  assert.equal(error.code, "SYNC_CONFIG_SHAPE");
  assert.deepEqual(error.location, { file: "c.toml", line: 2, column: 1 });
  assert.throws(() => TOML.removeEntry(text, at, "c.toml"), ConfigShapeError);
});

Deno.test("TOML.setEntry() refuses to extend an inline [mcp_servers] table instead of breaking the file", () => {
  const error = catchError(() =>
    TOML.setEntry('mcp_servers = { a = { command = "x" } }\n', at, entry, "c.toml")
  );
  assert.ok(error instanceof ConfigShapeError);
  assert.match(error.message, /cannot extend safely/);
  assert.deepEqual(error.location, { file: "c.toml", line: 1, column: 1 });
});

Deno.test("TOML.setEntry() says what a non-table [mcp_servers] is, with its position", () => {
  const text = 'model = "o3"\nmcp_servers = "oops"\n';
  const error = catchError(() => TOML.setEntry(text, at, entry, "c.toml"));
  assert.ok(error instanceof ConfigShapeError);
  assert.equal(error.message, 'Cannot edit "c.toml": "mcp_servers" is a string, expected a table');
  assert.deepEqual(error.location, { file: "c.toml", line: 2, column: 15 });
  assert.match(error.hint ?? "", /replace it with a \[mcp_servers\] table/);
  const array = catchError(() => TOML.setEntry("mcp_servers = [1]\n", at, entry, "c.toml"));
  assert.match((array as Error).message, /"mcp_servers" is an array, expected a table/);
});

Deno.test("TOML.setEntry() extends [mcp_servers] written with dotted keys", () => {
  const text = 'mcp_servers.a.command = "x"\n';
  const after = TOML.setEntry(text, at, entry, "c.toml");
  assert.equal(after, `${text}\n${block}`);
});

Deno.test("TOML.removeEntry() takes out the table and its sub-tables only", () => {
  const text =
    'm = 1\n\n[mcp_servers.symposium]\ncommand = "x"\n\n[mcp_servers.symposium.env]\nA = "b"\n\n[z]\nq = 2\n';
  assert.equal(TOML.removeEntry(text, at, "c.toml"), "m = 1\n\n[z]\nq = 2\n");
  assert.equal(TOML.removeEntry("m = 1\n", at, "c.toml"), "m = 1\n");
});
