/**
 * End to end, `main.ts mcp-serve` to a modern (MCP 2026-07-28) agent over stdio: raw JSON lines with the
 * per-request `_meta` and no `initialize`, and the SDK 2.4.0 client with version negotiation; the backing
 * server is `testdata/servers/protocol_fixture.ts` (it logs on demand).
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { denoServerToml, makeRawWorld, RawServe, type RawWorld, REPO } from "../../bench/_raw_serve.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";

const MODERN = "2026-07-28";

// deno-lint-ignore no-explicit-any
type Json = any;

/** The `_meta` of a modern request, with `extra` keys. */
function meta(extra: Record<string, unknown> = {}, version = MODERN): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientInfo": { name: "raw-modern-agent", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": {},
    ...extra,
  };
}

function withWorld(body: (world: RawWorld) => Promise<void>): () => Promise<void> {
  return async () => {
    const world = await makeRawWorld(denoServerToml("fx", "protocol_fixture.ts"));
    try {
      await body(world);
    } finally {
      await world.remove();
    }
  };
}

Deno.test(
  "a modern agent on raw lines: discover, tools/list, version refused, execute, no initialize",
  withWorld(async (world) => {
    const serve = RawServe.start({ home: world.home, cwd: world.ws });
    try {
      const discovered = (await serve.request("server/discover", { _meta: meta() })).result as Json;
      assert.equal(discovered.resultType, "complete");
      assert.deepEqual(discovered.supportedVersions.slice(0, 2), [MODERN, "2025-11-25"]);
      assert.deepEqual(discovered.capabilities.tools, { listChanged: true });
      assert.match(discovered.instructions, /execute/);
      assert.equal(discovered._meta["io.modelcontextprotocol/serverInfo"].name, "symposium");

      const listed = (await serve.request("tools/list", { _meta: meta() })).result as Json;
      assert.equal(listed.resultType, "complete");
      assert.deepEqual(listed.tools.map((t: Json) => t.name), ["list_tools", "execute"]);
      assert.ok(Number.isSafeInteger(listed.ttlMs) && listed.ttlMs >= 0);
      assert.equal(listed.cacheScope, "private");
      assert.equal(listed._meta["io.modelcontextprotocol/serverInfo"].name, "symposium");
      const again = (await serve.request("tools/list", { _meta: meta() })).result as Json;
      assert.deepEqual(again.tools, listed.tools, "the same list, in the same order");

      const refused = await serve.request("tools/list", { _meta: meta({}, "1900-01-01") });
      assert.equal((refused.error as Json).code, -32022);
      assert.deepEqual((refused.error as Json).data.requested, "1900-01-01");
      assert.ok((refused.error as Json).data.supported.includes(MODERN));

      const ran = (await serve.request("tools/call", {
        _meta: meta(),
        name: "execute",
        arguments: { script: 'return await fx.chatty({ count: 2, level: "error" })' },
      })).result as Json;
      assert.equal(ran.resultType, "complete");
      assert.equal(ran.isError, undefined, JSON.stringify(ran));
      assert.equal(ran._meta["io.modelcontextprotocol/serverInfo"].name, "symposium");
      assert.deepEqual(
        serve.notifications.filter((n) => n.method === "notifications/message"),
        [],
        "logs sent to an agent that asked for none",
      );

      // A backing server that elicits: nothing is asked of a modern agent with a request of ours.
      const capabilities = { elicitation: { form: {} }, sampling: {} };
      await serve.request("tools/call", {
        _meta: meta({ "io.modelcontextprotocol/clientCapabilities": capabilities }),
        name: "execute",
        arguments: { script: "try { return await fx.ask() } catch (e) { return String(e) }" },
      });
      assert.deepEqual(
        serve.notifications.filter((m) => "id" in m),
        [],
        "a request was written to the agent",
      );
    } finally {
      await serve.close();
    }
  }),
);

Deno.test(
  "a modern agent gets the backing server's logs at the level its _meta asks, and list changes on its subscription",
  withWorld(async (world) => {
    const serve = RawServe.start({ home: world.home, cwd: world.ws });
    try {
      const script =
        'await fx.chatty({ count: 1, level: "info" }); return await fx.chatty({ count: 1, level: "error" })';
      const logLevel = { "io.modelcontextprotocol/logLevel": "warning" };
      const ran = await serve.request("tools/call", {
        _meta: meta(logLevel),
        name: "execute",
        arguments: { script },
      });
      assert.equal((ran.result as Json).resultType, "complete");
      const logs = serve.notifications.filter((n) => n.method === "notifications/message");
      assert.deepEqual(logs.map((n) => (n.params as Json).level), ["error"]);

      const listening = serve.sendLine(JSON.stringify({
        jsonrpc: "2.0",
        id: "listen-1",
        method: "subscriptions/listen",
        params: { _meta: meta(), notifications: { toolsListChanged: true } },
      }));
      await listening;
      for (let i = 0; i < 500; i++) {
        if (serve.notifications.some((n) => n.method === "notifications/subscriptions/acknowledged")) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      const ack = serve.notifications.find((n) => n.method === "notifications/subscriptions/acknowledged");
      assert.ok(ack, "subscriptions/listen was not acknowledged");
      assert.equal((ack.params as Json)._meta["io.modelcontextprotocol/subscriptionId"], "listen-1");
      assert.deepEqual((ack.params as Json).notifications, { toolsListChanged: true });
      // A plugin appears: the change reaches the subscription, tagged with its id.
      await Deno.mkdir(`${world.home}/plugins/more`, { recursive: true });
      await Deno.writeTextFile(
        `${world.home}/plugins/more/SYMPOSIUM.toml`,
        `name = "more"\ndepends-on = "*"\n\n${denoServerToml("fy", "protocol_fixture.ts")}`,
      );
      for (let i = 0; i < 3_000; i++) {
        if (serve.notifications.some((n) => n.method === "notifications/tools/list_changed")) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      const changed = serve.notifications.find((n) => n.method === "notifications/tools/list_changed");
      assert.ok(changed, "no notifications/tools/list_changed after a plugin was added");
      assert.equal((changed.params as Json)._meta["io.modelcontextprotocol/subscriptionId"], "listen-1");
    } finally {
      await serve.close();
    }
  }),
);

Deno.test(
  "the SDK client with version negotiation speaks the modern era to mcp-serve",
  withWorld(async (world) => {
    const transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: [...sourceRunArgs(REPO), "mcp-serve"],
      env: { ...Deno.env.toObject(), SYMPOSIUM_HOME: world.home },
      cwd: world.ws,
      stderr: "ignore",
    });
    const client = new Client({ name: "sdk-modern-agent", version: "2.4.0" }, {
      versionNegotiation: { mode: "auto" },
    });
    await client.connect(transport);
    try {
      assert.equal(client.getProtocolEra(), "modern");
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ["list_tools", "execute"]);
      const result = await client.callTool({
        name: "execute",
        arguments: { script: 'return await fx.read_note({ name: "a" })' },
      });
      assert.equal(result.isError, undefined, JSON.stringify(result));
    } finally {
      await client.close();
    }
  }),
);
