/**
 * Full collections of a sandbox process's V8 heap that the sandbox process asks for itself while it has nothing
 * else to do. Each run leaves some objects that outlived a young-generation collection (the spare vessels
 * are made one run ahead), so they die in the old generation, where V8 lets garbage pile up before its own
 * next full collection: a sandbox heap went from ~12 to ~18 MiB over 1,000 `execute`s at ~6 MiB live,
 * most of the host's RSS growth from 50 to 1,000 `execute`s. Collecting once the used heap has grown
 * {@link DEFAULT_TRIM_GROWTH_BYTES} past what the last collection left keeps it near 12 MiB: one
 * collection (~10–20 ms of the sandbox process's thread) per ~400 `return 1` runs, ~0.04 ms per run, or per ~10
 * runs of 200 calls each (~1 % of their CPU). The run that arrives during one waits for it.
 *
 * @module
 */

/** Growth of the sandbox process's used V8 heap past the last collection's result that triggers one, bytes. */
export const DEFAULT_TRIM_GROWTH_BYTES = 4 * 1024 * 1024;

/** Options of {@link HeapTrim}; the seams are for tests. */
export interface HeapTrimOptions {
  /** @default DEFAULT_TRIM_GROWTH_BYTES */
  growthBytes?: number;
  /** The collector. @default `globalThis.gc`, which V8 defines only with `--expose-gc` (`lib/self_command.ts`) */
  gc?: (() => void) | undefined;
  /** Used bytes of this isolate's heap. @default `Deno.memoryUsage().heapUsed` (~4 µs) */
  heapUsed?: () => number;
}

/** Decides when a sandbox process collects its heap: call {@link HeapTrim.step} when idle. */
export class HeapTrim {
  readonly #growthBytes: number;
  readonly #gc: (() => void) | undefined;
  readonly #heapUsed: () => number;
  #baseline: number | undefined;

  constructor(options: HeapTrimOptions = {}) {
    this.#growthBytes = Math.max(0, options.growthBytes ?? DEFAULT_TRIM_GROWTH_BYTES);
    this.#gc = "gc" in options ? options.gc : (globalThis as { gc?: () => void }).gc;
    this.#heapUsed = options.heapUsed ?? (() => Deno.memoryUsage().heapUsed);
  }

  /**
   * Collects if the used heap grew by the growth bytes since the last collection (or since the first
   * call); does nothing where `gc` is not exposed. Takes a few milliseconds of this thread when it
   * collects, microseconds otherwise.
   *
   * @returns Whether it collected.
   */
  step(): boolean {
    if (this.#gc === undefined) return false;
    const used = this.#heapUsed();
    if (this.#baseline === undefined || used < this.#baseline) this.#baseline = used;
    if (used - this.#baseline < this.#growthBytes) return false;
    this.#gc();
    this.#baseline = this.#heapUsed();
    return true;
  }
}
