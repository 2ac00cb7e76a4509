/**
 * The on-disk tool cache under `<config>/cache/tools/`, trusted for {@link TOOL_CACHE_TTL_MS} so
 * `list_tools` can answer without starting a server. It stores no secret: a spawn key holds header
 * values, the expanded URL and environment values, so only its SHA-256 is written (in the file
 * name and as `keyHash`), the full key stays in memory; the tools are masked by the secret
 * registry before they are written. The folders are private (0700, refused when a link or another
 * user's), files are 0600. Writing an entry removes the server's stale ones: those of the same
 * server and place (workspace for stdio, URL template for remote) under another spawn key (a
 * rotated token, a changed command), those of the server elsewhere older than the TTL, and the
 * files of the first cache format, which held spawn keys in clear.
 *
 * @module
 */
import { type ServerSpec, spawnKey } from "../plugins/mod.ts";
import { type Clock, type ProtocolEra, SYSTEM_CLOCK, type Tool } from "../backends/mod.ts";
import { denoFileSystem, type FileSystem, readTextFileIfExists } from "../file_system.ts";
import {
  ensurePrivateDir,
  inspectPrivateDir,
  listOwnFiles,
  maskDeep,
  writePrivateFile,
} from "../secrets/mod.ts";
import { countCurrentRows, parseShapeRows, type ShapeRow } from "./_observed_store.ts";
import { SliceClock } from "../time_slices.ts";

/** How long a cached tool list is trusted without the server running, in ms (24 h). */
export const TOOL_CACHE_TTL_MS = 24 * 60 * 60 * 1000;
/** Format written into every cache file; files of another format are misses. */
export const TOOL_CACHE_FORMAT_VERSION = 2;
/** Largest cache file read, in bytes (16 MiB): a bigger one is a miss. */
export const MAX_TOOL_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * Longest run of masking and serializing tools before the cache write lets the event loop turn, in ms:
 * 50,000 tools masked and serialized at once held mcp-serve's thread (pings waited) about 400 ms.
 */
export const CACHE_SLICE_MS = 20;

/**
 * `tools` masked by the secret registry and as JSON text (the same as `JSON.stringify(maskDeep(tools))`),
 * a slice at a time: a macrotask between slices once {@link CACHE_SLICE_MS} has passed.
 */
async function maskInSlices(tools: readonly Tool[]): Promise<{ tools: Tool[]; json: string }> {
  const masked: Tool[] = [];
  const parts: string[] = [];
  const clock = new SliceClock(CACHE_SLICE_MS);
  for (const tool of tools) {
    const one = maskDeep(tool);
    masked.push(one);
    parts.push(JSON.stringify(one) ?? "null");
    await clock.pause();
  }
  return { tools: masked, json: `[${parts.join(",")}]` };
}

/** Names of cache files: `<server 8 hex>-<place 8 hex>-<key 32 hex>.json`. */
const ENTRY_NAME = /^([0-9a-f]{8})-([0-9a-f]{8})-([0-9a-f]{32})\.json$/;
/** Names of the first format's files (`<32 hex>.json`), whose content held the spawn key in clear. */
const LEGACY_NAME = /^[0-9a-f]{32}\.json$/;

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The parts of a cache file name: none reveals a header, URL or environment value. */
async function entryParts(spec: ServerSpec): Promise<{ server: string; place: string; key: string }> {
  const place = spec.transport === "stdio" ? `stdio\0${spec.cwd}` : `http\0${spec.urlTemplate ?? ""}`;
  const [server, placeHash, key] = await Promise.all([
    sha256Hex(`tool-cache server\0${spec.plugin}\0${spec.name}`),
    sha256Hex(`tool-cache place\0${place}`),
    sha256Hex(`tool-cache key\0${spawnKey(spec)}`),
  ]);
  return { server: server.slice(0, 8), place: placeHash.slice(0, 8), key: key.slice(0, 32) };
}

/** `<configDir>/cache/tools`. */
export function toolCacheDir(configDir: string): string {
  return `${configDir}/cache/tools`;
}

