/**
 * Ranked search over the catalog's tools: a BM25 index (MiniSearch) over each tool's name (with
 * its server and title), description, and parameter names and descriptions, analysed by
 * `_search_text.ts` (identifier splitting, abbreviations, Porter stems). The index follows the
 * catalog: {@link ToolSearchIndex.sync} re-indexes only the servers whose tool list changed, so a
 * query costs a lookup, never a rebuild.
 *
 * @module
 */
import MiniSearch from "minisearch";
import type { ToolInfo } from "../declarations/mod.ts";
import { splitWords, wordTerms } from "./_search_text.ts";

/** Results a search returns when the caller names no `limit`. */
export const SEARCH_DEFAULT_LIMIT = 10;
/** Most results one search returns. */
export const SEARCH_MAX_LIMIT = 50;
/** Longest query accepted, in UTF-16 units; a longer one is refused (`QUERY_TOO_LONG`). */
export const MAX_QUERY_CHARS = 500;
/**
 * Text indexed per field of one tool, in UTF-16 units: a description or a parameter list past this
 * is indexed up to here (it still matches by its opening, which is where tools say what they do).
 */
export const MAX_INDEXED_FIELD_CHARS = 4_000;

/**
 * Weight of a match in each field relative to the description: a word in the tool's name (or its
 * server's name) says more than one in its prose, and one in a parameter's prose says less.
 */
export const SEARCH_FIELD_BOOSTS: Readonly<Record<"name" | "description" | "params", number>> = Object
  .freeze({ name: 3, description: 1, params: 0.5 });

/** One server's tools as the index takes them. */
export interface SearchableServer {
  /** Server name as declared. */
  server: string;
  /**
   * Its visible tools. The index keeps a reference: passing the same array again means "unchanged"
   * and costs nothing; a different array re-indexes the server.
   */
  tools: readonly ToolInfo[];
}

/** One search result. */
export interface ToolMatch {
  /** Server name as declared. */
  server: string;
  tool: ToolInfo;
  /** BM25 score (higher is better); comparable within one search only. */
  score: number;
}

/** Options of {@link ToolSearchIndex.search}. */
export interface SearchOptions {
  /** Most results, clamped to 1…{@link SEARCH_MAX_LIMIT}. @default SEARCH_DEFAULT_LIMIT */
  limit?: number | undefined;
  /** Only tools of these servers (raw names). @default every indexed server */
  servers?: ReadonlySet<string> | undefined;
  /** Only tools this predicate accepts (after `servers`). @default all */
  accept?: ((server: string, tool: ToolInfo) => boolean) | undefined;
}

/** The error of a query the index refuses. */
export class SearchQueryError extends RangeError {
  override name = "SearchQueryError";
  readonly code = "QUERY_TOO_LONG";
  readonly hint = `shorten the query to at most ${MAX_QUERY_CHARS} characters: a few words work best`;
}

interface IndexedTool {
  id: number;
  server: string;
  tool: ToolInfo;
  name: string;
  description: string;
  params: string;
}

/** Parameter names and descriptions of a tool's input schema (top-level properties), as one text. */
function parameterText(tool: ToolInfo): string {
  const schema = tool.inputSchema as { properties?: unknown } | undefined;
  const properties = typeof schema === "object" && schema !== null ? schema.properties : undefined;
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) return "";
  const parts: string[] = [];
  let length = 0;
  for (const [key, value] of Object.entries(properties as Record<string, unknown>)) {
    const description = (value as { description?: unknown } | null)?.description;
    const part = typeof description === "string" ? `${key} ${description}` : key;
    parts.push(part);
    length += part.length + 1;
    if (length >= MAX_INDEXED_FIELD_CHARS) break;
  }
  return parts.join(" ").slice(0, MAX_INDEXED_FIELD_CHARS);
}

/** The catalog's search index; one per session, kept in step with {@link ToolSearchIndex.sync}. */
export class ToolSearchIndex {
  readonly #memo = new Map<string, string[]>();
  readonly #engine: MiniSearch<IndexedTool>;
  readonly #servers = new Map<string, { tools: readonly ToolInfo[]; docs: IndexedTool[] }>();
  readonly #byId = new Map<number, IndexedTool>();
  #nextId = 0;

