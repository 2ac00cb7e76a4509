import assert from "node:assert/strict";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { Catalog } from "../lib/catalog.ts";
import { createMetaServer, parseListToolsArgs, renderListTools, toolArguments } from "../lib/meta_server.ts";
import {
  cargoLock,
  cargoToml,
  fixtureServerToml,
  hostRunner,
  makeDirs,
  type TestDirs,
  writePlugin,
} from "./_fakes_meta.ts";

interface Harness {
  dirs: TestDirs;
  catalog: Catalog;
  client: Client;
  notifications: string[];
  close(): Promise<void>;
}

async function harness(setup: (dirs: TestDirs) => Promise<void>): Promise<Harness> {
  const dirs = await makeDirs();
  await setup(dirs);
  const catalog = await Catalog.open({
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: dirs.home },
    homeDir: dirs.root,
  });
  const server = createMetaServer({ catalog, runner: hostRunner });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const notifications: string[] = [];
  const client = new Client({ name: "test-agent", version: "1" });
  client.fallbackNotificationHandler = (n) => {
    notifications.push(n.method);
    return Promise.resolve();
  };
  client.setNotificationHandler(
    "notifications/tools/list_changed",
    () => void notifications.push("tools/list_changed"),
  );
  await client.connect(a);
  return {
    dirs,
    catalog,
    client,
    notifications,
    async close() {
      await client.close();
      await server.close();
      await catalog.close();
      await dirs.remove();
    },
  };
}

function textOf(result: unknown): string {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  return content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function execute(h: Harness, script: string) {
  const result = await h.client.callTool({ name: "execute", arguments: { script } });
  return { text: textOf(result), isError: result.isError === true };
}

Deno.test("createMetaServer() advertises list_tools and execute with their annotations", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  assert.equal(h.client.getServerVersion()?.name, "symposium");
  assert.match(h.client.getInstructions() ?? "", /Start with `execute`/);
  const { tools } = await h.client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ["list_tools", "execute"]);
  assert.equal(tools[0]!.annotations?.readOnlyHint, true);
  assert.equal(tools[1]!.annotations?.destructiveHint, true);
  assert.equal(tools[1]!.annotations?.openWorldHint, true);
  assert.deepEqual(tools[1]!.inputSchema.required, ["script"]);
  assert.match(tools[1]!.description ?? "", /Servers in scope: fx\./);
  assert.deepEqual(h.catalog.runningServers(), []);
  await h.close();
});

