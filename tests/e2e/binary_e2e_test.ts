/**
 * The program as a user runs it, on any OS: `--version`, `status`, and an agent's `execute` of the
 * README's TODO script through `mcp-serve` against the real `@modelcontextprotocol/server-filesystem`.
 * `CARGO_AGENTS_BIN=/path/to/cargo-agents` runs a compiled binary (release CI does, on each target's own
 * runner); without it, `main.ts` from source exactly as the binary behaves.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { todoScript } from "../../bench/_world.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";
import denoJson from "../../deno.json" with { type: "json" };

/** The repository root as a native path (Windows included). */
const REPO = fileURLToPath(new URL("../../", import.meta.url));
const BIN = Deno.env.get("CARGO_AGENTS_BIN");
/** The program and the arguments before the command. */
const PROGRAM = BIN ? { command: BIN, args: [] } : { command: Deno.execPath(), args: sourceRunArgs(REPO) };

interface World {
  root: string;
  home: string;
  ws: string;
  data: string;
  todoFiles: string[];
}

/**
 * The README's worked plugin (`fs-tools`: server-filesystem on a data folder, gated on serde) in a config
 * dir, a Cargo workspace that depends on serde, and 12 files of which 3 mention TODO. Native paths only.
 */
async function makeWorld(): Promise<World> {
  const server = join(REPO, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
  await Deno.stat(server).catch(() => {
    throw new Error(`Cannot find ${server}: run \`deno install\` first`);
  });
  const root = await Deno.makeTempDir({ prefix: "cargo-agents-binary-" });
  const home = join(root, "home");
  const ws = join(root, "workspace");
  const data = join(root, "data");
  await Deno.mkdir(join(ws, "src"), { recursive: true });
  await Deno.mkdir(data, { recursive: true });
  await Deno.mkdir(join(home, "plugins", "fs-tools"), { recursive: true });
  await Deno.writeTextFile(
    join(ws, "Cargo.toml"),
    '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nserde = "1"\n',
  );
  await Deno.writeTextFile(
    join(ws, "Cargo.lock"),
    'version = 3\n\n[[package]]\nname = "demo"\nversion = "0.1.0"\n\n[[package]]\nname = "serde"\nversion = "1.0.219"\n',
  );
  await Deno.writeTextFile(join(ws, "src", "lib.rs"), "");
  const todoFiles: string[] = [];
  for (let i = 0; i < 12; i++) {
    const name = `note_${String(i).padStart(2, "0")}.md`;
    if (i % 4 === 1) todoFiles.push(name);
    await Deno.writeTextFile(join(data, name), i % 4 === 1 ? "TODO: fix this\n" : "all good\n");
  }
  await Deno.writeTextFile(
    join(home, "plugins", "fs-tools", "SYMPOSIUM.toml"),
    `name = "fs-tools"\ndepends-on = ["*"]\n\n[[mcp_servers]]\nname = "filesystem"\ndepends-on = ["serde"]\n` +
      `command = "node"\nargs = ${JSON.stringify([server, data])}\n`,
  );
  return { root, home, ws, data, todoFiles };
}

async function run(args: string[], env: Record<string, string>, cwd: string) {
  const out = await new Deno.Command(PROGRAM.command, {
    args: [...PROGRAM.args, ...args],
    env,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test(`${BIN ?? "main.ts"}: --version, status and execute through mcp-serve`, async (t) => {
  const world = await makeWorld();
  const env = { ...Deno.env.toObject(), SYMPOSIUM_HOME: world.home };
  try {
    await t.step("--version names the release", async () => {
      const out = await run(["--version"], env, world.ws);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, `cargo-agents ${denoJson.version}\n`);
    });

    await t.step("status lists the worked plugin's server as applying here, starting nothing", async () => {
      const out = await run(["status"], env, world.ws);
      assert.equal(out.code, 0, out.stderr);
      assert.match(out.stdout, /filesystem/);
      assert.match(out.stdout, /fs-tools/);
    });

    await t.step("an agent's execute runs the README's TODO script against server-filesystem", async () => {
      const transport = new StdioClientTransport({
        command: PROGRAM.command,
        args: [...PROGRAM.args, "mcp-serve"],
        env,
        cwd: world.ws,
        stderr: "pipe",
      });
      let stderr = "";
      transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
      const client = new Client({ name: "binary-e2e-agent", version: "1.0.0" });
      await client.connect(transport);
      try {
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((tool) => tool.name).sort(), ["execute", "list_tools"]);
        const result = await client.callTool({
          name: "execute",
          arguments: { script: todoScript(world.data) },
        });
        assert.equal(result.isError, undefined, JSON.stringify(result.content).slice(0, 500));
        assert.deepEqual((result.structuredContent as { result: unknown }).result, world.todoFiles);
      } finally {
        await client.close();
      }
      assert.doesNotMatch(
        stderr,
        /Warning|Download/,
        "mcp-serve printed a warning or download line at start",
      );
    });
  } finally {
    await Deno.remove(world.root, { recursive: true });
  }
});
