/**
 * Loads the QuickJS WASM module (sync single-file variant: the WASM is embedded in JavaScript, so a
 * `deno compile` binary carries it) with a capped linear memory. The cap is the real memory limit:
 * QuickJS's own `setMemoryLimit` counts only 8 bytes per allocation in an Emscripten build (it cannot
 * ask the allocator for block sizes), so without the cap a loop of `new Uint8Array(1e6)` grows the
 * module to 2 GiB. With the cap, allocation fails cleanly and QuickJS throws "out of memory".
 *
 * @module
 */
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from "quickjs-emscripten-core";

/** Size of the module's memory before any growth (Emscripten's `INITIAL_MEMORY`), bytes: static data,
 * the 5 MiB C stack and the first part of the heap. */
export const WASM_INITIAL_BYTES = 16 * 1024 * 1024;

const PAGE_BYTES = 64 * 1024;

type EmscriptenOptions = NonNullable<Parameters<typeof newVariant>[1]["emscriptenModule"]>;

/** A QuickJS module whose heap may grow by at most `heapLimitBytes`. */
export interface SandboxModule {
  module: QuickJSWASMModule;
  /** The growth allowed beyond {@link WASM_INITIAL_BYTES}, bytes. */
  heapLimitBytes: number;
  /** How many times the heap could not grow because of the cap, since the module was loaded. */
  heapGrowFailures(): number;
  /** Current size of the module's linear memory, bytes (it never shrinks). */
  wasmBytes(): number;
  /**
   * How many times the C code aborted since the module was loaded (Emscripten's `Aborted(...)`, e.g. QuickJS's
   * `list_empty(&rt->gc_obj_list)` assertion when a runtime is freed while objects of it are still alive):
   * the module is then poisoned. Tests assert it stays 0.
   */
  aborts(): number;
}

/**
 * Instantiates a QuickJS module whose linear memory may grow by at most `heapLimitBytes` (rounded up to
 * 64 KiB pages) past its initial 16 MiB. Anything the C code prints goes to stderr (stdout belongs to MCP).
 *
 * @param heapLimitBytes Usually the run's `memoryLimitBytes`.
 * @returns The module and its memory counters.
 * @throws {Error} If the WASM cannot be compiled or instantiated (e.g. the process is out of memory).
 */
export async function loadSandboxModule(heapLimitBytes: number): Promise<SandboxModule> {
  const extraPages = Math.max(16, Math.ceil(heapLimitBytes / PAGE_BYTES));
  const initialPages = WASM_INITIAL_BYTES / PAGE_BYTES;
  const memory = new WebAssembly.Memory({ initial: initialPages, maximum: initialPages + extraPages });
  let growFailures = 0;
  const grow = memory.grow.bind(memory);
  // Emscripten grows the heap through this method and turns an exception into a failed malloc.
  Object.defineProperty(memory, "grow", {
    value: (deltaPages: number) => {
      try {
        return grow(deltaPages);
      } catch (error) {
        growFailures++;
        throw error;
      }
    },
  });
  const { default: base } = await import("@jitl/quickjs-singlefile-mjs-release-sync");
  let aborts = 0;
  const toStderr = (text: string) => {
    if (text.startsWith("Aborted(")) aborts++;
    console.error(`[quickjs] ${text}`);
  };
  // `print`/`printErr` are Emscripten module options that the loader's type does not list.
  const emscriptenModule = { print: toStderr, printErr: toStderr } as unknown as EmscriptenOptions;
  const variant = newVariant(base, { wasmMemory: memory, emscriptenModule });
  const module = await newQuickJSWASMModuleFromVariant(variant);
  return {
    module,
    heapLimitBytes: extraPages * PAGE_BYTES,
    heapGrowFailures: () => growFailures,
    wasmBytes: () => memory.buffer.byteLength,
    aborts: () => aborts,
  };
}
