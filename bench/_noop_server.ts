/**
 * The fixed-cost floor of the performance benchmark: an MCP server with one tool that does nothing,
 * served over stdio by the same SDK (`@modelcontextprotocol/server` v2) and the same Deno flags as
 * `cargo-agents mcp-serve`. Its call latency is what any Deno SDK server pays per `tools/call`; its RSS
 * is what Deno plus the SDK weigh. Started by `bench/perf.ts`.
 *
 * @module
 */
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";

const server = new McpServer({ name: "noop", version: "1.0.0" });
server.registerTool(
  "noop",
  { description: "Does nothing and answers 1." },
  () => ({ content: [{ type: "text", text: "1" }] }),
);
await server.connect(new StdioServerTransport());
