// The server shell that answers `initialize` before the rest of the meta-server has loaded, and the
// per-agent shape of `execute` answers.
import assert from "node:assert/strict";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import {
  connectServerShell,
  createMetaServer,
  EARLY_SCRIPTS_KEPT,
  INSTRUCTIONS,
  type ScriptRunner,
  type ToolHandlers,
} from "../../lib/meta_server/mod.ts";
import { fixtureServerToml, makeDirs, openCatalog, writePlugin } from "../_fakes_meta.ts";
import { LineStdioServerTransport } from "../../lib/jsonrpc/mod.ts";

const TOOLS = { tools: [{ name: "list_tools", inputSchema: { type: "object" as const } }] };

Deno.test("connectServerShell() answers initialize before the handlers exist; tools/list waits for them", async () => {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const shell = await connectServerShell(b);
  const client = new Client({ name: "test-agent", version: "1" });
  await client.connect(a);
  assert.equal(client.getInstructions(), INSTRUCTIONS);
  await shell.firstAnswered; // the initialize answer went out: the rest may load now
  let listed = false;
  const listing = client.listTools().then((r) => {
    listed = true;
    return r;
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(listed, false, "tools/list answered before the handlers were supplied");
  const handlers: ToolHandlers = {
    listTools: () => Promise.resolve(TOOLS),
    callTool: () => Promise.resolve({ content: [] }),
    setLevel: () => {},
  };
  shell.supply(handlers);
  assert.deepEqual((await listing).tools.map((t) => t.name), ["list_tools"]);
  await client.close();
  await shell.closed;
});

Deno.test("connectServerShell() fails the waiting tool requests when loading failed", async () => {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const shell = await connectServerShell(b);
  const client = new Client({ name: "test-agent", version: "1" });
  await client.connect(a);
  const listing = client.listTools();
  shell.supply(Promise.reject(new Error("Cannot read the workspace: permission denied")));
  await assert.rejects(listing, /permission denied/);
  await client.close();
});

Deno.test("the shell hands tools/call its name and arguments, and refuses a call without a string name", async () => {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const shell = await connectServerShell(b);
  const client = new Client({ name: "test-agent", version: "1" });
  await client.connect(a);
  const seen: unknown[] = [];
  shell.supply({
    listTools: () => Promise.resolve(TOOLS),
    callTool: (request) => {
      seen.push(request);
      return Promise.resolve({ content: [{ type: "text", text: "done" }] });
    },
    setLevel: () => {},
  });
  const result = await client.callTool({ name: "execute", arguments: { script: "return 1" } });
  assert.deepEqual(result.content, [{ type: "text", text: "done" }]);
  assert.deepEqual(seen, [{
    method: "tools/call",
    params: { name: "execute", arguments: { script: "return 1" } },
  }]);
  // Past the stdin classifier (an in-memory transport has none), the shell still checks the params.
  await assert.rejects(
    client.request({ method: "tools/call", params: { name: 7 } } as never, { timeout: 5_000 }),
    /name must be a string/,
  );
  assert.equal(seen.length, 1);
  await client.close();
});

/** A runner that answers every script with the same successful object. */
const objectRunner: ScriptRunner = {
  run: () => Promise.resolve({ text: '{"result":[1,2]}', isError: false, structured: { result: [1, 2] } }),
};

async function executeAs(clientName: string) {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  const catalog = await openCatalog(dirs);
  const server = createMetaServer({ catalog, runner: objectRunner });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: clientName, version: "1" });
  await client.connect(a);
  try {
    return await client.callTool({ name: "execute", arguments: { script: "return [1, 2]" } });
  } finally {
    await client.close();
    await server.close();
    await catalog.close();
    await dirs.remove();
  }
}

Deno.test("execute sends the answer as structuredContent beside the same object as text", async () => {
  const result = await executeAs("claude-code");
  assert.deepEqual(result.structuredContent, { result: [1, 2] });
  assert.deepEqual(result.content, [{ type: "text", text: '{"result":[1,2]}' }]);
});

Deno.test("execute leaves structuredContent out for Cline CLI, which shows the model the whole result", async () => {
  const result = await executeAs("@cline/core");
  assert.equal(result.structuredContent, undefined);
  assert.deepEqual(result.content, [{ type: "text", text: '{"result":[1,2]}' }]);
});

