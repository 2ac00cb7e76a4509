/**
 * `cargo-agents mcp tools [server...] [--detail ...] [--pattern ...] [--query ... [--limit ...]]`: what
 * `list_tools` would answer.
 *
 * @module
 */
import type { CommandContext } from "./context.ts";
import { renderListTools } from "../meta_server/list_tools.ts";
import { openSession } from "./_session.ts";
import { namespaceKey } from "../plugins/mod.ts";

/** Options of {@link runTools}. */
export interface ToolsOptions {
  /** Raw server names (or script globals); empty = every server. Naming servers implies `full`. */
  servers: string[];
  detail?: "names" | "signatures" | "full" | undefined;
  /** Glob over tool names (`*` = any run of characters). */
  pattern?: string | undefined;
  /** Ranked search words (`list_tools` `query`); starts no server. */
  query?: string | undefined;
  /** Most search results (1...50). @default 10 */
  limit?: number | undefined;
}

/**
 * Prints the `list_tools` text (starting servers whose tools are not cached, as `list_tools` does).
 *
 * @returns 0, or 1 when a named server is not declared by any plugin (the text says so under Problems).
 */
export async function runTools(options: ToolsOptions, ctx: CommandContext): Promise<number> {
  const session = await openSession(ctx, { stderrLevel: "warn" });
  try {
    const text = await renderListTools(session.catalog, {
      servers: options.servers.length > 0 ? options.servers : undefined,
      detail: options.detail,
      pattern: options.pattern,
      query: options.query,
      limit: options.limit,
    });
    ctx.writeOut(text + "\n");
    // A name that is no server at all (not even a dormant or refused one) is a user error: exit 1.
    const known = (name: string) =>
      session.catalog.servers.some((s) => s.name === name || namespaceKey(s.name) === name) ||
      session.catalog.unavailableReason(name) !== undefined;
    return options.servers.every(known) ? 0 : 1;
  } finally {
    await session.close();
  }
}
