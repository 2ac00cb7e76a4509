/**
 * Full collections of a sandbox process's V8 heap that the sandbox process asks for itself while it has nothing
 * else to do. Each run leaves some objects that outlived a young-generation collection (the spare vessels
 * are made one run ahead), so they die in the old generation, where V8 lets garbage pile up before its own
 * next full collection: a sandbox heap went from ~12 to ~18 MiB over 1,000 `execute`s at ~6 MiB live,
 * most of the host's RSS growth from 50 to 1,000 `execute`s. Collecting once the used heap has grown
 * {@link DEFAULT_TRIM_GROWTH_BYTES} past what the last collection left keeps it near 12 MiB: one
 * collection (~10-20 ms of the sandbox process's thread) per ~400 `return 1` runs, ~0.04 ms per run, or per ~10
 * runs of 200 calls each (~1 % of their CPU). The run that arrives during one waits for it.
 *
 * Those collections leave the heap's pages fragmented (10-11 MiB of V8 pages for ~6 MiB used after 1,000
 * `execute`s). Once the process has been idle for {@link IDLE_COMPACT_MS} and its committed heap grew
 * {@link DEFAULT_COMPACT_GROWTH_BYTES} since the last compaction, it compacts too: V8's memory-reducing
 * collection (`gc({ flavor: "last-resort" })`), which moves the live objects together and returns the
 * freed pages: V8's pages 10-11 -> 4.5 MiB, ~5-6 MiB less private memory per idle sandbox process
 * (measured, `bench/guest_memory.ts`). It takes 30-60 ms of the process's thread (more under load) and drops
 * compiled JavaScript, so the first run after it takes ~0.8 ms more and the next few ~0.1-0.2 ms more;
 * done every ~300 runs it cost 0.3-0.5 ms of CPU per run, so it runs only while idle, never between runs
 * that come back to back.
 *
 * @module
 */

/** Growth of the sandbox process's used V8 heap past the last collection's result that triggers one, bytes. */
export const DEFAULT_TRIM_GROWTH_BYTES = 4 * 1024 * 1024;

/** Time a sandbox process waits idle after its last run before it compacts its heap, milliseconds. */
export const IDLE_COMPACT_MS = 1_000;

/** Growth of the committed V8 heap since the last compaction below which an idle one is skipped, bytes. */
export const DEFAULT_COMPACT_GROWTH_BYTES = 1024 * 1024;

/** V8's `gc` with the options of `--expose-gc` (`src/extensions/gc-extension.cc`). */
export type GcFunction = (
  options?: { type?: "major" | "minor"; execution?: "sync" | "async"; flavor?: "regular" | "last-resort" },
) => void;

/** Options of {@link HeapTrim}; the seams are for tests. */
export interface HeapTrimOptions {
  /** @default DEFAULT_TRIM_GROWTH_BYTES */
  growthBytes?: number;
  /** @default DEFAULT_COMPACT_GROWTH_BYTES */
  compactGrowthBytes?: number;
  /** The collector. @default `globalThis.gc`, which V8 defines only with `--expose-gc` (`lib/self_command.ts`) */
  gc?: GcFunction | undefined;
  /** Used bytes of this isolate's heap. @default `Deno.memoryUsage().heapUsed` (~4 µs) */
  heapUsed?: () => number;
  /** Committed bytes of this isolate's heap (its pages). @default `Deno.memoryUsage().heapTotal` */
  heapTotal?: () => number;
}

/**
 * Decides when a sandbox process collects its heap: call {@link HeapTrim.step} between runs and
 * {@link HeapTrim.compact} once it has been idle for {@link IDLE_COMPACT_MS}.
 */
export class HeapTrim {
  readonly #growthBytes: number;
  readonly #compactGrowthBytes: number;
  readonly #gc: GcFunction | undefined;
  readonly #heapUsed: () => number;
  readonly #heapTotal: () => number;
  #baseline: number | undefined;
  #compactedTotal: number | undefined;

  constructor(options: HeapTrimOptions = {}) {
    this.#growthBytes = Math.max(0, options.growthBytes ?? DEFAULT_TRIM_GROWTH_BYTES);
    this.#compactGrowthBytes = Math.max(0, options.compactGrowthBytes ?? DEFAULT_COMPACT_GROWTH_BYTES);
    this.#gc = "gc" in options ? options.gc : (globalThis as { gc?: GcFunction }).gc;
    this.#heapUsed = options.heapUsed ?? (() => Deno.memoryUsage().heapUsed);
    this.#heapTotal = options.heapTotal ?? (() => Deno.memoryUsage().heapTotal);
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

  /**
   * Compacts the heap (V8's memory-reducing collection, which also returns the freed pages) if its committed
   * size grew by the compaction growth bytes since the last compaction (or if it never compacted); does
   * nothing where `gc` is not exposed. Call it only when the process has been idle a while: it takes
   * ~30-60 ms of this thread and drops compiled code.
   *
   * @returns Whether it compacted.
   */
  compact(): boolean {
    if (this.#gc === undefined) return false;
    const total = this.#heapTotal();
    if (this.#compactedTotal !== undefined && total - this.#compactedTotal < this.#compactGrowthBytes) {
      return false;
    }
    this.#gc({ type: "major", execution: "sync", flavor: "last-resort" });
    this.#compactedTotal = this.#heapTotal();
    this.#baseline = this.#heapUsed();
    return true;
  }
}
