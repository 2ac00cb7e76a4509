/**
 * The catalog's side of observed result shapes: whether a server is observed (`[mcp]
 * observe-results` and the manifest's `observe-results`), which calls are learned from (tools
 * without `outputSchema`), and the tool-cache files the shapes are kept in.
 *
 * @module
 */
import type { McpConfig, ServerSpec } from "../plugins/mod.ts";
import type { ObservedLookup } from "../declarations/observed_shape.ts";
import type { CallOutcome } from "./catalog_types.ts";
import { ObservedResults, type ShapeRow } from "./_observed_store.ts";
import { readToolCacheShapes, type ToolCacheMemo, writeToolCacheShapes } from "./tool_cache.ts";

/** What {@link CatalogObserving} needs of its catalog. */
export interface ObservingHost {
  readonly configDir: string;
  readonly config: McpConfig;
  readonly servers: readonly ServerSpec[];
  /** `spawnKey(spec)`, memoised. */
  keyOf(spec: ServerSpec): string;
  /** `false`: nothing is read from or written to the tool cache. */
  readonly useToolCache: boolean;
  readonly memo: ToolCacheMemo;
  warn(message: string): void;
}

/** Observed result shapes of one catalog's servers, kept with their tool-cache files. */
export class CatalogObserving {
  readonly #host: ObservingHost;
  readonly #store: ObservedResults;

  constructor(host: ObservingHost) {
    this.#host = host;
    this.#store = new ObservedResults({
      read: (key) => this.#withSpec(key, (spec) => readToolCacheShapes(host.configDir, spec, host.memo), []),
      write: (key, rows) =>
        this.#withSpec(
          key,
          (spec) => writeToolCacheShapes(host.configDir, spec, { shapes: rows, memo: host.memo }),
          undefined,
        ),
    }, (error) => host.warn(`cannot keep observed result shapes: ${String(error)}`));
  }

  /** Whether results of `spec` are observed and their shapes shown. */
  isObserving(spec: ServerSpec): boolean {
    return this.#host.config.observeResults && spec.observeResults !== false;
  }

  /** Learns from one successful call (see `Catalog.observeResult`). */
  observe(outcome: CallOutcome, value: unknown): void {
    const spec = this.#host.servers.find((s) => s.name === outcome.server);
    if (!spec || !this.isObserving(spec) || outcome.definition.outputSchema !== undefined) return;
    const isContent = value === outcome.result.content;
    this.#store.observe(this.#host.keyOf(spec), {
      tool: outcome.definition,
      value,
      contentBlocks: isContent,
    });
  }

  /**
   * The observed results of `spec`'s tools, after merging in its cache file's shapes once per
   * session (`rows` when the caller read the file already). Nothing when `spec` is not observed.
   */
  async lookup(spec: ServerSpec, rows?: ShapeRow[]): Promise<ObservedLookup> {
    if (!this.isObserving(spec)) return () => undefined;
    const key = this.#host.keyOf(spec);
    if (rows !== undefined || this.#host.useToolCache) await this.#store.load(key, rows);
    return this.#store.lookup(key);
  }

  /** The rows to write with `spec`'s tool list (none when it is not observed). */
  async rows(spec: ServerSpec): Promise<ShapeRow[]> {
    return this.isObserving(spec) ? await this.#store.rows(this.#host.keyOf(spec)) : [];
  }

  /** Writes what is unsaved; later observations are ignored. */
  async close(): Promise<void> {
    await this.#store.close();
  }

  async #withSpec<T>(key: string, run: (spec: ServerSpec) => Promise<T>, none: T): Promise<T> {
    if (!this.#host.useToolCache) return none;
    const spec = this.#host.servers.find((s) => this.#host.keyOf(s) === key);
    return spec ? await run(spec) : none;
  }
}

/** The {@link CatalogObserving} of a catalog (its settings and servers read as they are at each use). */
export function observingOf(
  catalog: {
    readonly configDir: string;
    readonly config: McpConfig;
    readonly servers: readonly ServerSpec[];
  },
  options: { useToolCache?: boolean | undefined; logger?: { warn(message: string): void } | undefined },
  memo: ToolCacheMemo,
  visible: { keyOf(spec: ServerSpec): string },
): CatalogObserving {
  return new CatalogObserving({
    get configDir() {
      return catalog.configDir;
    },
    get config() {
      return catalog.config;
    },
    get servers() {
      return catalog.servers;
    },
    keyOf: (spec) => visible.keyOf(spec),
    useToolCache: options.useToolCache !== false,
    memo,
    warn: (message) => options.logger?.warn(message),
  });
}
