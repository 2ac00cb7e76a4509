/**
 * Which backing servers a script names, and starting them as soon as its `execute` arrives (before the
 * sandbox runs it). Kept apart from `execute.ts` so `mcp-serve` can start them while the rest of the
 * meta-server (the sandbox, schema checking) is still loading.
 *
 * @module
 */
import type { Catalog } from "../catalog/mod.ts";
import { namespaceKey, type ServerSpec } from "../plugins/mod.ts";

/**
 * The servers in scope whose global the script text uses as an object (`name.`, `name[`, `name?.`),
 * e.g. `github` in `await github.search(...)`; a mention in a comment or string counts too (then the
 * server merely starts a little early).
 */
export function namedServers(catalog: Pick<Catalog, "servers">, script: string): ServerSpec[] {
  return catalog.servers.filter((spec) => usePattern(spec.name).test(script));
}

/** {@link namedServers}' pattern per server name, built once per name (a session has a few). */
const USE_PATTERNS = new Map<string, RegExp>();

function usePattern(server: string): RegExp {
  let pattern = USE_PATTERNS.get(server);
  if (pattern === undefined) {
    const name = namespaceKey(server).replace(/\$/g, "\\$");
    pattern = new RegExp(`(^|[^\\w$.])${name}\\s*(\\?\\.|\\.|\\[)`);
    if (USE_PATTERNS.size >= 1_000) USE_PATTERNS.clear();
    USE_PATTERNS.set(server, pattern);
  }
  return pattern;
}

/**
 * Starts the servers `script` names (see {@link namedServers}) and lists their tools live, without
 * waiting: the script's first call then finds its server started or starting. A failure is left for
 * that call to report (a server already running or starting is not started twice: the pool shares it).
 * A server running with its tools listed is left alone (nothing to do, and no work on the `execute`'s path).
 */
export function startNamedServers(
  catalog: Pick<Catalog, "servers" | "listServerTools" | "hasListedTools">,
  script: string,
): void {
  for (const spec of namedServers(catalog, script)) {
    if (catalog.hasListedTools(spec)) continue;
    catalog.listServerTools(spec, { live: true }).catch(() => {});
  }
}
