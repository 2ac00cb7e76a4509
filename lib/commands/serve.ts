/**
 * `cargo-agents mcp-serve`: the meta-server on stdio until the agent closes stdin.
 *
 * @module
 */
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import type { CommandContext } from "./context.ts";
import { serveMetaServer } from "../meta_server/mod.ts";
import { openSession } from "./_session.ts";

/**
 * Serves MCP on stdin/stdout; logs go to stderr and `<config>/logs/`. Returns when stdin closes
 * (or on SIGINT/SIGTERM), after every backing server has been shut down.
 *
 * @returns Exit code 0.
 * @throws Only for unexpected file-system failures while resolving the workspace.
 */
export async function runServe(ctx: CommandContext): Promise<number> {
  // Stdout belongs to JSON-RPC: a library that prints would corrupt the stream, so console
  // output is sent to stderr for the whole session.
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  const session = await openSession(ctx);
  try {
    await serveMetaServer({
      catalog: session.catalog,
      runner: session.runner,
      logger: session.logger,
      transport: new StdioServerTransport(),
      signal: ctx.signal,
    });
  } finally {
    await session.close();
  }
  return 0;
}