Deno.test("onEarlyExecute() hands over the scripts of executes sent before the handlers, then stops", async () => {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const shell = await connectServerShell(b);
  const client = new Client({ name: "test-agent", version: "1" });
  await client.connect(a);
  const calls = [
    client.callTool({ name: "execute", arguments: { script: "return await alpha.echo({})" } }),
    client.callTool({ name: "list_tools", arguments: { servers: ["beta"] } }),
    client.callTool({ name: "execute", arguments: { script: 42 } }), // not a script: nothing to start
  ];
  await new Promise((resolve) => setTimeout(resolve, 20)); // the requests reach the shell
  const seen: string[] = [];
  shell.onEarlyExecute((script) => seen.push(script));
  assert.deepEqual(seen, ["return await alpha.echo({})"], "kept from before the listener");
  calls.push(client.callTool({ name: "execute", arguments: { script: "return beta.x()" } }));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(seen, ["return await alpha.echo({})", "return beta.x()"], "told at once while loading");
  shell.supply({
    listTools: () => Promise.resolve(TOOLS),
    callTool: () => Promise.resolve({ content: [{ type: "text", text: "ok" }] }),
    setLevel: () => {},
  });
  await Promise.all(calls);
  await client.callTool({ name: "execute", arguments: { script: "return gamma.y()" } });
  shell.onEarlyExecute((script) => seen.push(script)); // too late: the handlers run executes now
  assert.deepEqual(seen, ["return await alpha.echo({})", "return beta.x()"]);
  await client.close();
});

Deno.test("onEarlyExecute() keeps at most EARLY_SCRIPTS_KEPT scripts from before it is called", async () => {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const shell = await connectServerShell(b);
  const client = new Client({ name: "test-agent", version: "1" });
  await client.connect(a);
  const calls = Array.from(
    { length: EARLY_SCRIPTS_KEPT + 5 },
    (_, i) => client.callTool({ name: "execute", arguments: { script: `return s${i}.x()` } }),
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  const seen: string[] = [];
  shell.onEarlyExecute((script) => seen.push(script));
  assert.deepEqual(seen, Array.from({ length: EARLY_SCRIPTS_KEPT }, (_, i) => `return s${i}.x()`));
  shell.supply({
    listTools: () => Promise.resolve(TOOLS),
    callTool: () => Promise.resolve({ content: [] }),
    setLevel: () => {},
  });
  await Promise.all(calls); // every call is still answered
  await client.close();
});

Deno.test("over the stdin transport, requests and notifications reach the shell's handlers (cancel included)", async () => {
  const toServer = new TransformStream<Uint8Array, Uint8Array>();
  const fromServer = new TransformStream<Uint8Array, Uint8Array>();
  const transport = new LineStdioServerTransport({ input: toServer.readable, output: fromServer.writable });
  const shell = await connectServerShell(transport);
  const writer = toServer.writable.getWriter();
  const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  const replies = new Map<unknown, Record<string, unknown>>();
  const reader = fromServer.readable.pipeThrough(new TextDecoderStream()).getReader();
  const reading = (async () => {
    let buffered = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      buffered += chunk.value;
      for (let at = buffered.indexOf("\n"); at !== -1; at = buffered.indexOf("\n")) {
        const m = JSON.parse(buffered.slice(0, at));
        buffered = buffered.slice(at + 1);
        if ("id" in m) replies.set(m.id, m);
      }
    }
  })().catch(() => {});
  const until = async (id: unknown) => {
    for (let i = 0; i < 500 && !replies.has(id); i++) await new Promise((r) => setTimeout(r, 10));
    return replies.get(id);
  };
  let aborted = false;
  shell.supply({
    listTools: () => Promise.resolve(TOOLS),
    callTool: (_request, ctx) =>
      new Promise((resolve) => {
        ctx.mcpReq.signal.addEventListener("abort", () => {
          aborted = true;
          resolve({ content: [] });
        });
      }),
    setLevel: () => {},
  });
  await send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  assert.ok(((await until(1))?.result as { serverInfo?: unknown })?.serverInfo, "initialize answered");
  await send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await send({ jsonrpc: "2.0", id: "p", method: "ping" });
  assert.deepEqual((await until("p"))?.result, {});
  await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "execute", arguments: {} } });
  await new Promise((r) => setTimeout(r, 50));
  await send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "test" } });
  for (let i = 0; i < 500 && !aborted; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(aborted, "the cancellation notification did not reach the running call");
  await shell.server.close();
  await writer.close().catch(() => {});
  await reader.cancel();
  await reading;
});
