// Saved scripts without a session: the file format (header, input type), names, execute's arguments,
// the forms the guest compiles and the search over saved scripts. The real path is in
// tests/e2e/saved_scripts_e2e_test.ts.
import assert from "node:assert/strict";
import {
  MAX_SCRIPT_NAME_CHARS,
  parseSavedScript,
  renderSavedScript,
  type SavedScript,
  scriptNameProblem,
} from "../../lib/meta_server/saved_scripts.ts";
import {
  driverScript,
  readExecuteRequest,
  SavedScriptsHost,
} from "../../lib/meta_server/_saved_script_exec.ts";
import type { Catalog } from "../../lib/catalog/mod.ts";
import { SavedScriptCompiler } from "../../lib/meta_server/_saved_script_forms.ts";
import {
  listSavedScripts,
  savedScriptSignature,
  searchSavedScripts,
} from "../../lib/meta_server/_saved_script_index.ts";

Deno.test("parseSavedScript() reads the header's description and servers and the input type", () => {
  const text = renderSavedScript(
    "type Input = { dir: string; word?: string };\nreturn input.dir",
    "Files that mention a word.\nSecond line.",
    ["filesystem", "memory"],
  );
  assert.equal(
    text,
    "/**\n * Files that mention a word.\n * Second line.\n * @servers filesystem, memory\n */\n" +
      "type Input = { dir: string; word?: string };\nreturn input.dir\n",
  );
  assert.deepEqual(parseSavedScript(text), {
    description: "Files that mention a word.\nSecond line.",
    servers: ["filesystem", "memory"],
    inputType: "{ dir: string; word?: string }",
  });
});

Deno.test("parseSavedScript() reads multi-line, union, function-typed and interface inputs", () => {
  const cases: [string, string | undefined][] = [
    [
      "type Input = {\n  dir: string;\n  limit: number;\n};\nreturn 1",
      "{\n  dir: string;\n  limit: number;\n}",
    ],
    ['type Input = { mode: "a" | "b" }\nreturn 1', '{ mode: "a" | "b" }'],
    ["type Input =\n  | { a: 1 }\n  | { b: 2 };\nreturn 1", "| { a: 1 }\n  | { b: 2 }"],
    [
      "// note\ntype Input = { f: (x: number) => string; xs: Array<string> };",
      "{ f: (x: number) => string; xs: Array<string> }",
    ],
    ["interface Input { dir: string }\nreturn 1", "{ dir: string }"],
    ["return 1", undefined],
    ["const x = 1;\ntype Input = { late: true };", undefined],
  ];
  for (const [text, expected] of cases) assert.equal(parseSavedScript(text).inputType, expected, text);
});

Deno.test("renderSavedScript() keeps a description's */ inside the one comment", () => {
  const text = renderSavedScript("return 1", "ends */ early", []);
  assert.equal(parseSavedScript(text).description, "ends *\\/ early");
  assert.match(text, /^\/\*\*\n \* ends \*\\\/ early\n \*\/\nreturn 1\n$/);
});

Deno.test("scriptNameProblem() refuses names that are not identifiers, globals, reserved or servers", () => {
  assert.equal(scriptNameProblem("find_todos"), undefined);
  assert.match(scriptNameProblem("")!, /1 to 64 characters/);
  assert.match(scriptNameProblem("x".repeat(MAX_SCRIPT_NAME_CHARS + 1))!, /1 to 64 characters/);
  for (const name of ["a-b", "1a", "../x", "a.b", "$session"]) {
    assert.match(scriptNameProblem(name)!, /letters, digits and `_`/, name);
  }
  // `__proto__` is a key no namespace answers (`scripts.__proto__` is not a function): never a script's name.
  for (const name of ["console", "symposium", "scripts", "return", "input", "then", "Promise", "__proto__"]) {
    assert.match(scriptNameProblem(name)!, /reserved word or a global/, name);
  }
  assert.match(scriptNameProblem("memory", ["memory"])!, /name of a server in scope/);
  assert.match(scriptNameProblem("my_server", ["my-server"])!, /name of a server in scope/);
});

Deno.test("readExecuteRequest() takes exactly one of script and run, and args with run or save_as", () => {
  assert.deepEqual(readExecuteRequest({ script: "return 1" }), { kind: "script", script: "return 1" });
  assert.deepEqual(readExecuteRequest({ run: "x" }), { kind: "run", name: "x", args: {} });
  assert.deepEqual(readExecuteRequest({ script: "s", save_as: "n", description: "d", args: { a: 1 } }), {
    kind: "save",
    script: "s",
    name: "n",
    description: "d",
    args: { a: 1 },
  });
  const errors: [unknown, RegExp][] = [
    [{}, /requires a `script` string/],
    [{ script: "s", run: "x" }, /exactly one of `script`/],
    [{ run: "x", save_as: "y" }, /go with `script`/],
    [{ script: "s", args: {} }, /give it with `run` or `save_as`/],
    [{ run: "x", args: [1] }, /must be a JSON object/],
    [{ run: 5 }, /name of a saved script/],
    [{ script: "s", description: "d" }, /give `save_as` too/],
    [{ script: "s", save_as: "n", description: "d".repeat(1_001) }, /more than 1000/],
  ];
  for (const [args, message] of errors) {
    const read = readExecuteRequest(args);
    assert.ok("error" in read, JSON.stringify(args));
    assert.match(read.error, message);
  }
});

