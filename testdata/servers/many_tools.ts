/**
 * A stdio MCP server with many tools of realistic shape (the 50,000-tool server of `bench/many_tools.ts`):
 * names like `repo_12_list`, a one-line description, one or two typed properties (the first required of two), some
 * with an enum or a default, read-only annotations on the `get` ones. Paged 5,000 a page
 * (`MAX_LIST_PAGE_ITEMS`); 50,000 tools are about 8.06 MB (7.7 MiB) of JSON, within the 8 MiB a whole listing may be.
 *
 * Argv `--key=value`:
 * - `--tools=N`: how many tools (default 50,000);
 * - `--page=N`: tools per page (default 5,000);
 * - `--page-delay-ms=N`: wait before each page's answer (default 0).
 *
 * Every tool answers `{ tool, args }` as JSON text.
 *
 * @module
 */
import { Server } from "@modelcontextprotocol/server";
import type { Tool } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";

const flags = new Map<string, string>();
for (const arg of Deno.args) {
  const m = /^--([^=]+)(?:=(.*))?$/.exec(arg);
  if (m) flags.set(m[1]!, m[2] ?? "true");
}
const COUNT = Number(flags.get("tools") ?? 50_000);
const PAGE = Number(flags.get("page") ?? 5_000);
const PAGE_DELAY_MS = Number(flags.get("page-delay-ms") ?? 0);

const AREAS = ["repo", "issue", "user", "file", "team", "build", "alert", "invoice", "ticket", "note"];
const VERBS = ["list", "get", "create", "update", "delete", "search", "archive", "sync"];
const PROPS: [string, Record<string, unknown>][] = [
  ["owner", { type: "string" }],
  ["id", { type: "integer" }],
  ["query", { type: "string" }],
  ["limit", { type: "integer", default: 30 }],
  ["state", { enum: ["open", "closed"] }],
  ["path", { type: "string" }],
  ["dryRun", { type: "boolean" }],
  ["tags", { type: "array" }],
];

/** Tool `i`: the same for every run, so listings compare equal. */
function tool(i: number): Tool {
  const area = AREAS[i % AREAS.length]!;
  const verb = VERBS[Math.floor(i / AREAS.length) % VERBS.length]!;
  const group = Math.floor(i / (AREAS.length * VERBS.length));
  const count = 1 + (i % 2);
  const properties: Record<string, unknown> = {};
  for (let k = 0; k < count; k++) {
    const [name, schema] = PROPS[(i + k * 3) % PROPS.length]!;
    properties[name] = schema;
  }
  const first = Object.keys(properties)[0]!;
  const isReading = verb === "get";
  return {
    name: `${area}_${group}_${verb}`,
    description: `${verb[0]!.toUpperCase()}${verb.slice(1)} ${area}s.`,
    inputSchema: { type: "object", properties: properties as never, ...(count > 1 ? { required: [first] } : {}) },
    ...(isReading ? { annotations: { readOnlyHint: true } } : {}),
  };
}

const server = new Server({ name: "many-tools", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler("tools/list", async (request) => {
  const start = Number(request.params?.cursor ?? 0);
  if (PAGE_DELAY_MS > 0) await new Promise((r) => setTimeout(r, PAGE_DELAY_MS));
  const end = Math.min(COUNT, start + PAGE);
  const tools = Array.from({ length: end - start }, (_, k) => tool(start + k));
  return { tools, ...(end < COUNT ? { nextCursor: String(end) } : {}) };
});

server.setRequestHandler("tools/call", (request) => ({
  content: [{ type: "text", text: JSON.stringify({ tool: request.params.name, args: request.params.arguments }) }],
}));

await server.connect(new StdioServerTransport());
