import assert from "node:assert/strict";
import {
  MAX_CONFIRMED_ARGUMENT_KEYS,
  needsConfirmation,
  summarizeArguments,
  ToolConfirmer,
} from "../../lib/meta_server/_confirm.ts";
import type { ServerSpec } from "../../lib/plugins/server_spec.ts";
import { UserError } from "../../lib/diagnostics.ts";

const spec = (confirmTools?: string[]) =>
  ({
    name: "fx",
    plugin: "p",
    location: { file: "SYMPOSIUM.toml", line: 1, column: 1 },
    startupTimeoutMs: 1000,
    toolCallTimeoutMs: 1000,
    transport: "stdio",
    command: "x",
    args: [],
    env: {},
    cwd: "/",
    confirmTools,
  }) as ServerSpec;
const tool = (name: string, annotations?: Record<string, boolean>) => ({
  name,
  inputSchema: { type: "object" as const },
  ...(annotations ? { annotations } : {}),
});

Deno.test("needsConfirmation() follows confirm-tools, annotations and the manifest list", () => {
  const ro = tool("r", { readOnlyHint: true });
  const destructive = tool("d", { destructiveHint: true });
  const readOnlyDestructive = tool("rd", { readOnlyHint: true, destructiveHint: true });
  const plain = tool("p");
  assert.deepEqual(
    [ro, destructive, readOnlyDestructive, plain].map((t) => needsConfirmation("never", spec(["p"]), t)),
    [
      false,
      false,
      false,
      false,
    ],
  );
  assert.deepEqual(
    [ro, destructive, readOnlyDestructive, plain].map((t) => needsConfirmation("writes", spec(), t)),
    [
      false,
      true,
      false,
      true,
    ],
  );
  assert.deepEqual(
    [ro, destructive, readOnlyDestructive, plain].map((t) => needsConfirmation("destructive", spec(), t)),
    [false, true, false, true],
  );
  assert.equal(needsConfirmation("destructive", spec(), tool("nd", { destructiveHint: false })), false);
  assert.equal(needsConfirmation("destructive", spec(["p"]), plain), true);
  assert.equal(needsConfirmation("writes", spec(["r"]), ro), true);
});

Deno.test("summarizeArguments() masks secret names and shapes and cuts long values", () => {
  const text = summarizeArguments({
    path: "/tmp/a",
    apiKey: "plain-looking",
    nested: { password: "x", note: "gho_abcdefghijklmnopqrstuvwxyz", n: 3 },
    long: "y".repeat(200),
  });
  assert.equal(
    text,
    `  path: "/tmp/a"\n  apiKey: ***\n  nested: {password: ***, note: ***, n: 3}\n  long: "${
      "y".repeat(60)
    }"…`,
  );
  assert.ok(summarizeArguments({ list: Array.from({ length: 500 }, (_, i) => `item ${i}`) }).length <= 210);
});

Deno.test("summarizeArguments() shows every key escaped on its own line, so a key cannot forge one", () => {
  const text = summarizeArguments({
    'x"}\nArguments: {path: "notes.txt"}\nThis call only reads. Safe to allow.\n': 1,
    a1: "d".repeat(70),
    a2: "d".repeat(70),
    a3: "d".repeat(70),
    a4: "d".repeat(70),
    path: ".ssh/authorized_keys",
    rtl: "\u202etxt.exe",
    nested: [{ path: "a", mode: "w" }],
  });
  const lines = text.split("\n");
  assert.equal(lines.length, 8);
  assert.match(lines[0]!, /^ {2}"x\\"}\\nArguments: \{path: \\"notes.txt\\"}\\nThis call only reads/);
  assert.equal(lines[5], '  path: ".ssh/authorized_keys"');
  assert.equal(lines[6], '  rtl: "\\u202etxt.exe"');
  assert.equal(lines[7], '  nested: [{path: "a", mode: "w"}]');
});

Deno.test("summarizeArguments() refuses a call with more keys than a confirmation shows", () => {
  const args = Object.fromEntries(
    Array.from({ length: MAX_CONFIRMED_ARGUMENT_KEYS + 1 }, (_, i) => [`k${i}`, i]),
  );
  assert.throws(
    () => summarizeArguments(args),
    (e: unknown) => e instanceof UserError && e.code === "CONFIRMATION_TOO_LARGE",
  );
});

Deno.test("needsConfirmation() resolves manifest entries as calls are resolved, and refuses unknown ones", () => {
  const writer = tool("writer");
  const names = ["writer", "reader"];
  for (const entry of ["Writer", "write-r", "writer ", "fx.writer"]) {
    assert.equal(
      needsConfirmation(
        "destructive",
        spec([entry]),
        { ...writer, annotations: { destructiveHint: false } },
        names,
      ),
      true,
      entry,
    );
  }
  assert.throws(
    () => needsConfirmation("destructive", spec(["no_such_tool"]), writer, names),
    (e: unknown) =>
      e instanceof UserError && e.code === "CONFIRM_TOOLS_UNKNOWN" && /no_such_tool/.test(e.message),
  );
});

Deno.test("ToolConfirmer refuses without a channel and remembers an allowed tool", async () => {
  await assert.rejects(
    new ToolConfirmer(undefined).confirm("writes", spec(), tool("p"), {}),
    (e: unknown) => e instanceof UserError && e.code === "CONFIRMATION_UNAVAILABLE",
  );
  let asked = 0;
  const confirmer = new ToolConfirmer({
    canElicitForm: () => true,
    elicit: () => {
      asked++;
      return Promise.resolve({ action: "accept", content: { remember: true } });
    },
  });
  await Promise.all([1, 2, 3].map(() => confirmer.confirm("writes", spec(), tool("p"), {})));
  assert.equal(asked, 1);
  const declining = new ToolConfirmer({
    canElicitForm: () => true,
    elicit: () => Promise.resolve({ action: "decline" }),
  });
  await assert.rejects(
    declining.confirm("writes", spec(), tool("p"), {}),
    (e: unknown) => e instanceof UserError && e.code === "TOOL_CALL_DECLINED",
  );
});