Deno.test("list_tools answers an index and then declarations for a named server", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  const index = textOf(await h.client.callTool({ name: "list_tools", arguments: {} }));
  assert.match(index, /^fx:\n {2}echo - Echo a message back\.\n/);
  assert.match(index, /\n {2}you-search - Hyphenated name\./);
  const full = textOf(
    await h.client.callTool({ name: "list_tools", arguments: { servers: ["fx"], tools: ["echo"] } }),
  );
  assert.match(full, /declare const fx: \{/);
  assert.match(full, /echo\(params: \{/);
  assert.doesNotMatch(full, /you-search/);
  await h.close();
});

Deno.test("list_tools answers from the tool cache without starting the server", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  await h.client.callTool({ name: "list_tools", arguments: {} });
  const second = await Catalog.open({
    cwd: h.dirs.ws,
    env: { SYMPOSIUM_HOME: h.dirs.home },
    homeDir: h.dirs.root,
  });
  const text = await renderListTools(second, {});
  assert.match(text, /^fx:\n {2}echo - /);
  assert.deepEqual(second.runningServers(), []);
  await second.close();
  await h.close();
});

Deno.test("list_tools reports a server that fails to start with its stderr tail under Problems", async () => {
  const h = await harness(async (d) => {
    await writePlugin(d.home, "fx", fixtureServerToml("good"));
    await writePlugin(
      d.home,
      "broken",
      fixtureServerToml("broken", ["--fail-starts=99", `--counter-file=${d.root}/n`]),
    );
  });
  const text = textOf(await h.client.callTool({ name: "list_tools", arguments: {} }));
  assert.match(text, /^good:\n/);
  assert.match(
    text,
    /\nProblems:\n {2}`broken`: broken failed to start: .*exited with code 3; stderr: fixture: refusing start 1: database is locked/,
  );
  await h.close();
});

Deno.test("list_tools reports refused servers and unknown server names", async () => {
  const h = await harness(async (d) => {
    await writePlugin(d.home, "fx", fixtureServerToml("fx"));
    await writePlugin(d.home, "bad", fixtureServerToml("execute"));
  });
  const text = textOf(await h.client.callTool({ name: "list_tools", arguments: { servers: ["nope"] } }));
  assert.match(
    text,
    /Problems:\n {2}`execute`: server name "execute" is reserved by the meta-server\n {2}no server named `nope`\. Available: fx/,
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
  assert.match(hidden.text, /`fx` has no tool `fail`/);
  await h.close();
});

Deno.test("list_tools says so when no server applies", async () => {
  const h = await harness(() => Promise.resolve());
  assert.equal(
    textOf(await h.client.callTool({ name: "list_tools", arguments: {} })),
    "No MCP servers apply to this workspace.",
  );
  const ran = await execute(h, "return 1");
  assert.equal(ran.isError, true);
  assert.match(ran.text, /^No MCP tools are in scope, so there is nothing to call\./);
  await h.close();
});

Deno.test("execute resolves tolerant spellings, unwraps results and surfaces tool errors", async () => {
  const h = await harness((d) => writePlugin(d.home, "you", fixtureServerToml("you")));
  const result = await execute(
    h,
    `const a = await you.you_search({query: 'q'}); const b = await you.youSearch({query: 'q'});
     const items = await you.json_text(); let err; try { await you.fail({message: 'nope'}) } catch (e) { err = e.message }
     const v = await you.echo_args(7);
     return [a.results.web.length, b.results.web.length, items.filter(i => i.id > 1).length, err, v];`,
  );
  assert.equal(result.text, '[1,1,2,"nope",{"value":7}]');
  await h.close();
});

Deno.test("execute tags an off-shape result once per tool and passes it through", async () => {
  const h = await harness((d) => writePlugin(d.home, "bricks", fixtureServerToml("bricks")));
  const result = await execute(
    h,
    "const a = await bricks.lies(); const b = await bricks.lies(); return [a, b, await bricks.structured()]",
  );
  assert.equal(
    result.text,
    '["count: 7","count: 7",{"total":2,"items":["a","b"]}]\n[bricks.lies: result off-shape, treat as unknown]',
  );
  await h.close();
});

Deno.test("execute names the closest tool for an unknown key", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  const result = await execute(h, "return await fx.ecoh({message: 'x'})");
  assert.equal(result.isError, true);
  assert.match(result.text, /`fx` has no tool `ecoh`\. Closest match: `echo`\./);
  await h.close();
});

Deno.test("execute sees a tool that the server added mid-script after tools/list_changed", async () => {
  const h = await harness((d) => writePlugin(d.home, "dyn", fixtureServerToml("dyn")));
  const result = await execute(h, "await dyn.enable_b({}); return await dyn.b({})");
  assert.equal(result.text, '"B-OK"');
  assert.ok(h.notifications.includes("tools/list_changed"));
  await h.close();
});

Deno.test("execute reports calls completed as progress when the agent asks for it", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  const seen: number[] = [];
  const result = await h.client.callTool(
    {
      name: "execute",
      arguments: { script: "await fx.echo({message: 'a'}); return await fx.echo({message: 'b'})" },
    },
    { onprogress: (p) => seen.push(p.progress) },
  );
  assert.equal(textOf(result), '"b"');
  assert.deepEqual(seen, [1, 2]);
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

Deno.test("parseListToolsArgs() ignores what it does not understand", () => {
  assert.deepEqual(parseListToolsArgs({ servers: ["a", 1], detail: "loud", extra: true }), {
    servers: ["a"],
    tools: undefined,
    pattern: undefined,
    detail: undefined,
  });
});

Deno.test("toolArguments() sends {} for nothing and wraps non-objects", () => {
  assert.deepEqual(toolArguments(undefined), {});
  assert.deepEqual(toolArguments(null), {});
  assert.deepEqual(toolArguments({ a: 1 }), { a: 1 });
  assert.deepEqual(toolArguments([1]), { value: [1] });
  assert.deepEqual(toolArguments("x"), { value: "x" });
});
