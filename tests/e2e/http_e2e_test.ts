/**
 * End to end for remote servers: a real SDK client spawns `deno run -P main.ts mcp-serve` with a
 * temporary SYMPOSIUM_HOME whose plugins declare streamable HTTP servers on 127.0.0.1 (the fixture
 * of `testdata/servers/http_server.ts`, run in this process), and drives them through `execute`
 * and `list_tools`.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { startHttpFixture } from "../../testdata/servers/http_server.ts";
import type { HttpFixture } from "../../testdata/servers/http_server.ts";
import { REPO } from "../_fakes_backends.ts";
import { cargoLock, cargoToml } from "../_fakes_meta.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";

const SERVE_ARGS = [...sourceRunArgs(REPO)];
const API_KEY = "k-e2e-0123";

interface World {
  root: string;
  home: string;
  ws: string;
  remote: HttpFixture;
  locked: HttpFixture;
  moved: HttpFixture;
}

async function makeWorld(): Promise<World> {
  const root = await Deno.makeTempDir({ prefix: "symposium-e2e-http-" });
  const home = `${root}/home`;
  const ws = `${root}/ws`;
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.writeTextFile(`${ws}/Cargo.toml`, cargoToml({ serde: "1" }));
  await Deno.writeTextFile(`${ws}/Cargo.lock`, cargoLock({ serde: "1.0.219" }));
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  const remote = startHttpFixture({
    name: "remote-fixture",
    requireHeader: { name: "x-api-key", value: API_KEY },
  });
  const locked = startHttpFixture({
    unauthorized: { status: 401, challenge: 'Bearer resource_metadata="http://127.0.0.1/prm"' },
  });
  const moved = startHttpFixture();
  moved.options.redirectTo = `http://127.0.0.1:${moved.port}/new-home`;
  await Deno.mkdir(`${home}/plugins/remote`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/plugins/remote/SYMPOSIUM.toml`,
    `name = "remote"
depends-on = "*"

[[mcp_servers]]
name = "remote"
url = "${remote.url}"
headers = { X-Api-Key = "\${E2E_HTTP_KEY}" }

[[mcp_servers]]
name = "locked"
url = "${locked.url}"

[[mcp_servers]]
name = "moved"
url = "${moved.url}"

[[mcp_servers]]
name = "odd"
url = "http://0x7f.1:${remote.port}/mcp"

[[mcp_servers]]
name = "unset"
url = "\${E2E_HTTP_UNSET_HOST}/mcp"
`,
  );
  return { root, home, ws, remote, locked, moved };
}

async function connect(world: World): Promise<Client> {
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    SYMPOSIUM_HOME: world.home,
    E2E_HTTP_KEY: API_KEY,
  };
  delete env.E2E_HTTP_UNSET_HOST;
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...SERVE_ARGS, "mcp-serve"],
    env,
    cwd: world.ws,
    stderr: "ignore",
  });
  const client = new Client({ name: "e2e-http-agent", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

function textOf(result: unknown): string {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  return content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

/** Runs a script; returns its value, after checking the notice about the refused `unset` server. */
async function execute(client: Client, script: string): Promise<string> {
  const result = await client.callTool({ name: "execute", arguments: { script } });
  const structured = result.structuredContent as { result: string; notices?: string[] };
  assert.equal(textOf(result), JSON.stringify(structured));
  assert.deepEqual(structured.notices, [
    '`unset`: references environment variable "E2E_HTTP_UNSET_HOST", which is not set',
  ]);
  return structured.result;
}

Deno.test("mcp-serve reaches remote streamable HTTP servers from execute, with the endpoint policy", async (t) => {
  const world = await makeWorld();
  const client = await connect(world);
  try {
    await t.step("a remote server is not contacted before it is needed", async () => {
      const { tools } = await client.listTools();
      assert.match(tools[1]!.description ?? "", /Servers in scope: .*remote/);
      assert.equal(world.remote.hits.length, 0);
    });

    await t.step("a script calls a remote tool; the ${VAR} header reaches the server", async () => {
      assert.equal(await execute(client, `return await remote.echo({ text: "over http" })`), "over http");
      assert.ok(world.remote.hits.length > 0);
      for (const hit of world.remote.hits) assert.equal(hit.headers.get("x-api-key"), API_KEY);
    });

    await t.step("a 401 makes every message name the login command", async () => {
      const text = await execute(
        client,
        `try { await locked.echo({ text: "x" }) } catch (e) { return e.message }`,
      );
      assert.equal(text, "locked requires authorization (HTTP 401); run `cargo agents mcp login locked`");
      const listing = textOf(
        await client.callTool({ name: "list_tools", arguments: { servers: ["locked"] } }),
      );
      assert.match(listing, /`locked`: .*cargo agents mcp login locked/);
    });

    await t.step("a 302 is refused, naming where it pointed", async () => {
      const text = await execute(
        client,
        `try { await moved.echo({ text: "x" }) } catch (e) { return e.message }`,
      );
      assert.match(
        text,
        new RegExp(`answered 302 redirecting to http://127\\.0\\.0\\.1:${world.moved.port}/new-home`),
      );
      assert.ok(world.moved.hits.every((h) => h.path === "/mcp"), "the redirect was not followed");
    });

    await t.step("endpoint refusals and unset variables read clearly in list_tools", async () => {
      const listing = textOf(
        await client.callTool({ name: "list_tools", arguments: { servers: ["odd", "unset", "remote"] } }),
      );
      assert.match(listing, /`odd`: .*host "0x7f\.1" is an unusual spelling of 127\.0\.0\.1/);
      assert.match(listing, /`unset`: .*E2E_HTTP_UNSET_HOST/);
      assert.match(listing, /declare const remote: \{/);
    });

    await t.step("the server going away mid-session is restarted after backoff", async () => {
      await world.remote.stop();
      const lost = await execute(
        client,
        `try { await remote.echo({ text: "x" }) } catch (e) { return e.message }`,
      );
      assert.match(lost, /remote: connection lost: 127\.0\.0\.1:\d+ is unreachable/);
      world.remote.restart();
      const sessionsBefore = world.remote.sessions.length;
      assert.equal(await execute(client, `return await remote.echo({ text: "back" })`), "back");
      assert.equal(world.remote.sessions.length, sessionsBefore + 1, "a new session was initialized");
    });
  } finally {
    await client.close();
    await world.remote.close();
    await world.locked.close();
    await world.moved.close();
    await Deno.remove(world.root, { recursive: true });
  }
});
