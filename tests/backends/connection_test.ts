import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { BackendError, openConnection } from "../../lib/backends/connection.ts";
import { linkedServer, tool } from "../_fakes_backends.ts";

const OPTS = { server: "mem", startupTimeoutMs: 2_000 };

Deno.test("openConnection() completes the handshake and lists the tools", async () => {
  const { transport, server } = await linkedServer({ tools: [tool("a"), tool("b")] });
  const conn = await openConnection(transport, OPTS);
  assert.equal(conn.serverInfo?.name, "memory-fake");
  const listing = await conn.listTools({ timeoutMs: 1_000 });
  assert.deepEqual(listing.tools.map((t) => t.name), ["a", "b"]);
  assert.deepEqual(listing.warnings, []);
  await conn.close();
  await server.close();
});

Deno.test("listTools() follows every page to the end", async () => {
  const tools = ["a", "b", "c", "d", "e"].map((n) => tool(n));
  const { transport, server } = await linkedServer({ tools, pageSize: 2 });
  const conn = await openConnection(transport, OPTS);
  const listing = await conn.listTools({ timeoutMs: 1_000 });
  assert.deepEqual(listing.tools.map((t) => t.name), ["a", "b", "c", "d", "e"]);
  await conn.close();
  await server.close();
});

Deno.test("listTools() stops with a warning when the cursor never advances", async () => {
  const tools = Array.from({ length: 8 }, (_, i) => tool(`t${i}`));
  const { transport, server } = await linkedServer({ tools, endlessCursor: "c1" });
  const conn = await openConnection(transport, OPTS);
  const listing = await conn.listTools({ timeoutMs: 1_000 });
  assert.equal(listing.tools.length, 8);
  assert.equal(listing.warnings.length, 1);
  assert.match(listing.warnings[0]!, /cursor "c1" repeated/);
  await conn.close();
  await server.close();
});

Deno.test("callTool() returns a result that contradicts the outputSchema untouched", async () => {
  const lying = tool("count", {
    outputSchema: { type: "object", properties: { count: { type: "number" } }, required: ["count"] },
  });
  const handlers = {
    count: () => ({ content: [{ type: "text", text: "{}" }], structuredContent: { bin: "A1" } }),
  };
  const { transport, server } = await linkedServer({ tools: [lying], handlers });
  const conn = await openConnection(transport, OPTS);
  await conn.listTools({ timeoutMs: 1_000 });
  const result = await conn.callTool("count", {}, { timeoutMs: 1_000 });
  assert.deepEqual(result.structuredContent, { bin: "A1" });
  await conn.close();
  await server.close();
});

Deno.test("callTool() fails with CALL_TIMEOUT when the tool never answers", async () => {
  const handlers = { hang: () => new Promise(() => {}) };
  const { transport, server } = await linkedServer({ tools: [tool("hang")], handlers });
  const conn = await openConnection(transport, OPTS);
  await assert.rejects(conn.callTool("hang", {}, { timeoutMs: 100 }), (e: unknown) => {
    assert.ok(e instanceof BackendError);
    assert.equal(e.code, "CALL_TIMEOUT");
    assert.match(e.message, /^mem\.hang did not answer within 0\.1s/);
    return true;
  });
  await conn.close();
  await server.close();
});

Deno.test("callTool() keeps waiting while the server reports progress", async () => {
  const handlers = {
    slow: async (
      _a: unknown,
      x: {
        progressToken?: string | number | undefined;
        notify: (n: { method: string; params: Record<string, unknown> }) => Promise<void>;
      },
    ) => {
      for (let i = 1; i <= 6; i++) {
        await new Promise((r) => setTimeout(r, 50));
        await x.notify({
          method: "notifications/progress",
          params: { progressToken: x.progressToken!, progress: i, total: 6 },
        });
      }
      return { content: [{ type: "text", text: "SLOW-OK" }] };
    },
  };
  const { transport, server } = await linkedServer({ tools: [tool("slow")], handlers });
  const conn = await openConnection(transport, OPTS);
  const seen: number[] = [];
  const result = await conn.callTool("slow", {}, {
    timeoutMs: 150,
    onProgress: (p) => seen.push(p.progress),
  });
  assert.deepEqual(result.content, [{ type: "text", text: "SLOW-OK" }]);
  assert.deepEqual(seen, [1, 2, 3, 4, 5, 6]);
  await conn.close();
  await server.close();
});

