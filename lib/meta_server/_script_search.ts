/**
 * The host side of the script helpers (`symposium.search(query, { limit })` in a script): a ranked
 * search over the catalog, answered as `{ server, tool, description }[]` whose `server` is the
 * script global and `tool` the wire name, so `globalThis[server][tool](args)` calls a result.
 *
 * @module
 */
import type { Catalog } from "../catalog/mod.ts";
import { buildBindingTable } from "../declarations/tool_binding.ts";
import { namespaceKey } from "../plugins/mod.ts";
import { HELPER_GLOBAL } from "../sandbox/mod.ts";

export { HELPER_GLOBAL };

/** One result of `symposium.search`. */
export interface ScriptSearchHit {
  /** The server's script global (`namespaceKey`), e.g. `"my_server"`. */
  server: string;
  /** The tool's wire name, e.g. `"get-sum"` (any spelling `execute` resolves works too). */
  tool: string;
  /** First sentence of the tool's description, at most 120 characters. */
  description: string;
  /**
   * The tool's call signature, as `list_tools { query }` shows it: types only, the return type
   * from `outputSchema` or the observed result shape (marked), e.g.
   * `fx.get_issue(params: { id: number }): /** Returns (observed in 3 calls): *\/ Promise<{ title: string }>`.
   */
  signature: string;
}

/**
 * Answers one helper call from a script.
 *
 * @param key The helper called (`search` is the only one).
 * @param args `{ query: string, limit?: number }` as the prelude sends it.
 * @param notices Collects one notice per run naming servers left out of a search (not running, no
 *   fresh cache), shown after the script's result.
 * @throws {TypeError} for an unknown helper or a query that is not a string (the script sees the message);
 *   `SearchQueryError` for a query past `MAX_QUERY_CHARS`.
 */
export async function answerHelperCall(
  catalog: Catalog,
  key: string,
  args: unknown,
  notices: Set<string>,
): Promise<ScriptSearchHit[]> {
  if (key !== "search") {
    throw new TypeError(
      `${HELPER_GLOBAL}.${key} is not a helper; ${HELPER_GLOBAL} offers search(query, { limit })`,
    );
  }
  const { query, limit } = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
  if (typeof query !== "string") {
    throw new TypeError(
      `${HELPER_GLOBAL}.search(query, { limit }) needs a query string, got ${typeof query}`,
    );
  }
  const answer = await catalog.toolSearch.search(query, {
    limit: typeof limit === "number" ? limit : undefined,
  });
  if (answer.notSearched.length > 0) {
    notices.add(
      `${HELPER_GLOBAL}.search did not search ${answer.notSearched.map((n) => n.spec.name).join(", ")} ` +
        "(not running and no fresh tool cache; a call to one of them starts it)",
    );
  }
  // The declarations load at a session's first search: a session that never searches never loads them.
  const { firstSentence, renderToolSignature } = await import("../declarations/mod.ts");
  return answer.matches.map((m) => ({
    server: namespaceKey(m.entry.spec.name),
    tool: m.tool.name,
    description: firstSentence(m.tool.description),
    signature: renderToolSignature(m.entry.spec.name, m.tool, {
      table: buildBindingTable(m.entry.tools.map((t) => t.name)),
      observed: m.entry.observed,
    }).text,
  }));
}
