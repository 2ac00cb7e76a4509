/**
 * `cargo-agents mcp-serve`: the meta-server on stdio until the agent closes stdin.
 *
 * @module
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import type { CommandContext } from "./context.ts";
import { maskDeep, maskSecrets } from "../secrets/mod.ts";
import { serveMetaServer } from "../meta_server/mod.ts";
import { openSession } from "./_session.ts";
import { LineStdioServerTransport } from "../jsonrpc/mod.ts";

/**
 * Serves MCP on stdin/stdout; logs go to stderr and `<config>/logs/`. Returns when stdin closes
 * (or on SIGINT/SIGTERM), after every backing server has been shut down. Stdin messages are read
 * under `[mcp] max-message-mb` (as the session started) with JSON-RPC 2.0 error answers for
 * oversize, unparseable and invalid ones.
 *
 * @returns Exit code 0.
 * @throws Only for unexpected file-system failures while resolving the workspace.
 */
export async function runServe(ctx: CommandContext): Promise<number> {
  // Stdout belongs to JSON-RPC: a library that prints would corrupt the stream, so console
  // output is sent to stderr for the whole session (masked, as every line we print).
  const toStderr = (...data: unknown[]) =>
    ctx.writeErr(`${data.map((d) => typeof d === "string" ? d : Deno.inspect(d)).join(" ")}\n`);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  console.warn = toStderr;
  console.error = toStderr;
  const session = await openSession(ctx);
  try {
    await serveMetaServer({
      catalog: session.catalog,
      runner: session.runner,
      logger: session.logger,
      // Our own reader in front of the SDK: a message over the budget, unparseable or invalid is
      // answered and the session goes on (the SDK's reader closed the session past 10 MiB).
      transport: maskOutgoing(
        new LineStdioServerTransport({
          maxMessageBytes: session.catalog.config.maxMessageMb * 1024 * 1024,
          logger: session.logger.child("agent"),
        }),
      ),
      signal: ctx.signal,
    });
  } finally {
    await session.close();
  }
  return 0;
}

/**
 * Makes `transport` mask every message it sends to the agent: results, errors and notification
 * parameters pass `maskDeep()` (registered secret values and credential shapes; image and audio
 * payloads untouched). `jsonrpc`, `id` and `method` are protocol fields and stay as they are.
 */
export function maskOutgoing<T extends Transport>(transport: T): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(maskMessage(message), options);
  return transport;
}

function maskMessage(message: JSONRPCMessage): JSONRPCMessage {
  const m = message as Record<string, unknown>;
  const out: Record<string, unknown> = { ...m };
  for (const key of ["result", "params"]) if (key in m) out[key] = maskDeep(m[key]);
  if (typeof m.error === "object" && m.error !== null) {
    const error = m.error as Record<string, unknown>;
    out.error = {
      ...error,
      ...(typeof error.message === "string" ? { message: maskSecrets(error.message) } : {}),
      ...("data" in error ? { data: maskDeep(error.data) } : {}),
    };
  }
  return out as JSONRPCMessage;
}