  constructor() {
    this.#engine = new MiniSearch<IndexedTool>({
      fields: ["name", "description", "params"],
      storeFields: [],
      tokenize: splitWords,
      processTerm: (word) => {
        const terms = wordTerms(word, this.#memo);
        return terms.length === 0 ? null : terms;
      },
      autoVacuum: false, // documents are removed exactly (`remove`), so nothing is left to vacuum
    });
  }

  /** Tools indexed now. */
  get toolCount(): number {
    return this.#byId.size;
  }

  /** Servers indexed now. */
  get serverCount(): number {
    return this.#servers.size;
  }

  /**
   * Makes the index hold exactly `servers`: a server whose `tools` is the array it was last given is
   * kept as is; one with a new array is re-indexed; one no longer listed is dropped. A wire name
   * repeated within a server is indexed once.
   *
   * @returns How many servers were (re-)indexed or dropped: `0` when nothing changed.
   */
  sync(servers: readonly SearchableServer[]): number {
    let changed = 0;
    const wanted = new Map(servers.map((s) => [s.server, s.tools]));
    for (const [server, entry] of this.#servers) {
      if (wanted.get(server) === entry.tools) continue;
      this.#drop(server, entry.docs);
      changed++;
    }
    for (const { server, tools } of servers) {
      if (this.#servers.has(server)) continue;
      const seen = new Set<string>();
      const docs: IndexedTool[] = [];
      for (const tool of tools) {
        if (seen.has(tool.name)) continue;
        seen.add(tool.name);
        docs.push({
          id: this.#nextId++,
          server,
          tool,
          name: `${tool.name} ${server} ${typeof tool.title === "string" ? tool.title : ""}`,
          description: typeof tool.description === "string"
            ? tool.description.slice(0, MAX_INDEXED_FIELD_CHARS)
            : "",
          params: parameterText(tool),
        });
      }
      this.#engine.addAll(docs);
      for (const doc of docs) this.#byId.set(doc.id, doc);
      this.#servers.set(server, { tools, docs });
      changed++;
    }
    return changed;
  }

  #drop(server: string, docs: IndexedTool[]): void {
    this.#engine.removeAll(docs);
    for (const doc of docs) this.#byId.delete(doc.id);
    this.#servers.delete(server);
  }

  /**
   * The tools that best match `query`, best first (BM25 over the fields, weighted by
   * {@link SEARCH_FIELD_BOOSTS}; a tool matching any query term is a candidate). A query with no
   * searchable word (empty, only stop words) matches nothing.
   *
   * @throws {SearchQueryError} `QUERY_TOO_LONG` past {@link MAX_QUERY_CHARS}.
   */
  search(query: string, options: SearchOptions = {}): ToolMatch[] {
    if (query.length > MAX_QUERY_CHARS) {
      throw new SearchQueryError(
        `Cannot search tools: the query is ${query.length} characters, more than ${MAX_QUERY_CHARS}`,
      );
    }
    const limit = clampLimit(options.limit);
    const { servers, accept } = options;
    const results = this.#engine.search(query, {
      boost: { ...SEARCH_FIELD_BOOSTS },
      combineWith: "OR",
      ...(servers === undefined && accept === undefined ? {} : {
        filter: (result) => {
          const doc = this.#byId.get(result.id as number);
          return doc !== undefined && (servers === undefined || servers.has(doc.server)) &&
            (accept === undefined || accept(doc.server, doc.tool));
        },
      }),
    });
    const matches: ToolMatch[] = [];
    for (const result of results) {
      const doc = this.#byId.get(result.id as number);
      if (doc === undefined) continue;
      matches.push({ server: doc.server, tool: doc.tool, score: result.score });
      if (matches.length >= limit) break;
    }
    return matches;
  }
}

/**
 * `limit` as a search uses it: a whole number in 1…{@link SEARCH_MAX_LIMIT}; anything else
 * (missing, not a finite number) is {@link SEARCH_DEFAULT_LIMIT}.
 */
export function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return SEARCH_DEFAULT_LIMIT;
  return Math.min(SEARCH_MAX_LIMIT, Math.max(1, Math.floor(limit)));
}
