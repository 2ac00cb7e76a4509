/**
 * End to end, as a hostile script or a careless agent would use the work that spans executes: a real
 * `mcp-serve` (SDK client over stdio) with the real server-filesystem. The `args` of a saved script's run
 * or save never reach the session log nor the report page.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { REPO } from "../_fakes_backends.ts";
import { cargoLock, cargoToml } from "../_fakes_meta.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";

const NM = `${REPO}node_modules/@modelcontextprotocol`;

interface World {
  root: string;
  home: string;
  ws: string;
}

async function makeWorld(): Promise<World> {
  const root = await Deno.makeTempDir({ prefix: "symposium-hostile-" });
  const home = `${root}/home`;
  const ws = `${root}/ws`;
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.mkdir(`${root}/data`, { recursive: true });
  await Deno.mkdir(`${home}/plugins/fs-tools`, { recursive: true });
  await Deno.writeTextFile(`${ws}/Cargo.toml`, cargoToml({ serde: "1" }));
  await Deno.writeTextFile(`${ws}/Cargo.lock`, cargoLock({ serde: "1.0.219" }));
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  await Deno.writeTextFile(`${root}/data/a.txt`, "TODO\n");
  const args = JSON.stringify([`${NM}/server-filesystem/dist/index.js`, `${root}/data`]);
  await Deno.writeTextFile(
    `${home}/plugins/fs-tools/SYMPOSIUM.toml`,
    `name = "fs-tools"\ndepends-on = "*"\n\n[[mcp_servers]]\nname = "filesystem"\ncommand = "node"\nargs = ${args}\n`,
  );
  return { root, home, ws };
}

function envOf(world: World): Record<string, string> {
  return { ...Deno.env.toObject(), SYMPOSIUM_HOME: world.home };
}

async function connect(world: World): Promise<Client> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...sourceRunArgs(REPO), "mcp-serve"],
    env: envOf(world),
    cwd: world.ws,
    stderr: "ignore",
  });
  const client = new Client({ name: "e2e-agent", version: "1.0.0" });
  await client.connect(transport);
  return client;
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

/** Every session log of the world, joined. */
async function logsOf(world: World): Promise<string> {
  let all = "";
  for await (const entry of Deno.readDir(`${world.home}/logs`)) {
    all += await Deno.readTextFile(`${world.home}/logs/${entry.name}`);
  }
  return all;
}

Deno.test("a saved script's args never reach the session log nor the report; the saved script does", async () => {
  const world = await makeWorld();
  const client = await connect(world);
  const execute = (args: Record<string, unknown>) => client.callTool({ name: "execute", arguments: args });
  try {
    const saved = await execute({
      script: "type Input = { dir: string; token: string };\n" +
        "const listing = await filesystem.list_directory({ path: input.dir });\nreturn input.token.length;",
      save_as: "count_files",
      description: "Counts.",
      args: { dir: `${world.root}/data`, token: "CANARY_SAVE_ARG_7f3a" },
    });
    assert.match(textOf(saved), /"result":20/);
    const ran = await execute({
      run: "count_files",
      args: { dir: `${world.root}/data`, token: "CANARY_RUN_ARG_91bc" },
    });
    assert.match(textOf(ran), /"result":19/);
  } finally {
    await client.close();
  }
  const logs = await logsOf(world);
  assert.ok(!/CANARY_/.test(logs), "an args value reached the session log");
  // What was run is still recorded: the saved script's call with the size of its args, and what was saved.
  assert.match(logs, /scripts\.count_files\(args: \d+ bytes of JSON, not logged\)/);
  assert.match(logs, /saved as:\\ntype Input = \{ dir: string; token: string \}/);
  const report = await cli(world, ["report", "--last", "--out", `${world.root}/report.html`]);
  assert.equal(report.code, 0, report.stderr);
  const page = await Deno.readTextFile(`${world.root}/report.html`);
  assert.ok(!/CANARY_/.test(page), "an args value reached the report page");
  assert.match(page, /scripts\.count_files\(args: \d+ bytes of JSON, not logged\)/);
  await Deno.remove(world.root, { recursive: true });
});