/**
 * Where the tool list of `spec` is cached:
 * `<config>/cache/tools/<server 8 hex>-<place 8 hex>-<32 hex of sha256(spawn key)>.json`.
 *
 * @param configDir The `<config>` directory.
 */
export async function toolCachePath(configDir: string, spec: ServerSpec): Promise<string> {
  const { server, place, key } = await entryParts(spec);
  return `${toolCacheDir(configDir)}/${server}-${place}-${key}.json`;
}

interface CacheEntry {
  fetchedAtMs: number;
  tools: Tool[];
  /** The server declared the `resources` capability (so `list_tools` declares `$resources`). */
  hasResources: boolean;
  /** Observed result shapes of its tools (`_observed_store.ts`); `[]` when none. */
  shapes: ShapeRow[];
  /** The protocol era the server spoke when listed (absent in files written before eras were recorded). */
  era?: ProtocolEra | undefined;
  /** How long the listing is fresh, ms (a modern server's `ttlMs`); absent: {@link TOOL_CACHE_TTL_MS}. */
  ttlMs?: number | undefined;
}

/** How long `entry` is trusted, ms: the server's `ttlMs` when it gave one, never more than {@link TOOL_CACHE_TTL_MS}. */
function freshForMs(entry: CacheEntry): number {
  return Math.min(TOOL_CACHE_TTL_MS, entry.ttlMs ?? TOOL_CACHE_TTL_MS);
}

/** One cache file's content when it was written for `spec`, else `undefined`; throws on bad JSON. */
function parseCacheEntry(text: string, keyHash: string): CacheEntry | undefined {
  const data = JSON.parse(text) as {
    version?: unknown;
    keyHash?: unknown;
    fetchedAtMs?: unknown;
    tools?: unknown;
    resources?: unknown;
    shapes?: unknown;
    era?: unknown;
    ttlMs?: unknown;
  };
  if (
    data.version !== TOOL_CACHE_FORMAT_VERSION || data.keyHash !== keyHash || !Array.isArray(data.tools) ||
    typeof data.fetchedAtMs !== "number"
  ) {
    return undefined;
  }
  return {
    fetchedAtMs: data.fetchedAtMs,
    tools: data.tools as Tool[],
    hasResources: data.resources === true,
    shapes: parseShapeRows(data.shapes),
    ...(data.era === "modern" || data.era === "legacy" ? { era: data.era } : {}),
    ...(typeof data.ttlMs === "number" && data.ttlMs >= 0 ? { ttlMs: data.ttlMs } : {}),
  };
}

/** How long a parsed cache file is trusted without looking at the file again, in ms. */
export const CACHE_RECHECK_MS = 1_000;

/**
 * Parsed cache files kept in memory, one per path, reused while the file's modification time and
 * size are unchanged: a session answers many `list_tools` from the same files, and re-reading a
 * few megabytes of JSON per call would dominate a search. The parsed `tools` array is the same
 * object until the file changes (the search index relies on that to skip unchanged servers).
 * Only file names and hashes are kept as keys; the spawn key itself stays with the caller. A file
 * is looked at again (one `lstat`) at most every {@link CACHE_RECHECK_MS}; what this process writes
 * or removes is forgotten at once.
 */
export class ToolCacheMemo {
  readonly #paths = new Map<string, { path: string; keyHash: string }>();
  readonly #reading = new Map<string, Promise<CacheEntry | undefined>>();
  readonly #files = new Map<
    string,
    { mtimeMs: number; size: number; checkedAtMs: number; entry: CacheEntry | undefined }
  >();

  /** The cache path and key hash of `spec` (memoised: they are SHA-256 digests of the spawn key). */
  async path(configDir: string, spec: ServerSpec): Promise<{ path: string; keyHash: string }> {
    const key = `${configDir}\n${spawnKey(spec)}`;
    let held = this.#paths.get(key);
    if (held === undefined) {
      held = { path: await toolCachePath(configDir, spec), keyHash: (await entryParts(spec)).key };
      this.#paths.set(key, held);
    }
    return held;
  }

