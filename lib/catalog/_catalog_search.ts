/**
 * The catalog's side of the ranked search: which servers' tools can be searched right now without
 * starting anything (running servers and fresh cache entries), one {@link ToolSearchIndex} kept in
 * step with them, and the servers left out with why.
 *
 * @module
 */
import type { ServerSpec } from "../plugins/mod.ts";
import type { Tool } from "../backends/mod.ts";
import { type SearchOptions, ToolSearchIndex } from "./search.ts";
import { nextMacrotask } from "../time_slices.ts";

/** One server's visible tools as the catalog lists them (the fields the search reads). */
export interface SearchedServer {
  spec: ServerSpec;
  /** Visible tools; the same array while the listing is unchanged. */
  tools: Tool[];
}

/** What the search needs of the catalog. */
export interface SearchSource<T extends SearchedServer> {
  readonly servers: readonly ServerSpec[];
  /** Lists `spec` from the running server or a fresh cache; throws when neither is there. */
  listServerTools(spec: ServerSpec, options: { allowStart: false }): Promise<T>;
}

/** One ranked result. */
export interface CatalogMatch<T extends SearchedServer> {
  /** The server's listing (its binding table spans `entry.tools`). */
  entry: T;
  tool: Tool;
  /** BM25 score, comparable within one answer. */
  score: number;
}

/** A search answer. */
export interface CatalogSearchAnswer<T extends SearchedServer> {
  /** Best first, at most the limit. */
  matches: CatalogMatch<T>[];
  /** The servers whose tools were searched (within `servers` when given). */
  searched: T[];
  /**
   * Servers in scope (within `servers`) left out, and why: `isUnlisted` when the server is merely not
   * running and has no fresh cache (starting it once includes it); otherwise it failed (`reason`).
   */
  notSearched: { spec: ServerSpec; reason: string; isUnlisted: boolean }[];
}

/** Options of {@link CatalogSearch.search}. */
export interface CatalogSearchOptions {
  /** Most results (1...50). @default 10 */
  limit?: number | undefined;
  /** Only these servers (raw names). @default all in scope */
  servers?: ReadonlySet<string> | undefined;
  /** Only tools this predicate accepts. @default all */
  accept?: SearchOptions["accept"];
}

/** The search over one catalog; the index lives as long as the catalog. */
export class CatalogSearch<T extends SearchedServer> {
  readonly #source: SearchSource<T>;
  readonly #index = new ToolSearchIndex();

  constructor(source: SearchSource<T>) {
    this.#source = source;
  }

  /**
   * Builds the index ahead of the first search, one server at a time with a pause for other work in
   * between (`list_tools` and `execute` requests are served meanwhile). Starts no server; never
   * throws (a server that cannot be listed is left for the search to report).
   *
   * @param signal Stops after the server being indexed.
   */
  async prepare(signal?: AbortSignal): Promise<void> {
    for (const spec of [...this.#source.servers]) {
      if (signal?.aborted) return;
      try {
        const entry = await this.#source.listServerTools(spec, { allowStart: false });
        if (signal?.aborted) return;
        await this.#index.syncServerInSlices(entry.spec.name, entry.tools);
      } catch {
        // Not running and not cached, or failed: the first search names it.
      }
      await nextMacrotask();
    }
  }

  /**
   * Brings the index in step with what is known now (never starts a server: a server neither
   * running nor freshly cached is left out) and ranks `query` over it. Only servers whose tool
   * list changed since the last call are re-indexed.
   *
   * @throws {SearchQueryError} `QUERY_TOO_LONG` (see `search.ts`).
   */
  async search(query: string, options: CatalogSearchOptions = {}): Promise<CatalogSearchAnswer<T>> {
    const listed = await Promise.all(this.#source.servers.map(async (spec) => {
      try {
        return { spec, entry: await this.#source.listServerTools(spec, { allowStart: false }) };
      } catch (error) {
        const isUnlisted = (error as { code?: unknown } | null)?.code === "RESTART_PENDING";
        return { spec, reason: error instanceof Error ? error.message : String(error), isUnlisted };
      }
    }));
    const entries = listed.flatMap((l) => ("entry" in l ? [l.entry] : []));
    // New or changed listings are analysed a slice at a time; the sync below then only drops servers.
    for (const e of entries) await this.#index.syncServerInSlices(e.spec.name, e.tools);
    this.#index.sync(entries.map((e) => ({ server: e.spec.name, tools: e.tools })));
    const wanted = options.servers;
    const inScope = (spec: ServerSpec) => wanted === undefined || wanted.has(spec.name);
    const byServer = new Map(entries.map((e) => [e.spec.name, e]));
    const matches = this.#index.search(query, {
      limit: options.limit,
      servers: wanted,
      accept: options.accept,
    })
      .flatMap((m) => {
        const entry = byServer.get(m.server);
        return entry ? [{ entry, tool: m.tool as Tool, score: m.score }] : [];
      });
    return {
      matches,
      searched: entries.filter((e) => inScope(e.spec)),
      notSearched: listed.flatMap((l) =>
        l.reason !== undefined && inScope(l.spec)
          ? [{ spec: l.spec, reason: l.reason, isUnlisted: l.isUnlisted }]
          : []
      ),
    };
  }
}
