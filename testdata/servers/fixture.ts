/**
 * A backing MCP server for tests, built on the SDK's low-level `Server` over stdio, with a switch
 * for every misbehaviour the meta-server must survive. Switches are argv `--key[=value]`:
 *
 * --name=N              serverInfo name (default "fixture")
 * --slow-start-ms=N     wait N ms before reading stdin; with --stderr-progress, print a line to
 *                       stderr every 100 ms meanwhile (like `npx` downloading)
 * --fail-starts=N       exit(3) on the first N starts, counted in --counter-file=PATH
 * --banner              print two non-JSON lines on stdout before speaking JSON-RPC
 * --stderr-bytes=N      write N bytes to stderr at start, before the handshake
 * --crash-after=N       exit(1) right after answering the N-th tools/call (--crash-signal=KILL: SIGKILL itself)
 * --endless-cursor      tools/list always answers the same tools plus nextCursor "c1"
 * --page-size=N         paginate tools/list honestly, N tools per page
 * --spawn-child         start a `sleep 300` grandchild (like npx starting node); its pid is on stderr
 * --spawn-setsid-child  start a `sleep 300` grandchild in a session of its own (it leaves our group)
 * --spawn-orphan-setsid start a child that starts a `sleep 300` in a session of its own, then exits
 *                       after 1.5 s (the sleep is reparented, out of our group and tree)
 * --stderr-text=TEXT    write TEXT and a newline to stderr at start, before the handshake
 * --stderr-env=NAME     write `auth failed with NAME=<its value>` to stderr at start
 * --env-file=PATH       write the environment this process received to PATH (JSON) at start
 * --ignore-sigterm      ignore SIGTERM
 * --linger              keep running after stdin closes
 * --calls-file=PATH     append one line per tools/call (the tool name) to PATH
 * --stall-on-call-ms=N  at the first tools/call, block the event loop for N ms: stdin is not read
 *                       meanwhile (a server too busy to read; SIGTERM still kills it)
 * --starts-file=PATH    append one line per start (`<name> <pid>`) to PATH, before the handshake
 * --lists-file=PATH     append one line per tools/list request (`tools/list`) to PATH
 * --change-during-list  at the first tools/list: take the answer, then register tool b and send
 *                       tools/list_changed, then answer the taken (now stale) list
 * --fail-lists=TEXT     every tools/list fails with the error TEXT
 * --change-burst=N     enable_b sends N tools/list_changed instead of one
 * --garbage-lists=N     every tools/list answers N tools whose name is a number (each fails the schema)
 * --tools-file=PATH     list the tools of PATH instead (JSON: an array of tools, or `{ tools: [...] }`);
 *                       a call of one of them answers `{ tool, arguments }` as text and structured content
 * --answers-file=PATH   replay a recorded answer corpus (`testdata/catalog/results/<server>.json`): list
 *                       its tools; a call of one answers that tool's recorded results in turn (cycling)
 *
 * Every tools/call is counted while in flight (tool `stats` answers the most seen at once and how
 * many calls were cancelled); a cancelled call (`notifications/cancelled`) prints
 * `fixture: <tool> cancelled: <reason>` on stderr.
 *
 * @module
 */
import { Server } from "@modelcontextprotocol/server";
import type { CallToolResult, ServerContext, Tool } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";

const flags = new Map<string, string>();
for (const arg of Deno.args) {
  const m = /^--([^=]+)(?:=(.*))?$/.exec(arg);
  if (m) flags.set(m[1]!, m[2] ?? "true");
}
const num = (k: string, d: number) => (flags.has(k) ? Number(flags.get(k)) : d);
const name = flags.get("name") ?? "fixture";
const err = (text: string) => Deno.stderr.writeSync(new TextEncoder().encode(text));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (flags.has("stderr-text")) err(`${flags.get("stderr-text")}\n`);
if (flags.has("stderr-env")) err(`auth failed with ${flags.get("stderr-env")}=${Deno.env.get(flags.get("stderr-env")!)}\n`);
if (flags.has("env-file")) Deno.writeTextFileSync(flags.get("env-file")!, JSON.stringify(Deno.env.toObject()));
if (flags.has("starts-file")) {
  Deno.writeTextFileSync(flags.get("starts-file")!, `${name} ${Deno.pid}\n`, { append: true });
}
const fileTools: Tool[] | undefined = flags.has("tools-file")
  ? ((data) => (Array.isArray(data) ? data : data.tools))(JSON.parse(Deno.readTextFileSync(flags.get("tools-file")!)))
  : undefined;

