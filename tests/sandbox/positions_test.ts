// Error positions point into the script as the agent sent it: never at the wrapper the script is compiled
// in (`(async () => {` … `\n})`), nor at lines of the normalized code (fence, prose, `export default`).
import assert from "node:assert/strict";
import { failureOf, runInEngine } from "../_fakes_sandbox.ts";

/** The first line of a failed run's message. */
async function errorLine(script: string): Promise<string> {
  const failure = failureOf(await runInEngine(script)) as { message: string };
  return failure.message.split("\n")[0]!;
}

/** The stack frames of a failed run's message. */
async function frames(script: string): Promise<string[]> {
  const failure = failureOf(await runInEngine(script)) as { message: string };
  return failure.message.split("\n").slice(1);
}

const SYNTAX_CASES: [script: string, first: string][] = [
  // The case: the `;` is the script's, not the wrapper's `}` at "the end".
  ["return (1 + ;", "SyntaxError: unexpected token in expression: ';' at script.js:1:13"],
  ["1 + ;", "SyntaxError: unexpected token in expression: ';' at script.js:1:5"],
  ["const x = 1;\nreturn x +;", "SyntaxError: unexpected token in expression: ';' at script.js:2:11"],
  ["/* c */ return )", "SyntaxError: unexpected token in expression: ')' at script.js:1:16"],
  // Columns count code points, as QuickJS does.
  ['const s = "😀"; return s +;', "SyntaxError: unexpected token in expression: ';' at script.js:1:26"],
  // A fence line and prose around the block are lines of the script.
  [
    "```js\nconst a = 1;\nreturn a +;\n```",
    "SyntaxError: unexpected token in expression: ';' at script.js:3:11",
  ],
  [
    "Here it is:\n```js\nreturn (1 + ;\n```",
    "SyntaxError: unexpected token in expression: ';' at script.js:3:13",
  ],
  ["  export default  (1 + )", "SyntaxError: unexpected token in expression: ')' at script.js:1:24"],
  // Ending early is said as such, without naming the wrapper's closing token.
  ["1 +", "SyntaxError: unexpected end of the script"],
  ["foo(", "SyntaxError: unexpected end of the script"],
  ["return [1, 2", "SyntaxError: expecting ']' at the end of the script"],
  ["x = 1; }", "SyntaxError: a '}' closes more blocks than the script opens"],
];

for (const [script, first] of SYNTAX_CASES) {
  Deno.test(`compileScript() reports ${JSON.stringify(script)} in the script's own terms`, async () => {
    const line = await errorLine(script);
    assert.equal(line, first);
    assert.doesNotMatch(line, /'[})]' at the end/);
  });
}

Deno.test("a thrown error's frames give the script's line and column, line 1 included", async () => {
  assert.deepEqual(await frames('throw new Error("boom")'), ["    at <anonymous> (script.js:1:16)"]);
  assert.deepEqual(await frames("const x = null;\nreturn x.y"), ["    at <anonymous> (script.js:2:9)"]);
  assert.deepEqual(await frames("null.y"), ["    at <anonymous> (script.js:1:5)"]);
  assert.deepEqual(await frames("Sure:\n```js\nconst a = 1;\nreturn a.b.c;\n```"), [
    "    at <anonymous> (script.js:4:11)",
  ]);
});

Deno.test("a TypeScript script's runtime error gives the script's line", async () => {
  const lines = await frames("const n: number = 1;\nconst o: { a?: { b: number } } = {};\nreturn o.a!.b + n");
  assert.match(lines[0]!, /\(script\.js:3:\d+\)$/);
});
