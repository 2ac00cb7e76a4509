/**
 * The console byte budget of one run: lines go to the host while they fit `maxConsoleBytes`, the first one
 * that does not is cut on a character boundary, and the rest are only counted.
 *
 * @module
 */
import type { ConsoleDropped, EngineIo } from "../protocol/run_types.ts";
import { truncateUtf8, utf8ByteLength } from "../protocol/utf8.ts";

/** Emits console lines within a byte budget and counts what did not fit. */
export class ConsoleBudget {
  readonly #budget: number;
  readonly #io: Pick<EngineIo, "onConsole" | "onConsoleDropped">;
  #bytes = 0;
  #dropped = false;
  #droppedLines = 0;
  #droppedBytes = 0;

  /**
   * @param budgetBytes UTF-8 bytes the run may log, each line costing its length plus one for its newline.
   * @param io Receives the lines that fit, then one `onConsoleDropped()` at the first that did not.
   */
  constructor(budgetBytes: number, io: Pick<EngineIo, "onConsole" | "onConsoleDropped">) {
    this.#budget = budgetBytes;
    this.#io = io;
  }

  /** What did not fit (lines cut or dropped, UTF-8 bytes not shown), or `undefined` when everything did. */
  get dropped(): ConsoleDropped | undefined {
    return this.#dropped ? { lines: this.#droppedLines, bytes: this.#droppedBytes } : undefined;
  }

  /**
   * Emits a console line within the byte budget. The first line that does not fit is cut on a character
   * boundary to the budget left (its newline included); it and every later line count as dropped.
   */
  log(line: string): void {
    const budget = this.#budget;
    const cost = utf8ByteLength(line) + 1;
    if (!this.#dropped && this.#bytes + cost <= budget) {
      this.#bytes += cost;
      this.#io.onConsole(line);
      return;
    }
    this.#droppedLines++;
    this.#droppedBytes += cost;
    if (this.#dropped) return;
    this.#dropped = true;
    const left = budget - this.#bytes - 1;
    if (left > 0) {
      const cut = truncateUtf8(line, left);
      const kept = utf8ByteLength(cut.text);
      if (kept > 0) {
        this.#bytes += kept + 1;
        this.#droppedBytes -= kept + 1;
        this.#io.onConsole(cut.text);
      }
    }
    this.#io.onConsoleDropped();
  }
}
