// The guest's side of saved scripts (`scripts.name(input)`, `_prelude_parts.ts`): the host answers the
// call with the script's forms, the guest compiles the first that parses in the run's own context and
// calls it with a JSON copy of the input and a `scripts` one level deeper.
import assert from "node:assert/strict";
import { failureOf, runInEngine, valueOf } from "../_fakes_sandbox.ts";
import { MAX_SCRIPTS_DEPTH, SCRIPTS_GLOBAL } from "../../lib/sandbox/mod.ts";
import type { HostCallRequest } from "../../lib/sandbox/mod.ts";

/**
 * A host that answers `scripts.<name>()` from `saved` (JavaScript statement bodies, wrapped as the host's
 * `_saved_script_forms.ts` wraps them; a form that does not parse first) and every other call with its
 * arguments.
 */
function hostOf(saved: Record<string, string>) {
  return async (req: HostCallRequest) => {
    if (req.namespace !== SCRIPTS_GLOBAL) return { ns: req.namespace, key: req.key, args: req.args };
    const text = saved[req.key];
    if (text === undefined) throw new Error(`no saved script ${req.key}`);
    return await Promise.resolve({
      forms: ["(function (scripts) { return async (input) => (not javascript; })", wrap(text)],
      report: 1,
    });
  };
}

const wrap = (body: string) => `(function (scripts) { return async (input) => {${body}\n}; })`;
const namespaces = ["srv", SCRIPTS_GLOBAL];

Deno.test("scripts.name(input) runs the first form that compiles in the run, its tool calls included", async () => {
  const run = await runInEngine("const r = await scripts.add({ a: 2, b: 40 }); return r", {
    namespaces,
    hostCall: hostOf({
      add: "const echoed = await srv.echo(input);\nreturn echoed.args.a + input.b",
    }),
  });
  assert.equal(valueOf(run), 42);
  // The saved script's call and its tool call, each through the host.
  assert.deepEqual(run.calls.map((c) => `${c.namespace}.${c.key}`), ["scripts.add", "srv.echo"]);
});

Deno.test("scripts.name(input) gets a copy of its input: the callee cannot change the caller's object", async () => {
  const run = await runInEngine(
    "const box = { n: 1 }; const got = await scripts.bump(box); return [box.n, got]",
    { namespaces, hostCall: hostOf({ bump: "input.n = 99; return input.n" }) },
  );
  assert.deepEqual(valueOf(run), [1, 99]);
});

Deno.test("a saved script that calls itself stops at MAX_SCRIPTS_DEPTH with a RangeError", async () => {
  const run = await runInEngine("return await scripts.loop({})", {
    namespaces,
    hostCall: hostOf({ loop: "return await scripts.loop(input)" }),
  });
  const failure = failureOf(run);
  assert.match(JSON.stringify(failure), new RegExp(`RangeError: .*more than ${MAX_SCRIPTS_DEPTH} deep`));
  assert.equal(run.calls.length, MAX_SCRIPTS_DEPTH);
});

Deno.test("a saved script's error reaches the caller, which may catch it", async () => {
  const run = await runInEngine(
    "try { await scripts.fail({}) } catch (e) { return [e.name, e.message] }",
    { namespaces, hostCall: hostOf({ fail: "throw new TypeError('bad input')" }) },
  );
  assert.deepEqual(valueOf(run), ["TypeError", "bad input"]);
  const unknown = await runInEngine("return await scripts.nope({})", { namespaces, hostCall: hostOf({}) });
  assert.match(JSON.stringify(failureOf(unknown)), /no saved script nope/);
});

Deno.test("a saved script that is a function is called with the input", async () => {
  const run = await runInEngine("return await scripts.inc({ n: 41 })", {
    namespaces,
    hostCall: async () =>
      await Promise.resolve({
        forms: ["(function (scripts) { return async (input) => (async ({ n }) => n + 1\n); })"],
        report: 0,
      }),
  });
  assert.equal(valueOf(run), 42);
});
