import assert from "node:assert/strict";
import {
  encodeHeaderValue,
  MAX_PARAM_HEADER_BYTES,
  paramHeaders,
  scanParamHeaders,
} from "../../lib/backends/_param_headers.ts";

Deno.test("scanParamHeaders() keeps valid x-mcp-header marks, nested through properties only", () => {
  const scan = scanParamHeaders({
    type: "object",
    properties: {
      region: { type: "string", "x-mcp-header": "Region" },
      opts: { type: "object", properties: { dry: { type: "boolean", "x-mcp-header": "Dry" } } },
      query: { type: "string" },
    },
  });
  assert.deepEqual(scan, {
    valid: true,
    headers: [{ name: "Region", path: ["region"] }, { name: "Dry", path: ["opts", "dry"] }],
  });
});

Deno.test("scanParamHeaders() refuses each mark the spec forbids, saying why", () => {
  const one = (property: Record<string, unknown>) =>
    scanParamHeaders({ type: "object", properties: { p: property } });
  const refused = [
    one({ type: "string", "x-mcp-header": "" }),
    one({ type: "string", "x-mcp-header": "My Region" }),
    one({ type: "string", "x-mcp-header": "Région" }),
    one({ type: "number", "x-mcp-header": "Score" }),
    one({ type: "object", "x-mcp-header": "Data" }),
    scanParamHeaders({
      type: "object",
      properties: { a: { type: "string", "x-mcp-header": "X" }, b: { type: "string", "x-mcp-header": "x" } },
    }),
    scanParamHeaders({ type: "object", items: { type: "string", "x-mcp-header": "Hidden" } }),
    scanParamHeaders({ anyOf: [{ properties: { a: { type: "string", "x-mcp-header": "A" } } }] }),
  ];
  for (const scan of refused) {
    assert.equal(scan.valid, false, JSON.stringify(scan));
    if (!scan.valid) assert.match(scan.reason, /x-mcp-header/);
  }
});

Deno.test("paramHeaders() encodes values by the spec: plain ASCII as-is, the rest base64, null omitted", () => {
  const marks = [
    { name: "Region", path: ["region"] },
    { name: "Priority", path: ["priority"] },
    { name: "Verbose", path: ["verbose"] },
    { name: "Greeting", path: ["greeting"] },
    { name: "Missing", path: ["missing"] },
  ];
  assert.deepEqual(
    paramHeaders(marks, { region: "us-west1", priority: 42, verbose: null, greeting: "Hello, 世界" }),
    {
      "Mcp-Param-Region": "us-west1",
      "Mcp-Param-Priority": "42",
      "Mcp-Param-Greeting": "=?base64?SGVsbG8sIOS4lueVjA==?=",
    },
  );
  assert.equal(encodeHeaderValue(" padded "), "=?base64?IHBhZGRlZCA=?=");
  assert.equal(encodeHeaderValue("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
  assert.equal(encodeHeaderValue("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
  assert.equal(encodeHeaderValue("us west 1"), "us west 1");
  assert.equal(encodeHeaderValue("true"), "true");
  assert.throws(
    () => paramHeaders(marks, { region: "x".repeat(MAX_PARAM_HEADER_BYTES + 1) }),
    /Mcp-Param-Region.*MAX_PARAM_HEADER_BYTES/,
  );
});