Deno.test("driverScript() calls the saved script by name with its input as JSON", () => {
  assert.equal(driverScript("find_todos", { dir: "/d" }), 'return await scripts["find_todos"]({"dir":"/d"})');
});

Deno.test("SavedScriptCompiler forms wrap each reading with scripts and input, TypeScript stripped last", async () => {
  const compiler = new SavedScriptCompiler();
  const forms = await compiler.forms("type Input = { n: number };\nreturn input.n + 1;");
  // `type` starts no statement: the expression reading first, then the statement body (whose error is
  // shown when none compiles), then both with the types stripped.
  assert.equal(forms.report, 1);
  assert.equal(
    forms.forms[1],
    "(function (scripts) { return async (input) => {type Input = { n: number };\nreturn input.n + 1;\n}; })",
  );
  assert.match(
    forms.forms.at(-1)!,
    /^\(function \(scripts\) \{ return async \(input\) => \{\s*\nreturn input\.n \+ 1;\n\}; \}\)$/,
  );
  const statements = await compiler.forms("const n = input.n;\nreturn n");
  assert.equal(statements.report, 0);
  assert.equal(statements.forms.length, 2);
  const expression = await compiler.forms("input.n * 2");
  assert.equal(expression.forms[0], "(function (scripts) { return async (input) => (input.n * 2\n); })");
  assert.equal(expression.report, 1);
});

Deno.test("SavedScriptCompiler.compileProblem() names a syntax error's line in the file, and passes TypeScript", async () => {
  const compiler = new SavedScriptCompiler();
  assert.equal(
    await compiler.compileProblem("type Input = { a: string };\nreturn input.a as string"),
    undefined,
  );
  assert.equal(await compiler.compileProblem("input.a"), undefined);
  assert.match((await compiler.compileProblem("/** x */\nconst a = ;\nreturn a"))!, /line 2/);
});

Deno.test("searchSavedScripts() ranks name terms over description terms and leaves out non-matches", () => {
  const script = (name: string, description: string): SavedScript => ({
    name,
    source: "user",
    file: `/c/scripts/${name}.ts`,
    text: "",
    description,
    inputType: undefined,
    servers: [],
  });
  const all = [
    script("count_lines", "Count lines of files that mention TODO."),
    script("find_todos", "Files of a folder."),
    script("deploy", "Ship it."),
  ];
  assert.deepEqual(searchSavedScripts(all, "todos in files", 5).map((s) => s.name), [
    "find_todos",
    "count_lines",
  ]);
  assert.deepEqual(searchSavedScripts(all, "weather", 5), []);
  assert.equal(
    savedScriptSignature(all[2]!),
    "scripts.deploy(input?: Record<string, unknown>): Promise<unknown>",
  );
});

Deno.test("SavedScriptsHost: a script's searches made while the saved scripts are read share that one read", async () => {
  // A repository's 200 scripts of 256 KiB made each read 1.6 s; 90 searches at once read them 90 times.
  const script = {
    name: "find_todos",
    source: "user" as const,
    file: "/config/scripts/find_todos.ts",
    text: "return 1",
    description: "Files that mention TODO.",
    inputType: undefined,
    servers: [],
  };
  let reads = 0;
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const catalog = { configDir: "/config", workspace: { root: "/ws" } } as unknown as Catalog;
  const host = new SavedScriptsHost(catalog, async () => {
    reads++;
    await gate;
    return { usable: [script], untrusted: [], shadowed: [], problems: [] };
  });
  const searches = Array.from({ length: 50 }, () => host.searchHits({ query: "TODO files" }, 5));
  release();
  for (const hits of await Promise.all(searches)) {
    assert.deepEqual(hits.map((h) => `${h.server}.${h.tool}`), ["scripts.find_todos"]);
  }
  assert.equal(reads, 1);
});

Deno.test("listSavedScripts(): a repository's many untrusted scripts are a few Problems lines, not one each", async () => {
  const root = await Deno.makeTempDir({ prefix: "saved-untrusted-" });
  try {
    await Deno.mkdir(`${root}/config`, { mode: 0o700 });
    await Deno.mkdir(`${root}/ws/.symposium/scripts`, { recursive: true });
    for (let i = 0; i < 150; i++) {
      await Deno.writeTextFile(
        `${root}/ws/.symposium/scripts/team_${String(i).padStart(3, "0")}.ts`,
        "return 1",
      );
    }
    const host = {
      places: { configDir: `${root}/config`, workspaceRoot: `${root}/ws` },
      compiler: new SavedScriptCompiler(),
    };
    const catalog = { servers: [], unavailableNamespaces: () => [] } as unknown as Catalog;
    const { set, problems } = await listSavedScripts(host, catalog);
    assert.equal(set.untrusted.length, 150);
    assert.equal(problems.length, 4);
    assert.match(problems[0]!, /workspace script `team_000` \(.*\) is not trusted, so it is not listed/);
    assert.match(
      problems[3]!,
      /^147 more workspace scripts are not trusted \(or changed since\), so they are not listed: `team_003`, .*`team_012`, …; a person runs `cargo agents scripts trust`/,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
