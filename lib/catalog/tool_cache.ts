/**
 * The on-disk tool cache: one JSON file per spawn key under `<config>/cache/tools/`, trusted for
 * {@link TOOL_CACHE_TTL_MS} so `list_tools` can answer without starting a server.
 *
 * @module
 */
import { type ServerSpec, spawnKey } from "../plugins/server_spec.ts";
import type { Tool } from "../backends/connection.ts";
import type { Clock } from "../backends/pool.ts";
import { denoFileSystem, type FileSystem, readTextFileIfExists } from "../file_system.ts";

/** How long a cached tool list is trusted without the server running, in ms (24 h). */
export const TOOL_CACHE_TTL_MS = 24 * 60 * 60 * 1000;

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Where the tool list of `spec` is cached: `<config>/cache/tools/<32 hex of sha256(spawnKey)>.json`.
 *
 * @param configDir The `<config>` directory.
 */
export async function toolCachePath(configDir: string, spec: ServerSpec): Promise<string> {
  return `${configDir}/cache/tools/${(await sha256Hex(spawnKey(spec))).slice(0, 32)}.json`;
}

/** One cache file's content when it was written for `spec`'s spawn key, else `undefined`; throws on bad JSON. */
function parseCacheEntry(text: string, spec: ServerSpec): { fetchedAtMs: number; tools: Tool[] } | undefined {
  const data = JSON.parse(text) as { spawnKey?: string; fetchedAtMs?: number; tools?: Tool[] };
  if (
    data.spawnKey !== spawnKey(spec) || !Array.isArray(data.tools) || typeof data.fetchedAtMs !== "number"
  ) {
    return undefined;
  }
  return { fetchedAtMs: data.fetchedAtMs, tools: data.tools };
}

/**
 * Parsed cache files kept in memory, one per path, reused while the file's modification time and
 * size are unchanged: a session answers many `list_tools` from the same files, and re-reading a
 * few megabytes of JSON per call would dominate a search. The parsed `tools` array is the same
 * object until the file changes (the search index relies on that to skip unchanged servers).
 */
export class ToolCacheMemo {
  readonly #paths = new Map<string, string>();
  readonly #files = new Map<
    string,
    { mtimeMs: number; size: number; entry: { fetchedAtMs: number; tools: Tool[] } | undefined }
  >();

  /** The cache path of `spec` (memoised: it is a SHA-256 of the spawn key). */
  async path(configDir: string, spec: ServerSpec): Promise<string> {
    const key = `${configDir}\n${spawnKey(spec)}`;
    let path = this.#paths.get(key);
    if (path === undefined) {
      path = await toolCachePath(configDir, spec);
      this.#paths.set(key, path);
    }
    return path;
  }

  /** The parsed entry at `path` for `spec`; throws the file-system or JSON error (the caller treats it as a miss). */
  async read(path: string, spec: ServerSpec): Promise<{ fetchedAtMs: number; tools: Tool[] } | undefined> {
    const info = await Deno.stat(path);
    const mtimeMs = info.mtime?.getTime() ?? 0;
    const held = this.#files.get(path);
    if (held && held.mtimeMs === mtimeMs && held.size === info.size) return held.entry;
    this.#files.delete(path);
    const entry = parseCacheEntry(await Deno.readTextFile(path), spec);
    this.#files.set(path, { mtimeMs, size: info.size, entry });
    return entry;
  }

  /** Forgets the parsed file at `path` (it was removed or rewritten by this process). */
  forget(path: string): void {
    this.#files.delete(path);
  }
}

/**
 * The cached tools of `spec` when the cache is younger than {@link TOOL_CACHE_TTL_MS} by `clock`;
 * `undefined` for no cache, a stale, foreign or unreadable one (a miss: the server is asked instead).
 *
 * @param configDir The `<config>` directory.
 * @param memo Reuses files parsed before while unchanged. @default none (read and parse every time)
 */
export async function readFreshToolCache(
  configDir: string,
  spec: ServerSpec,
  clock: Clock,
  memo?: ToolCacheMemo,
): Promise<Tool[] | undefined> {
  try {
    const entry = memo
      ? await memo.read(await memo.path(configDir, spec), spec)
      : parseCacheEntry(await Deno.readTextFile(await toolCachePath(configDir, spec)), spec);
    if (!entry || clock.now() - entry.fetchedAtMs > TOOL_CACHE_TTL_MS) return undefined;
    return entry.tools;
  } catch {
    return undefined; // No cache or an unreadable one: a miss, the server is asked instead.
  }
}

/**
 * Writes the tools of `spec` to its cache file, stamped `clock.now()` (written to a temporary
 * file, then renamed, so a reader never sees half a file).
 *
 * @param configDir The `<config>` directory (`cache/tools/` is created when missing).
 * @throws The file-system error when the cache cannot be written.
 */
export async function writeToolCache(
  configDir: string,
  spec: ServerSpec,
  tools: Tool[],
  clock: Clock,
): Promise<void> {
  const path = await toolCachePath(configDir, spec);
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  const body = JSON.stringify({ spawnKey: spawnKey(spec), fetchedAtMs: clock.now(), tools });
  await Deno.writeTextFile(tmp, body);
  await Deno.rename(tmp, path);
}

/**
 * Deletes the cache file of `spec` (after `tools/list_changed`); nothing cached is no error.
 *
 * @param memo Forgets its parsed copy too. @default none
 */
export async function removeToolCache(
  configDir: string,
  spec: ServerSpec,
  memo?: ToolCacheMemo,
): Promise<void> {
  const path = await toolCachePath(configDir, spec);
  memo?.forget(path);
  try {
    await Deno.remove(path);
  } catch {
    // Nothing cached: nothing to invalidate.
  }
}

/**
 * What the on-disk tool cache holds for one server: `fresh` (younger than
 * {@link TOOL_CACHE_TTL_MS}: `list_tools` answers from it without starting the server), `stale`
 * (older: the server is started to list its tools), or `none` (never listed, invalidated by
 * `tools/list_changed`, written for another spawn spec, or unreadable).
 */
export type ToolCacheState =
  | { state: "fresh" | "stale"; /** Age of the listing, ms. */ ageMs: number; toolCount: number }
  | { state: "none" };

/**
 * Reads the tool-cache state of `spec` (for `status`; never starts or contacts anything).
 *
 * @param configDir The `<config>` directory.
 * @param options.nowMs The current time, ms since the epoch. @default Date.now()
 * @param options.fs File access. @default denoFileSystem
 */
export async function readToolCacheState(
  configDir: string,
  spec: ServerSpec,
  options: { nowMs?: number; fs?: FileSystem } = {},
): Promise<ToolCacheState> {
  const fs = options.fs ?? denoFileSystem;
  let entry: { fetchedAtMs: number; tools: Tool[] } | undefined;
  try {
    const text = await readTextFileIfExists(fs, await toolCachePath(configDir, spec));
    entry = text === null ? undefined : parseCacheEntry(text, spec);
  } catch {
    entry = undefined; // An unreadable or corrupt cache is no cache: the server is asked instead.
  }
  if (!entry) return { state: "none" };
  const ageMs = Math.max(0, (options.nowMs ?? Date.now()) - entry.fetchedAtMs);
  return { state: ageMs > TOOL_CACHE_TTL_MS ? "stale" : "fresh", ageMs, toolCount: entry.tools.length };
}
