/**
 * Reading a run's outcome back out of QuickJS once the script ended: serializing the returned value (still
 * under the script's limits), then, under a short extraction budget, classifying what was thrown and adding
 * console lines for rejections nobody handled.
 *
 * @module
 */
import type {
  DisposableResult,
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
} from "quickjs-emscripten-core";
import { crashFailure, readThrown, SCRIPT_FILE } from "./_guest_errors.ts";
import { type PositionMap, relocatePositions } from "./_positions.ts";
import type { Ending, EngineOutcome, Internals, StopReason } from "../protocol/run_types.ts";
import { truncateUtf8 } from "../protocol/utf8.ts";
import { mayHoldMediaBlocks } from "../protocol/media_json.ts";
import type { SandboxFailure, SandboxLimits } from "../protocol/types.ts";
import type { SandboxModule } from "./wasm_module.ts";

/** Time the engine allows itself to read the outcome out of QuickJS after the script ended, milliseconds. */
export const EXTRACTION_BUDGET_MS = 250;

/** What reading the outcome needs from the run, taken when the script ended. */
export interface OutcomeSource {
  readonly module: SandboxModule;
  readonly limits: SandboxLimits;
  /** `undefined` only when the run stopped before its runtime was made (then nothing is read). */
  readonly rt: QuickJSRuntime | undefined;
  readonly ctx: QuickJSContext | undefined;
  readonly internals: Internals | undefined;
  readonly limitError: QuickJSHandle | undefined;
  /** Tool calls dispatched when the script ended. */
  readonly toolCalls: number;
  /** `module.heapGrowFailures()` when the run started. */
  readonly growFailuresAtStart: number;
  /** Why the run was stopped, if it was (may change while a `toJSON` runs). */
  stopReason(): StopReason | undefined;
  /** Starts the extraction budget: from now on the interrupt handler allows {@link EXTRACTION_BUDGET_MS}. */
  beginExtraction(): void;
  /** Whether the extraction budget ran out and interrupted QuickJS. */
  extractionInterrupted(): boolean;
  /** Emits one console line (within the run's console budget). */
  log(line: string): void;
  /** Positions of the compiled source -> the script as sent; absent before the script compiled. */
  readonly positions?: PositionMap | undefined;
}

/**
 * Where the JSON of a return value is cut, UTF-8 bytes: `maxMediaResultBytes` when it may hold image or
 * audio blocks (the host moves them out, then cuts the rest), else `maxResultBytes`, so that a large value
 * without media never crosses to the host (16 MiB of `"` once held the host's thread for half a second).
 */
function resultCapBytes(json: string, limits: SandboxLimits): number {
  const media = limits.maxMediaResultBytes;
  if (media === undefined || media <= limits.maxResultBytes) return limits.maxResultBytes;
  return mayHoldMediaBlocks(json) ? media : limits.maxResultBytes;
}

/** Turns one run's ending into its outcome; create it when the script ended and call `conclude()` once. */
export class OutcomeReader {
  readonly #src: OutcomeSource;
  #released = false;

  constructor(source: OutcomeSource) {
    this.#src = source;
  }