  /**
   * The parsed entry at `path`: only a regular file (never through a link, never a FIFO) of at
   * most {@link MAX_TOOL_CACHE_BYTES}; throws the file-system or JSON error (a miss for the caller).
   */
  read(path: string, keyHash: string): Promise<CacheEntry | undefined> {
    // Concurrent readers of one file (a search while the index is prepared) share one parse.
    const inFlight = this.#reading.get(path);
    if (inFlight) return inFlight;
    const reading = this.#read(path, keyHash).finally(() => this.#reading.delete(path));
    this.#reading.set(path, reading);
    return reading;
  }

  async #read(path: string, keyHash: string): Promise<CacheEntry | undefined> {
    const now = performance.now();
    const held = this.#files.get(path);
    if (held && now - held.checkedAtMs < CACHE_RECHECK_MS) return held.entry;
    const info = await Deno.lstat(path);
    if (!info.isFile || info.size > MAX_TOOL_CACHE_BYTES) return undefined;
    const mtimeMs = info.mtime?.getTime() ?? 0;
    if (held && held.mtimeMs === mtimeMs && held.size === info.size) {
      held.checkedAtMs = now;
      return held.entry;
    }
    this.#files.delete(path);
    const entry = parseCacheEntry(await Deno.readTextFile(path), keyHash);
    this.#files.set(path, { mtimeMs, size: info.size, checkedAtMs: now, entry });
    return entry;
  }

  /** Forgets the parsed file at `path` (it was removed or rewritten by this process). */
  forget(path: string): void {
    this.#files.delete(path);
  }

  /**
   * Keeps `entry` as the parsed content of the file this process just wrote at `path`, with the file's
   * modification time and size now (so a later change by another process is still seen); a file that
   * cannot be looked at is simply not kept.
   */
  remember(path: string, entry: CacheEntry): void {
    try {
      const info = Deno.lstatSync(path);
      const mtimeMs = info.mtime?.getTime() ?? 0;
      this.#files.set(path, { mtimeMs, size: info.size, checkedAtMs: performance.now(), entry });
    } catch {
      // Removed already (another session): the next read is a miss or parses what is there.
    }
  }
}

/**
 * The cached tools of `spec` when the cache is younger than {@link TOOL_CACHE_TTL_MS} by `clock`;
 * `undefined` for no cache, a stale, foreign or unreadable one, or a cache folder that is a link
 * or another user's (a miss: the server is asked instead).
 *
 * @param configDir The `<config>` directory.
 * @param memo Reuses files parsed before while unchanged. @default a fresh one (read and parse every time)
 */
export async function readFreshToolCache(
  configDir: string,
  spec: ServerSpec,
  clock: Clock,
  memo: ToolCacheMemo = new ToolCacheMemo(),
): Promise<Tool[] | undefined> {
  return (await readFreshToolCacheEntry(configDir, spec, clock, memo))?.tools;
}

/** As {@link readFreshToolCache}, with whether the server declared `resources` when it was listed. */
export async function readFreshToolCacheEntry(
  configDir: string,
  spec: ServerSpec,
  clock: Clock,
  memo: ToolCacheMemo = new ToolCacheMemo(),
): Promise<{ tools: Tool[]; hasResources: boolean; shapes: ShapeRow[] } | undefined> {
  try {
    inspectPrivateDir(`${configDir}/cache`);
    if (inspectPrivateDir(toolCacheDir(configDir)) === null) return undefined;
    const { path, keyHash } = await memo.path(configDir, spec);
    const entry = await memo.read(path, keyHash);
    if (!entry || clock.now() - entry.fetchedAtMs > freshForMs(entry)) return undefined;
    return { tools: entry.tools, hasResources: entry.hasResources, shapes: entry.shapes };
  } catch {
    return undefined; // No cache, an unreadable one or a folder we refuse: a miss, the server is asked.
  }
}

