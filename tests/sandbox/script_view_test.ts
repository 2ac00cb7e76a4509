// What a script sees when things fail, in the in-process engine: tool errors name the
// tool when uncaught, Error subclasses keep their name and toString, undefined is not null, the heap limit
// is met promptly by a huge join, and a flood of calls keeps its tool_call_limit tag.
import assert from "node:assert/strict";
import { failureOf, runInEngine, valueOf } from "../_fakes_sandbox.ts";

const denied = (req: { key: string }) =>
  req.key === "read" ? Promise.reject(new Error("Permission denied: /root")) : Promise.resolve(1);

Deno.test("QuickJSEngine.run() names server.tool in an uncaught tool error and keeps the server's text", async () => {
  assert.deepEqual(failureOf(await runInEngine("await srv.read({ path: '/root' })", { hostCall: denied })), {
    error: "script_error",
    message: "Error from srv.read: Permission denied: /root",
  });
  const caught = await runInEngine("try { await srv.read({}) } catch (e) { return [e.message, e.name] }", {
    hostCall: denied,
  });
  assert.deepEqual(valueOf(caught), ["Permission denied: /root", "Error"]);
});

Deno.test("QuickJSEngine.run() keeps an Error subclass's name and its own toString", async () => {
  const plain = failureOf(await runInEngine("class E2 extends Error {}\nthrow new E2('foo')"));
  assert.equal(plain.error, "script_error");
  assert.match((plain as { message: string }).message, /^E2: foo\n/);
  const custom = failureOf(
    await runInEngine(
      "class E3 extends Error { toString() { return 'E3<' + this.message + '>' } }\nthrow new E3('x')",
    ),
  );
  assert.match((custom as { message: string }).message, /^E3<x>\n/);
  const named = failureOf(await runInEngine("const e = new TypeError('t'); throw e"));
  assert.match((named as { message: string }).message, /^TypeError: t/);
});

Deno.test("QuickJSEngine.run() tells undefined from null in the value", async () => {
  const undef = await runInEngine("return undefined");
  assert.equal(undef.outcome.ok && undef.outcome.valueJson, "undefined");
  const nul = await runInEngine("return null");
  assert.equal(nul.outcome.ok && nul.outcome.valueJson, "null");
});

Deno.test("QuickJSEngine.run() meets the heap limit at once for a join that could never fit", async () => {
  const run = await runInEngine("return new Array(1e9) + ''", { limits: { timeoutMs: 30_000 } });
  assert.deepEqual(failureOf(run), { error: "memory_exhausted", limit_mb: 64 });
  assert.ok(run.elapsedMs < 10_000, `${run.elapsedMs} ms`);
  // Ordinary joins are untouched.
  assert.equal(
    valueOf(await runInEngine("return [1, 2, 3].join('-') + [4, 5] + Array(3).join('ab')")),
    "1-2-34,5abab",
  );
});

Deno.test("QuickJSEngine.run() keeps tool_call_limit as the tag when a script floods calls", async () => {
  const run = await runInEngine("return Promise.all(Array.from({ length: 100_000 }, (_, i) => srv.get(i)))", {
    limits: { timeoutMs: 60_000 },
  });
  assert.deepEqual(failureOf(run), { error: "tool_call_limit", limit: 100 });
  assert.equal(run.calls.length, 100);
});

Deno.test("QuickJSEngine.run() cuts a huge error message or thrown value with a marker", async () => {
  const thrown = failureOf(await runInEngine("throw new Error('m'.repeat(5e6))")) as { message: string };
  assert.ok(thrown.message.length < 5_000, `message is ${thrown.message.length} characters`);
  assert.match(thrown.message, /^Error: m+… \[error message cut: 4995904 more characters\]/);
  const value = failureOf(await runInEngine("throw 'v'.repeat(1e6)")) as { message: string };
  assert.ok(value.message.length < 5_000, `message is ${value.message.length} characters`);
  assert.match(value.message, /error message cut: \d+ more characters/);
});