  /** Turns the ending into an outcome, reading values out of QuickJS under a short extraction budget. */
  conclude(ending: Ending, mainPromise: QuickJSHandle | undefined): EngineOutcome {
    const src = this.#src;
    const base = { toolCalls: src.toolCalls, poisoned: false };
    const stopReason = src.stopReason();
    if (stopReason && ending.kind !== "stopped") {
      // Interrupted while running host-driven guest code (setup, a callback, a delivery): a stop, whatever
      // the thrown value looks like.
      if (ending.kind === "thrown") ending.error.dispose();
      ending = { kind: "stopped", reason: stopReason };
    }
    if (ending.kind === "stopped") return { ok: false, failure: this.#stopFailure(ending.reason), ...base };
    const ctx = src.ctx!;
    // A fulfilled value is serialized first, still under the script's own limits: `toJSON` methods and
    // getters are script code, so they get the script's deadline, stop signals and memory limit.
    let serialized: DisposableResult<QuickJSHandle, QuickJSHandle> | undefined;
    let state: ReturnType<QuickJSContext["getPromiseState"]> | undefined;
    if (ending.kind === "settled") {
      state = ctx.getPromiseState(mainPromise!);
      if (state.type === "fulfilled") {
        // serialize() frees the reserve itself before it serializes.
        this.#released = true;
        serialized = ctx.callFunction(src.internals!.serialize, ctx.undefined, state.value);
        if (state.value !== mainPromise) state.value.dispose();
        const stoppedMeanwhile = src.stopReason();
        if (stoppedMeanwhile) {
          if (serialized.error) serialized.error.dispose();
          else serialized.value.dispose();
          return { ok: false, failure: this.#stopFailure(stoppedMeanwhile), ...base };
        }
      }
    }
    // The script is over: let the engine allocate and compute freely, but not forever.
    src.beginExtraction();
    src.rt!.setMemoryLimit(-1);
    this.#release(ctx);
    if (ending.kind === "failed") {
      this.#reportUnobserved(ctx);
      return { ok: false, failure: ending.failure, ...base };
    }
    if (ending.kind === "thrown") {
      const failure = this.#failureOf(ctx, ending.error, ending.prefix);
      ending.error.dispose();
      this.#reportUnobserved(ctx);
      return { ok: false, failure, ...base };
    }
    if (state!.type === "rejected") {
      const failure = this.#failureOf(ctx, state!.error, "");
      state!.error.dispose();
      this.#reportUnobserved(ctx);
      return { ok: false, failure, ...base };
    }
    if (state!.type !== "fulfilled" || !serialized) {
      return {
        ok: false,
        failure: { error: "internal", message: "The script's promise is still pending" },
        ...base,
      };
    }
    if (serialized.error) {
      const failure = this.#failureOf(ctx, serialized.error, "Cannot serialize the return value as JSON: ");
      serialized.error.dispose();
      return { ok: false, failure, ...base };
    }
    const json = ctx.getString(serialized.value);
    serialized.value.dispose();
    this.#reportUnobserved(ctx);
    const cut = truncateUtf8(json, resultCapBytes(json, src.limits));
    return {
      ok: true,
      valueJson: cut.text,
      originalBytes: cut.originalBytes,
      truncated: cut.truncated,
      ...base,
    };
  }

  #stopFailure(reason: StopReason): SandboxFailure {
    return reason === "timeout"
      ? { error: "script_timeout", limit_secs: this.#src.limits.timeoutMs / 1000 }
      : { error: "cancelled" };
  }

  /** Frees the prelude's memory reserve (once), so the outcome can be read even from a full heap. */
  #release(ctx: QuickJSContext): void {
    const { internals } = this.#src;
    if (!internals || this.#released) return;
    this.#released = true;
    const released = ctx.callFunction(internals.release, ctx.undefined);
    if (released.error) released.error.dispose();
    else released.value.dispose();
  }

  /** Classifies a thrown value: tool-call limit, memory, or a script error with the script's stack lines. */
  #failureOf(ctx: QuickJSContext, error: QuickJSHandle, prefix: string): SandboxFailure {
    const src = this.#src;
    const { limits } = src;
    if (src.limitError && ctx.sameValue(error, src.limitError)) {
      return { error: "tool_call_limit", limit: limits.maxToolCalls };
    }
    const described = readThrown(ctx, src.internals?.describe, error, false);
    const capHit = src.module.heapGrowFailures() > src.growFailuresAtStart;
    const opaque = described.isNullish || described.message === undefined;
    if (described.message === "out of memory" || (opaque && (capHit || this.#nearMemoryLimit()))) {
      return { error: "memory_exhausted", limit_mb: limits.memoryLimitBytes / (1024 * 1024) };
    }
    if (described.message === "interrupted") {
      const stopReason = src.stopReason();
      if (stopReason === "timeout") {
        return { error: "script_timeout", limit_secs: limits.timeoutMs / 1000 };
      }
      if (stopReason === "cancelled") return { error: "cancelled" };
      if (src.extractionInterrupted()) {
        return {
          error: "script_error",
          message:
            `${prefix}reading the outcome out of the script took longer than ${EXTRACTION_BUDGET_MS} ms`,
        };
      }
      // quickjs-emscripten interrupts the script when the interrupt handler itself throws, which only a native
      // stack overflow on the host side can make it do.
      return crashFailure(new RangeError("Maximum call stack size exceeded"));
    }
    return { error: "script_error", message: prefix + this.#inScript(described.text) };
  }

  #nearMemoryLimit(): boolean {
    const rt = this.#src.rt!;
    const ctx = this.#src.ctx!;
    const usage = rt.computeMemoryUsage();
    try {
      const used = ctx.getProp(usage, "memory_used_size");
      const bytes = ctx.getNumber(used);
      used.dispose();
      return bytes >= 0.8 * this.#src.limits.memoryLimitBytes;
    } finally {
      usage.dispose();
    }
  }

  /** Adds console lines for rejections nobody handled and calls still pending when the script ended. */
  #reportUnobserved(ctx: QuickJSContext): void {
    const { internals } = this.#src;
    if (!internals) return;
    const result = ctx.callFunction(internals.unobserved, ctx.undefined);
    if (result.error) {
      result.error.dispose();
      return;
    }
    const text = ctx.getString(result.value);
    result.value.dispose();
    if (text === "") return;
    const lines = JSON.parse(text) as string[];
    const counts = new Map<string, number>();
    for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
    for (const [line, count] of counts) {
      this.#src.log(this.#inScript(count > 1 ? `${line} (×${count})` : line));
    }
  }

  /** `text` with every `script.js:L:C` given in the script as the agent sent it. */
  #inScript(text: string): string {
    const { positions } = this.#src;
    return positions ? relocatePositions(text, SCRIPT_FILE, positions) : text;
  }
}
