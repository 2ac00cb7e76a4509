// The prelude's parts compiled on first need (tool calls, timers, reports): each still works when the
// script patched, replaced or deleted the built-ins before the part was loaded, since a part reads only
// what the core captured before the script ran.
import assert from "node:assert/strict";
import { failureOf, runInEngine, testEngine, valueOf } from "../_fakes_sandbox.ts";
import { compactSource } from "../../lib/sandbox/guest/_prelude.ts";
import { PreparedContext } from "../../lib/sandbox/guest/_prepared_context.ts";

/** Replaces the built-ins a part would otherwise reach for with values that throw or lie. */
const PATCH_EVERYTHING = [
  "Object.defineProperty(Error, Symbol.hasInstance, { value: () => { throw new Error('patched') } });",
  "Object.defineProperty(Array.prototype, '0', { set() { throw new Error('patched') }, configurable: true });",
  "JSON.stringify = () => 'patched'; JSON.parse = () => 'patched';",
  "Object.create = null; Object.freeze = null; Object.defineProperty = null;",
  "Reflect.apply = null; Map.prototype.set = null; WeakMap.prototype.get = WeakMap.prototype.set = null;",
  "Object.prototype.toJSON = () => 'patched'; Array.prototype.toJSON = () => 'patched';",
  "String.prototype.slice = null; Array.prototype.push = null;",
  "Function.prototype.call = Function.prototype.apply = Function.prototype.bind = () => 'patched';",
].join("\n");

/** Deletes the globals a part would otherwise look up. */
const DELETE_GLOBALS =
  "const Pending = Promise; for (const name of ['Object', 'JSON', 'Reflect', 'Symbol', 'Promise', 'Error', 'TypeError', " +
  "'RangeError', 'Array', 'String', 'WeakMap', 'Map', 'Function', 'Proxy']) delete globalThis[name];";

Deno.test("a script that patches the built-ins before throwing still gets its error described", async () => {
  const failure = failureOf(await runInEngine(`${PATCH_EVERYTHING}\nthrow new TypeError("bad input")`));
  assert.equal(failure.error, "script_error");
  assert.match((failure as { message: string }).message, /^TypeError: bad input\n.*script\.js:9:/);
  const subclass = failureOf(
    await runInEngine(`class NotFound extends Error {}\n${PATCH_EVERYTHING}\nthrow new NotFound("gone")`),
  );
  assert.match((subclass as { message: string }).message, /^NotFound: gone/);
  const value = failureOf(await runInEngine(`${PATCH_EVERYTHING}\nthrow { code: 7 }`));
  assert.match((value as { message: string }).message, /^Uncaught /);
});

Deno.test("a failed tool call is named in its uncaught error after the script patched the built-ins", async () => {
  const failure = failureOf(
    await runInEngine(`${PATCH_EVERYTHING}\nawait srv.lookup({ id: 1 })`, {
      hostCall: () => Promise.reject(new Error("no such row")),
    }),
  );
  assert.match((failure as { message: string }).message, /^Error from srv\.lookup: no such row/);
});

Deno.test("every part loads and works after the script deleted the globals", async () => {
  const run = await runInEngine(
    `${DELETE_GLOBALS}\n` +
      "console.log({ a: 1 }, [2], srv);\n" +
      "const r = await srv.echo({ b: 2 });\n" +
      "const listed = await srv.$resources.list();\n" +
      "const found = await symposium.search('q', { limit: 2 });\n" +
      "await new Pending((resolve) => setTimeout(resolve, 1));\n" +
      "srv.unwatched();\n" +
      "return [r.args, listed.key, found.args, `${srv}`, typeof globalThis.Object]",
    {
      hostCall: (req) =>
        req.key === "unwatched" ? Promise.reject(new Error("nobody looks")) : Promise.resolve(req),
    },
  );
  assert.deepEqual(valueOf(run), [
    { b: 2 },
    "$resources.list",
    { query: "q", limit: 2 },
    "[server srv]",
    "undefined",
  ]);
  assert.equal(run.console[0], '{"a":1} [2] [server srv]');
  assert.deepEqual(run.console.slice(1), [
    "[warn] srv.unwatched() was still pending when the script returned and was cancelled; await every tool call",
  ]);
});

Deno.test("an unhandled rejection is reported after the script patched toJSON and the array setters", async () => {
  const run = await runInEngine(
    `${PATCH_EVERYTHING}\nsrv.bad(); Promise.reject(new RangeError("late")); ` +
      "await new Promise((r) => setTimeout(r, 10)); return 'done'",
    { hostCall: () => Promise.reject(new Error("no such row")) },
  );
  assert.equal(valueOf(run), "done");
  assert.deepEqual(run.console, [
    "[error] Unhandled promise rejection from srv.bad(): Error: no such row",
    "[error] Unhandled promise rejection: RangeError: late",
  ]);
});

