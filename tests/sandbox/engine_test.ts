// The QuickJS engine on the test thread: script forms, namespaces, host calls, console, results, limits
// that QuickJS enforces by itself, timers and isolation. Process-level behaviour (hard kill, crashes,
// host event loop) is in sandbox_pool_test.ts.
import assert from "node:assert/strict";
import { barrierHost, failureOf, runInEngine, testEngine, valueOf } from "../_fakes_sandbox.ts";
import { MAX_TOOL_ARGS_BYTES, UNREACHABLE_TOOL_KEYS } from "../../lib/sandbox/mod.ts";

// --- script forms -------------------------------------------------------------------------------------

Deno.test("QuickJSEngine.run() evaluates an expression", async () => {
  assert.equal(valueOf(await runInEngine("1 + 1")), 2);
  assert.deepEqual(valueOf(await runInEngine("{a: 1}")), { a: 1 });
});

Deno.test("QuickJSEngine.run() runs a statement body that returns", async () => {
  assert.equal(valueOf(await runInEngine("const x = 20;\nconst y = 22;\nreturn x + y;")), 42);
});

Deno.test("QuickJSEngine.run() reads a script that starts with a statement keyword as a statement body", async () => {
  assert.equal(valueOf(await runInEngine("// sum\nlet [a, b] = [1, 2]; return a + b")), 3);
  assert.equal(valueOf(await runInEngine("/* x */ if (true) { return 'yes' }")), "yes");
  assert.equal(valueOf(await runInEngine("return$ => 4")), 4); // an identifier, not `return`
});

Deno.test("QuickJSEngine.run() returns undefined, not null, when a statement body returns nothing", async () => {
  const run = await runInEngine("const x = 1; x + 1;");
  assert.equal(run.outcome.ok && run.outcome.valueJson, "undefined");
  assert.equal(valueOf(await runInEngine("return null")), null);
});

Deno.test("QuickJSEngine.run() calls the async arrow function a script evaluates to", async () => {
  assert.equal(valueOf(await runInEngine("async () => { const a = await srv.x(1); return a.args }")), 1);
  assert.equal(valueOf(await runInEngine("async function main() { return 5 }")), 5);
});

Deno.test("QuickJSEngine.run() strips a Markdown fence and export default", async () => {
  assert.equal(valueOf(await runInEngine("```js\nexport default async () => 7;\n```")), 7);
  assert.equal(valueOf(await runInEngine("```typescript\nreturn 8\n```")), 8);
});

