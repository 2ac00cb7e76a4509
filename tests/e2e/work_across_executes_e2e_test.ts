// The README's "Work that spans executes", end to end in one real `mcp-serve` session against the real npm
// server-filesystem: the TODO task in two executes through `$session` with only counts reaching the agent,
// the same search saved and run again by name (by the agent and from another script), a direct tool
// answering without a script, then `cargo agents report` on that session's log showing every execute.
// (The report's page itself is loaded in Chromium by `trace_e2e_test.ts`.)
import assert from "node:assert/strict";
import { makeRawWorld, RawServe, REPO, toolText } from "../../bench/_raw_serve.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";

const FS_SERVER = `${REPO}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;

/** The search, reading its folder from `input` as a saved script does. */
const FIND_TODOS = `type Input = { dir: string };
// step: find
const listing = await filesystem.list_directory({ path: input.dir });
const names = listing.content.split("\\n").filter((l) => l.startsWith("[FILE] ")).map((l) => l.slice(7));
const hits = [];
for (const name of names) {
  const file = await filesystem.read_text_file({ path: input.dir + "/" + name });
  if (file.content.includes("TODO")) hits.push({ name, text: file.content });
}
return hits;`;

const STORE = (dir: string) =>
  `// step: store
const hits = await scripts.find_todos({ dir: ${JSON.stringify(dir)} });
await $session.set("todo_files", hits);
return hits.length;`;

const ACT = (dir: string) =>
  `// step: act
const hits = await $session.get("todo_files");
await filesystem.write_file({
  path: ${JSON.stringify(`${dir}/TODO-INDEX.md`)},
  content: hits.map((h) => "- " + h.name).join("\\n") + "\\n",
});
return hits.length;`;

function resultOf(answer: { text: string; isError: boolean }): unknown {
  assert.equal(answer.isError, false, answer.text);
  return (JSON.parse(answer.text) as { result?: unknown }).result;
}

Deno.test("the TODO task across executes: $session, a saved script run by name, a direct tool, the session's report", async () => {
  const data = await Deno.makeTempDir({ prefix: "symposium-across-data-" });
  const todo: string[] = [];
  for (let i = 0; i < 9; i++) {
    const name = `note_${i}.txt`;
    if (i % 3 === 0) todo.push(name);
    await Deno.writeTextFile(`${data}/${name}`, i % 3 === 0 ? `TODO ${i}\n` : `done ${i}\n`);
  }
  const world = await makeRawWorld(
    `[[mcp_servers]]\nname = "filesystem"\ncommand = "node"\nargs = ${JSON.stringify([FS_SERVER, data])}\n`,
    `direct-tools = ["filesystem.read_text_file"]`,
  );
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    await serve.initialize();
    const call = async (name: string, args: Record<string, unknown>) =>
      toolText(await serve.request("tools/call", { name, arguments: args }, 120_000));

    // Saved once it ran without error; its answer is the hits themselves (the agent asked for them here).
    const saved = await call("execute", {
      script: FIND_TODOS,
      save_as: "find_todos",
      description: "Files of a folder that mention TODO",
      args: { dir: data },
    });
    assert.equal(saved.isError, false, saved.text);
    assert.deepEqual((resultOf(saved) as { name: string }[]).map((h) => h.name), todo);

    // Run again by name: the same answer, no script sent.
    const again = await call("execute", { run: "find_todos", args: { dir: data } });
    assert.deepEqual((resultOf(again) as { name: string }[]).map((h) => h.name), todo);

    // Look, then act, in two executes: only counts pass through the agent's context.
    const first = await serve.execute(STORE(data));
    assert.equal(resultOf(first), todo.length);
    const second = await serve.execute(ACT(data));
    assert.equal(resultOf(second), todo.length);
    for (const answer of [first, second]) {
      for (const name of todo) assert.ok(!answer.text.includes(name), answer.text);
    }
    assert.equal(await Deno.readTextFile(`${data}/TODO-INDEX.md`), todo.map((n) => `- ${n}\n`).join(""));

    // The saved script and the kept key are listed; values never are.
    const index = await serve.listTools({});
    assert.match(index.text, /find_todos/);
    assert.match(index.text, /"todo_files"/);
    assert.ok(!index.text.includes("TODO 0"), index.text);

    // A direct tool, listed beside list_tools and execute, answers without a script.
    const listed = await serve.request("tools/list", {});
    const names = (listed.result as { tools: { name: string }[] }).tools.map((t) => t.name);
    assert.ok(names.includes("filesystem__read_text_file"), names.join(", "));
    const direct = await call("filesystem__read_text_file", { path: `${data}/${todo[0]}` });
    assert.equal(direct.isError, false, direct.text);
    assert.match(direct.text, /TODO 0/);
  } finally {
    if (serve.isRunning) await serve.close();
    else await serve.kill();
  }

  try {
    // The report of that session: one page showing every execute of it, by its script.
    const page = `${world.root}/report.html`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...sourceRunArgs(REPO), "report", "--last", "--out", page],
      env: { SYMPOSIUM_HOME: world.home },
      cwd: world.ws,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const html = await Deno.readTextFile(page);
    // A save shows the script it saved; both runs by name name the script and the size of their args only.
    assert.match(html, /<span data-k="executes">4<\/span>/);
    assert.equal(html.match(/scripts\.find_todos\(args: \d+ bytes of JSON, not logged\)/g)?.length, 2);
    assert.ok(html.includes("step: find"), "the saved script's text");
    for (const step of ["step: store", "step: act"]) assert.ok(html.includes(step), step);
    assert.ok(!html.includes("TODO 0"), "a file's content reached the report");
  } finally {
    await world.remove();
    await Deno.remove(data, { recursive: true });
  }
});
