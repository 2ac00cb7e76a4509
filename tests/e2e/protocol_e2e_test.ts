/**
 * End to end, the MCP protocol both ways: a real SDK client spawns `main.ts mcp-serve` (as `selfCommand()` does) over a
 * backing server that elicits, samples, logs, exposes resources and has read-only, destructive and
 * unannotated tools (`testdata/servers/protocol_fixture.ts`). The agent declares elicitation and
 * sampling, or (separately) does not.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import type { ElicitRequest, ElicitResult, LoggingMessageNotification } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { REPO } from "../_fakes_backends.ts";
import { cargoLock, cargoToml } from "../_fakes_meta.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";

const PROTOCOL_FIXTURE = `${REPO}testdata/servers/protocol_fixture.ts`;

interface World {
  root: string;
  home: string;
  ws: string;
  calls: string;
}

/** A home whose plugin runs the protocol fixture as `fx` (and as `plain`, without resources). */
async function makeWorld(config = ""): Promise<World> {
  const root = await Deno.makeTempDir({ prefix: "symposium-protocol-" });
  const home = `${root}/home`;
  const ws = `${root}/ws`;
  const calls = `${root}/calls.txt`;
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.writeTextFile(`${ws}/Cargo.toml`, cargoToml({ serde: "1" }));
  await Deno.writeTextFile(`${ws}/Cargo.lock`, cargoLock({ serde: "1.0.219" }));
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  await Deno.mkdir(`${home}/plugins/proto`, { recursive: true });
  const server = (name: string, flags: string[], extra = "") =>
    `[[mcp_servers]]\nname = "${name}"\ncommand = ${JSON.stringify(Deno.execPath())}\nargs = ${
      JSON.stringify(["run", "-A", "--quiet", "--config", `${REPO}deno.json`, PROTOCOL_FIXTURE, ...flags])
    }\n${extra}\n`;
  await Deno.writeTextFile(
    `${home}/plugins/proto/SYMPOSIUM.toml`,
    `name = "proto"\ndepends-on = "*"\n\n` +
      server("fx", [`--calls-file=${calls}`], 'confirm-tools = ["deploy"]') +
      server("plain", ["--no-resources"]),
  );
  if (config) await Deno.writeTextFile(`${home}/config.toml`, config);
  return { root, home, ws, calls };
}

type ElicitHandler = (request: ElicitRequest) => ElicitResult | Promise<ElicitResult>;

interface Agent {
  client: Client;
  elicitations: ElicitRequest["params"][];
  logs: LoggingMessageNotification["params"][];
  samplings: unknown[];
  /** The answer to the next elicitations. */
  onElicit: ElicitHandler;
  close(): Promise<void>;
}

async function connect(world: World, options: { capable: boolean }): Promise<Agent> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...sourceRunArgs(REPO), "mcp-serve"],
    env: { ...Deno.env.toObject(), SYMPOSIUM_HOME: world.home },
    cwd: world.ws,
    stderr: "ignore",
  });
  const client = new Client(
    { name: "protocol-agent", version: "1.0.0" },
    { capabilities: options.capable ? { elicitation: { form: {} }, sampling: {} } : {} },
  );
  const agent: Agent = {
    client,
    elicitations: [],
    logs: [],
    samplings: [],
    onElicit: () => ({ action: "cancel" }),
    async close() {
      await client.close();
      await Deno.remove(world.root, { recursive: true });
    },
  };
  if (options.capable) {
    client.setRequestHandler("elicitation/create", (request) => {
      agent.elicitations.push(request.params);
      return agent.onElicit(request);
    });
    client.setRequestHandler("sampling/createMessage", (request) => {
      agent.samplings.push(request.params);
      return { role: "assistant", model: "test-model", content: { type: "text", text: "a short summary" } };
    });
  }
  client.setNotificationHandler("notifications/message", (n) => void agent.logs.push(n.params));
  await client.connect(transport);
  return agent;
}

/** Runs a script: a success gives its value as JSON (`structuredContent.result`), a failure its text. */
async function run(agent: Agent, script: string): Promise<{ text: string; isError: boolean }> {
  const result = await agent.client.callTool({ name: "execute", arguments: { script } });
  const content = result.content as { type: string; text?: string }[];
  const text = content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
  const structured = result.structuredContent as { result: unknown } | undefined;
  if (structured) assert.equal(text, JSON.stringify(structured));
  return { text: structured ? JSON.stringify(structured.result) : text, isError: !!result.isError };
}

async function callsMade(world: World): Promise<string[]> {
  try {
    return (await Deno.readTextFile(world.calls)).split("\n").filter((l) => l !== "");
  } catch {
    return [];
  }
}