Deno.test("a syntax error deep in a statement script is still reported with its position", async () => {
  // The expression form fails first without the describe part; the statement body's error is shown.
  const failure = failureOf(await runInEngine("x = 1;\nreturn x +;"));
  assert.match((failure as { message: string }).message, /^SyntaxError: .* at script\.js:2:/);
});

Deno.test("compactSource() drops comment lines, indentation and blank lines but keeps line breaks", () => {
  assert.equal(
    compactSource("(function () {\n  // note\n\n  const a = 1;\n    return a;\n})"),
    "(function () {\nconst a = 1;\nreturn a;\n})",
  );
});

Deno.test("PreparedContext.preload() compiles a part before any script, once", async () => {
  const { module } = await testEngine();
  const vessel = new PreparedContext(module);
  try {
    assert.deepEqual([...vessel.loadedParts], []);
    vessel.preload(0);
    vessel.preload(0);
    assert.deepEqual([...vessel.loadedParts], [0]);
  } finally {
    vessel.dispose();
  }
});

Deno.test("the next run's vessel has the parts the last run used, and its script still gets a fresh context", async () => {
  const { engine } = await testEngine();
  valueOf(await runInEngine("globalThis.leaked = await srv.x(1); console.log({ a: 1 }); return 1"));
  engine.prepareNext();
  const run = await runInEngine(
    `${PATCH_EVERYTHING}\nconsole.log("b");\nconst r = await srv.y(2);\nreturn \`\${typeof leaked} \${r.args}\``,
  );
  assert.equal(valueOf(run), "undefined 2");
  assert.deepEqual(run.console, ["b"]);
});

Deno.test("the host's errors for a refused call are made without running the script's Error.prototype setters", async () => {
  // A setter that calls again re-entered the host while it built the error, without end (a host-side stack
  // overflow); a setter that swallows the value left the error without its name and message.
  const run = await runInEngine(
    "let n = 0;\n" +
      "for (const key of ['name', 'message']) Object.defineProperty(Error.prototype, key, " +
      "{ set(v) { n++; srv.again(n) }, get() { return 'patched' }, configurable: true });\n" +
      "const seen = [];\n" +
      "try { await srv.x('x'.repeat(9 * 1024 * 1024)) } catch (e) { seen.push(e.name) }\n" +
      "for (let i = 0; i < 4; i++) { try { await srv.x(i) } catch (e) { seen.push(`${e.name}: ${e.message}`) } }\n" +
      "return [n, seen]",
    { limits: { maxToolCalls: 3 } },
  );
  assert.deepEqual(valueOf(run), [0, [
    "RangeError",
    "ToolCallLimitError: This script reached its limit of 3 tool calls (max-tool-calls)",
  ]]);
});

Deno.test("the host's errors are made without reading the script's Object.prototype descriptor keys", async () => {
  // Defining a property reads its descriptor's `enumerable`, `get`, …: from Object.prototype unless the
  // descriptor has none.
  const run = await runInEngine(
    "let n = 0;\n" +
      "Object.defineProperty(Object.prototype, 'enumerable', { get() { n++; srv.again(n); return false }, configurable: true });\n" +
      "Object.prototype.get = function () { return 'patched' };\n" +
      "const seen = [];\n" +
      "try { await srv.x('x'.repeat(9 * 1024 * 1024)) } catch (e) { seen.push(e.name) }\n" +
      "for (let i = 0; i < 4; i++) { try { await srv.x(i) } catch (e) { seen.push(`${e.name}: ${e.message}`) } }\n" +
      "delete Object.prototype.get; delete Object.prototype.enumerable;\n" +
      "return [n, seen]",
    { limits: { maxToolCalls: 3 } },
  );
  assert.deepEqual(valueOf(run), [0, [
    "RangeError",
    "ToolCallLimitError: This script reached its limit of 3 tool calls (max-tool-calls)",
  ]]);
});

Deno.test("a part needed when the script filled the heap fails as out of memory, and the next run is sound", async () => {
  // quickjs-emscripten copies a part's source into the heap with an unchecked malloc: when the heap was full,
  // the part was written over address 0, and the engine failed then or in every later run.
  const fill = "const keep = []; try { while (true) keep.push(new Array(32).fill(0)) } catch (e) {}\n";
  for (
    const use of [
      "Promise.reject(1).catch(() => {})",
      "srv.x(1)",
      "setTimeout(() => {}, 1)",
      "console.log({ a: 1 })",
    ]
  ) {
    // Filling the heap takes ~1 s alone; a generous deadline keeps a loaded machine from ending it first.
    const run = await runInEngine(
      `${fill}let failed = 0;\nfor (let i = 0; i < 3; i++) { try { ${use}; break } catch (e) { failed++ } }\n` +
        "keep.length = 0; return failed",
      { limits: { timeoutMs: 20_000 } },
    );
    assert.equal(run.outcome.poisoned, false, use);
    assert.ok(run.outcome.ok, `${use}: ${JSON.stringify(run.outcome)}`);
    assert.deepEqual(
      valueOf(await runInEngine("return await srv.x(2)")),
      { ns: "srv", key: "x", args: 2 },
      use,
    );
  }
});
