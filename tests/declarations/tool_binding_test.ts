import assert from "node:assert/strict";
import { UserError } from "../../lib/diagnostics.ts";
import { buildBindingTable, normalizeKey, resolveToolKey } from "../../lib/declarations/tool_binding.ts";

function keys(wireNames: string[]): Array<[string, string, boolean]> {
  return buildBindingTable(wireNames).entries.map((e) => [e.key, e.wire, e.isAlias]);
}

function resolve(wireNames: string[], key: string, server = "srv") {
  return resolveToolKey(buildBindingTable(wireNames), server, key);
}

function assertError(result: ReturnType<typeof resolve>, code: string, message: string): void {
  assert.equal(result.ok, false);
  if (result.ok) return;
  assert.ok(result.error instanceof UserError);
  assert.equal(result.error.code, code);
  assert.equal(result.error.message, message);
}

Deno.test("buildBindingTable() binds an identifier name under itself only", () => {
  assert.deepEqual(keys(["echo", "delete", "$x"]), [["echo", "echo", false], ["delete", "delete", false], [
    "$x",
    "$x",
    false,
  ]]);
});

Deno.test("buildBindingTable() binds a hyphenated name under both spellings, alias right after", () => {
  assert.deepEqual(keys(["get-sum", "echo"]), [
    ["get-sum", "get-sum", false],
    ["get_sum", "get-sum", true],
    ["echo", "echo", false],
  ]);
});

Deno.test("buildBindingTable() never lets an alias shadow a real tool, whatever the order", () => {
  assert.deepEqual(keys(["get-sum", "get_sum"]), [
    ["get-sum", "get-sum", false],
    ["get_sum_2", "get-sum", true],
    ["get_sum", "get_sum", false],
  ]);
});

Deno.test("buildBindingTable() disambiguates colliding aliases with numeric suffixes", () => {
  assert.deepEqual(keys(["a-b", "a.b", "a b", "a_b_2"]).filter(([, , alias]) => alias), [
    ["a_b", "a-b", true],
    ["a_b_3", "a.b", true],
    ["a_b_4", "a b", true],
  ]);
});

Deno.test("buildBindingTable() prefixes an alias that would start with a digit", () => {
  assert.deepEqual(keys(["1st.tool"]), [["1st.tool", "1st.tool", false], ["_1st_tool", "1st.tool", true]]);
  assert.deepEqual(keys([""]), [["", "", false], ["_", "", true]]);
});

Deno.test("buildBindingTable() declares a repeated wire name once", () => {
  assert.deepEqual(keys(["t", "t"]), [["t", "t", false]]);
});

Deno.test("buildBindingTable() aliases a dotted name to its identifier spelling", () => {
  assert.deepEqual(keys(["hosting_restartNode.jsApplicationV1"])[1], [
    "hosting_restartNode_jsApplicationV1",
    "hosting_restartNode.jsApplicationV1",
    true,
  ]);
});

Deno.test("resolveToolKey() resolves each declared spelling to its own tool", () => {
  const wires = ["get-sum", "get_sum"];
  for (const { key, wire } of buildBindingTable(wires).entries) {
    assert.deepEqual(resolve(wires, key), { ok: true, value: wire });
  }
});

Deno.test("resolveToolKey() lets an exact match win over a normalized one", () => {
  assert.deepEqual(resolve(["get-sum", "get_sum"], "get_sum"), { ok: true, value: "get_sum" });
  assert.deepEqual(resolve(["get-sum", "get_sum"], "get_sum_2"), { ok: true, value: "get-sum" });
});

Deno.test("resolveToolKey() reaches a snake-case or kebab-case tool by its camel-case spelling", () => {
  assert.deepEqual(resolve(["create_entities"], "createEntities"), { ok: true, value: "create_entities" });
  assert.deepEqual(resolve(["you-search"], "youSearch"), { ok: true, value: "you-search" });
  assert.deepEqual(resolve(["you-search"], "you_search"), { ok: true, value: "you-search" });
  assert.deepEqual(resolve(["API-post-search"], "apiPostSearch"), { ok: true, value: "API-post-search" });
});

Deno.test("resolveToolKey() ignores punctuation and case together", () => {
  assert.deepEqual(resolve(["create_entities"], "CREATE--entities!"), { ok: true, value: "create_entities" });
  assert.deepEqual(resolve(["hosting_restartNode.jsApplicationV1"], "hostingRestartNodeJsApplicationV1"), {
    ok: true,
    value: "hosting_restartNode.jsApplicationV1",
  });
});

Deno.test("resolveToolKey() refuses a spelling that matches several tools, naming them", () => {
  assertError(
    resolve(["get-sum", "get_sum"], "getSum"),
    "TOOL_AMBIGUOUS",
    "`srv` has more than one tool spelled like `getSum`: get-sum, get_sum. Use one of those names exactly.",
  );
});

Deno.test("resolveToolKey() names the closest tool when nothing matches", () => {
  assertError(
    resolve(["search_nodes", "read_graph"], "serch_nodes"),
    "TOOL_UNKNOWN",
    "`srv` has no tool `serch_nodes`. Closest match: `search_nodes`. Call `list_tools` for the full list.",
  );
  assertError(
    resolve(["read_graph", "read_file"], "readEverything"),
    "TOOL_UNKNOWN",
    "`srv` has no tool `readEverything`. Closest match: `read_file`. Call `list_tools` for the full list.",
  );
});

Deno.test("resolveToolKey() omits the suggestion when no tool is close", () => {
  assertError(
    resolve(["echo"], "zzz"),
    "TOOL_UNKNOWN",
    "`srv` has no tool `zzz`. Call `list_tools` for the full list.",
  );
});

Deno.test("resolveToolKey() says when the server exposes no tools", () => {
  assertError(
    resolve([], "echo"),
    "TOOL_UNKNOWN",
    "`srv` exposes no tools. Call `list_tools` to see what is available.",
  );
});

Deno.test("resolveToolKey() does not resolve a key without alphanumerics", () => {
  assertError(
    resolve(["_"], "-"),
    "TOOL_UNKNOWN",
    "`srv` has no tool `-`. Closest match: `_`. Call `list_tools` for the full list.",
  );
  assert.deepEqual(resolve(["_"], "_"), { ok: true, value: "_" });
});

Deno.test("resolveToolKey() cannot reach a tool absent from the table", () => {
  assert.equal(resolve(["visible"], "hidden_tool").ok, false);
});

Deno.test("resolveToolKey() does not treat prototype names as tools", () => {
  for (const key of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
    assert.equal(resolve(["echo"], key).ok, false);
  }
});

Deno.test("normalizeKey() keeps ASCII letters and digits, lower-cased", () => {
  assert.equal(normalizeKey("Create-Entities_2.x é"), "createentities2x");
});

Deno.test("buildBindingTable() gives tools named then and __proto__ a callable alias that resolves to them", () => {
  const table = buildBindingTable(["then", "__proto__", "echo"]);
  assert.deepEqual(table.entries.filter((e) => e.isAlias).map((e) => [e.key, e.wire]), [
    ["then_", "then"],
    ["__proto___", "__proto__"],
  ]);
  assert.deepEqual(resolveToolKey(table, "srv", "then_"), { ok: true, value: "then" });
});
