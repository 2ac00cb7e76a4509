/**
 * A legacy (2025-11-25) stdio server written by hand that, like some servers do, answers nothing before
 * `initialize`: a `server/discover` probe gets no answer at all. Tool: `echo({text})` → `text`.
 * `--exit-before-initialize`: like other servers do, it exits (status 1) on any request before `initialize`.
 *
 * @module
 */
const encoder = new TextEncoder();
const write = (message: unknown) => Deno.stdout.writeSync(encoder.encode(JSON.stringify(message) + "\n"));
const exitBeforeInitialize = Deno.args.includes("--exit-before-initialize");
let initialized = false;
let buffer = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffer += chunk;
  for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.id === undefined) continue;
    if (m.method === "initialize") {
      initialized = true;
      write({
        jsonrpc: "2.0",
        id: m.id,
        result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "silent", version: "1" } },
      });
    } else if (!initialized && exitBeforeInitialize) Deno.exit(1);
    else if (!initialized) continue; // Silence before initialize.
    else if (m.method === "tools/list") {
      write({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "echo", inputSchema: { type: "object" } }] } });
    } else if (m.method === "tools/call") {
      write({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: m.params.arguments.text }] } });
    } else write({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
  }
}