/**
 * Writes the tools of `spec` (masked by the secret registry) to its cache file, stamped
 * `clock.now()`, 0600 and atomically (temporary file, then rename); then removes the server's
 * stale entries (see the module doc).
 *
 * @param configDir The `<config>` directory (`cache/` and `cache/tools/` are created 0700 when missing).
 * @param options.hasResources The server declared `resources`. @default false
 * @param options.shapes Observed result shapes of its tools (types only, never a value). @default none
 * @param options.fetchedAtMs When the tools were listed, ms since the epoch. @default clock.now()
 * @param options.memo Forgets its parsed copy of the file written. @default none
 * @param options.era The protocol era the server spoke (read back by {@link readCachedEra}). @default none
 * @param options.hints The listing's `ttlMs` (ms; the entry is fresh that long, at most
 *   {@link TOOL_CACHE_TTL_MS}) and `cacheScope` (`private` and `public` are both kept: the cache is the
 *   user's own, 0600, keyed by the spawn key). @default none: fresh for {@link TOOL_CACHE_TTL_MS}
 * @throws {PrivateDirError} when `cache/` or `cache/tools/` is a link, another user's or a file.
 * @throws The file-system error when the cache cannot be written.
 */
export async function writeToolCache(
  configDir: string,
  spec: ServerSpec,
  tools: Tool[],
  clock: Clock,
  options: {
    hasResources?: boolean;
    shapes?: ShapeRow[] | undefined;
    fetchedAtMs?: number | undefined;
    memo?: ToolCacheMemo | undefined;
    era?: ProtocolEra | undefined;
    hints?: { ttlMs?: number | undefined; cacheScope?: string | undefined } | undefined;
  } = {},
): Promise<void> {
  ensurePrivateDir(`${configDir}/cache`);
  const dir = toolCacheDir(configDir);
  ensurePrivateDir(dir);
  const { server, place, key } = await entryParts(spec);
  const name = `${server}-${place}-${key}.json`;
  const fetchedAtMs = options.fetchedAtMs ?? clock.now();
  const head = JSON.stringify({
    version: TOOL_CACHE_FORMAT_VERSION,
    server: spec.name,
    plugin: spec.plugin,
    keyHash: key,
    fetchedAtMs,
  });
  const masked = await maskInSlices(tools);
  const shapes = options.shapes?.length ? maskDeep(options.shapes) : undefined;
  const ttlMs = options.hints?.ttlMs;
  const tail = JSON.stringify({
    ...(options.hasResources ? { resources: true } : {}),
    ...(shapes ? { shapes } : {}),
    ...(options.era ? { era: options.era } : {}),
    ...(ttlMs !== undefined ? { ttlMs } : {}),
  });
  const body = `${head.slice(0, -1)},"tools":${masked.json}${tail === "{}" ? "}" : `,${tail.slice(1)}`}`;
  await writePrivateFile(dir, name, new TextEncoder().encode(body));
  const path = `${dir}/${name}`;
  options.memo?.forget(path);
  // What was written is what a read would parse: kept, a shapes update after a call does not parse
  // the file again (8 MB of JSON held the thread 100 ms and more).
  options.memo?.remember(path, {
    fetchedAtMs,
    tools: masked.tools,
    hasResources: options.hasResources === true,
    shapes: parseShapeRows(shapes ?? []),
    ...(options.era ? { era: options.era } : {}),
    ...(ttlMs !== undefined ? { ttlMs } : {}),
  });
  const nowMs = Date.now();
  for (const file of listOwnFiles(dir, /\.json$/)) {
    const m = ENTRY_NAME.exec(file.name);
    const isStale = m
      ? m[1] === server && file.name !== name && (m[2] === place || nowMs - file.mtimeMs > TOOL_CACHE_TTL_MS)
      : LEGACY_NAME.test(file.name);
    if (isStale) await Deno.remove(file.path).catch(() => {}); // Another session removed it first.
  }
}

/**
 * The observed result shapes in the cache file of `spec`, whatever its age (they are keyed to each
 * tool's fingerprint, not to the listing's age); `[]` for no file or an unreadable one.
 */
