import assert from "node:assert/strict";
import { ConfigShapeError, ConfigSyntaxError } from "../../lib/sync/formats/config_format.ts";
import { YAML } from "../../lib/sync/formats/yaml_format.ts";
import { catchError } from "../_fakes_sync.ts";

const at = { containerPath: ["extensions"], name: "symposium" };
const entry = { cmd: "/bin/ca", args: ["mcp-serve"] };

Deno.test("YAML.setEntry() appends the entry after the last extension at its indentation", () => {
  const text = "extensions:\n    dev:\n        enabled: true\n# tail\nother: 1\n";
  const after = YAML.setEntry(text, at, entry, "c.yaml");
  assert.equal(
    after,
    "extensions:\n    dev:\n        enabled: true\n    symposium:\n        cmd: /bin/ca\n        args:\n" +
      "            - mcp-serve\n# tail\nother: 1\n",
  );
  assert.equal(YAML.removeEntry(after, at, "c.yaml"), text);
});

Deno.test("YAML.setEntry() writes sequences flush with their key when the file does (serde_yaml style)", () => {
  const text = "extensions:\n  dev:\n    args:\n    - x\n";
  assert.ok(
    YAML.setEntry(text, at, entry, "c.yaml").endsWith(
      "  symposium:\n    cmd: /bin/ca\n    args:\n    - mcp-serve\n",
    ),
  );
});

Deno.test("YAML.setEntry() quotes values YAML would misread and never folds long ones", () => {
  const long = "/x".repeat(60);
  const after = YAML.setEntry("", at, { cmd: "a: b", args: ["#c", long] }, "c.yaml");
  assert.equal(
    after,
    `extensions:\n  symposium:\n    cmd: "a: b"\n    args:\n      - "#c"\n      - ${long}\n`,
  );
});

Deno.test("YAML.setEntry() fills an empty `extensions:` and keeps the line's comment", () => {
  const after = YAML.setEntry("extensions: {}  # none\nx: 1\n", at, { cmd: "c" }, "c.yaml");
  assert.equal(after, "extensions:  # none\n  symposium:\n    cmd: c\nx: 1\n");
});

Deno.test("YAML.setEntry() keeps CRLF line endings", () => {
  const after = YAML.setEntry("a: 1\r\n", at, { cmd: "c" }, "c.yaml");
  assert.equal(after, "a: 1\r\nextensions:\r\n  symposium:\r\n    cmd: c\r\n");
});

Deno.test("YAML.setEntry() replaces only the stale entry's lines", () => {
  const text = "extensions:\n  # ours\n  symposium:\n    cmd: old   # old\n  dev:\n    enabled: true\n";
  assert.equal(
    YAML.setEntry(text, at, { cmd: "c" }, "c.yaml"),
    "extensions:\n  # ours\n  symposium:\n    cmd: c\n  dev:\n    enabled: true\n",
  );
});

Deno.test("YAML.removeEntry() drops `extensions:` when nothing else is left in it", () => {
  assert.equal(
    YAML.removeEntry("a: 1\nextensions:\n  symposium:\n    cmd: c\nb: 2\n", at, "c.yaml"),
    "a: 1\nb: 2\n",
  );
});

Deno.test("YAML.setEntry() reports a syntax error with a 1-based line and column", () => {
  const error = catchError(() => YAML.setEntry("a: [1,\nb: 2\n", at, entry, "c.yaml"));
  assert.ok(error instanceof ConfigSyntaxError);
  assert.equal(error.code, "SYNC_CONFIG_SYNTAX");
  assert.deepEqual(error.location, { file: "c.yaml", line: 2, column: 1 });
});

Deno.test("YAML.setEntry() refuses extensions written as a sequence or a flow mapping", () => {
  for (const text of ["extensions: [a]\n", "extensions: {a: 1}\n"]) {
    const error = catchError(() => YAML.setEntry(text, at, entry, "c.yaml"));
    assert.ok(error instanceof ConfigShapeError, text);
    assert.deepEqual(error.location, { file: "c.yaml", line: 1, column: 13 });
  }
});

Deno.test("YAML.read() refuses a document whose top level is not a mapping", () => {
  assert.throws(() => YAML.read("- a\n", "c.yaml"), ConfigShapeError);
  assert.deepEqual(YAML.read("# only a comment\n", "c.yaml"), {});
});
