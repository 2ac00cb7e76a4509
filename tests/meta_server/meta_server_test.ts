import assert from "node:assert/strict";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { Catalog, toolCachePath } from "../../lib/catalog/mod.ts";
import { spawnKey } from "../../lib/plugins/server_spec.ts";
import {
  createMetaServer,
  parseListToolsArgs,
  renderListTools,
  toolArguments,
} from "../../lib/meta_server/mod.ts";
import { MAX_CALLS_IN_FLIGHT_PER_SERVER } from "../../lib/backends/pool.ts";
import { waitFor } from "../_fakes_backends.ts";
import {
  cargoLock,
  cargoToml,
  fixtureServerToml,
  hostRunner,
  makeDirs,
  type TestDirs,
  writePlugin,
} from "../_fakes_meta.ts";

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
    /\nProblems:\n {2}`broken`: broken failed to start: .*exited with code 3 before answering initialize; stderr: fixture: refusing start 1: database is locked/,
  );
  await h.close();
});

Deno.test("list_tools shows a server given up for the session under Problems, not its cached tools", async () => {
  const h = await harness(async (d) => {
    await writePlugin(
      d.home,
      "broken",
      fixtureServerToml("broken", ["--fail-starts=99", `--counter-file=${d.root}/n`]),
    );
    await Deno.writeTextFile(`${d.home}/config.toml`, "[mcp]\nmax-server-restarts = 0\n");
  });
  const spec = h.catalog.servers[0]!;
  const tool = { name: "echo", description: "Echo a message back.", inputSchema: { type: "object" } };
  const path = await toolCachePath(h.catalog.configDir, spec);
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(
    path,
    JSON.stringify({ spawnKey: spawnKey(spec), fetchedAtMs: Date.now(), tools: [tool] }),
  );
  assert.match(textOf(await h.client.callTool({ name: "list_tools", arguments: {} })), /^broken:\n {2}echo/);
  const ran = await execute(h, "return await broken.echo({ message: 'hi' })");
  assert.equal(ran.isError, true);
  assert.equal(h.catalog.serverState(spec).status, "failed");
  const text = textOf(await h.client.callTool({ name: "list_tools", arguments: {} }));
  assert.doesNotMatch(text, /echo/);
  assert.match(
    text,
    /^Problems:\n {2}`broken`: broken failed 1 times and is not restarted in this session: .*database is locked/,
  );
  await h.close();
});

Deno.test("renderListTools() answers an unfiltered call without waiting for a hung server; naming it waits", async () => {
  const h = await harness(async (d) => {
    await writePlugin(d.home, "fx", fixtureServerToml("fx"));
    await writePlugin(
      d.home,
      "hung",
      '[[mcp_servers]]\nname = "hung"\ncommand = "sleep"\nargs = ["1000"]\nstartup-timeout-secs = 3\n',
    );
  });
  assert.match(await renderListTools(h.catalog, { servers: ["fx"] }), /declare const fx/);
  const t0 = Date.now();
  const text = await renderListTools(h.catalog, {}, undefined, { unfilteredWaitMs: 300 });
  assert.ok(Date.now() - t0 < 2_500, `took ${Date.now() - t0} ms`);
  assert.match(text, /^fx:\n {2}echo - /);
  assert.match(
    text,
    /\nProblems:\n {2}`hung`: still starting; call list_tools again or name it in `servers`$/,
  );
  assert.equal(h.catalog.serverState(h.catalog.serverByName("hung")!).status, "starting");
  const named = await renderListTools(h.catalog, { servers: ["hung"] });
  assert.match(named, /^Problems:\n {2}`hung`: hung did not start within 3(\.\d)?s/);
  await h.close();
});

