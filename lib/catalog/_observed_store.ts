/**
 * The session's observed result shapes, per server and tool: merged on every successful call of a
 * tool without `outputSchema`, keyed to the tool's own fingerprint (name, description, input
 * schema: a tool that changes starts again), read from and written to the server's tool-cache file
 * (off the call path: a write waits {@link SHAPE_FLUSH_MS} and carries every change since).
 *
 * @module
 */
import type { Tool } from "../backends/mod.ts";
import type { ObservedLookup, ObservedResult, Shape } from "../declarations/observed_shape.ts";
import { boundShape, deriveShape, FieldKeyMemo, mergeShapes, SHAPE_MAX_BYTES } from "./result_shape.ts";

/** Wait between the first unsaved observation of a server and the write of its cache file, in ms. */
export const SHAPE_FLUSH_MS = 2_000;

/** One tool's row in a cache file: `[tool name, fingerprint, calls observed, shape]`. */
export type ShapeRow = [tool: string, fingerprint: string, calls: number, shape: Shape];

interface Held {
  fingerprint: string;
  calls: number;
  shape: Shape;
}

interface ServerShapes {
  tools: Map<string, Held>;
  /** The merge of the cache file's rows (once per session), once started. */
  loading: Promise<void> | undefined;
  isDirty: boolean;
}

const fingerprints = new WeakMap<object, string>();

/**
 * A short hash of what makes a tool the same tool: its name, description and input schema (53-bit
 * cyrb53 of their JSON, 14 hex digits). Computed once per tool object.
 */
