/**
 * A stdio MCP server that sends what an attacker's backing server would (budgets tests and
 * `bench/budgets_bench.ts`). Tools:
 *
 * - `redos({n})`: declares an `outputSchema` whose `pattern` backtracks (`^(a|a)*$`) and answers
 *   `{ v: "a" × n + "!" }`, which a backtracking engine needs 2^n steps to refuse;
 * - `flood({count})`: sends `count` `notifications/tools/list_changed`, then answers `"flooded"`;
 * - `deny()`: fails with `isError` and the text `Permission denied: /root`;
 * - `chatty({bytes})`: writes `bytes` bytes of stderr (lines of 100), then answers `"ok"`;
 * - `quiet()`: answers `"ok"` (the baseline for `chatty`);
 * - `huge_line({bytes})`: answers one stdout line of about `bytes` bytes (a too-large answer);
 * - `hang()`: never answers; `pid()`: the process id.
 *
 * Argv: `--name=N` (serverInfo name).
 *
 * @module
 */
import { Server } from "@modelcontextprotocol/server";
import type { CallToolResult, Tool } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";

const name = Deno.args.find((a) => a.startsWith("--name="))?.slice(7) ?? "hostile";
const encoder = new TextEncoder();
// deno-lint-ignore no-explicit-any
const obj = (properties: Record<string, any> = {}) => ({ type: "object" as const, properties });

const TOOLS: Tool[] = [
  {
    name: "redos",
    description: "Answers a value that a backtracking pattern of its outputSchema needs 2^n steps to refuse.",
    inputSchema: obj({ n: { type: "number" } }),
    outputSchema: {
      type: "object",
      properties: { v: { type: "string", pattern: "^(a|a)*$" } },
      patternProperties: { "^(b|b)*$": { type: "string" } },
    },
  },
  { name: "flood", description: "Sends `count` tools/list_changed.", inputSchema: obj({ count: { type: "number" } }) },
  { name: "deny", description: "Fails with Permission denied.", inputSchema: obj() },
  { name: "chatty", description: "Writes `bytes` of stderr.", inputSchema: obj({ bytes: { type: "number" } }) },
  { name: "quiet", description: "Answers ok.", inputSchema: obj() },
  { name: "huge_line", description: "One huge stdout line.", inputSchema: obj({ bytes: { type: "number" } }) },
  { name: "hang", description: "Never answers.", inputSchema: obj() },
  { name: "pid", description: "The process id.", inputSchema: obj() },
];

const server = new Server({ name, version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
server.setRequestHandler("tools/list", () => ({ tools: TOOLS }));
const text = (t: string): CallToolResult => ({ content: [{ type: "text", text: t }] });
const stderrLine = encoder.encode("e".repeat(99) + "\n");

server.setRequestHandler("tools/call", async (request, ctx) => {
  const args = (request.params.arguments ?? {}) as Record<string, unknown>;
  switch (request.params.name) {
    case "redos": {
      const v = "a".repeat(Number(args.n ?? 30)) + "!";
      return { content: [{ type: "text", text: JSON.stringify({ v }) }], structuredContent: { v } };
    }
    case "flood": {
      const count = Number(args.count ?? 20_000);
      for (let i = 0; i < count; i++) await server.sendToolListChanged();
      return text("flooded");
    }
    case "deny":
      return { content: [{ type: "text", text: "Permission denied: /root" }], isError: true };
    case "chatty": {
      const lines = Math.ceil(Number(args.bytes ?? 200_000) / 100);
      const block = new Uint8Array(lines * 100);
      for (let i = 0; i < lines; i++) block.set(stderrLine, i * 100);
      let written = 0;
      while (written < block.length) written += Deno.stderr.writeSync(block.subarray(written));
      return text("ok");
    }
    case "quiet":
      return text("ok");
    case "huge_line": {
      const bytes = Number(args.bytes ?? 80 * 1024 * 1024);
      // Written by hand: the SDK would serialize it the same way, only slower.
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(ctx.mcpReq.id)},"result":{"content":[{"type":"text","text":"`;
      const out = encoder.encode(head + "x".repeat(bytes) + '"}]}}\n');
      let written = 0;
      while (written < out.length) written += Deno.stdout.writeSync(out.subarray(written));
      return await new Promise<never>(() => {}); // The line above was the answer.
    }
    case "hang":
      return await new Promise<never>(() => {});
    case "pid":
      return { content: [{ type: "text", text: String(Deno.pid) }], structuredContent: { pid: Deno.pid } };
    default:
      return { content: [{ type: "text", text: `Unknown tool: ${request.params.name}` }], isError: true };
  }
});

await server.connect(new StdioServerTransport());
