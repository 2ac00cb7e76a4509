/**
 * Which servers and tools are in scope for this session and how a call reaches one (resolution,
 * re-resolution on file changes, tool lists live or cached, dispatch through the server pool).
 * It never speaks MCP to the agent: that is the meta-server's job.
 *
 * Other faces, each loaded on its own so that a command or a start loads no more than it uses yet:
 * - `resolve.ts`: the resolution alone (which servers apply, and why not), for the commands that read it
 *   without a live catalog (`status`, `trust`, `plugin`, `mcp login`);
 * - `tool_cache.ts`: the tool cache on disk, which `status` reads without the catalog;
 * - `result_unwrap.ts`: a tool result -> the script's value, loaded with `execute` after the catalog
 *   (a cold start resolves the catalog and starts the named servers before it loads this).
 *
 * @module
 */
import {
  type Dormant,
  type McpConfig,
  namespaceKey,
  type Refusal,
  type ServerSpec,
  spawnKey,
} from "../plugins/mod.ts";
import { printable, UserError } from "../diagnostics.ts";
import { type LoadedResolution, loadResolution } from "./resolve.ts";
import { resolveToolKey } from "../declarations/tool_binding.ts";
import type { Workspace } from "../workspace/mod.ts";
import { type Logger, NULL_LOGGER } from "../log.ts";
import {
  type BackendConnection,
  BackendError,
  type BackendPeer,
  type CallOptions,
  type Clock,
  type ReadResourceResult,
  type Resource,
  rootsForStdio,
  ServerPool,
  SYSTEM_CLOCK,
  type Tool,
} from "../backends/mod.ts";
import { budgetedConnect, poolLimits } from "./_pool_settings.ts";
import {
  readCachedEra,
  readFreshToolCacheEntry,
  removeToolCache,
  ToolCacheMemo,
  writeToolCache,
} from "./tool_cache.ts";
import { type CatalogObserving, observingOf } from "./_observing.ts";
import { hidesResources, listServerResources, readServerResource } from "./_resources.ts";
import {
  failedServerError,
  specForNamespace,
  unavailableNamespaces,
  unavailableReason,
} from "./_scope_lookup.ts";
import type { CallOutcome, CatalogOptions, ServerTools } from "./catalog_types.ts";
import { fingerprintOf, watchedFiles } from "./_fingerprint.ts";
import { ChangeDetector } from "./_change_watch.ts";
import { hiddenToolError, VisibleToolsMemo } from "./_tool_filter.ts";
import { CatalogSearch } from "./_catalog_search.ts";
import { Listings } from "./_listings.ts";
import { recordListedNames } from "./_listed_names.ts";
import { type BeforeSend, type ResolvedCall, settleBeforeSend } from "./_before_send.ts";

export type { BeforeSend } from "./_before_send.ts";
export { readToolCacheState, TOOL_CACHE_TTL_MS, toolCachePath, type ToolCacheState } from "./tool_cache.ts";
export type {
  CatalogMatch,
  CatalogSearch,
  CatalogSearchAnswer,
  CatalogSearchOptions,
} from "./_catalog_search.ts";

export type { CallOutcome, CatalogOptions, ServerTools } from "./catalog_types.ts";
export { MAX_RESOURCE_URI_CHARS, RESOURCE_METHODS } from "./_resources.ts";
export { SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SearchQueryError } from "./search.ts";

