/**
 * The live tool listings of the running servers, one `tools/list` at a time per server: listings
 * asked for while one is in flight share it (a cold `execute` asks three times at once: the early
 * start, the execute's start and the call), and a `tools/list_changed` costs at most one re-list.
 *
 * @module
 */
import { type BackendConnection, BackendError, type Tool } from "../backends/mod.ts";
import type { ServerSpec } from "../plugins/mod.ts";

/** One server's tools as listed from one connection. */
export interface Listing {
  tools: Tool[];
  warnings: string[];
  /** When the answer arrived, ms since the epoch (the catalog's clock). */
  fetchedAtMs: number;
  connection: BackendConnection;
}

/** One `tools/list` in flight and who waits for it. */
interface Flight {
  connection: BackendConnection;
  /** The server's change count when the request was sent. */
  generation: number;
  promise: Promise<Listing>;
  controller: AbortController;
  waiters: number;
}

/** How a flight asks the server and what it does with a listing that is still current. */
export interface ListingSource {
  /** The key listings of `spec` are kept under (its spawn key). */
  keyOf(spec: ServerSpec): string;
  /** Sends `tools/list` (all pages) to `spec` on `connection`; rejects with the connection's error. */
  fetch(
    spec: ServerSpec,
    connection: BackendConnection,
    signal: AbortSignal,
  ): Promise<{ tools: Tool[]; warnings: string[] }>;
  /**
   * Called once per listing that no `tools/list_changed` overtook, before its waiters hear of it
   * (writes the tool cache); must not throw.
   */
  onCurrent(spec: ServerSpec, listing: Listing): Promise<void>;
  /** Now, ms since the epoch. */
  now(): number;
}

/**
 * The listings of a catalog, keyed by spawn key. A listing is kept while its connection is open and
 * no `tools/list_changed` came after its request was sent. A change that arrives while a listing is
 * in flight leaves that answer to those already waiting for it (they asked before the change) but
 * keeps it neither here nor in the tool cache, since it may predate the change: the next listing
 * asks again, once, shared by all who ask meanwhile. A failed listing reaches every waiter with its
 * error and is not kept.
 */
export class Listings {
  readonly #held = new Map<string, Listing>();
  readonly #flights = new Map<string, Flight>();
  readonly #changes = new Map<string, number>();
  /** The change count of its server when each listing's request was sent. */
  readonly #generations = new WeakMap<Listing, number>();
  readonly #source: ListingSource;

  /** @param source How to list a server (see {@link ListingSource}). */
  constructor(source: ListingSource) {
    this.#source = source;
  }

  /**
   * The current listing of `spec` on `connection`: the held one, else the one in flight (if sent
   * after the last change), else a new `tools/list`.
   *
   * @param signal Gives up this waiter only; the request is cancelled when its last waiter gave up.
   * @throws {BackendError} The listing's error (the same for every waiter); `CANCELLED`
   *   (`<server> tools/list was cancelled`) when `signal` aborts first.
   */
  live(spec: ServerSpec, connection: BackendConnection, signal?: AbortSignal): Promise<Listing> {
    const held = this.current(spec, connection);
    if (held) return Promise.resolve(held);
    const key = this.#source.keyOf(spec);
    let flight = this.#flights.get(key);
    if (!flight || flight.connection !== connection || flight.generation !== this.#changeCount(key)) {
      flight = this.#start(spec, key, connection);
    }
    return this.#wait(key, flight, signal);
  }

  /** The listing {@link live} would resolve to at once (held for this open connection), else `undefined`. */
  current(spec: ServerSpec, connection: BackendConnection): Listing | undefined {
    const held = this.#held.get(this.#source.keyOf(spec));
    return held && held.connection === connection && !connection.isClosed ? held : undefined;
  }

  /**
   * Whether `listing` (of `spec`) is still current: on the open connection it came from, with no
   * `tools/list_changed` after its request was sent. A listing handed to those who asked before a change
   * (see the class doc) is not.
   */
  isCurrent(spec: ServerSpec, listing: Listing): boolean {
    const generation = this.#generations.get(listing);
    return !listing.connection.isClosed && generation !== undefined &&
      generation === this.#changeCount(this.#source.keyOf(spec));
  }

  /** `spec` said `tools/list_changed`: its held listing and any listing in flight are stale. */
  changed(spec: ServerSpec): void {
    const key = this.#source.keyOf(spec);
    this.#held.delete(key);
    this.#changes.set(key, this.#changeCount(key) + 1);
  }

  /** Forgets every server whose key is not in `keep` (no longer in scope). */
  retain(keep: ReadonlySet<string>): void {
    for (const map of [this.#held, this.#flights, this.#changes]) {
      for (const key of [...map.keys()]) if (!keep.has(key)) map.delete(key);
    }
  }

  #changeCount(key: string): number {
    return this.#changes.get(key) ?? 0;
  }

  #start(spec: ServerSpec, key: string, connection: BackendConnection): Flight {
    const controller = new AbortController();
    const generation = this.#changeCount(key);
    const flight: Flight = { connection, generation, controller, waiters: 0, promise: undefined! };
    const run = async (): Promise<Listing> => {
      try {
        const { tools, warnings } = await this.#source.fetch(spec, connection, controller.signal);
        const listing = { tools, warnings, fetchedAtMs: this.#source.now(), connection };
        this.#generations.set(listing, generation);
        if (this.#flights.get(key) === flight && this.#changeCount(key) === generation) {
          this.#held.set(key, listing);
          await this.#source.onCurrent(spec, listing);
        }
        return listing;
      } finally {
        if (this.#flights.get(key) === flight) this.#flights.delete(key);
      }
    };
    this.#flights.set(key, flight);
    flight.promise = run();
    flight.promise.catch(() => {}); // each waiter hears of it; a flight all left is no unhandled rejection
    return flight;
  }

  async #wait(key: string, flight: Flight, signal: AbortSignal | undefined): Promise<Listing> {
    flight.waiters++;
    if (!signal) return await flight.promise;
    let onAbort: (() => void) | undefined;
    const gaveUp = new Promise<never>((_, reject) => {
      onAbort = () => {
        if (--flight.waiters === 0) {
          if (this.#flights.get(key) === flight) this.#flights.delete(key);
          flight.controller.abort(signal.reason);
        }
        const server = flight.connection.server;
        reject(
          new BackendError("CANCELLED", server, `${server} tools/list was cancelled`, {
            cause: signal.reason,
          }),
        );
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([flight.promise, gaveUp]);
    } finally {
      signal.removeEventListener("abort", onAbort!);
    }
  }
}
