import assert from "node:assert/strict";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { Catalog } from "../../lib/catalog/mod.ts";
import { createMetaServer } from "../../lib/meta_server/mod.ts";
import { waitFor } from "../_fakes_backends.ts";
import { cargoLock, cargoToml, fixtureServerToml, hostRunner, writePlugin } from "../_fakes_meta.ts";
import { execute, harness, textOf } from "./_harness.ts";

Deno.test("createMetaServer() advertises list_tools and execute with their annotations", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  assert.equal(h.client.getServerVersion()?.name, "symposium");
  assert.match(h.client.getInstructions() ?? "", /Start with `execute`/);
  const { tools } = await h.client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ["list_tools", "execute"]);
  assert.equal(tools[0]!.annotations?.readOnlyHint, true);
  assert.equal(tools[1]!.annotations?.destructiveHint, true);
  assert.equal(tools[1]!.annotations?.openWorldHint, true);
  // Exactly one of `script` and `run` (a saved script), so neither is required by the schema.
  assert.equal(tools[1]!.inputSchema.required, undefined);
  assert.deepEqual(Object.keys(tools[1]!.inputSchema.properties ?? {}), [
    "script",
    "trace",
    "save_as",
    "description",
    "run",
    "args",
  ]);
  assert.match(tools[1]!.description ?? "", /Servers in scope: fx\./);
  assert.deepEqual(h.catalog.runningServers(), []);
  await h.close();
});

Deno.test("execute and list_tools explain a dormant or refused server instead of not knowing it", async () => {
  const h = await harness(async (d) => {
    await writePlugin(d.home, "fx", fixtureServerToml("fx"));
    await writePlugin(d.home, "fs", fixtureServerToml("filesystem", [], 'depends-on = ["tokio"]'));
    await writePlugin(d.home, "bad", fixtureServerToml("execute"));
  });
  const dormant = await execute(h, "try { await filesystem.read_file({}) } catch (e) { return e.message }");
  assert.equal(
    dormant.text.split("\n")[0],
    JSON.stringify(
      "`filesystem` does not apply in this workspace: needs one of: tokio (not a dependency here)",
    ),
  );
  const refused = await execute(h, "try { await execute.run({}) } catch (e) { return e.message }");
  assert.match(
    refused.text,
    /^"`execute` is refused: server name \\"execute\\" is reserved by the meta-server"/,
  );
  const text = textOf(
    await h.client.callTool({ name: "list_tools", arguments: { servers: ["filesystem", "execute"] } }),
  );
  assert.match(
    text,
    /^Problems:\n {2}`execute`: server name "execute" is reserved by the meta-server \(\S+:\d+:\d+\); hint: [^\n]+\n {2}`filesystem` does not apply in this workspace: needs one of: tokio \(not a dependency here\)$/,
  );
  await h.close();
});

Deno.test("list_tools and execute hide tools by enabled-tools and read-only", async () => {
  const h = await harness(async (d) => {
    await writePlugin(d.home, "fx", fixtureServerToml("fx", [], 'enabled-tools = ["echo", "pid", "fail"]'));
    await Deno.writeTextFile(`${d.home}/config.toml`, "[mcp]\nread-only = true\n");
  });
  const text = textOf(await h.client.callTool({ name: "list_tools", arguments: {} }));
  assert.equal(text, "fx:\n  echo - Echo a message back.\n  pid - The process id.");
  const hidden = await execute(h, "return await fx.fail({})");
  assert.equal(hidden.isError, true);
  assert.match(hidden.text, /`fx\.fail` is hidden by `read-only = true`/);
  const notEnabled = await execute(h, "return await fx.youSearch({ query: 'x' })");
  assert.equal(notEnabled.isError, true);
  assert.match(notEnabled.text, /`fx\.you-search` is hidden by `enabled-tools`/);
  await h.close();
});

Deno.test("execute without a script string is an invalid-params error, and unknown tools are named", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  await assert.rejects(
    h.client.callTool({ name: "execute", arguments: {} }),
    /`execute` requires a `script` string/,
  );
  await assert.rejects(
    h.client.callTool({ name: "call_tool", arguments: {} }),
    /no such tool: call_tool\. Available: list_tools, execute/,
  );
  await h.close();
});