Deno.test("QuickJSEngine.run() ignores a shebang line and keeps the script's line numbers", async () => {
  assert.equal(valueOf(await runInEngine("#!/usr/bin/env node\nreturn 6")), 6);
  assert.equal(valueOf(await runInEngine("```js\n#!/usr/bin/env node\nexport default 9\n```")), 9);
  const failure = failureOf(await runInEngine("#!/usr/bin/env node\nconst a = null;\nreturn a.x"));
  assert.match((failure as { message: string }).message, /\(script\.js:3:/);
});

Deno.test("QuickJSEngine.run() runs the one fenced block of a reply with prose around it", async () => {
  const reply = "Here is the script:\n```js\nconst r = await srv.x(2);\nreturn r.args * 2;\n```\nIt doubles.";
  assert.equal(valueOf(await runInEngine(reply)), 4);
  // Fence lines inside a script that compiles are left alone.
  const commented = "const x = 5;\n/*\n```js\nreturn 1\n```\n*/\nreturn x";
  assert.equal(valueOf(await runInEngine(commented)), 5);
  const two = failureOf(await runInEngine("A:\n```js\nreturn 1\n```\nB:\n```js\nreturn 2\n```"));
  assert.equal(two.error, "script_error");
});

Deno.test("QuickJSEngine.run() returns null for an empty script", async () => {
  assert.equal(valueOf(await runInEngine("")), null);
  assert.equal(valueOf(await runInEngine("  \n ")), null);
  assert.equal(valueOf(await runInEngine("```")), null);
});

Deno.test("QuickJSEngine.run() strips TypeScript syntax instead of refusing it", async () => {
  const script = [
    "interface Item { id: number; name?: string }",
    "type Id = number;",
    "const items: Item[] = (await srv.list({})) as Item[];",
    "const ids = items.map((i: Item): Id => i.id!) satisfies number[];",
    "const total = new Map<string, number>([['n', ids.length]]);",
    "return { ids, n: total.get('n') as number };",
  ].join("\n");
  const run = await runInEngine(script, { hostCall: () => Promise.resolve([{ id: 1 }, { id: 2 }]) });
  assert.deepEqual(valueOf(run), { ids: [1, 2], n: 2 });
  assert.equal(valueOf(await runInEngine("async (): Promise<number> => 3")), 3);
});

Deno.test("QuickJSEngine.run() keeps line separators, quotes and template literals intact", async () => {
  const expected = "a\u2028b\u2029c\"d'e`f${1}";
  const js = 'const t = `${"a"}\u2028b\u2029c"d\'e\\`f\\${1}`; return t';
  assert.equal(valueOf(await runInEngine(js)), expected);
  const ts = 'const t: string = `${"a"}\u2028b\u2029c"d\'e\\`f\\${1}`; return t';
  assert.equal(valueOf(await runInEngine(ts)), expected);
});

Deno.test("QuickJSEngine.run() reports a syntax error with its position", async () => {
  const failure = failureOf(await runInEngine("const a = 1;\nconst = 2;\nreturn a"));
  assert.equal(failure.error, "script_error");
  assert.match((failure as { message: string }).message, /^SyntaxError: .* at script\.js:2:7\n/);
  assert.match((failure as { message: string }).message, /did not parse as JavaScript or TypeScript/);
  const atEnd = failureOf(await runInEngine("const a = 1;\nreturn [a, 2"));
  assert.match((atEnd as { message: string }).message, /^SyntaxError: .* at the end of the script\n/);
});

Deno.test("QuickJSEngine.run() hides the wrapper's locals from the script", async () => {
  const names = [
    "native",
    "settle",
    "records",
    "callTool",
    "pending",
    "internals",
    "reserve",
    "main",
    "code",
  ];
  const script = `return [${names.map((n) => `typeof ${n}`).join(", ")}]`;
  assert.deepEqual(valueOf(await runInEngine(script)), names.map(() => "undefined"));
});

// --- namespaces and host calls ------------------------------------------------------------------------

Deno.test("QuickJSEngine.run() gives a namespace a function for any key but then and __proto__", async () => {
  const script =
    "return [typeof srv.anything, typeof srv['create-entities'], typeof srv.then, typeof srv.__proto__, " +
    "typeof srv[Symbol.iterator], (await srv) === srv, await Promise.resolve(srv) === srv]";
  assert.deepEqual(valueOf(await runInEngine(script)), [
    "function",
    "function",
    "undefined",
    "undefined",
    "undefined",
    true,
    true,
  ]);
  assert.deepEqual([...UNREACHABLE_TOOL_KEYS], ["then", "__proto__"]);
});

Deno.test("QuickJSEngine.run() calls tools named like Object.prototype members", async () => {
  const keys = ["constructor", "toString", "valueOf", "toJSON", "inspect", "prototype", "catch", "finally"];
  const run = await runInEngine(
    `const out = []; for (const k of ${
      JSON.stringify(keys)
    }) out.push((await srv[k]({ k })).key); return out`,
  );
  assert.deepEqual(valueOf(run), keys);
  assert.deepEqual(run.calls.map((c) => c.args), keys.map((k) => ({ k })));
});

Deno.test("QuickJSEngine.run() coerces a namespace to a readable string without calling a tool", async () => {
  const run = await runInEngine(
    "console.log(everything); console.log('x', { everything }); return [String(everything), `${everything}`, " +
      "everything + '', JSON.stringify(everything), JSON.stringify({ everything }), " +
      "Object.prototype.toString.call(everything), Object.keys(everything).length]",
    { namespaces: ["everything"] },
  );
  assert.deepEqual(valueOf(run), [
    "[server everything]",
    "[server everything]",
    "[server everything]",
    '"[server everything]"',
    '{"everything":"[server everything]"}',
    "[object server everything]",
    0,
  ]);
  assert.deepEqual(run.console, ["[server everything]", 'x {"everything":"[server everything]"}']);
  assert.deepEqual(run.calls, []);
});

Deno.test("QuickJSEngine.run() sends namespace, key and the first argument as JSON", async () => {
  const run = await runInEngine(
    "await srv['create-entities']({ n: 12345678901234567890n, s: 'ü😀', u: undefined }, 'ignored'); " +
      "await other.ping(); await srv.x(null); await srv.y([1, 'two'])",
    { namespaces: ["srv", "other"] },
  );
  valueOf(run);
  assert.deepEqual(run.calls, [
    { namespace: "srv", key: "create-entities", args: { n: "12345678901234567890", s: "ü😀" } },
    { namespace: "other", key: "ping", args: undefined },
    { namespace: "srv", key: "x", args: null },
    { namespace: "srv", key: "y", args: [1, "two"] },
  ]);
});

Deno.test("QuickJSEngine.run() dispatches 100 pending calls at once under Promise.all", async () => {
  const barrier = barrierHost(100);
  const run = await runInEngine(
    "const r = await Promise.all(Array.from({ length: 100 }, (_, i) => srv.get(i))); return r.length + r[99]",
    { hostCall: barrier.hostCall },
  );
  assert.equal(valueOf(run), 199);
  assert.equal(barrier.maxPending(), 100);
});

Deno.test("QuickJSEngine.run() turns a host rejection into a catchable Error with the host's message", async () => {
  const hostCall = () => Promise.reject(new Error("srv.x did not answer within 60s"));
  const caught = await runInEngine(
    "try { await srv.x() } catch (e) { return [e instanceof Error, e.message] }",
    { hostCall },
  );
  assert.deepEqual(valueOf(caught), [true, "srv.x did not answer within 60s"]);
  const uncaught = failureOf(await runInEngine("await srv.x()", { hostCall }));
  assert.deepEqual(uncaught, { error: "script_error", message: "Error: srv.x did not answer within 60s" });
});

Deno.test("QuickJSEngine.run() rejects the one call whose result is nested too deeply, catchably", async () => {
  const deep = JSON.parse("[".repeat(100_000) + "]".repeat(100_000));
  const run = await runInEngine(
    "const e = await srv.tool().then(() => 'resolved', (e) => e.message);\n" +
      "const next = await srv.other(); return [e, next.key]",
    { hostCall: (req) => Promise.resolve(req.key === "tool" ? deep : { key: req.key }) },
  );
  const [message, next] = valueOf(run) as [string, string];
  assert.match(
    message,
    /^The result of srv\.tool is nested too deeply \(100000 levels\) to pass into the script/,
  );
  assert.equal(next, "other");
  assert.equal(run.outcome.poisoned, false);
  const fits = JSON.parse("[".repeat(1000) + "]".repeat(1000));
  assert.equal(
    valueOf(
      await runInEngine("return JSON.stringify(await srv.x()).length", {
        hostCall: () => Promise.resolve(fits),
      }),
    ),
    2000,
  );
});

Deno.test("QuickJSEngine.run() rejects a call whose arguments exceed MAX_TOOL_ARGS_BYTES without sending it", async () => {
  const run = await runInEngine(
    "const big = 'x'.repeat(8 * 1024 * 1024);\n" +
      "const e = await srv.put({ big }).catch((e) => e.name + ': ' + e.message);\n" +
      "const ok = await srv.put({ small: big.slice(0, 1000) });\nreturn [e, ok.args.small.length]",
  );
  const [message, small] = valueOf(run) as [string, number];
  assert.match(
    message,
    /^RangeError: The arguments of srv\.put\(\) are 8388618 bytes of JSON, more than the 8388608 bytes/,
  );
  assert.equal(small, 1000);
  assert.equal(run.calls.length, 1);
  assert.equal(run.outcome.toolCalls, 1);
  assert.equal(MAX_TOOL_ARGS_BYTES, 8 * 1024 * 1024);
});

Deno.test("QuickJSEngine.run() hands an absent host result back as undefined", async () => {
  const run = await runInEngine("const r = await srv.x(); return r === undefined", {
    hostCall: () => Promise.resolve(undefined),
  });
  assert.equal(valueOf(run), true);
});

Deno.test("QuickJSEngine.run() rejects a call with circular arguments without dispatching it", async () => {
  const run = await runInEngine(
    "const o = {}; o.o = o; try { await srv.x(o) } catch (e) { return e.name }",
  );
  assert.equal(valueOf(run), "TypeError");
  assert.equal(run.calls.length, 0);
});

Deno.test("QuickJSEngine.run() throws a catchable ToolCallLimitError at the call past max-tool-calls", async () => {
  const run = await runInEngine(
    "let n = 0; try { for (;;) { await srv.x(n); n++ } } catch (e) { return [n, e.name, e.message] }",
    { limits: { maxToolCalls: 3 } },
  );
  assert.deepEqual(valueOf(run), [
    3,
    "ToolCallLimitError",
    "This script reached its limit of 3 tool calls (max-tool-calls)",
  ]);
  assert.equal(run.outcome.toolCalls, 3);
});

Deno.test("QuickJSEngine.run() fails with tool_call_limit when the limit error is not caught", async () => {
  const run = await runInEngine("for (let i = 0; i < 10; i++) await srv.x(i)", {
    limits: { maxToolCalls: 4 },
  });
  assert.deepEqual(failureOf(run), { error: "tool_call_limit", limit: 4 });
  assert.equal(run.calls.length, 4);
});

// --- console --------------------------------------------------------------------------------------------

Deno.test("QuickJSEngine.run() captures console levels with their prefixes", async () => {
  const run = await runInEngine(
    "console.log('l'); console.info('i'); console.debug('d'); console.trace('t'); console.warn('w'); " +
      "console.error('e'); return 1",
  );
  assert.deepEqual(run.console, ["l", "i", "d", "t", "[warn] w", "[error] e"]);
});

Deno.test("QuickJSEngine.run() formats console arguments readably", async () => {
  const run = await runInEngine(
    "const c = {}; c.c = c; console.log('s', 1, undefined, null, {a: [1]}, 10n, new TypeError('bad'), " +
      "function named() {}, Symbol('y'), c); console.log()",
  );
  assert.deepEqual(run.console, [
    's 1 undefined null {"a":[1]} 10 TypeError: bad [Function: named] Symbol(y) [object Object]',
    "",
  ]);
});

Deno.test("QuickJSEngine.run() cuts the line that overflows the console budget and drops the rest", async () => {
  // Each line costs its bytes as a JSON string plus one, as the agent reads it: "aaaa" = 7, so 7 bytes are
  // left: "bbbb" (6 as a JSON string) and its separator.
  const run = await runInEngine(
    "console.log('aaaa'); console.log('bbbbbbbbbb'); console.log('€'); console.log('cccc'); " +
      "for (let i = 0; i < 10000; i++) console.log('x'.repeat(100)); return 'done'",
    { limits: { maxConsoleBytes: 14 } },
  );
  assert.equal(valueOf(run), "done");
  assert.deepEqual(run.console, ["aaaa", "bbbb"]);
  assert.equal(run.consoleDropped, true);
  // Dropped: 6 bytes of "bbbbbbbbbb", "€" (6), "cccc" (7) and 10000 lines of 103 bytes.
  assert.deepEqual(run.outcome.consoleDropped, { lines: 10_003, bytes: 6 + 6 + 7 + 10_000 * 103 });
});

Deno.test("QuickJSEngine.run() counts a console line as the agent receives it: quotes and escapes included", async () => {
  const run = await runInEngine("for (let i = 0; i < 1000; i++) console.log('\"'); return 1", {
    limits: { maxConsoleBytes: 100 },
  });
  // Each `"` line is `"\""` (4 bytes) and a separator: 20 lines, not the 50 its raw bytes would allow.
  assert.equal(run.console.length, 20);
  assert.ok(JSON.stringify(run.console).length <= 100 + 2);
});

Deno.test("QuickJSEngine.run() cuts one over-long console line on a character boundary", async () => {
  const run = await runInEngine("console.log('€'.repeat(10_000)); return 1", {
    limits: { maxConsoleBytes: 9 },
  });
  // 8 bytes left for text: two 3-byte characters fit, the third would be split.
  assert.deepEqual(run.console, ["€€"]);
  assert.deepEqual(run.outcome.consoleDropped, { lines: 1, bytes: 30_001 - 7 });
});

// --- results ----------------------------------------------------------------------------------------------

Deno.test("QuickJSEngine.run() serializes values that JSON cannot carry to defined values", async () => {
  const run = await runInEngine(
    "return [undefined, () => 1, Symbol('s'), NaN, new Date(0), new Map([[1, 2]]), { f() {}, u: undefined }]",
  );
  assert.deepEqual(valueOf(run), [null, null, null, null, "1970-01-01T00:00:00.000Z", {}, {}]);
  assert.equal(valueOf(await runInEngine("return undefined")), undefined);
  assert.equal(valueOf(await runInEngine("return () => 1")), 1);
});

Deno.test("QuickJSEngine.run() reports a circular return value as a script error", async () => {
  const failure = failureOf(await runInEngine("const o = { a: 1 }; o.self = o; return o"));
  assert.equal(failure.error, "script_error");
  assert.match(
    (failure as { message: string }).message,
    /^Cannot serialize the return value as JSON: TypeError/,
  );
});

Deno.test("QuickJSEngine.run() gives a slow toJSON of the return value the script's own deadline", async () => {
  // 3e6 iterations take well over the 250 ms the engine allows itself for reading the outcome.
  const run = await runInEngine("return { toJSON() { let i = 0; while (i < 3e6) i++; return i } }", {
    limits: { timeoutMs: 10_000 },
  });
  assert.equal(valueOf(run), 3e6);
});

Deno.test("QuickJSEngine.run() ends an endless toJSON of the return value as script_timeout", async () => {
  const run = await runInEngine("return { toJSON() { for (;;) {} } }", { limits: { timeoutMs: 600 } });
  assert.deepEqual(failureOf(run), { error: "script_timeout", limit_secs: 0.6 });
  const getter = await runInEngine("return { get x() { for (;;) {} } }", { limits: { timeoutMs: 600 } });
  assert.deepEqual(failureOf(getter), { error: "script_timeout", limit_secs: 0.6 });
  const hungry = await runInEngine(
    "return { toJSON() { const a = []; for (;;) a.push(new Uint8Array(1e6)) } }",
  );
  assert.deepEqual(failureOf(hungry), { error: "memory_exhausted", limit_mb: 64 });
});

Deno.test("QuickJSEngine.run() escapes lone surrogates in the result", async () => {
  const run = await runInEngine("return 'a\\ud800b' + '\\udfff'");
  assert.ok(run.outcome.ok);
  assert.equal(run.outcome.valueJson, '"a\\ud800b\\udfff"');
  assert.equal(JSON.parse(run.outcome.valueJson), "a\ud800b\udfff");
});

Deno.test("QuickJSEngine.run() cuts a long result on a character boundary", async () => {
  const run = await runInEngine("return '😀😀😀'", { limits: { maxResultBytes: 10 } });
  assert.ok(run.outcome.ok);
  assert.equal(run.outcome.valueJson, '"😀😀');
  assert.equal(run.outcome.originalBytes, 14);
  assert.equal(run.outcome.truncated, true);
});

Deno.test("QuickJSEngine.run() reports thrown non-Errors readably", async () => {
  assert.deepEqual(failureOf(await runInEngine("throw 'boom'")), {
    error: "script_error",
    message: 'Uncaught "boom"',
  });
  assert.deepEqual(failureOf(await runInEngine("throw { code: 7 }")), {
    error: "script_error",
    message: 'Uncaught {"code":7}',
  });
  assert.deepEqual(failureOf(await runInEngine("throw undefined")), {
    error: "script_error",
    message: "Uncaught undefined",
  });
  assert.deepEqual(failureOf(await runInEngine("throw 12n")), {
    error: "script_error",
    message: "Uncaught 12",
  });
});

Deno.test("QuickJSEngine.run() reports a runtime error with the script's own line numbers", async () => {
  const failure = failureOf(
    await runInEngine("const a = null;\nfunction f() {\n  return a.x;\n}\nreturn f()"),
  );
  assert.equal(failure.error, "script_error");
  assert.match(
    (failure as { message: string }).message,
    /^TypeError: cannot read property 'x' of null\n\s+at f \(script\.js:3:/,
  );
});

// --- deadline, cancellation -----------------------------------------------------------------------------

for (
  const [name, script] of [
    ["a busy loop", "while (true) {}"],
    [
      "a busy loop inside try/catch/finally",
      "try { while (true) {} } catch { return 'caught' } finally { return 'f' }",
    ],
    ["a busy loop after an await", "await 0; while (true) {}"],
    ["a busy loop in a promise job", "await srv.x(1); for (;;) { await null }"],
  ] as const
) {
  Deno.test(`QuickJSEngine.run() ends ${name} at the deadline`, async () => {
    const run = await runInEngine(script, { limits: { timeoutMs: 300 } });
    assert.deepEqual(failureOf(run), { error: "script_timeout", limit_secs: 0.3 });
    assert.ok(run.elapsedMs < 2000, `took ${run.elapsedMs} ms`);
  });
}

Deno.test("QuickJSEngine.run() ends a script waiting on a host call at the deadline", async () => {
  const run = await runInEngine("await srv.never()", {
    limits: { timeoutMs: 300 },
    hostCall: () => new Promise(() => {}),
  });
  assert.deepEqual(failureOf(run), { error: "script_timeout", limit_secs: 0.3 });
  assert.ok(run.elapsedMs >= 250 && run.elapsedMs < 2000, `took ${run.elapsedMs} ms`);
});

Deno.test("QuickJSEngine.run() fails at once when the script awaits a promise nothing can settle", async () => {
  const run = await runInEngine("await new Promise(() => {})", { limits: { timeoutMs: 5000 } });
  const failure = failureOf(run);
  assert.equal(failure.error, "script_error");
  assert.match((failure as { message: string }).message, /nothing can settle/);
  assert.ok(run.elapsedMs < 1000, `took ${run.elapsedMs} ms`);
});

Deno.test("QuickJSEngine.run() stops a busy script when pollStop() asks", async () => {
  let polls = 0;
  const run = await runInEngine("while (true) {}", {
    limits: { timeoutMs: 10_000 },
    pollStop: () => ++polls > 3 ? "cancelled" : undefined,
  });
  assert.deepEqual(failureOf(run), { error: "cancelled" });
});

Deno.test("QuickJSEngine.run() stops a waiting script when its signal aborts", async () => {
  const controller = new AbortController();
  const run = runInEngine("await srv.slow()", {
    limits: { timeoutMs: 10_000 },
    signal: controller.signal,
    hostCall: () => new Promise(() => {}),
  });
  setTimeout(() => controller.abort("cancelled"), 50);
  assert.deepEqual(failureOf(await run), { error: "cancelled" });
});

// --- memory and stack ---------------------------------------------------------------------------------------

for (
  const [name, script] of [
    ["filling typed arrays", "const a = []; while (true) a.push(new Uint8Array(1e6).fill(1))"],
    ["one huge typed array", "return new Float64Array(1e8).length"],
    ["growing an ordinary heap", "const a = []; for (let i = 0;; i++) a.push({ i, s: 'v' + i, l: [i] })"],
    [
      "allocating after an await",
      "await srv.x(1); const a = []; while (true) a.push(new Array(1000).fill('y'))",
    ],
    ["doubling a string", "let s = 'x'; while (true) { s = s + s; s.charCodeAt(1) }"],
  ] as const
) {
  Deno.test(`QuickJSEngine.run() fails with memory_exhausted when ${name}`, async () => {
    // QuickJS 2025-09 leaks objects when memory runs out inside a promise job (after an await), so that
    // run's module may come back poisoned; the pool replaces such a sandbox process, the fake loads a fresh module.
    // A generous deadline: on an idle machine the heap fills in ~2 s, under load it takes longer, and
    // what this test checks is which limit ends the run, not how fast.
    const run = await runInEngine(script, { limits: { timeoutMs: 30_000 } });
    assert.deepEqual(failureOf(run), { error: "memory_exhausted", limit_mb: 64 });
    assert.equal(valueOf(await runInEngine("return [1, 2].length")), 2);
  });
}

Deno.test("QuickJSEngine.run() lets a script catch out-of-memory and return", async () => {
  const run = await runInEngine(
    "let a = []; try { while (true) a.push(new Uint8Array(1e6)) } catch (e) { a = null; return String(e) }",
  );
  assert.equal(valueOf(run), "InternalError: out of memory");
});

Deno.test("QuickJSEngine.run() reports unbounded recursion as a catchable stack overflow", async () => {
  const uncaught = failureOf(await runInEngine("function f() { return f() + 1 }\nreturn f()"));
  assert.equal(uncaught.error, "script_error");
  assert.match((uncaught as { message: string }).message, /^InternalError: stack overflow\n.*\(×\d+\)/);
  const caught = await runInEngine(
    "function f() { return f() + 1 }\ntry { f() } catch (e) { return e.message }",
  );
  assert.equal(valueOf(caught), "stack overflow");
});

// --- isolation ----------------------------------------------------------------------------------------------

Deno.test("QuickJSEngine.run() exposes no host object to the script", async () => {
  const probes = [
    "process",
    "require",
    "fetch",
    "Deno",
    "XMLHttpRequest",
    "WebSocket",
    "std",
    "os",
    "print",
    "module",
  ];
  const run = await runInEngine(
    `return [${probes.map((p) => `typeof ${p}`).join(", ")}, typeof Function('return this')().Deno, ` +
      "typeof console.log.constructor('return this')().process, Object.keys(globalThis).join()]",
  );
  assert.deepEqual(valueOf(run), [...probes.map(() => "undefined"), "undefined", "undefined", "srv"]);
});

Deno.test("QuickJSEngine.run() refuses escape attempts through constructors and imports", async () => {
  const viaConstructor = failureOf(await runInEngine("this.constructor.constructor('return process')()"));
  assert.match((viaConstructor as { message: string }).message, /^ReferenceError: 'process' is not defined/);
  const viaNamespace = failureOf(await runInEngine("srv.x.constructor('return Deno')()"));
  assert.match((viaNamespace as { message: string }).message, /^ReferenceError: 'Deno' is not defined/);
  const viaImport = failureOf(await runInEngine("await import('node:fs')"));
  assert.match((viaImport as { message: string }).message, /could not load module/);
});

Deno.test("QuickJSEngine.run() leaks nothing from one run into the next", async () => {
  valueOf(
    await runInEngine(
      "globalThis.leaked = 1; Object.prototype.polluted = 2; Array.prototype.map = null; JSON.parse = null; " +
        "Promise.prototype.then = null; return 1",
    ),
  );
  const run = await runInEngine(
    "return [typeof leaked, ({}).polluted, [1].map((x) => x + 1), JSON.parse('3')]",
  );
  assert.deepEqual(valueOf(run), ["undefined", null, [2], 3]);
});

Deno.test("QuickJSEngine.prepareNext() prepares a fresh context that serves exactly the next run", async () => {
  const { engine } = await testEngine();
  engine.prepareNext();
  valueOf(await runInEngine("globalThis.leaked = 1; Object.prototype.polluted = 2; return 1"));
  engine.prepareNext();
  engine.prepareNext(); // one is ready already: nothing more is made
  const run = await runInEngine("return [typeof leaked, ({}).polluted, typeof a, typeof b]", {
    namespaces: ["a", "b"],
  });
  assert.deepEqual(valueOf(run), ["undefined", null, "object", "object"]);
  // The run's own limits apply to a prepared context, not those it was prepared under.
  engine.prepareNext();
  const tight = await runInEngine("const a = []; for (;;) a.push(new Array(1000).fill(1))", {
    limits: { memoryLimitBytes: 2 * 1024 * 1024 },
  });
  assert.equal(failureOf(tight).error, "memory_exhausted");
});

Deno.test("QuickJSEngine.run() keeps working when the script patches the built-ins the prelude uses", async () => {
  const run = await runInEngine(
    "JSON.stringify = () => 'x'; JSON.parse = () => 'y'; Promise.prototype.then = null; Error = null; " +
      "const r = await srv.x({ a: 1 }); console.log({ b: 2 }); return r",
  );
  assert.deepEqual(valueOf(run), { ns: "srv", key: "x", args: { a: 1 } });
  assert.deepEqual(run.console, ['{"b":2}']);
});

// --- timers -------------------------------------------------------------------------------------------------

Deno.test("QuickJSEngine.run() offers a setTimeout that fires within the run", async () => {
  const run = await runInEngine(
    "const order = []; setTimeout(() => order.push('b'), 20); setTimeout((x) => order.push(x), 0, 'a'); " +
      "const t = setTimeout(() => order.push('never'), 10); clearTimeout(t); " +
      "await new Promise((r) => setTimeout(r, 40)); return order",
  );
  assert.deepEqual(valueOf(run), ["a", "b"]);
});

Deno.test("QuickJSEngine.run() rejects a string setTimeout callback", async () => {
  const run = await runInEngine("try { setTimeout('1+1', 1) } catch (e) { return e.name }");
  assert.equal(valueOf(run), "TypeError");
});

Deno.test("QuickJSEngine.run() fails when a setTimeout callback throws", async () => {
  const failure = failureOf(
    await runInEngine(
      "setTimeout(() => { throw new Error('in timer') }, 1); await new Promise((r) => setTimeout(r, 50))",
    ),
  );
  assert.equal(failure.error, "script_error");
  assert.match(
    (failure as { message: string }).message,
    /^Uncaught exception in a setTimeout callback: Error: in timer/,
  );
});

// --- unobserved promises ----------------------------------------------------------------------------------

Deno.test("QuickJSEngine.run() warns about tool calls still pending when the script returned", async () => {
  const run = await runInEngine("srv.a(1); srv.a(2); srv.b(); return 'early'", {
    hostCall: () => new Promise(() => {}),
  });
  assert.equal(valueOf(run), "early");
  assert.deepEqual(run.console, [
    "[warn] srv.a() was still pending when the script returned and was cancelled; await every tool call (×2)",
    "[warn] srv.b() was still pending when the script returned and was cancelled; await every tool call",
  ]);
});

Deno.test("QuickJSEngine.run() reports a failed tool call that nothing awaited", async () => {
  const run = await runInEngine(
    "const p = srv.bad(); await new Promise((r) => setTimeout(r, 20)); return 'done'",
    { hostCall: () => Promise.reject(new Error("no such row")) },
  );
  assert.equal(valueOf(run), "done");
  assert.deepEqual(run.console, ["[error] Unhandled promise rejection from srv.bad(): Error: no such row"]);
  const handled = await runInEngine(
    "const p = srv.bad(); await new Promise((r) => setTimeout(r, 20)); return p.then(() => 1, () => 'handled')",
    { hostCall: () => Promise.reject(new Error("no such row")) },
  );
  assert.equal(valueOf(handled), "handled");
  assert.deepEqual(handled.console, []);
});

Deno.test("testEngine() module does not grow past its heap cap", async () => {
  const { module } = await testEngine();
  assert.ok(module.wasmBytes() <= 16 * 1024 * 1024 + module.heapLimitBytes);
});

Deno.test("QuickJSEngine.run() runs the fenced block when the prose before it would parse as JavaScript", async () => {
  // "Here:" is a label and the fence a tagged template: as JavaScript this throws "not a function".
  assert.equal(valueOf(await runInEngine("Here:\n```js\nreturn 1\n```")), 1);
  assert.equal(valueOf(await runInEngine("Code:\n```\nreturn 2\n```\n")), 2);
});
