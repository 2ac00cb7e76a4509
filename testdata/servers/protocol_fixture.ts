/**
 * A backing MCP server for the protocol relays (stdio, SDK low-level `Server`): it elicits, samples,
 * logs, exposes resources, and has read-only, destructive and unannotated tools. Every tool answers
 * JSON text. Switches are argv `--key[=value]`:
 *
 * --calls-file=PATH   append one line per tools/call (the tool name) to PATH
 * --no-resources      do not declare the `resources` capability
 *
 * Tools:
 * - `ask` (read-only): `elicitation/create` "Pick a color" → the answer, or `{ "elicitation": false }`
 *   when the client declared no elicitation;
 * - `summarize` (read-only): `sampling/createMessage` with `{ text }` → the sampled result, or
 *   `{ "sampling": false }`;
 * - `chatty` (read-only): `{ count, level }` → sends `count` log messages at `level` (default info),
 *   then `{ sent: count }`;
 * - `read_note` (readOnlyHint), `delete_note` (destructiveHint), `touch_note` (no annotations),
 *   `deploy` (readOnlyHint: false, no destructiveHint): each `{ name }` → `{ tool, name }`;
 * - `client_capabilities` (read-only): what the client declared at `initialize`;
 * - `log_level` (read-only): the level the client last set with `logging/setLevel` (`null` before).
 *
 * Resources (one per `resources/list` page): `note://a` (text "alpha"), `note://b` (text "beta"),
 * `note://logo` (a 4-byte PNG-ish blob, `image/png`).
 *
 * @module
 */
import { Server } from "@modelcontextprotocol/server";
import type { CallToolResult, LoggingLevel, Tool } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";

const flags = new Map<string, string>();
for (const arg of Deno.args) {
  const m = /^--([^=]+)(?:=(.*))?$/.exec(arg);
  if (m) flags.set(m[1]!, m[2] ?? "true");
}
const hasResources = !flags.has("no-resources");
const callsFile = flags.get("calls-file");

const server = new Server(
  { name: "protocol-fixture", version: "1.0.0" },
  { capabilities: { tools: {}, logging: {}, ...(hasResources ? { resources: {} } : {}) } },
);

const nameArg = { type: "object" as const, properties: { name: { type: "string" } }, required: ["name"] };
const empty = { type: "object" as const, properties: {} };
const tools: Tool[] = [
  { name: "ask", description: "Asks the user a question", inputSchema: empty, annotations: { readOnlyHint: true } },
  {
    name: "summarize",
    description: "Asks the client's model",
    inputSchema: { type: "object", properties: { text: { type: "string" } } },
    annotations: { readOnlyHint: true },
  },
  {
    name: "chatty",
    description: "Logs",
    inputSchema: { type: "object", properties: { count: { type: "number" }, level: { type: "string" } } },
    annotations: { readOnlyHint: true },
  },
  { name: "read_note", description: "Reads a note", inputSchema: nameArg, annotations: { readOnlyHint: true } },
  {
    name: "delete_note",
    description: "Deletes a note",
    inputSchema: nameArg,
    annotations: { readOnlyHint: false, destructiveHint: true },
  },
  { name: "touch_note", description: "Touches a note", inputSchema: nameArg },
  { name: "deploy", description: "Deploys", inputSchema: nameArg, annotations: { readOnlyHint: false } },
  { name: "log_level", description: "The client's level", inputSchema: empty, annotations: { readOnlyHint: true } },
  {
    name: "client_capabilities",
    description: "What the client declared",
    inputSchema: empty,
    annotations: { readOnlyHint: true },
  },
];

let level: LoggingLevel | null = null;
server.setRequestHandler("logging/setLevel", (request) => {
  level = request.params.level;
  return {};
});

const json = (value: unknown): CallToolResult => ({ content: [{ type: "text", text: JSON.stringify(value) }] });

server.setRequestHandler("tools/list", () => ({ tools }));
server.setRequestHandler("tools/call", async (request) => {
  const { name } = request.params;
  const args = (request.params.arguments ?? {}) as Record<string, unknown>;
  if (callsFile) await Deno.writeTextFile(callsFile, `${name}\n`, { append: true });
  const caps = server.getClientCapabilities() ?? {};
  switch (name) {
    case "ask": {
      if (!caps.elicitation) return json({ elicitation: false });
      const answer = await server.elicitInput({
        message: "Pick a color",
        requestedSchema: {
          type: "object",
          properties: {
            color: { type: "string", enum: ["red", "green", "blue"] },
            shade: { type: "string", default: "light" },
          },
          required: ["color"],
        },
      });
      return json(answer);
    }
    case "summarize": {
      if (!caps.sampling) return json({ sampling: false });
      const result = await server.createMessage({
        messages: [{ role: "user", content: { type: "text", text: String(args.text ?? "") } }],
        maxTokens: 50,
      });
      return json(result);
    }
    case "chatty": {
      const count = Number(args.count ?? 1);
      const at = (typeof args.level === "string" ? args.level : "info") as LoggingLevel;
      for (let i = 0; i < count; i++) {
        await server.notification({
          method: "notifications/message",
          params: { level: at, logger: "chat", data: `message ${i + 1} of ${count}` },
        });
      }
      return json({ sent: count });
    }
    case "read_note":
    case "delete_note":
    case "touch_note":
    case "deploy":
      return json({ tool: name, name: args.name });
    case "client_capabilities":
      return json(caps);
    case "log_level":
      return json(level);
  }
  return { content: [{ type: "text", text: `unknown tool ${name}` }], isError: true };
});

const RESOURCES = [
  { uri: "note://a", name: "a", mimeType: "text/plain", text: "alpha" },
  { uri: "note://b", name: "b", mimeType: "text/plain", text: "beta" },
  { uri: "note://logo", name: "logo", mimeType: "image/png", blob: btoa("\x89PNG") },
];
if (hasResources) {
  server.setRequestHandler("resources/list", (request) => {
    const index = Number(request.params?.cursor ?? 0);
    const { uri, name, mimeType } = RESOURCES[index]!;
    const next = index + 1 < RESOURCES.length ? String(index + 1) : undefined;
    return { resources: [{ uri, name, mimeType }], ...(next ? { nextCursor: next } : {}) };
  });
  server.setRequestHandler("resources/read", (request) => {
    const found = RESOURCES.find((r) => r.uri === request.params.uri);
    if (!found) throw new Error(`no resource ${request.params.uri}`);
    const { name: _name, ...contents } = found;
    return { contents: [contents] };
  });
}

await server.connect(new StdioServerTransport());
