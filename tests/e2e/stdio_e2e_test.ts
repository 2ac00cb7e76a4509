/**
 * End to end: a real SDK client spawns `deno run -P main.ts mcp-serve` (as `selfCommand()` does)
 * with a temporary SYMPOSIUM_HOME and a temporary Cargo workspace, against the real npm servers
 * (filesystem, memory, everything) and the fixture server.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { FIXTURE, isAlive, REPO, waitFor } from "../_fakes_backends.ts";
import { cargoLock, cargoToml } from "../_fakes_meta.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";
import { todoScript } from "../../bench/_world.ts";

const NM = `${REPO}node_modules/@modelcontextprotocol`;
const SERVE_ARGS = [...sourceRunArgs(REPO)];

/** The npm servers are installed by `deno install` (pinned in deno.json); do it once if a clone lacks them. */
async function ensureNpmServers(): Promise<void> {
  try {
    await Deno.stat(`${NM}/server-filesystem/dist/index.js`);
    await Deno.stat(`${NM}/server-memory/dist/index.js`);
    await Deno.stat(`${NM}/server-everything/dist/index.js`);
  } catch {
    const out = await new Deno.Command(Deno.execPath(), { args: ["install", "--quiet"], cwd: REPO }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  }
}

interface World {
  root: string;
  home: string;
  ws: string;
  data: string;
  todoFiles: string[];
}

/** A home with plugins for the three npm servers and the fixture, a workspace depending on serde, a data folder. */
async function makeWorld(): Promise<World> {
  await ensureNpmServers();
  const root = await Deno.makeTempDir({ prefix: "symposium-e2e-" });
  const home = `${root}/home`;
  const ws = `${root}/ws`;
  const data = `${root}/data`;
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.mkdir(data, { recursive: true });
  await Deno.writeTextFile(`${ws}/Cargo.toml`, cargoToml({ serde: "1" }));
  await Deno.writeTextFile(`${ws}/Cargo.lock`, cargoLock({ serde: "1.0.219" }));
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  const todoFiles: string[] = [];
  for (let i = 0; i < 12; i++) {
    const name = `note_${String(i).padStart(2, "0")}.txt`;
    const hasTodo = i % 4 === 1;
    if (hasTodo) todoFiles.push(name);
    await Deno.writeTextFile(
      `${data}/${name}`,
      `line one of ${name}\n${hasTodo ? "TODO: fix this\n" : "all good\n"}`,
    );
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
  await plugin(
    "fs-tools",
    `[[mcp_servers]]\nname = "filesystem"\ndepends-on = ["serde"]\n${node("server-filesystem", [data])}`,
  );
  await plugin(
    "memory",
    `[[mcp_servers]]\nname = "memory"\n${
      node("server-memory", [], `env = { MEMORY_FILE_PATH = "${root}/memory.jsonl" }`)
    }`,
  );
  await plugin("everything", `[[mcp_servers]]\nname = "everything"\n${node("server-everything", ["stdio"])}`);
  const fixture = (name: string, flags: string[]) =>
    `[[mcp_servers]]\nname = "${name}"\ncommand = ${JSON.stringify(Deno.execPath())}\nargs = ${
      JSON.stringify([
        "run",
        "-A",
        "--quiet",
        "--config",
        `${REPO}deno.json`,
        FIXTURE,
        `--name=${name}`,
        ...flags,
      ])
    }\n`;
  await plugin(
    "fixtures",
    fixture("fx", ["--banner", "--stderr-bytes=200000"]) + "\n" +
      fixture("broken", ["--fail-starts=1000", `--counter-file=${root}/broken.count`]) + "\n" +
      fixture("parent", ["--spawn-child"]),
  );
  return { root, home, ws, data, todoFiles };
}

async function connect(world: World): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...SERVE_ARGS, "mcp-serve"],
    env: { ...Deno.env.toObject(), SYMPOSIUM_HOME: world.home },
    cwd: world.ws,
    stderr: "ignore",
  });
  const client = new Client({ name: "e2e-agent", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

function textOf(result: unknown): string {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  return content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

/**
 * The `structuredContent` of a successful `execute`, after checking that its text block is exactly that
 * object serialized (what agents that show both compare to show it once).
 */
function structuredOf(result: unknown): { result: unknown; notices?: string[]; console?: string[] } {
  const structured = (result as { structuredContent?: { result: unknown } }).structuredContent;
  assert.ok(structured, `no structuredContent: ${textOf(result).slice(0, 300)}`);
  assert.equal(textOf(result), JSON.stringify(structured));
  return structured;
}

/** The value a successful `execute` returned (its `structuredContent.result`). */
function valueOf(result: unknown): unknown {
  return structuredOf(result).result;
}

async function logText(world: World): Promise<string> {
  let text = "";
  for await (const entry of Deno.readDir(`${world.home}/logs`)) {
    text += await Deno.readTextFile(`${world.home}/logs/${entry.name}`);
  }
  return text;
}

// The seed's own script (`seeds/000_…`), shared with the demo.
const SEED_SCRIPT = todoScript;

Deno.test("mcp-serve answers a real agent through real backing servers", async (t) => {
  const world = await makeWorld();
  const { client, transport } = await connect(world);
  try {
    await t.step("advertises exactly list_tools and execute, as symposium", async () => {
      assert.equal(client.getServerVersion()?.name, "symposium");
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name), ["list_tools", "execute"]);
      assert.match(
        tools[1]!.description ?? "",
        /Servers in scope: broken, everything, filesystem, fx, memory, parent\./,
      );
    });

    await t.step("the seed's TODO script returns only the matching names", async () => {
      const result = await client.callTool({
        name: "execute",
        arguments: { script: SEED_SCRIPT(world.data) },
      });
      assert.equal(result.isError, undefined);
      assert.deepEqual(valueOf(result), world.todoFiles);
    });

    await t.step("a script that never calls a server never starts it", async () => {
      const log = await logText(world);
      assert.match(log, /\[filesystem\] spawned pid \d+: node /);
      for (const name of ["memory", "everything", "fx", "broken", "parent"]) {
        assert.doesNotMatch(log, new RegExp(`\\[${name}\\] spawned pid`), name);
      }
    });

    await t.step("memory: create then search in one script", async () => {
      const script = `
        await memory.create_entities({ entities: [{ name: "Ferris", entityType: "crab", observations: ["mascot of Rust"] }] });
        const found = await memory.searchNodes({ query: "Ferris" });
        return found.entities.map((e) => [e.name, e.entityType]);`;
      const result = await client.callTool({ name: "execute", arguments: { script } });
      assert.deepEqual(valueOf(result), [["Ferris", "crab"]]);
    });

    await t.step(
      "everything's get-sum is reached as getSum and structured content comes back as a value",
      async () => {
        const script = `return [await everything.getSum({ a: 2, b: 40 }),
        await everything["get-structured-content"]({ location: "Chicago" })]`;
        const result = await client.callTool({ name: "execute", arguments: { script } });
        const [sum, weather] = valueOf(result) as [string, { temperature: unknown }];
        assert.match(sum, /42/);
        assert.equal(typeof weather.temperature, "number");
      },
    );

    await t.step("images come back as image content blocks", async () => {
      const result = await client.callTool({
        name: "execute",
        arguments: { script: "return await everything.getTinyImage({})" },
      });
      const content = result.content as { type: string; mimeType?: string; data?: string }[];
      const image = content.find((c) => c.type === "image");
      assert.ok(image, JSON.stringify(content).slice(0, 300));
      assert.equal(image.mimeType, "image/png");
      assert.ok((image.data ?? "").length > 100);
      assert.doesNotMatch(textOf(result), new RegExp(image.data!.slice(0, 40).replace(/[+/]/g, "\\$&")));
    });

    await t.step("an off-shape result is passed through and tagged once", async () => {
      const script = "return [await fx.lies(), await fx.lies(), await fx.lies_struct()]";
      const result = await client.callTool({ name: "execute", arguments: { script } });
      const structured = structuredOf(result);
      assert.deepEqual(structured.result, ["count: 7", "count: 7", { bin: "A1" }]);
      assert.deepEqual(structured.notices, [
        "fx.lies: result off-shape, treat as unknown",
        "fx.lies_struct: result off-shape, treat as unknown",
      ]);
    });

    await t.step("list_tools reports a failing server with its stderr tail", async () => {
      const text = textOf(
        await client.callTool({ name: "list_tools", arguments: { servers: ["broken", "fx"] } }),
      );
      assert.match(text, /declare const fx: \{/);
      assert.match(
        text,
        /Problems:\n {2}`broken`: broken failed to start: .*exited with code 3 before answering initialize; stderr: fixture: refusing start \d+: database is locked/,
      );
    });

    await t.step("an image larger than max-result-bytes comes back whole as an image block", async () => {
      const result = await client.callTool({
        name: "execute",
        arguments: {
          script: "const [, image] = await fx.image({ bytes: 100000 }); return { kind: 'shot', image }",
        },
      });
      const content = result.content as { type: string; mimeType?: string; data?: string }[];
      assert.deepEqual(content.map((c) => c.type), ["text", "image"]);
      assert.equal(content[1]!.data, "A".repeat(100_000));
      assert.deepEqual(valueOf(result), {
        kind: "shot",
        image: { type: "image", mimeType: "image/png", attachment: 1 },
      });
    });

    await t.step(
      "progress: calls completed and the backing server's own progress reach the agent",
      async () => {
        const seen: string[] = [];
        // Count the reports that arrive at all, to tell whether any came after the result (then lost).
        let arrived = 0;
        const deliver = transport.onmessage!;
        transport.onmessage = (message) => {
          if ("method" in message && message.method === "notifications/progress") arrived++;
          deliver(message);
        };
        const result = await client.callTool(
          { name: "execute", arguments: { script: "return await fx.sleep({ ms: 300 })" } },
          { onprogress: (p) => seen.push(`${Math.round(p.progress * 100) / 100} ${p.message}`) },
        );
        const handled = seen.length;
        await new Promise((resolve) => setTimeout(resolve, 200)); // a report sent after the result arrives by now
        transport.onmessage = deliver;
        assert.equal(valueOf(result), "SLOW-OK");
        // Reports are throttled (PROGRESS_INTERVAL_MS): the server's first report, 100 ms in, is always sent;
        // later ones may be merged into the next or dropped once the result is there.
        assert.equal(seen[0], "0.33 fx.sleep: 100/300");
        const values = seen.map((line) => Number(line.split(" ")[0]));
        assert.ok(values.every((v, i) => i === 0 || v > values[i - 1]!), seen.join(", "));
        assert.equal(arrived, handled, `a report arrived after the result: ${seen.join(", ")}`);
      },
    );

    await t.step("cancelling an execute interrupts the script and cancels its backing call", async () => {
      const pid = valueOf(
        await client.callTool({ name: "execute", arguments: { script: "return (await fx.pid()).pid" } }),
      );
      const abort = new AbortController();
      const pending = client.callTool(
        { name: "execute", arguments: { script: "await fx.hang({}); return 'never'" } },
        { signal: abort.signal },
      );
      await new Promise((r) => setTimeout(r, 500));
      abort.abort("the user pressed Escape");
      await assert.rejects(pending);
      assert.ok(
        await waitFor(async () => {
          const log = await logText(world);
          return /\[fx\] stderr: fixture: hang cancelled: /.test(log) &&
            /execute failed: \{"error":"cancelled"\}/.test(log) &&
            /execute: cancelled by the agent in \d+ ms/.test(log);
        }),
        "the cancellation did not reach the sandbox and the backing server:\n" +
          (await logText(world)).split("\n").filter((l) => /cancel|execute|hang/.test(l)).join("\n"),
      );
      const after = await client.callTool({
        name: "execute",
        arguments: { script: "return [(await fx.pid()).pid, (await fx.stats()).cancelled]" },
      });
      assert.deepEqual(valueOf(after), [pid, 1]);
    });

    await t.step("a call to a crashed server fails fast and the next one gets a fresh process", async () => {
      const script =
        `const a = (await fx.pid()).pid; let b; try { await fx.hang({}) } catch (e) { b = e.message } return [a, b]`;
      // hang is bounded by the fixture's tool-call timeout (60 s default); kill the server instead.
      const pidResult = await client.callTool({
        name: "execute",
        arguments: { script: "return (await fx.pid()).pid" },
      });
      const pid = valueOf(pidResult) as number;
      const pending = client.callTool({ name: "execute", arguments: { script } });
      await new Promise((r) => setTimeout(r, 500));
      Deno.kill(pid, "SIGKILL");
      const [samePid, message] = valueOf(await pending) as [number, string];
      assert.equal(samePid, pid);
      assert.match(message, /^fx: connection lost: killed by SIGKILL/);
      const again = valueOf(
        await client.callTool({ name: "execute", arguments: { script: "return (await fx.pid()).pid" } }),
      ) as number;
      assert.ok(again > 0 && again !== pid);
    });
  } finally {
    await client.close();
    await Deno.remove(world.root, { recursive: true });
  }
});

async function spawnServe(world: World, extraArgs: string[] = []) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...SERVE_ARGS, ...extraArgs, "mcp-serve"],
    env: { SYMPOSIUM_HOME: world.home },
    cwd: world.ws,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  const lines: string[] = [];
  const waiters: { id: number; resolve: (v: Record<string, unknown>) => void }[] = [];
  const stdoutDone = (async () => {
    let buf = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        lines.push(line);
        try {
          const msg = JSON.parse(line);
          const w = waiters.find((x) => x.id === msg.id);
          if (w) w.resolve(msg);
        } catch { /* asserted by the test */ }
      }
    }
    if (buf) lines.push(buf);
  })();
  const stderrDone = child.stderr.pipeTo(new WritableStream());
  let nextId = 1;
  const request = (method: string, params: unknown) => {
    const id = nextId++;
    const p = new Promise<Record<string, unknown>>((resolve) => waiters.push({ id, resolve }));
    void send({ jsonrpc: "2.0", id, method, params });
    return p;
  };
  await request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  });
  await send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return {
    child,
    lines,
    request,
    async closeStdin() {
      await writer.close();
      const status = await child.status;
      await stdoutDone;
      await stderrDone;
      return status;
    },
  };
}