export function toolFingerprint(
  tool: { name: string; description?: string | undefined; inputSchema?: unknown },
): string {
  let held = fingerprints.get(tool);
  if (held !== undefined) return held;
  const text = JSON.stringify([tool.name, tool.description ?? null, tool.inputSchema ?? null]);
  let h1 = 0xdeadbeef, h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  held = (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
  fingerprints.set(tool, held);
  return held;
}

/** Whether `value` (read from a file) is a {@link Shape} within the bounds; depth-limited. */
export function isShape(value: unknown, depth = 0): value is Shape {
  if (depth > 8) return false;
  if (typeof value === "string") return ["string", "number", "boolean", "null", "unknown"].includes(value);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  const keys = Object.keys(v);
  if (keys.length === 1 && typeof v.t === "string") return true;
  if (keys.length === 1 && "a" in v) return v.a === null || isShape(v.a, depth + 1);
  if (keys.length === 1 && "r" in v) return isShape(v.r, depth + 1);
  if (keys.length === 1 && Array.isArray(v.u)) return v.u.every((m) => isShape(m, depth + 1));
  if (!Array.isArray(v.o) || keys.some((k) => k !== "o" && k !== "x") || (keys.length === 2 && v.x !== 1)) {
    return false;
  }
  return v.o.every((p) =>
    Array.isArray(p) && p.length === 3 && typeof p[0] === "string" && Number.isInteger(p[2]) && p[2] >= 0 &&
    p[2] <= 7 &&
    isShape(p[1], depth + 1)
  );
}

/** The valid rows of a cache file's `shapes` (anything else is dropped). */
export function parseShapeRows(value: unknown): ShapeRow[] {
  if (!Array.isArray(value)) return [];
  return value.filter((row): row is ShapeRow =>
    Array.isArray(row) && row.length === 4 && typeof row[0] === "string" && typeof row[1] === "string" &&
    Number.isSafeInteger(row[2]) && row[2] > 0 && isShape(row[3]) &&
    JSON.stringify(row[3]).length <= SHAPE_MAX_BYTES
  );
}

/** How many `rows` belong to a tool of `tools` as it is now (same fingerprint). */
export function countCurrentRows(rows: readonly ShapeRow[], tools: readonly Tool[]): number {
  const byName = new Map(tools.map((t) => [t.name, t]));
  return rows.filter(([name, fingerprint]) => {
    const tool = byName.get(name);
    return tool !== undefined && toolFingerprint(tool) === fingerprint;
  }).length;
}

/** Where {@link ObservedResults} reads and writes a server's rows (the tool cache, `tool_cache.ts`). */
export interface ShapeFiles {
  /** The rows of the server's cache file, whatever its age; `[]` when none. */
  read(key: string): Promise<ShapeRow[]>;
  /** Rewrites the server's cache file with `rows`; does nothing when there is no file. */
  write(key: string, rows: ShapeRow[]): Promise<void>;
}

/**
 * Observed shapes of every server of a session (servers by spawn key). Call {@link close} at the
 * end: it writes what is unsaved.
 */
export class ObservedResults {
  readonly #servers = new Map<string, ServerShapes>();
  readonly #keys = new FieldKeyMemo();
  readonly #files: ShapeFiles;
  readonly #onError: (error: unknown) => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  /** @param onError Receives a failed read or write (logged by the caller; never a value). */
  constructor(files: ShapeFiles, onError: (error: unknown) => void) {
    this.#files = files;
    this.#onError = onError;
  }

  #server(key: string): ServerShapes {
    let held = this.#servers.get(key);
    if (!held) this.#servers.set(key, held = { tools: new Map(), loading: undefined, isDirty: false });
    return held;
  }

  /**
   * Merges the shape of one successful result of `tool` into what is known (a changed tool starts
   * again). Synchronous and bounded (see `result_shape.ts`); the cache file is written later.
   *
   * @param key The server's spawn key.
   * @param call.tool The tool's definition as listed.
   * @param call.value The unwrapped value the script received.
   * @param call.contentBlocks `value` is the call's content blocks as they are. @default false
   */
  observe(key: string, call: { tool: Tool; value: unknown; contentBlocks?: boolean }): void {
    const { tool, value } = call;
    const contentBlocks = call.contentBlocks === true;
    if (this.#closed) return;
    const server = this.#server(key);
    const fingerprint = toolFingerprint(tool);
    const shape = deriveShape(value, { contentBlocks, keys: this.#keys });
    const held = server.tools.get(tool.name);
    if (held === undefined || held.fingerprint !== fingerprint) {
      server.tools.set(tool.name, { fingerprint, calls: 1, shape: boundShape(shape).shape });
    } else {
      held.calls++;
      const merged = mergeShapes(held.shape, shape);
      if (merged !== held.shape) held.shape = boundShape(merged).shape;
    }
    server.isDirty = true;
    if (server.loading === undefined) void this.load(key);
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, SHAPE_FLUSH_MS);
  }

  /** Merges in the rows of the server's cache file, once per session (before its first write). */
  load(key: string, rows?: ShapeRow[]): Promise<void> {
    const server = this.#server(key);
    server.loading ??= (async () => {
      try {
        this.#adopt(server, rows ?? await this.#files.read(key));
      } catch (error) {
        this.#onError(error);
      }
    })();
    return server.loading;
  }

  #adopt(server: ServerShapes, rows: readonly ShapeRow[]): void {
    for (const [name, fingerprint, calls, shape] of rows) {
      const held = server.tools.get(name);
      if (held === undefined) server.tools.set(name, { fingerprint, calls, shape });
      else if (held.fingerprint === fingerprint) {
        held.calls += calls;
        held.shape = boundShape(mergeShapes(held.shape, shape)).shape;
      }
    }
  }

  /** The observed results of the server's tools as they are now (a changed tool has none). */
  lookup(key: string): ObservedLookup {
    return (tool) => {
      const held = this.#servers.get(key)?.tools.get(tool.name);
      if (held === undefined || held.fingerprint !== toolFingerprint(tool)) return undefined;
      return { calls: held.calls, shape: held.shape } satisfies ObservedResult;
    };
  }

  /** The rows to write with the server's tool list (its cache file's rows merged in first). */
  async rows(key: string): Promise<ShapeRow[]> {
    await this.load(key);
    const server = this.#server(key);
    server.isDirty = false;
    return [...server.tools].map(([name, h]) => [name, h.fingerprint, h.calls, h.shape]);
  }

  /** Writes every server's unsaved rows to its cache file. Never throws (failures go to `onError`). */
  flush(): Promise<void> {
    const run = this.#flushing.then(async () => {
      for (const [key, server] of this.#servers) {
        if (!server.isDirty) continue;
        try {
          await this.#files.write(key, await this.rows(key));
        } catch (error) {
          this.#onError(error);
        }
      }
    });
    this.#flushing = run;
    return run;
  }

  /** Stops the timer and writes what is unsaved; later observations are ignored. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }
}
