// A stdio MCP server written by hand on the wire, to misbehave in ways the SDK server never does. Each
// tool names its misbehaviour; `echo({message})` answers properly. Used by tests/backends/wire_hostile_test.ts.
// - bytewise({pad, piece}): the answer (padded) written `piece` (1) bytes per write; - string_id: the answer's id as a string;
// - dup: the answer twice (the second with other text); - null_result / array_result: `result` null / [];
// - wrong_id: an answer to an id never asked;           - late({ms}): answers after `ms`;
// - progress({n}): `n` progress notifications in the same write as the answer;
// - die_mid_line: half an answer, then exit 3.
const encoder = new TextEncoder();
const decoder = new TextDecoder();
// Writes go one after another (as a real server's would), so concurrent answers never interleave bytes.
let queue: Promise<unknown> = Promise.resolve();
const writeBytes = (bytes: Uint8Array, pieceBytes = bytes.length) =>
  queue = queue.then(async () => {
    for (let i = 0; i < bytes.length; i += pieceBytes) await Deno.stdout.write(bytes.subarray(i, i + pieceBytes));
  });
const write = (text: string) => writeBytes(encoder.encode(text));
const tools = ["echo", "bytewise", "string_id", "dup", "null_result", "array_result", "wrong_id", "late", "progress", "die_mid_line"]
  .map((name) => ({ name, inputSchema: { type: "object", properties: {} } }));
const ok = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: "2.0", id, result }) + "\n";
const text = (t: string) => ({ content: [{ type: "text", text: t }] });

async function handle(message: { id?: number; method?: string; params?: Record<string, unknown> }) {
  const { id, method, params } = message;
  if (method === "initialize") {
    return write(ok(id, {
      protocolVersion: params?.protocolVersion ?? "2025-06-18",
      capabilities: { tools: {} },
      serverInfo: { name: "raw", version: "1" },
    }));
  }
  if (method === "tools/list") return write(ok(id, { tools }));
  if (method === "ping") return write(ok(id, {}));
  if (method !== "tools/call" || id === undefined) return;
  const args = (params?.arguments ?? {}) as Record<string, unknown>;
  const tag = `${params?.name}#${id}`;
  switch (params?.name) {
    case "echo":
      return write(ok(id, text(String(args.message))));
    case "bytewise": {
      return writeBytes(encoder.encode(ok(id, text("é✓ " + tag + " " + "z".repeat(Number(args.pad ?? 0))))), Number(args.piece ?? 1));
    }
    case "string_id":
      return write(ok(String(id), text(tag)));
    case "dup":
      return write(ok(id, text(tag)) + ok(id, text("second " + tag)));
    case "null_result":
      return write(ok(id, null));
    case "array_result":
      return write(ok(id, []));
    case "wrong_id":
      return write(ok(id + 1000, text(tag)));
    case "late":
      await new Promise((resolve) => setTimeout(resolve, Number(args.ms ?? 500)));
      return write(ok(id, text("late " + tag)));
    case "progress": {
      const token = (params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
      let out = "";
      for (let i = 1; i <= Number(args.n ?? 3); i++) {
        if (token !== undefined) {
          out += JSON.stringify({
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken: token, progress: i },
          }) + "\n";
        }
      }
      return write(out + ok(id, text(tag)));
    }
    case "die_mid_line": {
      const line = ok(id, text(tag));
      await write(line.slice(0, line.length >> 1));
      Deno.exit(3);
    }
  }
}

let pending = "";
for await (const chunk of Deno.stdin.readable) {
  pending += decoder.decode(chunk, { stream: true });
  for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (line.trim() !== "") handle(JSON.parse(line));
  }
}
