// `$session` through a real `mcp-serve` against the real npm server-filesystem: values kept across
// executes and between executes running at once, gone in a new session, refused past each budget with the
// session going on, never on disk nor in the session log, shown in `list_tools` as keys and sizes only.
import assert from "node:assert/strict";
import { makeRawWorld, RawServe, type RawWorld, REPO } from "../../bench/_raw_serve.ts";

const FS_SERVER = `${REPO}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;

/** A world whose one server is server-filesystem over `<root>/data`, holding 12 notes, 3 with a TODO. */
async function makeWorld(configToml = ""): Promise<RawWorld & { data: string; todo: string[] }> {
  const data = await Deno.makeTempDir({ prefix: "symposium-session-data-" });
  const toml = `[[mcp_servers]]\nname = "filesystem"\ncommand = "node"\nargs = ${
    JSON.stringify([FS_SERVER, data])
  }\n`;
  const world = await makeRawWorld(toml, configToml);
  const todo: string[] = [];
  for (let i = 0; i < 12; i++) {
    const name = `note_${String(i).padStart(2, "0")}.txt`;
    if (i % 4 === 1) todo.push(name);
    await Deno.writeTextFile(`${data}/${name}`, `line one\n${i % 4 === 1 ? "TODO: fix this" : "all good"}\n`);
  }
  return {
    ...world,
    data,
    todo,
    remove: async () => {
      await world.remove();
      await Deno.remove(data, { recursive: true });
    },
  };
}

async function withServe(world: RawWorld, body: (serve: RawServe) => Promise<void>): Promise<void> {
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    await serve.initialize();
    await body(serve);
  } finally {
    if (serve.isRunning) await serve.close();
    else await serve.kill();
  }
}

/** The value of a successful `execute` (its text is `{ result }` serialized). */
function valueOf(answer: { text: string; isError: boolean }): unknown {
  assert.equal(answer.isError, false, answer.text);
  return (JSON.parse(answer.text) as { result?: unknown }).result;
}

/** Every file under `dir` whose text holds `needle`. */
async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (at: string) => {
    for await (const entry of Deno.readDir(at)) {
      const path = `${at}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (entry.isFile && (await Deno.readTextFile(path)).includes(needle)) found.push(path);
    }
  };
  await walk(dir);
  return found;
}

const STORE_TODO = (dir: string) => `
const listing = await filesystem.list_directory({ path: ${JSON.stringify(dir)} });
const names = listing.content.split("\\n").filter((l) => l.startsWith("[FILE] ")).map((l) => l.slice(7));
const hits = [];
for (const name of names) {
  const file = await filesystem.read_text_file({ path: \`${dir}/\${name}\` });
  if (file.content.includes("TODO")) hits.push({ name, text: file.content });
}
await $session.set("todo_files", hits);
return hits.length;`;

const ACT_ON_TODO = (dir: string) => `
const hits = await $session.get("todo_files");
await filesystem.write_file({
  path: ${JSON.stringify(`${dir}/TODO-INDEX.md`)},
  content: hits.map((h) => "- " + h.name).join("\\n") + "\\n",
});
return hits.length;`;

Deno.test("$session keeps the TODO task's files between two executes; only counts reach the agent", async () => {
  const world = await makeWorld();
  try {
    await withServe(world, async (serve) => {
      const first = await serve.execute(STORE_TODO(world.data));
      assert.equal(valueOf(first), 3);
      for (const name of world.todo) assert.ok(!first.text.includes(name), first.text);
      const second = await serve.execute(ACT_ON_TODO(world.data));
      assert.equal(valueOf(second), 3);
      for (const name of world.todo) assert.ok(!second.text.includes(name), second.text);
      const index = await Deno.readTextFile(`${world.data}/TODO-INDEX.md`);
      assert.equal(index, world.todo.map((n) => `- ${n}`).join("\n") + "\n");
      const keys = valueOf(await serve.execute("return await $session.keys()"));
      assert.deepEqual(keys, ["todo_files"]);
    });
  } finally {
    await world.remove();
  }
});

