/**
 * End to end: saved scripts through a real `mcp-serve` (SDK client over stdio) with the real
 * server-filesystem and server-memory: the README's TODO task saved, listed, found by search, run by
 * name and from another script; names that clash refused; a broken script and an untrusted workspace
 * script under Problems; `cargo agents scripts list|show|rm|trust`.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { REPO } from "../_fakes_backends.ts";
import { cargoLock, cargoToml } from "../_fakes_meta.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";

const NM = `${REPO}node_modules/@modelcontextprotocol`;

interface World {
  home: string;
  ws: string;
  data: string;
  todoFiles: string[];
}

async function makeWorld(): Promise<World> {
  const root = await Deno.makeTempDir({ prefix: "symposium-saved-" });
  const home = `${root}/home`;
  const ws = `${root}/ws`;
  const data = `${root}/data`;
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.mkdir(data, { recursive: true });
  await Deno.writeTextFile(`${ws}/Cargo.toml`, cargoToml({ serde: "1" }));
  await Deno.writeTextFile(`${ws}/Cargo.lock`, cargoLock({ serde: "1.0.219" }));
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  const todoFiles: string[] = [];
  for (let i = 0; i < 6; i++) {
    const name = `note_${i}.txt`;
    if (i % 2 === 1) todoFiles.push(name);
    await Deno.writeTextFile(`${data}/${name}`, i % 2 === 1 ? "TODO: fix\n" : "fine\n");
  }
  const plugin = async (name: string, body: string) => {
    await Deno.mkdir(`${home}/plugins/${name}`, { recursive: true });
    await Deno.writeTextFile(
      `${home}/plugins/${name}/SYMPOSIUM.toml`,
      `name = "${name}"\ndepends-on = "*"\n\n${body}`,
    );
  };
  const node = (pkg: string, args: string[] = [], extra = "") =>
    `command = "node"\nargs = ${JSON.stringify([`${NM}/${pkg}/dist/index.js`, ...args])}\n${extra}`;
  await plugin("fs-tools", `[[mcp_servers]]\nname = "filesystem"\n${node("server-filesystem", [data])}`);
  await plugin(
    "memory",
    `[[mcp_servers]]\nname = "memory"\n${
      node("server-memory", [], `env = { MEMORY_FILE_PATH = "${root}/memory.jsonl" }`)
    }`,
  );
  return { home, ws, data, todoFiles };
}

/** The environment of the session and the CLI: no coding agent's markers (a person's terminal). */
function envOf(world: World): Record<string, string> {
  const env: Record<string, string> = { ...Deno.env.toObject(), SYMPOSIUM_HOME: world.home };
  for (
    const marker of [
      "CLAUDECODE",
      "CLAUDE_CODE_ENTRYPOINT",
      "CODEX_SANDBOX",
      "GEMINI_CLI",
      "CURSOR_AGENT",
      "QWEN_CODE",
    ]
  ) {
    delete env[marker];
  }
  return env;
}

async function connect(world: World): Promise<{ client: Client; close(): Promise<void> }> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...sourceRunArgs(REPO), "mcp-serve"],
    env: envOf(world),
    cwd: world.ws,
    stderr: "ignore",
  });
  const client = new Client({ name: "e2e-agent", version: "1.0.0" });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

async function cli(world: World, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...sourceRunArgs(REPO), ...args],
    env: envOf(world),
    clearEnv: true,
    cwd: world.ws,
    stdin: "null",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

