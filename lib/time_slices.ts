/**
 * Long work on the host thread in slices: after each slice of at most a few milliseconds, a macrotask
 * boundary lets pings, other requests and timers run (a 50,000-tool listing done in one turn held
 * `mcp-serve`'s thread for seconds). One clock for every such loop, so each says only where it may pause.
 *
 * @module
 */

/** Default length of a slice, ms. */
export const DEFAULT_SLICE_MS = 20;

/** Waits for one macrotask boundary (a `setTimeout(..., 0)`): everything queued meanwhile runs first. */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Measures the current slice of a loop: {@link SliceClock.pause} yields to the event loop once the slice
 * has lasted `sliceMs`, and starts the next.
 *
 * @example
 * ```ts
 * import { SliceClock } from "./time_slices.ts";
 * const clock = new SliceClock(20);
 * let sum = 0;
 * for (let i = 0; i < 1e5; i++) {
 *   sum += i;
 *   await clock.pause();
 * }
 * if (sum !== 4999950000) throw new Error(String(sum));
 * ```
 */
export class SliceClock {
  readonly #sliceMs: number;
  #sliceStart = performance.now();

  /** @param sliceMs Length of a slice, ms. @default DEFAULT_SLICE_MS */
  constructor(sliceMs: number = DEFAULT_SLICE_MS) {
    this.#sliceMs = sliceMs;
  }

  /** Whether the current slice has lasted its length (the caller may flush work before it pauses). */
  get isDue(): boolean {
    return performance.now() - this.#sliceStart > this.#sliceMs;
  }

  /** Yields to the event loop if the slice is due (then a new slice starts); else resolves at once. */
  async pause(): Promise<void> {
    if (!this.isDue) return;
    await nextMacrotask();
    this.#sliceStart = performance.now();
  }
}

/**
 * Runs a generator of steps to its return value, in slices of `sliceMs`: between two slices, a macrotask
 * boundary. The generator `yield`s where it may pause.
 *
 * @param steps The work, pausing (a `yield`) after each small step.
 * @param sliceMs Length of a slice, ms. @default DEFAULT_SLICE_MS
 * @returns What the generator returns.
 */
export async function runInSlices<T>(
  steps: Generator<unknown, T, unknown>,
  sliceMs: number = DEFAULT_SLICE_MS,
): Promise<T> {
  const clock = new SliceClock(sliceMs);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await clock.pause();
  }
}