Deno.test("list_tools names the $session keys and their sizes, never the values, and declares $session", async () => {
  const world = await makeWorld();
  try {
    await withServe(world, async (serve) => {
      const canary = `canary-${crypto.randomUUID()}`;
      const value = { secret: canary, rows: [1, 2, 3] };
      valueOf(await serve.execute(`await $session.set("notes", ${JSON.stringify(value)}); return "kept"`));
      const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
      const index = await serve.listTools({});
      assert.ok(
        index.text.includes(
          `$session (1 key, ${
            bytes + 5
          } B of 64.0 MB): "notes" ${bytes} B — read with await $session.get(key)`,
        ),
        index.text,
      );
      assert.ok(!index.text.includes(canary), index.text);
      const declarations = await serve.listTools({ detail: "signatures" });
      assert.match(declarations.text, /declare const \$session: \{/);
      assert.match(declarations.text, /get\(key: string\): Promise<unknown>;/);
      assert.ok(!declarations.text.includes(canary));
    });
  } finally {
    await world.remove();
  }
});

Deno.test("$session values never reach the config folder, the tool cache or the session log", async () => {
  const world = await makeWorld();
  try {
    const canary = `canary-${crypto.randomUUID()}`;
    // The value comes from a backing server, not from the script's text (the log keeps every script).
    await Deno.writeTextFile(`${world.data}/secret.txt`, canary);
    await withServe(world, async (serve) => {
      // A tool call too, so the tool cache and observed shapes are written during the session.
      const script = `const file = await filesystem.read_text_file({ path: ${
        JSON.stringify(`${world.data}/secret.txt`)
      } });
        await $session.set("secret", { token: file.content });
        const back = await $session.get("secret");
        return back.token.length`;
      assert.equal(valueOf(await serve.execute(script)), canary.length);
      // A refused set names the key, never the value.
      const refused = await serve.execute(
        `try { const back = await $session.get("secret"); await $session.set("big", back.token.repeat(300000)); } catch (e) { return e.message }`,
      );
      assert.ok(!(valueOf(refused) as string).includes(canary));
    });
    const logs = await Array.fromAsync(Deno.readDir(`${world.home}/logs`));
    assert.ok(logs.length > 0, "the session wrote its log");
    assert.deepEqual(await filesHolding(world.home, canary), []);
    assert.deepEqual(await filesHolding(world.ws, canary), []);
  } finally {
    await world.remove();
  }
});

Deno.test("two executes running at once see each other's completed $session sets", async () => {
  const world = await makeWorld();
  try {
    await withServe(world, async (serve) => {
      // Each sets its own key, then waits (at most 80 looks) until the other's key is there.
      const waitFor = (mine: string, other: string) => `
        await $session.set(${JSON.stringify(mine)}, { from: ${JSON.stringify(mine)} });
        for (let i = 0; i < 80; i++) {
          const seen = await $session.get(${JSON.stringify(other)});
          if (seen !== undefined) return seen.from;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        return "never saw " + ${JSON.stringify(other)};`;
      const [a, b] = await Promise.all([serve.execute(waitFor("a", "b")), serve.execute(waitFor("b", "a"))]);
      assert.equal(valueOf(a), "b");
      assert.equal(valueOf(b), "a");
    });
  } finally {
    await world.remove();
  }
});

Deno.test("$session is empty in a new session of the same workspace", async () => {
  const world = await makeWorld();
  try {
    await withServe(world, async (serve) => {
      valueOf(await serve.execute(`await $session.set("kept", [1, 2, 3]); return 1`));
      assert.deepEqual(valueOf(await serve.execute(`return await $session.get("kept")`)), [1, 2, 3]);
    });
    await withServe(world, async (serve) => {
      assert.deepEqual(
        valueOf(
          await serve.execute(`return [await $session.get("kept") === undefined, await $session.keys()]`),
        ),
        [true, []],
      );
      assert.ok(!(await serve.listTools({})).text.includes("$session"));
    });
  } finally {
    await world.remove();
  }
});

Deno.test("$session refuses a set past the store, the value cap or the key rules; the script and session go on", async () => {
  const world = await makeWorld("session-store-mb = 1");
  try {
    await withServe(world, async (serve) => {
      const refusal = (key: string, value: string) => `
        try { await $session.set(${key}, ${value}); return "kept"; } catch (e) { return e.message; }`;
      valueOf(await serve.execute(`await $session.set("first", "a".repeat(600000)); return 1`));
      // The store: 600,000 + 600,002 bytes would pass 1 MiB; the message names key, size and limit.
      const store = valueOf(await serve.execute(refusal('"second"', '"b".repeat(600000)'))) as string;
      assert.match(
        store,
        /^Cannot set \$session key "second": its value is 600,002 bytes of JSON, more than the 448,563 bytes left in the session store \(600,007 of its 1,048,576 bytes are held by other keys, \[mcp\] session-store-mb = 1\); the key keeps its previous value; delete keys/,
      );
      // Replacing a key counts its new size only: "first" may grow to what the store holds.
      assert.equal(valueOf(await serve.execute(refusal('"first"', '"c".repeat(1000000)'))), "kept");
      // One value: 8 MiB + 100 bytes is refused by the store's cap, 9 MiB before it leaves the sandbox.
      const justOver = valueOf(await serve.execute(refusal('"huge"', '"d".repeat(8 * 1024 * 1024 + 98)')));
      assert.equal(
        justOver,
        'Cannot set $session key "huge": its value is 8,388,708 bytes of JSON, more than the 8,388,608 bytes ' +
          "one value may hold; the key keeps its previous value",
      );
      const farOver = valueOf(await serve.execute(refusal('"huge"', '"e".repeat(9 * 1024 * 1024)')));
      assert.equal(
        farOver,
        'Cannot set $session key "huge": its value is 9,437,186 bytes of JSON, more than the 8,388,608 bytes ' +
          "one value may hold; the key keeps its previous value",
      );
      // Keys: too long, empty, a control character, not a string; undefined as a value.
      assert.match(
        valueOf(await serve.execute(refusal('"k".repeat(200)', "1"))) as string,
        /^Cannot set \$session key "k{40}"…: a key is a string of 1 to 128 printable characters, this one has 200$/,
      );
      assert.match(valueOf(await serve.execute(refusal('""', "1"))) as string, /key "": .* this one has 0$/);
      assert.match(
        valueOf(await serve.execute(refusal('"a\\nb"', "1"))) as string,
        /key "a\\nb": .* holds a control character/,
      );
      assert.match(valueOf(await serve.execute(refusal("42", "1"))) as string, /not number$/);
      assert.match(
        valueOf(await serve.execute(refusal('"u"', "undefined"))) as string,
        /key "u": the value is undefined, which has no JSON form; remove a key with \$session\.delete\("u"\)/,
      );
      // An uncaught refusal fails that execute only; the session and the kept value go on.
      const uncaught = await serve.execute(`await $session.set("first", "x".repeat(2000000)); return 1`);
      assert.equal(uncaught.isError, true);
      assert.match(
        (JSON.parse(uncaught.text) as { message: string }).message,
        /^Error from \$session\.set: Cannot set \$session key "first": its value is 2,000,002 bytes/,
      );
      assert.deepEqual(
        valueOf(await serve.execute(`const v = await $session.get("first"); return [v.length, v[0]]`)),
        [1_000_000, "c"],
      );
      assert.deepEqual(valueOf(await serve.execute(`return await $session.keys()`)), ["first"]);
    });
  } finally {
    await world.remove();
  }
});

Deno.test("$session is emptied when the session's workspace root changes, kept while it does not", async () => {
  const world = await makeWorld();
  const inner = `${world.ws}/inner`;
  await Deno.mkdir(inner);
  try {
    const serve = RawServe.start({ home: world.home, cwd: inner }); // inside the package at world.ws
    try {
      await serve.initialize();
      valueOf(await serve.execute(`await $session.set("kept", 1); return 1`));
      // A change that keeps the root (Cargo.lock rewritten) keeps the values.
      await Deno.writeTextFile(
        `${world.ws}/Cargo.lock`,
        `version = 3\n\n[[package]]\nname = "demo"\nversion = "0.1.1"\n`,
      );
      assert.equal(valueOf(await serve.execute(`return await $session.get("kept")`)), 1);
      // inner becomes a package of its own: the root is now inner, seen at the next look at the files.
      await Deno.writeTextFile(
        `${inner}/Cargo.toml`,
        `[package]\nname = "inner"\nversion = "0.1.0"\nedition = "2021"\n`,
      );
      await Deno.writeTextFile(`${world.ws}/Cargo.lock`, `version = 3\n`);
      let keys: unknown = ["kept"];
      for (let look = 0; look < 60 && JSON.stringify(keys) !== "[]"; look++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        keys = valueOf(await serve.execute("return await $session.keys()"));
      }
      assert.deepEqual(keys, []);
    } finally {
      await serve.close();
    }
  } finally {
    await world.remove();
  }
});