/** The session's view of the servers in scope. Open with {@link Catalog.open}; `close()` at the end. */
export class Catalog {
  #loaded: LoadedResolution;
  readonly #options: CatalogOptions;
  readonly #pool: ServerPool;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #listings: Listings = new Listings({
    keyOf: (spec) => this.#visible.keyOf(spec),
    fetch: (spec, connection, signal) =>
      connection.listTools({ timeoutMs: spec.toolCallTimeoutMs, signal }).then(recordListedNames),
    onCurrent: async (spec, { tools, connection }) => {
      await this.#writeCache(spec, tools, connection);
      this.#emit(this.#listedListeners, "tools-listed");
    },
    now: () => this.#clock.now(),
  });
  readonly #listeners = new Set<() => void>();
  readonly #listedListeners = new Set<() => void>();
  readonly #cacheGone = new Set<string>();
  readonly #cacheMemo = new ToolCacheMemo();
  /** Cached tool arrays whose names were recorded already (the memo hands the same array while the file is unchanged). */
  readonly #namesRecorded = new WeakSet<readonly Tool[]>();
  readonly #visible = new VisibleToolsMemo();
  readonly #observed: CatalogObserving;
  /** Ranked search over the running or freshly cached servers; starts nothing (`_catalog_search.ts`). */
  readonly toolSearch: CatalogSearch<ServerTools> = new CatalogSearch<ServerTools>(this);
  #peer: ((spec: ServerSpec) => BackendPeer | undefined) | undefined;
  readonly #changes: ChangeDetector;
  #refreshing: Promise<boolean> = Promise.resolve(false);
  #closed = false;

  private constructor(loaded: LoadedResolution, fingerprint: string, options: CatalogOptions) {
    this.#loaded = loaded;
    this.#changes = new ChangeDetector(fingerprint);
    this.#options = options;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#logger = options.logger ?? NULL_LOGGER;
    this.#observed = observingOf(this, options, this.#cacheMemo, this.#visible);
    this.#pool = new ServerPool({
      connect: budgetedConnect(options.connect, () => this.config),
      ...poolLimits(loaded.config),
      clock: this.#clock,
      logger: this.#logger,
      roots: (spec) =>
        spec.transport === "stdio"
          ? rootsForStdio(spec, this.#loaded.workspace.root ?? this.#options.cwd)
          : [{
            uri: `file://${encodeURI(this.#loaded.workspace.root ?? this.#options.cwd)}`,
            name: "workspace",
          }],
      onToolListChanged: (spec) => this.#onServerToolsChanged(spec),
      peer: (spec) => this.#peer?.(spec),
      priorEra: (spec) =>
        this.#options.useToolCache === false
          ? Promise.resolve(undefined)
          : readCachedEra(this.configDir, spec, this.#clock, this.#cacheMemo),
    });
  }

  /**
   * Sets what servers started from now on may ask of the agent (elicitation, sampling, logging);
   * the meta-server calls it once. `undefined`: nothing is offered.
   */
  setPeer(peer: ((spec: ServerSpec) => BackendPeer | undefined) | undefined): void {
    this.#peer = peer;
  }

  /**
   * Resolves the servers in scope (starts nothing).
   *
   * @throws Only for unexpected file-system failures (see `loadResolution`).
   */
  static async open(options: CatalogOptions): Promise<Catalog> {
    const load = options.load ?? loadResolution;
    const loaded = await load({
      cwd: options.cwd,
      env: options.env,
      homeDir: options.homeDir,
      configDir: options.configDir,
    });
    return new Catalog(loaded, await fingerprintOf(loaded, options.cwd), options);
  }

  /** The effective `[mcp]` settings. */
  get config(): McpConfig {
    return this.#loaded.config;
  }
  /** `<config>` directory. */
  get configDir(): string {
    return this.#loaded.configDir;
  }
  /** The first problem of `config.toml`, or `null` (see {@link configNotes}). */
  get configError(): UserError | null {
    return this.#loaded.configError;
  }
  /** Every problem of `config.toml` (each costs only its key) and the adjustments made, as last loaded. */
  get configNotes(): { problems: readonly UserError[]; warnings: readonly string[] } {
    return { problems: this.#loaded.configProblems, warnings: this.#loaded.configWarnings };
  }
  /**
   * One line per plugin source worth telling the agent about: a git registry whose last fetch failed
   * (its last copy is used). A registry never fetched is left to `status` (it is no fault of a session).
   */
  get sourceProblems(): string[] {
    return (this.#loaded.sources?.sources ?? []).filter((s) => s.fetch?.error !== undefined && s.note)
      .map((s) => printable(`registry "${s.name}": ${s.note}`)); // a fetch error carries git's own text
  }
  /** The workspace as last resolved. */
  get workspace(): Workspace {
    return this.#loaded.workspace;
  }
  /** Servers in scope, sorted by name. */
  get servers(): readonly ServerSpec[] {
    return this.#loaded.resolution.servers;
  }
  /** Declared servers refused, with reasons. */
  get refused(): readonly Refusal[] {
    return this.#loaded.resolution.refused;
  }
  /** Declared servers whose `depends-on` does not hold here. */
  get dormant(): readonly Dormant[] {
    return this.#loaded.resolution.dormant;
  }
  /** Why a declared server that is not in scope cannot be used (see `unavailableReason` of `_scope_lookup.ts`). */
  unavailableReason(name: string): string | undefined {
    return unavailableReason(this.#loaded.resolution, name);
  }
  /** Script globals of the declared servers that are dormant or refused (none clashing with one in scope). */
  unavailableNamespaces(): string[] {
    return unavailableNamespaces(this.#loaded.resolution);
  }
  /** The server a script reaches as global `namespace`, if any. */
  serverByNamespace(namespace: string): ServerSpec | undefined {
    return this.servers.find((s) => namespaceKey(s.name) === namespace);
  }
  /** The server named `name` (raw manifest name), if in scope. */
  serverByName(name: string): ServerSpec | undefined {
    return this.servers.find((s) => s.name === name);
  }
  /** Names of the servers running now. */
  runningServers(): string[] {
    return this.#pool.runningNames();
  }
  /**
   * Whether `spec` runs with its tool list held: `listServerTools(spec, { live: true })` would answer at once,
   * with nothing to start or list.
   */
  hasListedTools(spec: ServerSpec): boolean {
    const running = this.#pool.running(spec);
    return running !== undefined && this.#listings.current(spec, running) !== undefined;
  }

  /** What the pool knows about `spec` (status, failures, last error). */
  serverState(spec: ServerSpec): ReturnType<ServerPool["state"]> {
    return this.#pool.state(spec);
  }

  /** Registers a listener for "the servers in scope or their tools changed"; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Registers a listener for "a server's tools were listed live (and cached)": each listing no
   * `tools/list_changed` overtook, e.g. a server's first start. Returns the unsubscribe.
   */
  onToolsListed(listener: () => void): () => void {
    this.#listedListeners.add(listener);
    return () => this.#listedListeners.delete(listener);
  }

  #emitChange(): void {
    this.#emit(this.#listeners, "change");
  }

  #emit(listeners: ReadonlySet<() => void>, what: string): void {
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        this.#logger.warn(`${what} listener failed: ${String(error)}`);
      }
    }
  }

  /** A flood of `tools/list_changed` costs one cache removal until the cache is written again. */
  #onServerToolsChanged(spec: ServerSpec): void {
    const key = this.#visible.keyOf(spec);
    this.#listings.changed(spec);
    if (!this.#cacheGone.has(key)) void this.#removeCache(spec);
    this.#cacheGone.add(key);
    this.#emitChange();
  }

  /**
   * The visible tools of `spec`: from the running server, else from a fresh on-disk cache, else
   * by starting the server (a server in restart backoff is not waited for). A server given up for
   * the session (restart budget spent) is never listed, not even from the cache.
   *
   * @param options.allowStart `false`: never start; a miss throws `RESTART_PENDING`-like errors. @default true
   * @param options.live Skip the cache: start the server (`execute` does so for the servers a script names).
   * @throws {BackendError} `SERVER_FAILED` when the server was given up for the session; others when
   *   it cannot be started or listed.
   */
  async listServerTools(
    spec: ServerSpec,
    options: { signal?: AbortSignal; allowStart?: boolean; live?: boolean } = {},
  ): Promise<ServerTools> {
    const running = this.#pool.running(spec);
    const state = this.#pool.state(spec);
    // Given up for the session: its cached tools would look usable but every call fails.
    if (!running && state.status === "failed") throw failedServerError(spec, state);
    if (!running && options.live !== true) {
      const cached = await this.#readCache(spec);
      if (cached) {
        const visible = this.#visible.of(spec, cached.tools, this.config);
        const hasResources = cached.hasResources && !hidesResources(spec);
        const observed = await this.#observed.lookup(spec, cached.shapes);
        return { spec, ...visible, source: "cache", warnings: [], hasResources, observed };
      }
      if (options.allowStart === false) {
        throw new BackendError(
          "RESTART_PENDING",
          spec.name,
          `${spec.name} is not running and has no cached tool list`,
        );
      }
    }
    const connection = running ??
      await this.#pool.acquire(spec, { signal: options.signal, waitForRestart: false });
    const listing = await this.#listings.live(spec, connection, options.signal);
    return {
      spec,
      ...this.#visible.of(spec, listing.tools, this.config),
      source: "live",
      warnings: listing.warnings,
      hasResources: connection.serverCapabilities.resources !== undefined && !hidesResources(spec),
      observed: await this.#observed.lookup(spec),
    };
  }

  /** Learns what a tool without `outputSchema` returns from `value`, what the script got (`_observing.ts`). */
  observeResult(outcome: CallOutcome, value: unknown): void {
    this.#observed.observe(outcome, value);
  }

  /**
   * Dispatches one call from a script: starts the server if needed (waiting out a restart
   * backoff), resolves `key` against the live tool list (exact, then tolerant spelling), and
   * sends `tools/call` under the server's call timeout. At most `[mcp] max-calls-in-flight-per-server`
   * (default 32) calls per server are in flight; later ones wait their turn in order. Never retries.
   *
   * @param options.signal Cancels the wait or the call (the server gets `notifications/cancelled`).
   * @param options.onProgress Receives the server's progress notifications for this call.
   * @param options.trace The agent's trace context, forwarded to a modern server (`CallOptions.trace`).
   * @param options.beforeSend Checks the call, inside its slot, on the definition it is sent with
   *   (`_before_send.ts`: again when the listing changed meanwhile).
   * @param namespace The global the script used (`namespaceKey(server)`).
   * @param key The property the script called, e.g. `createEntities`.
   * @throws {UserError} `SERVER_DORMANT`/`SERVER_REFUSED` (declared but not usable here, with the
   *   reason), `TOOL_HIDDEN` (the tool exists but a filter hides it, naming the filter),
   *   `TOOL_UNKNOWN`, `TOOL_AMBIGUOUS`; {@link BackendError}.
   */
  async call(
    namespace: string,
    key: string,
    args: Record<string, unknown>,
    options: {
      signal?: AbortSignal | undefined;
      onProgress?: CallOptions["onProgress"];
      beforeSend?: BeforeSend | undefined;
      trace?: CallOptions["trace"];
    } = {},
  ): Promise<CallOutcome> {
    const spec = specForNamespace(this.#loaded.resolution, namespace);
    return await this.#pool.withCallSlot(spec, async () => {
      const first = await this.#resolve(spec, key, options.signal);
      const { connection, definition } = options.beforeSend
        ? await settleBeforeSend(
          spec,
          first,
          options.beforeSend,
          () => this.#resolve(spec, key, options.signal),
        )
        : first;
      const result = await connection.callTool(definition.name, args, {
        timeoutMs: spec.toolCallTimeoutMs,
        signal: options.signal,
        onProgress: options.onProgress,
        trace: options.trace,
      });
      return { server: spec.name, tool: definition.name, definition, result };
    }, { signal: options.signal });
  }

  /** Every resource of `namespace`'s server (`srv.$resources.list()`); see `_resources.ts`. */
  async listResources(
    namespace: string,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<Resource[]> {
    return await listServerResources(
      this.#pool,
      specForNamespace(this.#loaded.resolution, namespace),
      options,
    );
  }

  /** The contents of one resource of `namespace`'s server (`srv.$resources.read({ uri })`). */
  async readResource(
    namespace: string,
    uri: unknown,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<ReadResourceResult["contents"]> {
    const spec = specForNamespace(this.#loaded.resolution, namespace);
    return await readServerResource(this.#pool, spec, uri, options);
  }

  /** Resolves `key` against the live visible tools of `spec` (exact, then tolerant spelling). */
  async #resolve(
    spec: ServerSpec,
    key: string,
    signal: AbortSignal | undefined,
  ): Promise<ResolvedCall> {
    // A running server with a current listing (every call but the first) answers without a wait.
    const connection = this.#pool.running(spec) ??
      await this.#pool.acquire(spec, { signal, waitForRestart: true });
    const listing = this.#listings.current(spec, connection) ??
      await this.#listings.live(spec, connection, signal);
    const { tools } = this.#visible.of(spec, listing.tools, this.config);
    const table = this.#visible.tableOf(tools);
    const resolved = resolveToolKey(table, spec.name, key);
    if (!resolved.ok) throw hiddenToolError(spec, listing.tools, key) ?? resolved.error;
    return {
      connection,
      definition: tools.find((t) => t.name === resolved.value)!,
      toolNames: listing.tools.map((t) => t.name),
      isCurrent: () => this.#listings.isCurrent(spec, listing),
    };
  }

  /**
   * Re-resolves when `Cargo.lock`, a member `Cargo.toml`, `config.toml` or the plugins folder
   * (a manifest edited, a plugin added or removed) changed since the last look, judged by
   * modification times and sizes: servers whose spawn key is unchanged keep running, the others
   * are shut down, new `[mcp]` restart and shutdown settings apply, listeners are told when the
   * servers in scope, the refusals or the settings changed.
   *
   * Looks run one at a time, each after the previous one ended, so a caller always sees the
   * files as they were when it asked.
   *
   * @param options.trustWatch Look only after a file-system watch on the files' folders saw an event
   *   (see `_change_watch.ts`; a request's cheap check). @default false (exact)
   * @returns `true` when something the agent sees changed.
   */
  refreshIfChanged(options: { trustWatch?: boolean } = {}): Promise<boolean> {
    const previous = this.#refreshing.catch(() => false); // its own caller reports its failure
    const look = previous.then(() => this.#refresh(options.trustWatch === true));
    this.#refreshing = look;
    return look;
  }

  async #refresh(trustWatch: boolean): Promise<boolean> {
    if (this.#closed) return false;
    const fingerprint = await this.#changes.look(this.#loaded, this.#options.cwd, { trustWatch });
    if (fingerprint === undefined) return false;
    const load = this.#options.load ?? loadResolution;
    const loaded = await load({
      cwd: this.#options.cwd,
      env: this.#options.env,
      homeDir: this.#options.homeDir,
      configDir: this.#options.configDir,
    });
    if (this.#closed) return false;
    const before = this.#visibleState();
    this.#loaded = loaded;
    // A file that changes while it is being loaded is seen on the next look: the fingerprint taken
    // before the load is kept unless the set of workspace files itself changed.
    const isSameFileSet = watchedFiles(loaded, this.#options.cwd).join("|") === before.files;
    const accepted = isSameFileSet ? fingerprint : await fingerprintOf(loaded, this.#options.cwd);
    this.#changes.accept(accepted, isSameFileSet);
    this.#pool.configure(poolLimits(loaded.config));
    const keep = new Set(loaded.resolution.servers.map(spawnKey));
    this.#listings.retain(keep);
    await this.#pool.retain(keep);
    const changed = before.text !== this.#visibleState().text;
    this.#logger.info(
      `workspace or plugins changed; servers in scope: ${
        this.servers.map((s) => s.name).join(", ") || "none"
      }`,
    );
    if (changed) this.#emitChange();
    return changed;
  }

  #visibleState(): { text: string; files: string } {
    return {
      text: JSON.stringify([
        this.servers.map(spawnKey),
        this.refused,
        this.config,
        this.#loaded.configProblems.map((p) => p.message),
      ]),
      files: watchedFiles(this.#loaded, this.#options.cwd).join("|"),
    };
  }

  /** Shuts every running server down. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#changes.close();
    this.#listeners.clear();
    this.#listedListeners.clear();
    await this.#observed.close();
    await this.#pool.close();
  }

  async #readCache(spec: ServerSpec): ReturnType<typeof readFreshToolCacheEntry> {
    if (this.#options.useToolCache === false) return undefined;
    const entry = await readFreshToolCacheEntry(this.configDir, spec, this.#clock, this.#cacheMemo);
    if (entry && !this.#namesRecorded.has(entry.tools)) {
      await recordListedNames(entry);
      this.#namesRecorded.add(entry.tools);
    }
    return entry;
  }

  async #writeCache(spec: ServerSpec, tools: Tool[], connection: BackendConnection): Promise<void> {
    if (this.#options.useToolCache === false) return;
    try {
      this.#cacheGone.delete(this.#visible.keyOf(spec));
      const shapes = await this.#observed.rows(spec), memo = this.#cacheMemo;
      const hasResources = connection.serverCapabilities.resources !== undefined;
      const { era, toolListHints: hints } = connection;
      await writeToolCache(this.configDir, spec, tools, this.#clock, {
        hasResources,
        shapes,
        memo,
        era,
        hints,
      });
    } catch (error) {
      const why = error instanceof UserError ? `${error.message}; ${error.hint ?? ""}` : String(error);
      this.#logger.warn(`cannot write the tool cache for ${spec.name}: ${why}`);
    }
  }

  async #removeCache(spec: ServerSpec): Promise<void> {
    await removeToolCache(this.configDir, spec, this.#cacheMemo);
  }
}