export async function readToolCacheShapes(
  configDir: string,
  spec: ServerSpec,
  memo: ToolCacheMemo = new ToolCacheMemo(),
): Promise<ShapeRow[]> {
  try {
    inspectPrivateDir(`${configDir}/cache`);
    if (inspectPrivateDir(toolCacheDir(configDir)) === null) return [];
    const { path, keyHash } = await memo.path(configDir, spec);
    return (await memo.read(path, keyHash))?.shapes ?? [];
  } catch {
    return []; // No cache or one we refuse: nothing learned before.
  }
}

/**
 * Rewrites the cache file of `spec` with `shapes` in place of its observed shapes, keeping its
 * tools and listing time; does nothing when the server has no readable cache file (the shapes are
 * written with its next listing).
 *
 * @param options.shapes The rows to write (`[tool, fingerprint, calls, shape]`).
 * @param options.memo Reads the file through it and forgets its parsed copy. @default a fresh one
 * @throws As {@link writeToolCache}.
 */
export async function writeToolCacheShapes(
  configDir: string,
  spec: ServerSpec,
  options: { shapes: ShapeRow[]; memo?: ToolCacheMemo | undefined },
): Promise<void> {
  const { shapes } = options;
  const memo = options.memo ?? new ToolCacheMemo();
  let entry: CacheEntry | undefined;
  try {
    inspectPrivateDir(`${configDir}/cache`);
    if (inspectPrivateDir(toolCacheDir(configDir)) === null) return;
    const { path, keyHash } = await memo.path(configDir, spec);
    entry = await memo.read(path, keyHash);
  } catch {
    return; // No file to add the shapes to: the next listing writes them.
  }
  if (!entry) return;
  await writeToolCache(configDir, spec, entry.tools, SYSTEM_CLOCK, {
    hasResources: entry.hasResources,
    shapes,
    fetchedAtMs: entry.fetchedAtMs,
    memo,
  });
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
  | {
    state: "fresh" | "stale";
    /** Age of the listing, ms. */
    ageMs: number;
    toolCount: number;
    /** Tools without an `outputSchema`: those whose result shape can be learned from their answers. */
    learnableCount: number;
    /** Tools with an observed result shape (of the tool as listed). */
    shapeCount: number;
    /** The protocol era the server spoke when listed; absent when not recorded. */
    era?: ProtocolEra | undefined;
  }
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
  let entry: CacheEntry | undefined;
  try {
    const text = await readTextFileIfExists(fs, await toolCachePath(configDir, spec));
    entry = text === null ? undefined : parseCacheEntry(text, (await entryParts(spec)).key);
  } catch {
    entry = undefined; // An unreadable or corrupt cache is no cache: the server is asked instead.
  }
  if (!entry) return { state: "none" };
  const ageMs = Math.max(0, (options.nowMs ?? Date.now()) - entry.fetchedAtMs);
  return {
    state: ageMs > freshForMs(entry) ? "stale" : "fresh",
    ageMs,
    toolCount: entry.tools.length,
    learnableCount: entry.tools.filter((tool) => tool.outputSchema === undefined).length,
    shapeCount: countCurrentRows(entry.shapes, entry.tools),
    ...(entry.era ? { era: entry.era } : {}),
  };
}

/**
 * The protocol era `spec`'s server spoke when its tools were last cached, if the entry is younger than
 * {@link TOOL_CACHE_TTL_MS} (whatever its `ttlMs`: the era outlives the list); `undefined` otherwise. The
 * pool passes it as the start's prior verdict (a cached legacy verdict skips the `server/discover` probe).
 *
 * @param configDir The `<config>` directory.
 */
export async function readCachedEra(
  configDir: string,
  spec: ServerSpec,
  clock: Clock,
  memo: ToolCacheMemo = new ToolCacheMemo(),
): Promise<ProtocolEra | undefined> {
  try {
    inspectPrivateDir(`${configDir}/cache`);
    if (inspectPrivateDir(toolCacheDir(configDir)) === null) return undefined;
    const { path, keyHash } = await memo.path(configDir, spec);
    const entry = await memo.read(path, keyHash);
    if (!entry || clock.now() - entry.fetchedAtMs > TOOL_CACHE_TTL_MS) return undefined;
    return entry.era;
  } catch {
    return undefined; // No cache or one we refuse: probe.
  }
}
