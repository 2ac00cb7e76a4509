/**
 * Ranked search over the catalog's tools: BM25F over each tool's name (with its server and title),
 * description, and parameter names and descriptions, analysed by `_search_text.ts` (identifier
 * splitting, abbreviations, Porter stems). The index holds one segment per server
 * (`_search_segment.ts`); {@link ToolSearchIndex.sync} rebuilds only the segments of servers whose
 * tool list changed, so a query costs a lookup, never a rebuild.
 *
 * Own code rather than a search library: on the 10,000-tool scale corpus it ranks as well as the
 * best of MiniSearch, Orama, FlexSearch and wink-bm25-text-search (recall@5 0.97), answers a query
 * about 3× faster than MiniSearch, and holds a fraction of their memory (`docs/architecture.md`, "Design notes").
 *
 * @module
 */
import type { ToolInfo } from "../declarations/mod.ts";
import { Vocabulary } from "./_search_text.ts";
import { buildSegment, buildSegmentInSlices, FIELD_COUNT, type Segment } from "./_search_segment.ts";

export { MAX_INDEXED_FIELD_CHARS } from "./_search_segment.ts";

/** Results a search returns when the caller names no `limit`. */
export const SEARCH_DEFAULT_LIMIT = 10;
/** Most results one search returns. */
export const SEARCH_MAX_LIMIT = 50;
/** Longest query accepted, in UTF-16 units; a longer one is refused (`QUERY_TOO_LONG`). */
export const MAX_QUERY_CHARS = 500;

/**
 * Weight of a match in each field (name, description, parameters): a word in the tool's name (or
 * its server's name) says more than one in its prose, and one in a parameter's prose says less.
 */
export const SEARCH_FIELD_WEIGHTS: readonly number[] = Object.freeze([3, 1, 0.5]);
/** BM25 length normalisation per field (names are short: their length matters less). */
const FIELD_B: readonly number[] = [0.5, 0.75, 0.75];
/** BM25 term-frequency saturation. */
const K1 = 1.2;

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
  /** BM25F score (higher is better); comparable within one search only. */
  score: number;
}

/** Options of {@link ToolSearchIndex.search}. */
export interface SearchOptions {
  /** Most results, clamped to 1...{@link SEARCH_MAX_LIMIT}. @default SEARCH_DEFAULT_LIMIT */
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

/** The catalog's search index; one per session, kept in step with {@link ToolSearchIndex.sync}. */
export class ToolSearchIndex {
  readonly #vocabulary = new Vocabulary();
  readonly #segments = new Map<string, Segment>();
  /** Term id -> documents containing it, over all segments. */
  readonly #df = new Map<number, number>();
  readonly #totalLengths: number[] = new Array(FIELD_COUNT).fill(0);
  #docCount = 0;

  /** Tools indexed now. */
  get toolCount(): number {
    return this.#docCount;
  }