Deno.test("a dependency added mid-session brings its server in and keeps running ones running", async () => {
  const h = await harness(async (d) => {
    await writePlugin(d.home, "base", fixtureServerToml("base"));
    await writePlugin(d.home, "tok", fixtureServerToml("tok", [], 'depends-on = ["tokio"]'));
  });
  const before = await execute(h, "return (await base.pid()).pid");
  assert.doesNotMatch((await h.client.listTools()).tools[1]!.description ?? "", /tok/);
  await Deno.writeTextFile(`${h.dirs.ws}/Cargo.toml`, cargoToml({ serde: "1", tokio: "1" }));
  await Deno.writeTextFile(`${h.dirs.ws}/Cargo.lock`, cargoLock({ serde: "1.0.219", tokio: "1.40.0" }));
  const after = await execute(h, "return [(await base.pid()).pid, await tok.echo({message: 'hi'})]");
  assert.equal(after.text, `[${before.text},"hi"]`);
  assert.ok(h.notifications.includes("tools/list_changed"));
  assert.match((await h.client.listTools()).tools[1]!.description ?? "", /Servers in scope: base, tok\./);
  await h.close();
});

Deno.test("a plugin added mid-session brings its server in without restarting the running one", async () => {
  const h = await harness((d) => writePlugin(d.home, "base", fixtureServerToml("base")));
  const before = await execute(h, "return (await base.pid()).pid");
  await writePlugin(h.dirs.home, "late", fixtureServerToml("late"));
  assert.ok(
    await waitFor(async () =>
      /Servers in scope: base, late\./.test((await h.client.listTools()).tools[1]!.description!)
    ),
    "the new server never appeared in execute's description",
  );
  assert.ok(h.notifications.includes("tools/list_changed"));
  const after = await execute(h, "return [(await base.pid()).pid, await late.echo({message: 'hi'})]");
  assert.equal(after.text, `[${before.text},"hi"]`);
  await h.close();
});

Deno.test("a config.toml written mid-session applies to the next list_tools and tells the agent", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  const pid = (await execute(h, "return (await fx.pid()).pid")).text;
  assert.match(textOf(await h.client.callTool({ name: "list_tools", arguments: {} })), /\n {2}fail - /);
  await Deno.writeTextFile(`${h.dirs.home}/config.toml`, "[mcp]\nread-only = true\n");
  const text = textOf(await h.client.callTool({ name: "list_tools", arguments: {} }));
  assert.equal(text, "fx:\n  echo - Echo a message back.\n  pid - The process id.");
  assert.ok(h.notifications.includes("tools/list_changed"));
  assert.equal((await execute(h, "return (await fx.pid()).pid")).text, pid);
  await h.close();
});

Deno.test("an unfiltered list_tools starts nothing when the cache is fresh; a script starts only the server it calls", async () => {
  const warm = await harness(async (d) => {
    await writePlugin(d.home, "fx", fixtureServerToml("fx"));
    await writePlugin(d.home, "my-tools", fixtureServerToml("my-tools"));
  });
  await warm.client.callTool({ name: "list_tools", arguments: {} });
  await warm.catalog.close();
  const catalog = await Catalog.open({
    cwd: warm.dirs.ws,
    env: { SYMPOSIUM_HOME: warm.dirs.home },
    homeDir: warm.dirs.root,
  });
  const server = createMetaServer({ catalog, runner: hostRunner });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: "test-agent", version: "1" });
  await client.connect(a);
  const index = textOf(await client.callTool({ name: "list_tools", arguments: {} }));
  assert.match(index, /^fx:\n {2}echo - [^]*\nmy-tools \(as my_tools\):\n {2}echo - /);
  assert.deepEqual(catalog.runningServers(), []);
  const result = await client.callTool({
    name: "execute",
    arguments: { script: "return await my_tools.echo({message: 'x'})" },
  });
  assert.equal(textOf(result), '"x"');
  assert.deepEqual(catalog.runningServers(), ["my-tools"]);
  await client.close();
  await server.close();
  await catalog.close();
  await warm.close();
});

Deno.test("list_tools and execute say why when the only declared server does not apply", async () => {
  const h = await harness((d) =>
    writePlugin(d.home, "fs", fixtureServerToml("filesystem", [], 'depends-on = ["tokio"]'))
  );
  assert.equal(
    textOf(await h.client.callTool({ name: "list_tools", arguments: {} })),
    "No MCP servers apply to this workspace.\n" +
      "  `filesystem` does not apply in this workspace: needs one of: tokio (not a dependency here)",
  );
  const ran = await execute(h, "return await filesystem.read_file({})");
  assert.equal(ran.isError, true);
  assert.match(
    ran.text,
    /nothing to call\.\n {2}`filesystem` does not apply in this workspace: needs one of: tokio/,
  );
  await h.close();
});