const corpus = flags.has("answers-file")
  ? JSON.parse(Deno.readTextFileSync(flags.get("answers-file")!)) as {
    tools: Tool[];
    answers: { tool: string; result: CallToolResult }[];
  }
  : undefined;
const replayed = new Map<string, number>();

if (flags.has("fail-starts")) {
  const file = flags.get("counter-file")!;
  let count = 0;
  try {
    count = Number(Deno.readTextFileSync(file)) || 0;
  } catch { /* first start */ }
  count++;
  Deno.writeTextFileSync(file, String(count));
  if (count <= num("fail-starts", 0)) {
    err(`fixture: refusing start ${count}: database is locked\n`);
    Deno.exit(3);
  }
}
if (flags.has("ignore-sigterm")) Deno.addSignalListener("SIGTERM", () => err("fixture: ignoring SIGTERM\n"));
if (flags.has("linger")) setInterval(() => {}, 1 << 30);
if (flags.has("spawn-child")) {
  const child = new Deno.Command("sleep", { args: ["300"], stdin: "null", stdout: "null", stderr: "null" }).spawn();
  err(`fixture: grandchild pid ${child.pid}\n`);
}
if (flags.has("spawn-setsid-child")) {
  const child = new Deno.Command("sleep", { args: ["300"], stdin: "null", stdout: "null", stderr: "null", detached: true }).spawn();
  err(`fixture: setsid grandchild pid ${child.pid}\n`);
}
if (flags.has("spawn-orphan-setsid")) {
  const script = "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo \"fixture: orphan pid $!\" >&2; sleep 1.5";
  new Deno.Command("sh", { args: ["-c", script], stdin: "null", stdout: "null", stderr: "inherit" }).spawn();
}
if (flags.has("stderr-bytes")) {
  const line = "e".repeat(99) + "\n";
  const n = num("stderr-bytes", 0);
  err(line.repeat(Math.floor(n / 100)));
}
if (flags.has("slow-start-ms")) {
  const until = Date.now() + num("slow-start-ms", 0);
  while (Date.now() < until) {
    if (flags.has("stderr-progress")) err("npm http fetch GET 200 https://registry.example/pkg\n");
    await sleep(100);
  }
}
if (flags.has("banner")) {
  console.log("✓ File metadata MCP server ready");
  console.log("✓ Autograph knowledge graph ready");
}

