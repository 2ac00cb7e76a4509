/**
 * The console byte budget of one run: lines go to the host while they fit `maxConsoleBytes`, the first one
 * that does not is cut on a character boundary, and the rest are only counted. A line costs what it takes
 * in the answer the agent reads: its JSON string (quotes and escapes included) and a separator, so a flood
 * of one-character lines or of quotes gets no more bytes to the agent than the budget says.
 *
 * @module
 */
import type { ConsoleDropped, EngineIo } from "../protocol/run_types.ts";
import { truncateJsonString, utf8ByteLength } from "../protocol/utf8.ts";

/** Emits console lines within a byte budget and counts what did not fit. */
export class ConsoleBudget {
  readonly #budget: number;
  readonly #io: Pick<EngineIo, "onConsole" | "onConsoleDropped">;
  #bytes = 0;
  #dropped = false;
  #droppedLines = 0;
  #droppedBytes = 0;

  /**
   * @param budgetBytes UTF-8 bytes the run may log, each line costing the bytes of its JSON string plus one
   *   for its separator.
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
   * (and escape) boundary to the budget left (its separator included); it and every later line count as
   * dropped.
   */
  log(line: string): void {
    const budget = this.#budget;
    const cost = jsonStringBytes(line) + 1;
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
      const cut = truncateJsonString(line, left);
      const kept = cut.text === "" ? 0 : jsonStringBytes(cut.text);
      if (kept > 0) {
        this.#bytes += kept + 1;
        this.#droppedBytes -= kept + 1;
        this.#io.onConsole(cut.text);
      }
    }
    this.#io.onConsoleDropped();
  }
}

/** UTF-8 bytes of `line` as a JSON string, quotes and escapes included. */
function jsonStringBytes(line: string): number {
  return utf8ByteLength(JSON.stringify(line));
}