Deno.test("callTool() fails with CANCELLED when the caller aborts", async () => {
  const handlers = { hang: () => new Promise(() => {}) };
  const { transport, server } = await linkedServer({ tools: [tool("hang")], handlers });
  const conn = await openConnection(transport, OPTS);
  const abort = new AbortController();
  setTimeout(() => abort.abort(new Error("stop")), 20);
  await assert.rejects(conn.callTool("hang", {}, { timeoutMs: 5_000, signal: abort.signal }), {
    code: "CANCELLED",
  });
  await conn.close();
  await server.close();
});

Deno.test("openConnection() fails with STARTUP_TIMEOUT when initialize is never answered", async () => {
  let closed = false;
  const silent: Transport = {
    start: () => Promise.resolve(),
    send: (_m: JSONRPCMessage) => Promise.resolve(),
    close: () => {
      closed = true;
      return Promise.resolve();
    },
  };
  await assert.rejects(
    openConnection(silent, {
      server: "mute",
      startupTimeoutMs: 150,
      describeFailure: () => "stderr: still booting",
    }),
    (e: unknown) => {
      assert.ok(e instanceof BackendError);
      assert.equal(e.code, "STARTUP_TIMEOUT");
      assert.match(e.message, /^mute did not start within 0\.\ds: stderr: still booting$/);
      return true;
    },
  );
  assert.equal(closed, true);
});

Deno.test("openConnection() answers roots/list with the given roots", async () => {
  const handlers = {
    roots: async (_a: unknown, x: { listRoots: () => Promise<unknown> }) => ({
      content: [{ type: "text", text: JSON.stringify(await x.listRoots()) }],
    }),
  };
  const { transport, server } = await linkedServer({ tools: [tool("roots")], handlers });
  const conn = await openConnection(transport, { ...OPTS, roots: () => [{ uri: "file:///ws", name: "ws" }] });
  const result = await conn.callTool("roots", {}, { timeoutMs: 1_000 });
  assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), {
    roots: [{ uri: "file:///ws", name: "ws" }],
  });
  await conn.close();
  await server.close();
});

Deno.test("openConnection() reports tools/list_changed", async () => {
  const { transport, server } = await linkedServer({ tools: [tool("a")] });
  let changed = 0;
  const conn = await openConnection(transport, { ...OPTS, onToolListChanged: () => changed++ });
  await server.sendToolListChanged();
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(changed, 1);
  await conn.close();
  await server.close();
});

Deno.test("ended resolves as unexpected when the server side goes away", async () => {
  const { transport, server } = await linkedServer({ tools: [tool("a")] });
  const conn = await openConnection(transport, { ...OPTS, describeEnd: () => "exited with code 1" });
  await server.close();
  const end = await conn.ended;
  assert.deepEqual(end, { reason: "exited with code 1", isExpected: false });
  assert.equal(conn.isClosed, true);
  await assert.rejects(conn.callTool("a", {}, { timeoutMs: 100 }), { code: "CONNECTION_LOST" });
});

Deno.test("the SDK's own callTool() would refuse the off-shape result we pass through", async () => {
  // Documents why connection.ts dispatches tools/call as a raw request.
  const lying = tool("count", {
    outputSchema: { type: "object", properties: { count: { type: "number" } }, required: ["count"] },
  });
  const handlers = { count: () => ({ content: [{ type: "text", text: "count: 7" }] }) };
  const { transport, server } = await linkedServer({ tools: [lying], handlers });
  const client = new Client({ name: "t", version: "1" });
  await client.connect(transport);
  await client.listTools();
  await assert.rejects(client.callTool({ name: "count", arguments: {} }), /output schema/);
  await client.close();
  await server.close();
});