// deno-lint-ignore no-explicit-any
const obj = (properties: Record<string, any> = {}, required: string[] = []) => ({
  type: "object" as const,
  properties,
  ...(required.length ? { required } : {}),
});
let bEnabled = false;
const TOOLS = (): Tool[] => [
  { name: "echo", description: "Echo a message back.\nSecond line.", inputSchema: obj({ message: { type: "string" } }, ["message"]), annotations: { readOnlyHint: true } },
  { name: "echo_args", description: "Return the arguments as structured content.", inputSchema: obj() },
  { name: "fail", description: "Always fails with isError.", inputSchema: obj({ message: { type: "string" } }) },
  { name: "hang", description: "Never answers (until cancelled).", inputSchema: obj() },
  { name: "stats", description: "Most tools/call in flight at once so far, and cancelled calls.", inputSchema: obj() },
  { name: "big", description: "Return a text of `bytes` bytes.", inputSchema: obj({ bytes: { type: "number" } }) },
  { name: "sleep", description: "Sleep `ms`, reporting progress.", inputSchema: obj({ ms: { type: "number" } }) },
  {
    name: "lies",
    description: "Declares {count} but answers text.",
    inputSchema: obj(),
    outputSchema: obj({ count: { type: "number" } }, ["count"]),
  },
  {
    name: "lies_struct",
    description: "Declares {count, bin} but answers {bin}.",
    inputSchema: obj(),
    outputSchema: obj({ count: { type: "number" }, bin: { type: "string" } }, ["count", "bin"]),
  },
  {
    name: "structured",
    description: "Answers structured content matching its schema.",
    inputSchema: obj(),
    outputSchema: obj({ total: { type: "number" }, items: { type: "array", items: { type: "string" } } }, ["total"]),
  },
  { name: "wrapped", description: "FastMCP-style {result} envelope.", inputSchema: obj(), outputSchema: obj({ result: { type: "number" } }, ["result"]) },
  { name: "image", description: "Answers text, an image (`bytes` base64 characters, default 12), text.", inputSchema: obj({ bytes: { type: "number" } }) },
  { name: "two_blocks", description: "Two text blocks.", inputSchema: obj() },
  { name: "json_text", description: "JSON array as text.", inputSchema: obj() },
  { name: "roots", description: "Asks the client for its roots.", inputSchema: obj() },
  { name: "pid", description: "The process id.", inputSchema: obj(), annotations: { readOnlyHint: true } },
  { name: "env", description: "The environment this process received.", inputSchema: obj() },
  { name: "say_stderr", description: "Writes `text` to stderr, then fails.", inputSchema: obj({ text: { type: "string" } }) },
  { name: "chatty", description: "Writes `bytes` to stderr, then answers.", inputSchema: obj({ bytes: { type: "number" } }) },
  { name: "enable_b", description: "Registers tool b and says tools/list_changed.", inputSchema: obj() },
  ...(bEnabled ? [{ name: "b", description: "Appears after enable_b.", inputSchema: obj() }] : []),
  { name: "you-search", description: "Hyphenated name.", inputSchema: obj({ query: { type: "string" } }, ["query"]) },
];

const server = new Server({ name, version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
let lists = 0;
server.setRequestHandler("tools/list", async (request) => {
  lists++;
  if (flags.has("lists-file")) Deno.writeTextFileSync(flags.get("lists-file")!, "tools/list\n", { append: true });
  if (flags.has("fail-lists")) throw new Error(flags.get("fail-lists"));
  const tools = corpus?.tools ?? fileTools ?? TOOLS();
  if (lists === 1 && flags.has("change-during-list")) {
    bEnabled = true;
    await server.sendToolListChanged();
  }
  if (flags.has("garbage-lists")) return { tools: Array.from({ length: num("garbage-lists", 1) }, () => ({ name: 5 })) } as never;
  if (flags.has("endless-cursor")) return { tools, nextCursor: "c1" };
  const size = num("page-size", 0);
  if (size > 0) {
    const start = Number(request.params?.cursor ?? 0);
    const page = tools.slice(start, start + size);
    return start + size < tools.length ? { tools: page, nextCursor: String(start + size) } : { tools: page };
  }
  return { tools };
});

let calls = 0;
let inFlight = 0;
let maxInFlight = 0;
let cancelled = 0;
const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });
server.setRequestHandler("tools/call", async (request, ctx) => {
  inFlight++;
  maxInFlight = Math.max(maxInFlight, inFlight);
  const tool = request.params.name;
  ctx.mcpReq.signal.addEventListener("abort", () => {
    cancelled++;
    err(`fixture: ${tool} cancelled: ${String(ctx.mcpReq.signal.reason)}\n`);
  });
  try {
    return await callTool(request.params.arguments ?? {}, tool, ctx);
  } finally {
    inFlight--;
  }
});

