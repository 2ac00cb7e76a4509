/**
 * A remote MCP server (streamable HTTP, hand-written JSON-RPC) that completes the handshake and
 * lists one tool `x`, then answers `tools/call` without end: `--mode=json` streams an endless
 * `application/json` body, `--mode=sse` an endless `text/event-stream` line (`data: …` that never
 * ends). For the budgets tests and `bench/budgets_bench.ts`.
 *
 * Run: `deno run --allow-net testdata/servers/hostile_http.ts --mode=json|sse`; prints
 * `listening <url>` on stdout, serves 127.0.0.1 only until killed.
 *
 * @module
 */

const mode = Deno.args.find((a) => a.startsWith("--mode="))?.slice(7) ?? "json";
const CHUNK = new TextEncoder().encode("a".repeat(64 * 1024));

function endless(head: string): ReadableStream<Uint8Array> {
  let sentHead = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!sentHead) {
        sentHead = true;
        controller.enqueue(new TextEncoder().encode(head));
      }
      controller.enqueue(CHUNK);
    },
  }, { highWaterMark: 4 });
}

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
  if (request.method === "GET") return new Response(null, { status: 405 });
  if (request.method === "DELETE") return new Response(null, { status: 200 });
  const body = await request.json().catch(() => undefined) as
    | { id?: unknown; method?: string; params?: { protocolVersion?: string } }
    | undefined;
  if (!body || body.id === undefined) return new Response(null, { status: 202 });
  const reply = (result: unknown) =>
    Response.json({ jsonrpc: "2.0", id: body.id, result }, { headers: { "mcp-session-id": "s1" } });
  switch (body.method) {
    case "initialize":
      return reply({
        protocolVersion: body.params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "hostile-http", version: "1.0.0" },
      });
    case "tools/list":
      return reply({ tools: [{ name: "x", description: "Answers without end.", inputSchema: { type: "object" } }] });
    case "tools/call": {
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":{"content":[{"type":"text","text":"`;
      return mode === "sse"
        ? new Response(endless(`data: ${head}`), { headers: { "content-type": "text/event-stream" } })
        : new Response(endless(head), { headers: { "content-type": "application/json" } });
    }
    default:
      return reply({});
  }
});

console.log(`listening http://127.0.0.1:${server.addr.port}/mcp`);
