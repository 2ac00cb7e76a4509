import assert from "node:assert/strict";
import { expandVars } from "../../lib/plugins/expand_vars.ts";

Deno.test("expandVars() replaces ${VAR} with its value", () => {
  assert.deepEqual(expandVars("Bearer ${TOKEN}", { TOKEN: "abc" }), { ok: true, value: "Bearer abc" });
});

Deno.test("expandVars() replaces several references and keeps the text around them", () => {
  assert.deepEqual(expandVars("https://${HOST}:${PORT}/mcp", { HOST: "h", PORT: "1" }), {
    ok: true,
    value: "https://h:1/mcp",
  });
});

Deno.test("expandVars() uses the default when the variable is unset", () => {
  assert.deepEqual(expandVars("${HOST:-localhost}", {}), { ok: true, value: "localhost" });
});

Deno.test("expandVars() keeps an empty value when the variable is set but empty", () => {
  assert.deepEqual(expandVars("[${EMPTY:-fallback}]", { EMPTY: "" }), { ok: true, value: "[]" });
  assert.deepEqual(expandVars("[${EMPTY}]", { EMPTY: "" }), { ok: true, value: "[]" });
});

Deno.test("expandVars() allows an empty default", () => {
  assert.deepEqual(expandVars("a${X:-}b", {}), { ok: true, value: "ab" });
});

Deno.test("expandVars() names the first unset variable without a default", () => {
  assert.deepEqual(expandVars("${A}${B}", { B: "b" }), { ok: false, error: { variable: "A" } });
});

Deno.test("expandVars() leaves an unterminated ${ as it is", () => {
  assert.deepEqual(expandVars("x ${TOKEN", { TOKEN: "t" }), { ok: true, value: "x ${TOKEN" });
});

Deno.test("expandVars() has no $VAR form", () => {
  assert.deepEqual(expandVars("$TOKEN and $$", { TOKEN: "t" }), { ok: true, value: "$TOKEN and $$" });
});

Deno.test("expandVars() does not nest: the first } ends a reference", () => {
  assert.deepEqual(expandVars("${A:-${B}}", {}), { ok: true, value: "${B}" });
});

Deno.test("expandVars() does not expand inside an expanded value", () => {
  assert.deepEqual(expandVars("${A}", { A: "${B}", B: "no" }), { ok: true, value: "${B}" });
});

Deno.test("expandVars() does not read inherited object properties as variables", () => {
  assert.deepEqual(expandVars("${toString}", {}), { ok: false, error: { variable: "toString" } });
});