Deno.test("mcp-serve relays elicitation, sampling and logs to an agent that declared them", async (t) => {
  const world = await makeWorld();
  const agent = await connect(world, { capable: true });
  try {
    await t.step(
      "the backing server is offered elicitation (form, defaults applied) and sampling",
      async () => {
        const { text } = await run(agent, "return await fx.client_capabilities()");
        const caps = JSON.parse(text);
        assert.deepEqual(caps.sampling, {});
        assert.equal(caps.elicitation.form.applyDefaults, true);
      },
    );

    await t.step(
      "elicitation/create reaches the agent named after the server; accept comes back",
      async () => {
        agent.onElicit = () => ({ action: "accept", content: { color: "green" } });
        const { text, isError } = await run(agent, "return await fx.ask()");
        assert.equal(isError, false, text);
        assert.match(agent.elicitations.at(-1)!.message, /^\[fx\] Pick a color$/);
        assert.deepEqual(JSON.parse(text), { action: "accept", content: { color: "green", shade: "light" } });
      },
    );

    await t.step("decline and cancel come back as they are", async () => {
      agent.onElicit = () => ({ action: "decline" });
      assert.deepEqual(JSON.parse((await run(agent, "return await fx.ask()")).text), { action: "decline" });
      agent.onElicit = () => ({ action: "cancel" });
      assert.deepEqual(JSON.parse((await run(agent, "return await fx.ask()")).text), { action: "cancel" });
    });

    await t.step("sampling/createMessage reaches the agent, tagged with the server", async () => {
      const { text } = await run(agent, 'return await fx.summarize({ text: "long text" })');
      assert.equal(JSON.parse(text).content.text, "a short summary");
      const params = agent.samplings.at(-1) as { messages: { content: { text: string } }[]; _meta?: object };
      assert.equal(params.messages[0]!.content.text, "long text");
      assert.deepEqual(params._meta, { "symposium/server": "fx" });
    });

    await t.step("log messages at or above the agent's level arrive with the server as logger", async () => {
      assert.equal((await run(agent, "return await fx.log_level()")).text, "null");
      await agent.client.setLoggingLevel("warning");
      // The running server is told the level too (best effort; it may trail the answer).
      let told = "";
      for (let i = 0; i < 50 && told !== '"warning"'; i++) {
        told = (await run(agent, "return await fx.log_level()")).text;
      }
      assert.equal(told, '"warning"');
      agent.logs.length = 0;
      await run(
        agent,
        'await fx.chatty({ count: 3, level: "info" }); return await fx.chatty({ count: 2, level: "error" })',
      );
      // Notifications may trail the result by a moment.
      for (let i = 0; i < 50 && agent.logs.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(agent.logs.map((l) => [l.level, l.logger]), [["error", "fx/chat"], [
        "error",
        "fx/chat",
      ]]);
      assert.equal(agent.logs[0]!.data, "message 1 of 2");
    });
  } finally {
    await agent.close();
  }
});

Deno.test("mcp-serve offers nothing to backing servers when the agent declared neither", async () => {
  const world = await makeWorld();
  const agent = await connect(world, { capable: false });
  try {
    const caps = JSON.parse((await run(agent, "return await fx.client_capabilities()")).text);
    assert.equal(caps.elicitation, undefined);
    assert.equal(caps.sampling, undefined);
    assert.deepEqual(JSON.parse((await run(agent, "return await fx.ask()")).text), { elicitation: false });
    assert.deepEqual(JSON.parse((await run(agent, "return await fx.summarize({})")).text), {
      sampling: false,
    });
  } finally {
    await agent.close();
  }
});

Deno.test("confirm-tools = writes asks before every call that is not read-only", async (t) => {
  const world = await makeWorld(
    '[mcp]\nconfirm-tools = "writes"\nscript-timeout-secs = 3\ntool-call-timeout-secs = 2\n',
  );
  const agent = await connect(world, { capable: true });
  try {
    await t.step("a read-only tool is called without asking", async () => {
      const { text } = await run(agent, 'return await fx.read_note({ name: "n" })');
      assert.deepEqual(JSON.parse(text), { tool: "read_note", name: "n" });
      assert.equal(agent.elicitations.length, 0);
    });

    await t.step("a decline throws a catchable error and the tool is not called", async () => {
      agent.onElicit = () => ({ action: "decline" });
      const { text } = await run(
        agent,
        'try { await fx.touch_note({ name: "n", token: "ghp_secretvalue123" }); return "called" } catch (e) { return e.message }',
      );
      assert.match(text, /declined the call to fx\.touch_note; it was not made/);
      const asked = agent.elicitations.at(-1)!;
      assert.match(asked.message, /touch_note of the MCP server "fx"/);
      assert.match(asked.message, /name: "n"/);
      assert.doesNotMatch(asked.message, /ghp_secretvalue123/);
      assert.match(asked.message, /token: \*\*\*/);
      assert.ok(!(await callsMade(world)).includes("touch_note"));
    });

    await t.step("cancel is a refusal too", async () => {
      agent.onElicit = () => ({ action: "cancel" });
      const { text } = await run(
        agent,
        'try { await fx.delete_note({ name: "n" }) } catch (e) { return e.message }',
      );
      assert.match(text, /cancelled the call to fx\.delete_note/);
      assert.ok(!(await callsMade(world)).includes("delete_note"));
    });

    await t.step("accept runs the call; remember allows the tool for the session", async () => {
      agent.onElicit = () => ({ action: "accept", content: { remember: true } });
      const before = agent.elicitations.length;
      const { text } = await run(
        agent,
        'await fx.touch_note({ name: "a" }); return await fx.touch_note({ name: "b" })',
      );
      assert.deepEqual(JSON.parse(text), { tool: "touch_note", name: "b" });
      assert.equal(agent.elicitations.length, before + 1);
      assert.equal((await callsMade(world)).filter((c) => c === "touch_note").length, 2);
    });

    await t.step("the wait for the user does not count toward the script deadline", async () => {
      agent.onElicit = async () => {
        await new Promise((r) => setTimeout(r, 4_000)); // longer than script-timeout-secs = 3
        return { action: "accept", content: {} };
      };
      const { text, isError } = await run(agent, 'return await fx.deploy({ name: "prod" })');
      assert.equal(isError, false, text);
      assert.deepEqual(JSON.parse(text), { tool: "deploy", name: "prod" });
    });
  } finally {
    await agent.close();
  }
});

Deno.test("confirm-tools = destructive asks for every tool not marked non-destructive (MCP's default) and manifest-listed ones", async () => {
  const world = await makeWorld('[mcp]\nconfirm-tools = "destructive"\n');
  const agent = await connect(world, { capable: true });
  try {
    agent.onElicit = () => ({ action: "accept", content: {} });
    const { text } = await run(
      agent,
      'return [await fx.read_note({ name: "r" }), await fx.touch_note({ name: "t" }), await fx.delete_note({ name: "d" }), await fx.deploy({ name: "p" })]',
    );
    assert.equal(JSON.parse(text).length, 4);
    // touch_note has no annotations and deploy no destructiveHint: MCP's default for it is true.
    assert.deepEqual(
      agent.elicitations.map((e) => /call (\w+) of/.exec(e.message)?.[1]),
      ["touch_note", "delete_note", "deploy"],
    );
  } finally {
    await agent.close();
  }
});

Deno.test("without the agent's elicitation a call needing confirmation fails naming confirm-tools", async () => {
  const world = await makeWorld('[mcp]\nconfirm-tools = "writes"\n');
  const agent = await connect(world, { capable: false });
  try {
    const { text } = await run(
      agent,
      'try { await fx.touch_note({ name: "n" }) } catch (e) { return e.message }',
    );
    const message = JSON.parse(text);
    assert.match(message, /confirm-tools = "writes"/);
    assert.match(message, /declared no elicitation/);
    assert.ok(!(await callsMade(world)).includes("touch_note"));
  } finally {
    await agent.close();
  }
});

Deno.test("scripts list and read a backing server's resources", async (t) => {
  const world = await makeWorld();
  const agent = await connect(world, { capable: false });
  try {
    await t.step("$resources.list() walks every page", async () => {
      const { text } = await run(agent, "return (await fx.$resources.list()).map((r) => r.uri)");
      assert.deepEqual(JSON.parse(text), ["note://a", "note://b", "note://logo"]);
    });

    await t.step("$resources.read() returns text, or a base64 blob with its mimeType", async () => {
      const { text } = await run(
        agent,
        'return [await fx.$resources.read({ uri: "note://a" }), await fx.$resources.read({ uri: "note://logo" })]',
      );
      const [a, logo] = JSON.parse(text);
      assert.deepEqual(a, [{ uri: "note://a", mimeType: "text/plain", text: "alpha" }]);
      assert.deepEqual(logo, [{ uri: "note://logo", mimeType: "image/png", blob: btoa("\x89PNG") }]);
    });

    await t.step("a server without resources says so, catchably", async () => {
      const { text } = await run(
        agent,
        "try { await plain.$resources.list() } catch (e) { return e.message }",
      );
      assert.match(text, /plain declares no resources/);
    });

    await t.step(
      "list_tools full declarations include $resources for servers that declare resources",
      async () => {
        const result = await agent.client.callTool({
          name: "list_tools",
          arguments: { servers: ["fx", "plain"] },
        });
        const text = (result.content as { text: string }[])[0]!.text;
        const [fx, plain] = text.split("declare const plain");
        assert.match(fx!, /\$resources: \{\n\s+\/\*\* Every resource the server lists/);
        assert.match(fx!, /read\(params: \{ uri: string \}\)/);
        assert.doesNotMatch(plain!, /\$resources/);
      },
    );
  } finally {
    await agent.close();
  }
});