function textOf(result: unknown): string {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  return content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

function structuredOf(result: unknown): Record<string, unknown> {
  const structured = (result as { structuredContent?: Record<string, unknown> }).structuredContent;
  assert.ok(structured, `no structuredContent: ${textOf(result).slice(0, 500)}`);
  assert.equal(textOf(result), JSON.stringify(structured));
  return structured;
}

/** The README's TODO task as a saved script: its input is the folder. */
const FIND_TODOS = `type Input = { dir: string };
const listing = await filesystem.list_directory({ path: input.dir });
const names = listing.content.split("\\n")
  .filter((line) => line.startsWith("[FILE] "))
  .map((line) => line.slice("[FILE] ".length));
const hits: string[] = [];
for (const name of names) {
  const file = await filesystem.read_text_file({ path: \`\${input.dir}/\${name}\` });
  if (file.content.includes("TODO")) hits.push(name);
}
return hits;`;

Deno.test("saved scripts: saved, listed, searched, run by name and from a script, refused, reported", async (t) => {
  const world = await makeWorld();
  const session = await connect(world);
  const { client } = session;
  const execute = (args: Record<string, unknown>) => client.callTool({ name: "execute", arguments: args });
  const listTools = async (args: Record<string, unknown> = {}) =>
    textOf(await client.callTool({ name: "list_tools", arguments: args }));
  try {
    await t.step("execute's input schema offers save_as, description, run and args", async () => {
      const { tools } = await client.listTools();
      const schema = tools.find((x) => x.name === "execute")!.inputSchema as {
        properties: Record<string, unknown>;
      };
      assert.deepEqual(Object.keys(schema.properties).sort(), [
        "args",
        "description",
        "run",
        "save_as",
        "script",
        "trace",
      ]);
    });

    await t.step("a script run with save_as and args answers its result and is saved", async () => {
      const result = await execute({
        script: FIND_TODOS,
        save_as: "find_todos",
        description: "Files of a folder whose text mentions TODO.",
        args: { dir: world.data },
      });
      const structured = structuredOf(result);
      assert.deepEqual(structured.result, world.todoFiles);
      assert.match(String(structured.saved), /saved as scripts\.find_todos/);
      const file = `${world.home}/scripts/find_todos.ts`;
      const text = await Deno.readTextFile(file);
      assert.match(
        text,
        /^\/\*\*\n \* Files of a folder whose text mentions TODO\.\n \* @servers filesystem\n \*\/\ntype Input/,
      );
      if (Deno.build.os !== "windows") assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
    });

    await t.step("a script that fails is not saved", async () => {
      const result = await execute({ script: "throw new Error('nope')", save_as: "failing", args: {} });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /nope/);
      await assert.rejects(Deno.stat(`${world.home}/scripts/failing.ts`), Deno.errors.NotFound);
    });

    await t.step("list_tools lists it like a server's tools, with its input type", async () => {
      const index = await listTools();
      assert.match(
        index,
        /scripts \(saved scripts[^\n]*\n {2}find_todos - Files of a folder whose text mentions TODO\./,
      );
      const declared = await listTools({ servers: ["scripts"] });
      assert.match(declared, /scripts\.find_todos\(input: \{ dir: string \}\): Promise<unknown>;/);
      assert.doesNotMatch(declared, /no server named/);
    });

    await t.step("ranked search finds it", async () => {
      const answer = await listTools({ query: "find files mentioning TODO" });
      assert.match(answer, /^Saved scripts for "find files mentioning TODO":\n- scripts\.find_todos/);
    });

    await t.step("symposium.search in a script finds it, and the hit runs it", async () => {
      const script = `const hits = await symposium.search("files mentioning TODO", { limit: 3 });
const first = hits[0];
const names = await globalThis[first.server][first.tool]({ dir: ${JSON.stringify(world.data)} });
return { first: [first.server, first.tool, first.signature], hits: hits.length, names };`;
      const value = structuredOf(await execute({ script })).result as Record<string, unknown>;
      assert.deepEqual(value.first, [
        "scripts",
        "find_todos",
        "scripts.find_todos(input: { dir: string }): Promise<unknown>",
      ]);
      assert.ok((value.hits as number) <= 3);
      assert.deepEqual(value.names, world.todoFiles);
    });

    await t.step("run by name with args", async () => {
      const result = await execute({ run: "find_todos", args: { dir: world.data } });
      assert.deepEqual(structuredOf(result).result, world.todoFiles);
    });

    await t.step("run from another script, which keeps only a count", async () => {
      const script = `const hits = await scripts.find_todos({ dir: ${JSON.stringify(world.data)} });
return { count: hits.length };`;
      const result = await execute({ script });
      assert.deepEqual(structuredOf(result).result, { count: world.todoFiles.length });
    });

    await t.step("a saved script that evaluates to a function is called with its input", async () => {
      const typed = await execute({
        script: "type Input = { n: number };\nreturn async ({ n }: Input) => n * 2",
        save_as: "double",
        args: { n: 21 },
      });
      assert.equal(structuredOf(typed).result, 42);
      const bare = await execute({ script: "async ({ n }) => n + 1", save_as: "inc", args: { n: 41 } });
      assert.equal(structuredOf(bare).result, 42);
      assert.equal(structuredOf(await execute({ run: "double", args: { n: 5 } })).result, 10);
    });

    await t.step("a saved script calling itself stops at the nesting limit", async () => {
      const saved = await execute({ script: "return 1", save_as: "again", args: {} });
      assert.equal(saved.isError, undefined, textOf(saved));
      await Deno.writeTextFile(`${world.home}/scripts/again.ts`, "return await scripts.again(input)");
      const result = await execute({ run: "again", args: {} });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /more than 8 deep/);
    });

    await t.step("an unknown name says so", async () => {
      const result = await execute({ run: "nothing_here" });
      assert.equal(result.isError, true);
      assert.match(
        textOf(result),
        /Cannot run scripts\.nothing_here: no saved script is named `nothing_here`/,
      );
    });

    await t.step("a name that is no script name reaches no file", async () => {
      const result = await execute({ script: 'return await scripts["../config"]({})' });
      assert.equal(result.isError, true);
      assert.match(
        textOf(result),
        /Cannot run scripts\.\.\.\/config: no saved script is named \\"\.\.\/config\\": a script name is letters/,
      );
    });

    await t.step("a saved script runs under its caller's deadline", async () => {
      await Deno.writeTextFile(`${world.home}/scripts/spin.ts`, "/** Never ends. */\nwhile (true) {}");
      await Deno.writeTextFile(`${world.home}/config.toml`, "[mcp]\nscript-timeout-secs = 2\n");
      try {
        const result = await execute({ script: "await scripts.spin({}); return 'unreachable'" });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /"error":"script_timeout"/);
      } finally {
        await Deno.remove(`${world.home}/config.toml`);
        await Deno.remove(`${world.home}/scripts/spin.ts`);
      }
    });

    await t.step("a name that clashes with a server or a global is refused before it runs", async () => {
      for (
        const [name, why] of [["memory", /name of a server in scope/], [
          "console",
          /reserved word or a global/,
        ], [
          "scripts",
          /reserved word or a global/,
        ], ["bad-name", /letters, digits and `_`/]] as const
      ) {
        const result = await execute({ script: "return 1", save_as: name });
        assert.equal(result.isError, true, name);
        assert.match(textOf(result), why);
        await assert.rejects(Deno.stat(`${world.home}/scripts/${name}.ts`), Deno.errors.NotFound);
      }
    });

    await t.step("exactly one of script and run", async () => {
      await assert.rejects(execute({ script: "return 1", run: "find_todos" }), /exactly one of `script`/);
      await assert.rejects(execute({}), /requires a `script` string \(or `run`/);
    });

    await t.step("a scripts folder others may write is not used", async () => {
      if (Deno.build.os === "windows") return;
      const dir = `${world.home}/scripts`;
      await Deno.chmod(dir, 0o777);
      try {
        const result = await execute({ run: "find_todos", args: { dir: world.data } });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /others may write [^ ]*scripts \(mode 777\)/);
        assert.match(await listTools(), /Cannot use the saved scripts in [^:]*: others may write/);
      } finally {
        await Deno.chmod(dir, 0o700);
      }
    });

    await t.step(
      "a broken saved script and one naming a server not in scope are under Problems",
      async () => {
        await Deno.writeTextFile(`${world.home}/scripts/broken.ts`, "/** Broken. */\nconst x = ;\nreturn x");
        await Deno.writeTextFile(
          `${world.home}/scripts/gone.ts`,
          "/**\n * Uses a server that left.\n * @servers github\n */\nreturn await github.search({})",
        );
        const index = await listTools();
        assert.match(
          index,
          /Problems:[\s\S]*saved script `broken` \([^)]*broken\.ts\) no longer compiles: [^\n]*line 2/,
        );
        assert.match(index, /saved script `gone` names `github`, not in scope here/);
        const run = await execute({ run: "broken" });
        assert.equal(run.isError, true);
        assert.match(
          textOf(run),
          /Cannot run scripts\.broken: it does not compile: [^\n]*line 2[^\n]*; fix [^\n]*broken\.ts/,
        );
      },
    );

    await t.step("a workspace script is invisible and cannot run until trusted", async () => {
      await Deno.mkdir(`${world.ws}/.symposium/scripts`, { recursive: true });
      await Deno.writeTextFile(
        `${world.ws}/.symposium/scripts/team_count.ts`,
        "/** Counts files of a folder. */\ntype Input = { dir: string };\n" +
          "const l = await filesystem.list_directory({ path: input.dir });\nreturn l.content.split('\\n').length",
      );
      const index = await listTools();
      assert.doesNotMatch(index, /\n {2}team_count/);
      assert.match(index, /workspace script `team_count` \([^)]*\) is not trusted, so it is not listed/);
      const refused = await execute({ run: "team_count", args: { dir: world.data } });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /is not trusted: a person runs `cargo agents scripts trust team_count`/);

      // `cargo agents trust PATH` of a workspace script trusts it as `scripts trust` does.
      const trusted = await cli(world, ["trust", ".symposium/scripts/team_count.ts", "--yes"]);
      assert.equal(trusted.code, 0, trusted.stderr);
      assert.match(trusted.stdout, /trusted .*team_count\.ts/);
      assert.match(await listTools(), /\n {2}team_count - Counts files of a folder\. \(workspace\)/);
      const ran = await execute({ run: "team_count", args: { dir: world.data } });
      assert.equal(structuredOf(ran).result, 6);

      // Changed content is untrusted again.
      await Deno.writeTextFile(`${world.ws}/.symposium/scripts/team_count.ts`, "/** Changed. */\nreturn 666");
      const changed = await execute({ run: "team_count" });
      assert.equal(changed.isError, true);
      assert.match(textOf(changed), /changed since it was trusted/);
    });

    await t.step("a user script wins over a trusted workspace script of the same name", async () => {
      await Deno.writeTextFile(
        `${world.ws}/.symposium/scripts/find_todos.ts`,
        "/** Team's. */\nreturn 'team'",
      );
      assert.equal((await cli(world, ["scripts", "trust", "find_todos", "--yes"])).code, 0);
      const result = await execute({ run: "find_todos", args: { dir: world.data } });
      assert.deepEqual(structuredOf(result).result, world.todoFiles);
      assert.match(
        await listTools(),
        /workspace \([^)]*find_todos\.ts\) is not used: your own script of that name/,
      );
    });
  } finally {
    await session.close();
  }

  await t.step("cargo agents scripts list, show and rm", async () => {
    const listed = await cli(world, ["scripts", "list", "--json"]);
    assert.equal(listed.code, 0, listed.stderr);
    const doc = JSON.parse(listed.stdout) as {
      scripts: { name: string; source: string; input: string | null }[];
    };
    const todos = doc.scripts.find((s) => s.name === "find_todos" && s.source === "user");
    assert.equal(todos?.input, "{ dir: string }");
    const text = await cli(world, ["scripts", "list"]);
    assert.match(
      text.stdout,
      /^find_todos - Files of a folder whose text mentions TODO\.\n {2}input: \{ dir: string \}$/m,
    );

    const shown = await cli(world, ["scripts", "show", "find_todos", "--json"]);
    assert.equal(shown.code, 0, shown.stderr);
    const both = JSON.parse(shown.stdout) as { source: string; text: string }[];
    assert.equal(
      both.find((s) => s.source === "user")?.text,
      await Deno.readTextFile(`${world.home}/scripts/find_todos.ts`),
    );

    const exec = `${world.ws}/count.js`;
    await Deno.writeTextFile(
      exec,
      `return (await scripts.find_todos({ dir: ${JSON.stringify(world.data)} })).length`,
    );
    const ran = await cli(world, ["mcp", "exec", exec]);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout.trim(), JSON.stringify({ result: world.todoFiles.length }));

    const inAgent = await new Deno.Command(Deno.execPath(), {
      args: [...sourceRunArgs(REPO), "scripts", "trust", "--yes"],
      env: { ...envOf(world), CLAUDECODE: "1" },
      clearEnv: true,
      cwd: world.ws,
      stdin: "null",
    }).output();
    assert.equal(inAgent.code, 1);
    assert.match(new TextDecoder().decode(inAgent.stderr), /TRUST_NEEDS_PERSON/);

    const help = await cli(world, ["scripts", "rm", "--help"]);
    assert.match(help.stdout, /Usage: cargo-agents scripts rm <name>/);
    const removed = await cli(world, ["scripts", "rm", "again"]);
    assert.equal(removed.code, 0, removed.stderr);
    await assert.rejects(Deno.stat(`${world.home}/scripts/again.ts`), Deno.errors.NotFound);
    const unknown = await cli(world, ["scripts", "rm", "again"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /SCRIPT_UNKNOWN/);
  });
  await Deno.remove(world.home.replace(/\/home$/, ""), { recursive: true });
});