Deno.test("mcp-serve writes only JSON-RPC on stdout, even with chatty servers and --verbose", async () => {
  const world = await makeWorld();
  const serve = await spawnServe(world, ["--verbose"]);
  try {
    const result = await serve.request("tools/call", {
      name: "execute",
      arguments: { script: "return await fx.echo({message: 'hi'})" },
    });
    assert.equal(valueOf(result.result), "hi");
    await serve.request("tools/call", { name: "list_tools", arguments: {} });
  } finally {
    const status = await serve.closeStdin();
    assert.equal(status.code, 0);
    await Deno.remove(world.root, { recursive: true });
  }
  assert.ok(serve.lines.length >= 3);
  for (const line of serve.lines) assert.equal(JSON.parse(line).jsonrpc, "2.0", line.slice(0, 200));
});

Deno.test("closing stdin ends mcp-serve and every backing process, grandchildren included", async () => {
  const world = await makeWorld();
  const serve = await spawnServe(world);
  const script =
    "return [(await parent.pid()).pid, (await filesystem.list_allowed_directories()).length > 0]";
  const result = await serve.request("tools/call", { name: "execute", arguments: { script } });
  const [fixturePid] = valueOf(result.result) as [number];
  const log = await logText(world);
  const nodePid = Number(/\[filesystem\] spawned pid (\d+)/.exec(log)?.[1]);
  const grandchild = Number(/\[parent\] stderr: fixture: grandchild pid (\d+)/.exec(log)?.[1]);
  for (const pid of [fixturePid, nodePid, grandchild]) assert.ok(pid > 0 && await isAlive(pid), `pid ${pid}`);
  const status = await serve.closeStdin();
  assert.equal(status.code, 0);
  for (const pid of [fixturePid, nodePid, grandchild]) {
    assert.ok(await waitFor(async () => !(await isAlive(pid)), 3_000), `pid ${pid} still alive`);
  }
  await Deno.remove(world.root, { recursive: true });
});
