import assert from "node:assert/strict";
import {
  ConfigTooDeepError,
  JSONC,
  MAX_CONFIG_NESTING_DEPTH,
  STRICT_JSON,
  TOML,
  YAML,
} from "../../lib/sync/formats/mod.ts";
import { catchError } from "../_fakes_sync.ts";

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

Deno.test("JSONC.read() takes 512 levels and refuses 513 at the first bracket past the budget", () => {
  // The top-level object is one level.
  assert.deepEqual(
    Object.keys(JSONC.read(`{"x": ${nested(MAX_CONFIG_NESTING_DEPTH - 1)}}`, "f.json") as object),
    [
      "x",
    ],
  );
  const error = catchError(() => JSONC.read(`{"x": ${nested(MAX_CONFIG_NESTING_DEPTH)}}`, "f.json"));
  assert.ok(error instanceof ConfigTooDeepError);
  assert.equal(error.code, "SYNC_CONFIG_TOO_DEEP");
  assert.deepEqual(error.location, { file: "f.json", line: 1, column: 6 + MAX_CONFIG_NESTING_DEPTH });
});

Deno.test("JSONC.read() does not count brackets inside strings or comments", () => {
  const text = `{"x": "${"[".repeat(1000)}", // ${"{".repeat(1000)}\n /* ${"[".repeat(1000)} */ "y": 1}`;
  assert.deepEqual({ ...JSONC.read(text, "f.json") as object }, { x: "[".repeat(1000), y: 1 });
  assert.deepEqual({ ...STRICT_JSON.read(`{"x": "${"{".repeat(1000)}"}`, "f.json") as object }, {
    x: "{".repeat(1000),
  });
});

Deno.test("TOML.read() refuses a value nested past the budget, and skips strings and comments", () => {
  const error = catchError(() => TOML.read(`x = ${nested(MAX_CONFIG_NESTING_DEPTH + 1)}\n`, "c.toml"));
  assert.ok(error instanceof ConfigTooDeepError);
  assert.deepEqual(error.location, { file: "c.toml", line: 1, column: 5 + MAX_CONFIG_NESTING_DEPTH });
  const text = `a = "${"[".repeat(600)}"\nb = '''\n${"{".repeat(600)}'''\n# ${"[".repeat(600)}\n`;
  assert.deepEqual(Object.keys(TOML.read(text, "c.toml") as object), ["a", "b"]);
});

Deno.test("YAML.read() refuses flow nesting and indentation past the budget", () => {
  const flow = catchError(() => YAML.read(`x: ${nested(MAX_CONFIG_NESTING_DEPTH + 1)}\n`, "c.yaml"));
  assert.ok(flow instanceof ConfigTooDeepError);
  const indented = catchError(() =>
    YAML.read(`a:\n${" ".repeat(MAX_CONFIG_NESTING_DEPTH + 1)}b: 1\n`, "c.yaml")
  );
  assert.ok(indented instanceof ConfigTooDeepError);
  assert.deepEqual(indented.location, { file: "c.yaml", line: 2, column: MAX_CONFIG_NESTING_DEPTH + 1 });
  assert.deepEqual(YAML.read(`a: "${"[".repeat(600)}"\nb: it's [fine]\n`, "c.yaml"), {
    a: "[".repeat(600),
    b: "it's [fine]",
  });
});