async function callTool(rawArgs: unknown, tool: string, ctx: ServerContext): Promise<CallToolResult> {
  const args = rawArgs as Record<string, unknown>;
  if (flags.has("calls-file")) Deno.writeTextFileSync(flags.get("calls-file")!, tool + "\n", { append: true });
  calls++;
  if (calls === 1 && num("stall-on-call-ms", 0) > 0) {
    const until = Date.now() + num("stall-on-call-ms", 0);
    while (Date.now() < until) { /* busy: nothing else runs, stdin fills up */ }
  }
  const after = num("crash-after", 0);
  if (after > 0 && calls >= after) {
    setTimeout(() => {
      if (flags.get("crash-signal") === "KILL") Deno.kill(Deno.pid, "SIGKILL");
      err("fixture: crashing on purpose\n");
      Deno.exit(1);
    }, 30);
  }
  const recorded = corpus?.answers.filter((a) => a.tool === tool) ?? [];
  if (recorded.length > 0) {
    const turn = replayed.get(tool) ?? 0;
    replayed.set(tool, turn + 1);
    return recorded[turn % recorded.length]!.result;
  }
  if (fileTools?.some((t) => t.name === tool)) {
    return { content: [{ type: "text", text: JSON.stringify({ tool, arguments: args }) }], structuredContent: { tool, arguments: args } };
  }
  switch (tool) {
    case "echo":
      return text(String(args.message));
    case "echo_args":
      return { content: [{ type: "text", text: JSON.stringify(args) }], structuredContent: args };
    case "fail":
      return { content: [{ type: "text", text: String(args.message ?? "it broke") }], isError: true };
    case "hang":
      return await new Promise<never>(() => {});
    case "stats":
      return { content: [{ type: "text", text: JSON.stringify({ maxInFlight, cancelled }) }], structuredContent: { maxInFlight, cancelled } };
    case "big":
      return text("x".repeat(Number(args.bytes ?? 5_000_000)));
    case "sleep": {
      const ms = Number(args.ms ?? 100);
      const token = ctx.mcpReq._meta?.progressToken;
      for (let t = 0; t < ms; t += 100) {
        await sleep(Math.min(100, ms - t));
        if (token !== undefined) {
          await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: t + 100, total: ms } });
        }
      }
      return text("SLOW-OK");
    }
    case "lies":
      return text("count: 7");
    case "lies_struct":
      return { content: [{ type: "text", text: '{"bin":"A1"}' }], structuredContent: { bin: "A1" } };
    case "structured":
      return { content: [{ type: "text", text: "2 items" }], structuredContent: { total: 2, items: ["a", "b"] } };
    case "wrapped":
      return { content: [{ type: "text", text: "42" }], structuredContent: { result: 42 } };
    case "image":
      return {
        content: [
          { type: "text", text: "Here's the image you requested:" },
          { type: "image", data: args.bytes === undefined ? "iVBORw0KGgo=" : "A".repeat(Number(args.bytes)), mimeType: "image/png" },
          { type: "text", text: "The image above is the MCP logo." },
        ],
      };
    case "two_blocks":
      return { content: [{ type: "text", text: '{"document":{"title":"T"}}' }, { type: "text", text: "## Body markdown" }] };
    case "json_text":
      return text(JSON.stringify([{ id: 1 }, { id: 2 }, { id: 3 }], null, 2));
    case "roots": {
      const result = await server.listRoots();
      return { content: [{ type: "text", text: JSON.stringify(result.roots) }], structuredContent: { roots: result.roots } };
    }
    case "pid":
      return { content: [{ type: "text", text: String(Deno.pid) }], structuredContent: { pid: Deno.pid } };
    case "env": {
      const env = Deno.env.toObject();
      return { content: [{ type: "text", text: JSON.stringify(env) }], structuredContent: { env } };
    }
    case "say_stderr":
      err(`${String(args.text)}\n`);
      return { content: [{ type: "text", text: `failed after writing to stderr` }], isError: true };
    case "chatty":
      err("c".repeat(Number(args.bytes ?? 1_000_000)) + "\n");
      return text("ok");
    case "enable_b":
      bEnabled = true;
      for (let i = num("change-burst", 1); i > 0; i--) await server.sendToolListChanged();
      return text("enabled");
    case "b":
      if (!bEnabled) return { content: [{ type: "text", text: "Unknown tool: b" }], isError: true };
      return text("B-OK");
    case "you-search":
      return { content: [{ type: "text", text: "r1" }], structuredContent: { results: { web: [{ title: "r1" }] } } };
    default:
      return { content: [{ type: "text", text: `Unknown tool: ${tool}` }], isError: true };
  }
}

await server.connect(new StdioServerTransport());
err(`fixture ${name} ready (pid ${Deno.pid})\n`);