Deno.test("list_tools finds tools named in `tools` with the tolerant spelling execute accepts", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  const text = textOf(
    await h.client.callTool({ name: "list_tools", arguments: { tools: ["youSearch", "ECHO"] } }),
  );
  assert.match(text, /declare const fx: \{/);
  assert.match(text, /you-search|youSearch/);
  assert.match(text, /echo\(params: \{/);
  assert.doesNotMatch(text, /pid\(/);
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
    /Problems:\n {2}`execute`: server name "execute" is reserved by the meta-server \(\S+\/plugins\/bad\/SYMPOSIUM\.toml:\d+:\d+\); hint: [^\n]+\n {2}no server named `nope`\. Available: fx/,
  );
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

Deno.test("execute reports calls completed as progress, naming each tool, when the agent asks for it", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  const seen: { progress: number; message?: string | undefined }[] = [];
  const result = await h.client.callTool(
    {
      name: "execute",
      arguments: {
        script:
          "await fx.echo({message: 'a'}); try { await fx.fail({}) } catch {} return await fx.echo({message: 'b'})",
      },
    },
    { onprogress: (p) => seen.push({ progress: p.progress, message: p.message }) },
  );
  assert.equal(textOf(result), '"b"');
  assert.deepEqual(seen, [
    { progress: 1, message: "fx.echo done (1 call completed)" },
    { progress: 2, message: "fx.fail failed (2 calls completed)" },
    { progress: 3, message: "fx.echo done (3 calls completed)" },
  ]);
  await h.close();
});

Deno.test("execute forwards a backing server's progress for its calls, always increasing", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  const seen: { progress: number; message?: string | undefined }[] = [];
  const result = await h.client.callTool(
    {
      name: "execute",
      arguments: { script: "await fx.echo({message: 'a'}); return await fx.sleep({ms: 300})" },
    },
    { onprogress: (p) => seen.push({ progress: p.progress, message: p.message }) },
  );
  assert.equal(textOf(result), '"SLOW-OK"');
  // The server's last report races its own response inside the SDK client (the response wins and
  // drops the progress handler), so "300/300" may or may not be forwarded.
  const shown = seen.filter((p) => p.message !== "fx.sleep: 300/300");
  assert.deepEqual(shown.map((p) => p.message), [
    "fx.echo done (1 call completed)",
    "fx.sleep: 100/300",
    "fx.sleep: 200/300",
    "fx.sleep done (2 calls completed)",
  ]);
  assert.deepEqual(shown.map((p) => Math.round(p.progress * 100) / 100), [1, 1.33, 1.67, 2]);
  assert.ok(seen.every((p, i) => i === 0 || p.progress > seen[i - 1]!.progress), JSON.stringify(seen));
  await h.close();
});

Deno.test("execute sends no progress when the agent did not ask for it", async () => {
  const h = await harness((d) => writePlugin(d.home, "fx", fixtureServerToml("fx")));
  await execute(h, "return await fx.sleep({ms: 200})");
  assert.ok(!h.notifications.includes("notifications/progress"), h.notifications.join(", "));
  await h.close();
});

Deno.test("execute runs calls under Promise.all at most 8 at a time per server, and all 100 complete", async () => {
  const h = await harness(async (d) => {
    await writePlugin(d.home, "fx", fixtureServerToml("fx"));
    await writePlugin(d.home, "other", fixtureServerToml("other"));
  });
  const result = await execute(
    h,
    `const calls = [];
     for (let i = 0; i < 100; i++) calls.push(fx.sleep({ms: 40}));
     for (let i = 0; i < 10; i++) calls.push(other.sleep({ms: 40}));
     const done = await Promise.all(calls);
     return [done.filter((d) => d === "SLOW-OK").length, (await fx.stats()).maxInFlight,
       (await other.stats()).maxInFlight];`,
  );
  const [completed, fxPeak, otherPeak] = JSON.parse(result.text) as number[];
  assert.equal(completed, 110);
  // 100 queued calls keep fx saturated, so its peak is the bound; `other`'s 10 calls may finish before
  // the last arrive on a loaded machine, so its peak only has to respect the bound and show concurrency.
  assert.equal(fxPeak, MAX_CALLS_IN_FLIGHT_PER_SERVER);
  assert.ok(otherPeak! >= 2 && otherPeak! <= MAX_CALLS_IN_FLIGHT_PER_SERVER, `other peaked at ${otherPeak}`);
  await h.close();
});

Deno.test("execute cancelled by the agent cancels its in-flight backing calls and the session keeps serving", async () => {
  const h = await harness((d) =>
    writePlugin(d.home, "fx", fixtureServerToml("fx", [`--calls-file=${d.root}/calls`]))
  );
  const callsFile = `${h.dirs.root}/calls`;
  const pid = (await execute(h, "return (await fx.pid()).pid")).text;
  const abort = new AbortController();
  const pending = h.client.callTool(
    { name: "execute", arguments: { script: "await Promise.all([fx.hang({}), fx.hang({})]); return 1" } },
    { signal: abort.signal },
  );
  const hangs = async () =>
    (await Deno.readTextFile(callsFile)).split("\n").filter((l) => l === "hang").length;
  assert.ok(await waitFor(async () => await hangs() === 2), "the two hanging calls never reached the server");
  abort.abort("the user pressed Escape");
  await assert.rejects(pending);
  const after = await execute(h, "return [(await fx.pid()).pid, (await fx.stats()).cancelled]");
  assert.equal(after.text, `[${pid},2]`);
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

Deno.test("list_tools accepts a server's raw name and its script global in `servers`", async () => {
  const h = await harness((d) => writePlugin(d.home, "my-tools", fixtureServerToml("my-tools")));
  for (const name of ["my-tools", "my_tools"]) {
    const text = textOf(
      await h.client.callTool({ name: "list_tools", arguments: { servers: [name], tools: ["pid"] } }),
    );
    assert.match(text, /^declare const my_tools: \{/, name);
    assert.doesNotMatch(text, /Problems:/, name);
  }
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
