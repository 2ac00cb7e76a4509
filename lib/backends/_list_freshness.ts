/**
 * How we learn that a modern (2026-07-28) backing server's tool list changed: through a
 * `subscriptions/listen` stream while the server keeps one open (its `notifications/tools/list_changed`
 * reach the handlers registered for the legacy unsolicited ones), else by listing again once the last
 * listing's `ttlMs` has passed (never sooner than {@link MIN_RELIST_MS}) and reporting a change only when
 * the list differs. A legacy server sends `notifications/tools/list_changed` unasked; nothing here runs
 * for it.
 *
 * @module
 */
import type { Client } from "@modelcontextprotocol/client";
import type { Logger } from "../log.ts";

/** Shortest wait before a modern server without a listen stream is listed again, in ms (60 s). */
export const MIN_RELIST_MS = 60_000;

/** Longest `ttlMs` honoured, in ms (24 h, the tool cache's own bound). */
export const MAX_LIST_TTL_MS = 24 * 60 * 60 * 1000;

/** The cache hints of a 2026-07-28 list result: `ttlMs` (ms; 0 = stale at once) and `cacheScope`. */
export interface ListHints {
  ttlMs?: number | undefined;
  cacheScope?: "public" | "private" | undefined;
}

/** `result`'s `ttlMs` (a non-negative number, capped at {@link MAX_LIST_TTL_MS}) and `cacheScope`, when valid. */
export function listHintsOf(result: unknown): ListHints {
  const r = (typeof result === "object" && result !== null ? result : {}) as Record<string, unknown>;
  const ttl = r.ttlMs;
  const scope = r.cacheScope;
  return {
    ...(typeof ttl === "number" && Number.isFinite(ttl) && ttl >= 0
      ? { ttlMs: Math.min(Math.floor(ttl), MAX_LIST_TTL_MS) }
      : {}),
    ...(scope === "public" || scope === "private" ? { cacheScope: scope } : {}),
  };
}

/** Watches one modern connection's tool list (see the module doc). */
export class ToolListFreshness {
  readonly #client: Client;
  readonly #logger: Logger;
  readonly #onChange: () => void;
  readonly #relist: () => Promise<string>;
  #listening = false;
  #closed = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #fingerprint: string | undefined;

  /**
   * @param relist Lists the tools again; resolves with a fingerprint of the list (e.g. its JSON).
   * @param onChange Told when the list changed (a listen notification is told by the client's own handler).
   */
  constructor(
    client: Client,
    options: { logger: Logger; relist: () => Promise<string>; onChange: () => void },
  ) {
    this.#client = client;
    this.#logger = options.logger;
    this.#relist = options.relist;
    this.#onChange = options.onChange;
  }

  /** Opens `subscriptions/listen` for tool-list changes when the server declares `tools.listChanged`. */
  listen(declaresListChanged: boolean): void {
    if (!declaresListChanged) return;
    this.#listening = true;
    this.#client.listen({ toolsListChanged: true }).then((subscription) => {
      if (this.#closed) return void subscription.close();
      void subscription.closed.then((how) => {
        this.#listening = false;
        if (!this.#closed) this.#logger.debug(`subscriptions/listen ended (${how}); re-listing after ttlMs`);
      });
    }, (error) => {
      this.#listening = false;
      this.#logger.debug(`subscriptions/listen refused: ${error instanceof Error ? error.message : error}`);
    });
  }

  /** A listing came back with `fingerprint` and `hints`: without a listen stream, list again after its ttl. */
  listed(fingerprint: string, hints: ListHints): void {
    this.#fingerprint = fingerprint;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#closed || this.#listening) return;
    const waitMs = Math.max(MIN_RELIST_MS, hints.ttlMs ?? 0);
    this.#timer = setTimeout(() => void this.#check(), waitMs);
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  /** The connection ended: no more timers. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  async #check(): Promise<void> {
    this.#timer = undefined;
    const before = this.#fingerprint;
    try {
      const after = await this.#relist(); // Calls `listed` again, which re-arms.
      if (before !== undefined && after !== before && !this.#closed) this.#onChange();
    } catch (error) {
      this.#logger.debug(
        `re-listing tools after ttlMs failed: ${error instanceof Error ? error.message : error}`,
      );
    }
  }
}
