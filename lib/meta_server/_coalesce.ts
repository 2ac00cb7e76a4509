/**
 * At most one event per interval from a stream that can flood: the first of a burst goes out at
 * once, the rest collapse into one more at the end of the interval. `tools/list_changed` to the
 * agent goes through one (20,000 from a backing server reached the agent 1:1 before).
 *
 * @module
 */

/** Shortest time between two `notifications/tools/list_changed` to the agent, ms. */
export const LIST_CHANGED_INTERVAL_MS = 500;

/** Leading-and-trailing throttle of a void event. */
export class Coalescer {
  readonly #fire: () => void;
  readonly #intervalMs: number;
  #lastMs = -Infinity;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** Events that arrived, and how many went out. */
  triggered = 0;
  fired = 0;

  /**
   * @param fire Called for the first event and once at the end of a burst; errors are its own.
   * @param intervalMs Shortest time between two calls of `fire`, ms.
   */
  constructor(fire: () => void, intervalMs: number) {
    this.#fire = fire;
    this.#intervalMs = intervalMs;
  }

  /** One event: fires now when the last fire is an interval old, else once when it will be. */
  trigger(): void {
    if (this.#closed) return;
    this.triggered++;
    if (this.#timer !== undefined) return;
    const waitMs = this.#lastMs + this.#intervalMs - performance.now();
    if (waitMs <= 0) return this.#emit();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#emit();
    }, waitMs);
  }

  /** Drops a pending trailing event; later triggers are ignored. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #emit(): void {
    if (this.#closed) return;
    this.#lastMs = performance.now();
    this.fired++;
    this.#fire();
  }
}
