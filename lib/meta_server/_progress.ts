/**
 * Progress reports of one `execute`, throttled: the agent gets the latest state at most once per
 * interval, nothing for a script that ends within the first interval, and never a report after the
 * result (the result waits until the last report sent had time to be read on its own).
 *
 * @module
 */

/** One report: strictly increasing `progress` and a message naming the tool. */
export interface ProgressReport {
  progress: number;
  message: string;
}

/** Options of {@link ProgressThrottle}. */
export interface ProgressThrottleOptions {
  /** Shortest time between two reports, and before the first, ms. `0` sends every report at once. */
  intervalMs: number;
  /** Shortest time between the last report sent and the result, ms. */
  flushGapMs: number;
}

/**
 * Sends the reports of one run through `send`, throttled. Reports that are due while a later one
 * arrives are replaced by it (the latest state wins); a report still waiting when the run ends is
 * dropped, since the result itself says the run is over.
 *
 * Why the gap: the MCP SDK client runs a notification's handler a microtask after reading it but
 * handles a response at once and drops the request's progress handler then, so a report read in the
 * same chunk as the response is lost. Waiting `flushGapMs` after the last report lets it arrive in a
 * read of its own.
 *
 * @example
 * ```ts ignore
 * const progress = new ProgressThrottle((r) => notify(r), { intervalMs: 100, flushGapMs: 15 });
 * progress.report({ progress: 1, message: "fx.echo done (1 call completed)" });
 * await progress.finish(); // before sending the result
 * ```
 */
export class ProgressThrottle {
  readonly #send: (report: ProgressReport) => Promise<void>;
  readonly #intervalMs: number;
  readonly #flushGapMs: number;
  readonly #startedAt = performance.now();
  #lastSentAt: number | undefined;
  #pending: ProgressReport | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #sending: Promise<void> = Promise.resolve();
  #finished = false;

  constructor(send: (report: ProgressReport) => Promise<void>, options: ProgressThrottleOptions) {
    this.#send = send;
    this.#intervalMs = Math.max(0, options.intervalMs);
    this.#flushGapMs = Math.max(0, options.flushGapMs);
  }

  /** Queues `report`; it is sent now if the interval allows, else when it does (unless replaced). */
  report(report: ProgressReport): void {
    if (this.#finished) return;
    this.#pending = report;
    if (this.#timer !== undefined) return;
    const dueAt = (this.#lastSentAt ?? this.#startedAt) + this.#intervalMs;
    const waitMs = this.#lastSentAt === undefined && this.#intervalMs === 0 ? 0 : dueAt - performance.now();
    if (waitMs <= 0) this.#flush();
    else this.#timer = setTimeout(() => this.#flush(), waitMs);
  }

  /**
   * Ends the run's reporting: drops a report not yet due, waits for the sent ones to be written, then
   * until `flushGapMs` passed since the last one. Resolves at once when none was sent.
   */
  async finish(): Promise<void> {
    this.#finished = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending = undefined;
    await this.#sending;
    if (this.#lastSentAt === undefined) return;
    const gapLeftMs = this.#lastSentAt + this.#flushGapMs - performance.now();
    if (gapLeftMs > 0) await new Promise((resolve) => setTimeout(resolve, gapLeftMs));
  }

  #flush(): void {
    this.#timer = undefined;
    const report = this.#pending;
    this.#pending = undefined;
    if (report === undefined || this.#finished) return;
    this.#lastSentAt = performance.now();
    const sent = this.#send(report)
      .catch(() => {}) // The agent may be gone; progress is best effort.
      // The gap counts from when the report was written, not from when it was queued for writing.
      .then(() => void (this.#lastSentAt = performance.now()));
    const before = this.#sending;
    this.#sending = Promise.all([before, sent]).then(() => {});
  }
}