  /** Servers indexed now. */
  get serverCount(): number {
    return this.#segments.size;
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
    const wanted = new Set(servers.map((s) => s.server));
    for (const server of [...this.#segments.keys()]) {
      if (!wanted.has(server)) changed += this.syncServer(server, undefined);
    }
    for (const { server, tools } of servers) changed += this.syncServer(server, tools);
    return changed;
  }

  /**
   * Makes the index hold `tools` for `server` (`undefined`: drop it): nothing happens when `tools` is
   * the array the server was last indexed from.
   *
   * @returns `1` when the server was (re-)indexed or dropped, else `0`.
   */
  syncServer(server: string, tools: readonly ToolInfo[] | undefined): number {
    const held = this.#segments.get(server);
    if (held !== undefined && held.source === tools) return 0;
    if (held !== undefined) {
      this.#account(held, -1);
      this.#segments.delete(server);
    }
    if (tools === undefined) return held === undefined ? 0 : 1;
    const segment = buildSegment(server, tools, this.#vocabulary);
    this.#segments.set(server, segment);
    this.#account(segment, 1);
    return 1;
  }

  /**
   * As {@link syncServer} for a server given tools (never a drop), analysing them a slice at a time with
   * the event loop turning in between (a large server indexed at once held the thread). A sync of the
   * same server that finished meanwhile wins when it was given the same array.
   *
   * @returns `1` when the server was (re-)indexed, else `0`.
   */
  async syncServerInSlices(server: string, tools: readonly ToolInfo[]): Promise<number> {
    if (this.#segments.get(server)?.source === tools) return 0;
    const segment = await buildSegmentInSlices(server, tools, this.#vocabulary);
    const held = this.#segments.get(server);
    if (held?.source === tools) return 0;
    if (held !== undefined) this.#account(held, -1);
    this.#segments.set(server, segment);
    this.#account(segment, 1);
    return 1;
  }

  /** Adds (`sign` 1) or removes (`-1`) a segment's share of the collection statistics. */
  #account(segment: Segment, sign: 1 | -1): void {
    this.#docCount += sign * segment.tools.length;
    for (let f = 0; f < FIELD_COUNT; f++) this.#totalLengths[f]! += sign * segment.totalLengths[f]!;
    for (const [term, slot] of segment.slots) {
      const df = (this.#df.get(term) ?? 0) + sign * (segment.offsets[slot + 1]! - segment.offsets[slot]!);
      if (df > 0) this.#df.set(term, df);
      else this.#df.delete(term);
    }
  }

  /**
   * The tools that best match `query`, best first: BM25F with per-field weights
   * {@link SEARCH_FIELD_WEIGHTS}; a tool matching any query term is a candidate; ties keep index order.
   * A query with no searchable word (empty, only stop words) matches nothing.
   *
   * @throws {SearchQueryError} `QUERY_TOO_LONG` past {@link MAX_QUERY_CHARS}.
   */
  search(query: string, options: SearchOptions = {}): ToolMatch[] {
    if (query.length > MAX_QUERY_CHARS) {
      throw new SearchQueryError(
        `Cannot search tools: the query is ${query.length} characters, more than ${MAX_QUERY_CHARS}`,
      );
    }
    const terms = this.#vocabulary.queryIds(query);
    const n = this.#docCount;
    if (terms.length === 0 || n === 0) return [];
    const average = this.#totalLengths.map((total) => total / n || 1);
    const idf = terms.map((term) => {
      const df = this.#df.get(term) ?? 0;
      return Math.log(1 + (n - df + 0.5) / (df + 0.5));
    });
    const found: { score: number; order: number; server: string; tool: ToolInfo }[] = [];
    let order = 0;
    for (const segment of this.#segments.values()) {
      if (options.servers !== undefined && !options.servers.has(segment.server)) {
        order += segment.tools.length;
        continue;
      }
      const scores = new Float64Array(segment.tools.length);
      terms.forEach((term, t) => {
        const slot = segment.slots.get(term);
        if (slot === undefined) return;
        for (let i = segment.offsets[slot]!; i < segment.offsets[slot + 1]!; i++) {
          const doc = segment.docs[i]!;
          let weighted = 0;
          for (let f = 0; f < FIELD_COUNT; f++) {
            const tf = segment.tf[i * FIELD_COUNT + f]!;
            if (tf === 0) continue;
            const norm = 1 - FIELD_B[f]! +
              FIELD_B[f]! * segment.lengths[doc * FIELD_COUNT + f]! / average[f]!;
            weighted += SEARCH_FIELD_WEIGHTS[f]! * tf / norm;
          }
          scores[doc]! += idf[t]! * weighted / (K1 + weighted);
        }
      });
      for (let doc = 0; doc < scores.length; doc++) {
        const score = scores[doc]!;
        const tool = segment.tools[doc]!;
        if (score > 0 && (options.accept === undefined || options.accept(segment.server, tool))) {
          found.push({ score, order: order + doc, server: segment.server, tool });
        }
      }
      order += segment.tools.length;
    }
    found.sort((a, b) => b.score - a.score || a.order - b.order);
    return found.slice(0, clampLimit(options.limit)).map(({ score, server, tool }) => ({
      server,
      tool,
      score,
    }));
  }
}

/**
 * `limit` as a search uses it: a whole number in 1...{@link SEARCH_MAX_LIMIT}; anything else
 * (missing, not a finite number) is {@link SEARCH_DEFAULT_LIMIT}.
 */
export function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return SEARCH_DEFAULT_LIMIT;
  return Math.min(SEARCH_MAX_LIMIT, Math.max(1, Math.floor(limit)));
}
