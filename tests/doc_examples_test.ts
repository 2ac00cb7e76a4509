/**
 * Every example of README.md and docs/*.md runs (or, marked `<!-- doc-test: parse-only -->`, parses): the
 * rules are in `tests/_doc_examples.ts` and in docs/troubleshooting.md ("Examples in the docs"). The first
 * tests pin the checker itself on small documents, so it can fail; the last checks the real documents.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  checkFiles,
  docFiles,
  extractBlocks,
  programArgs,
  shellScript,
  splitShell,
} from "./_doc_examples.ts";

/** Checks one Markdown text as if it were a documentation file; resolves to its problems. */
async function problemsOf(markdown: string): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "doc-examples-test-" });
  try {
    await Deno.writeTextFile(`${dir}/page.md`, markdown);
    return await checkFiles([`${dir}/page.md`]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("extractBlocks: language, 1-based fence line, the parse-only marker above (blank lines between)", () => {
  const blocks = extractBlocks(
    '# T\n\n<!-- doc-test: parse-only -->\n\n```sh\ncargo agents status\n```\n\n```toml\nname = "x"\n```\n',
    "page.md",
  );
  assert.deepEqual(blocks.map((b) => [b.line, b.lang, b.isParseOnly, b.text]), [
    [5, "sh", true, "cargo agents status"],
    [9, "toml", false, 'name = "x"'],
  ]);
});

Deno.test("splitShell/programArgs: quotes, comments, continuations, pipes and the program's three spellings", () => {
  const commands = splitShell(
    "cargo agents doctor --json | jq '.checks[] | .name'  # why\nFOO=1 cargo-agents \\\n  mcp tools --pattern 'a b'\n" +
      "deno run -q -P /x/main.ts status 2>&1\n",
  );
  assert.deepEqual(commands.map((c) => [c.line, programArgs(c.words)]), [
    [1, ["doctor", "--json"]],
    [1, undefined],
    [2, ["mcp", "tools", "--pattern", "a b"]],
    [4, ["status"]],
  ]);
});

Deno.test("shellScript: a console block's commands are its `$ ` lines and their continuations, on their own lines", () => {
  const [block] = extractBlocks(
    "```console\n$ cargo agents status\nok: 1 plugin\n$ cargo agents \\\n  doctor\n```\n",
    "p.md",
  );
  assert.equal(shellScript(block!), "cargo agents status\n\ncargo agents \\\n  doctor");
});

Deno.test("a renamed flag in a parse-only block fails with the file:line of the line", async () => {
  const problems = await problemsOf(
    "<!-- doc-test: parse-only -->\n```sh\ncargo agents status\ncargo agents status --jsn\n```\n",
  );
  assert.equal(problems.length, 1, problems.join("\n"));
  assert.match(
    problems[0]!,
    /page\.md:2 \(```sh\): line 4 `cargo agents status --jsn`: error\[USAGE\].*"--jsn"/,
  );
});

Deno.test("a runnable block runs: a command the program refuses at run time (exit 2) fails; exit 1 does not", async () => {
  const problems = await problemsOf(
    "```sh\ncargo agents plugin sync no-such-registry\ncargo agents mcp tools --detail everything\n```\n",
  );
  assert.equal(problems.length, 1, problems.join("\n"));
  assert.match(
    problems[0]!,
    /page\.md:1 \(```sh\): line 3 `cargo agents mcp tools --detail everything` exited 2/,
  );
});

Deno.test("a network command outside a parse-only block fails and says to mark it; an unknown deno task fails", async () => {
  const problems = await problemsOf(
    "```sh\ncurl -fsSL https://example.com/x\n```\n\n```bash\ndeno task nope\n```\n",
  );
  assert.equal(problems.length, 2, problems.join("\n"));
  assert.match(problems[0]!, /page\.md:1 .*curl needs the network.*<!-- doc-test: parse-only -->/);
  assert.match(problems[1]!, /page\.md:5 .*deno\.json has no task "nope"/);
});

Deno.test("TOML: a manifest with a misspelled key fails plugin validate; a bad config value is a Problem", async () => {
  const problems = await problemsOf(
    '```toml\n[[mcp_servers]]\nname = "x"\ncomand = "npx"\n```\n\n```toml\n# <config>/config.toml\n[mcp]\nscript-timeout-secs = "soon"\n```\n\n```toml\n[agents]\nx = 1\n```\n',
  );
  assert.equal(problems.length, 3, problems.join("\n"));
  assert.match(problems[0]!, /page\.md:1 \(```toml\): plugin validate fails.*comand/);
  assert.match(problems[1]!, /page\.md:7 \(```toml\): config\.toml does not load: error\[CONFIG_BAD_VALUE\]/);
  assert.match(problems[2]!, /page\.md:13 .*cannot tell a plugin manifest from a config file/);
});

Deno.test("a fence without a language, bad JSON and an unknown marker fail; text, js and parse-only TOML fragments do not", async () => {
  const problems = await problemsOf(
    '```\noutput\n```\n\n```json\n{ "a": 1, }\n```\n\n<!-- doc-test: skip -->\n```sh\nls\n```\n\n```text\n$ anything\n```\n\n' +
      "```js\nreturn 1;\n```\n\n<!-- doc-test: parse-only -->\n```toml\n[fragment]\nkey = 1\n```\n",
  );
  assert.equal(problems.length, 3, problems.join("\n"));
  assert.match(problems[0]!, /page\.md:1 .*no language/);
  assert.match(problems[1]!, /page\.md:5 .*not valid JSON/);
  assert.match(problems[2]!, /page\.md:10 .*unknown marker <!-- doc-test: skip -->/);
});

Deno.test("JSON: an agent config block's symposium entry must run mcp-serve; JSONC allows comments, JSON does not", async () => {
  const problems = await problemsOf(
    '```json\n{ "mcpServers": { "symposium": { "command": "cargo-agents", "args": ["serve"] } } }\n```\n\n' +
      '```jsonc\n{\n  // ours\n  "mcpServers": { "symposium": { "command": "cargo-agents", "args": ["mcp-serve"] } }\n}\n```\n\n' +
      '```json\n{\n  // no comments in JSON\n  "a": 1\n}\n```\n',
  );
  assert.equal(problems.length, 2, problems.join("\n"));
  assert.match(problems[0]!, /page\.md:1 .*"symposium" entry under "mcpServers" does not run/);
  assert.match(problems[1]!, /page\.md:12 .*not valid JSON: .*comments are not allowed/);
});

Deno.test("every example in README.md and docs/*.md runs, or parses where marked parse-only", async () => {
  const problems = await checkFiles(docFiles());
  assert.deepEqual(problems, [], `\n${problems.join("\n\n")}\n`);
});
