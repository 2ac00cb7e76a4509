/**
 * `Cargo.lock`'s `[[package]]` entries, read without stalling the host thread (private to
 * `lib/workspace/`): the file is in Cargo's own line format (one `key = value` per line, a
 * `dependencies` array one string a line), so it is read line by line in time slices rather than by
 * one TOML parse of the whole text (a 5 MB lock file held the thread over a second that way). A lock
 * file in another TOML layout (hand-edited) is parsed whole only when it is small; a larger one is a
 * problem. Files over {@link MAX_CARGO_LOCK_BYTES} are not read at all.
 *
 * @module
 */
import { UserError } from "../diagnostics.ts";
import type { FileSystem } from "../file_system.ts";
import { decodeBasicString, isTable, parseTomlDocument } from "../toml_position.ts";
import { SliceClock } from "../time_slices.ts";

/** Largest `Cargo.lock` read, in bytes (16 MiB; the largest public ones are near 1 MiB). */
export const MAX_CARGO_LOCK_BYTES = 16 * 1024 * 1024;
/** Largest `Cargo.lock` not in Cargo's line format that is still parsed as TOML in one go, in bytes. */
export const MAX_CARGO_LOCK_TOML_BYTES = 256 * 1024;

/** One `[[package]]` of `Cargo.lock`. */
export interface LockPackage {
  name: string;
  version: string;
  source: string | null;
  /** Entries as written: `"name"`, `"name version"` or `"name version (source)"`. */
  dependencies: string[];
}

/**
 * Reads `file`'s packages. Never throws for the file's content or size: the problem
 * (`CARGO_LOCK_TOO_LARGE`, `CARGO_LOCK_INVALID`) goes to `problems` and no package is returned.
 */
export async function readCargoLock(
  fs: FileSystem,
  file: string,
  problems: UserError[],
): Promise<LockPackage[]> {
  const size = (await fs.stat(file))?.size;
  const tooLarge = (bytes: number) =>
    new UserError(
      "CARGO_LOCK_TOO_LARGE",
      `Cannot read ${file}: it is ${bytes} bytes, over the cap of ${MAX_CARGO_LOCK_BYTES} bytes for a Cargo.lock`,
      {
        hint: "crate versions are not known in this workspace; regenerate it with `cargo generate-lockfile`",
        location: { file, line: 1, column: 1 },
      },
    );
  if (size !== undefined && size > MAX_CARGO_LOCK_BYTES) {
    problems.push(tooLarge(size));
    return [];
  }
  let text: string;
  try {
    text = await fs.readTextFile(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    if (error instanceof UserError) { // Not UTF-8.
      problems.push(error);
      return [];
    }
    throw error;
  }
  if (text.length > MAX_CARGO_LOCK_BYTES) { // A file system that did not know the size.
    problems.push(tooLarge(text.length));
    return [];
  }
  const lines = await readLines(text);
  if (lines !== null) return lines;
  if (text.length > MAX_CARGO_LOCK_TOML_BYTES) {
    problems.push(
      new UserError(
        "CARGO_LOCK_INVALID",
        `Cannot read ${file}: it is not in Cargo's own layout, and at ${text.length} bytes it is over the ` +
          `cap of ${MAX_CARGO_LOCK_TOML_BYTES} bytes for reading it as general TOML`,
        { hint: "regenerate it with `cargo generate-lockfile`", location: { file, line: 1, column: 1 } },
      ),
    );
    return [];
  }
  return parseWhole(text, file, problems);
}

function parseWhole(text: string, file: string, problems: UserError[]): LockPackage[] {
  let toml;
  try {
    toml = parseTomlDocument(text, file, { code: "CARGO_LOCK_INVALID", what: "Cargo.lock" }).value;
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    problems.push(error);
    return [];
  }
  if (!Array.isArray(toml.package)) return [];
  return toml.package.filter(isTable).flatMap((p) =>
    typeof p.name === "string" && typeof p.version === "string"
      ? [{
        name: p.name,
        version: p.version,
        source: typeof p.source === "string" ? p.source : null,
        dependencies: Array.isArray(p.dependencies)
          ? p.dependencies.filter((d): d is string => typeof d === "string")
          : [],
      }]
      : []
  );
}

/** A whole-line `"..."` TOML basic string (no unescaped quote inside), or a `'...'` literal one. */
const STRING = /^(?:"((?:[^"\\]|\\.)*)"|'([^']*)')$/;
const KEY_VALUE = /^("(?:[^"\\]|\\.)*"|[A-Za-z0-9_-]+)\s*=\s*(.*)$/;

function stringValue(raw: string): string | null {
  const m = STRING.exec(raw.trim());
  if (m === null) return null;
  return m[1] !== undefined ? decodeBasicString(m[1]) : m[2]!;
}

/**
 * Reads `text` in Cargo's line layout, pausing between time slices. `null` when a line is not in that
 * layout (the caller falls back to a TOML parse).
 */
async function readLines(text: string): Promise<LockPackage[] | null> {
  const clock = new SliceClock();
  const out: LockPackage[] = [];
  let current: Partial<LockPackage> & { dependencies: string[] } | null = null;
  let inArray: string[] | null = null;
  const flush = () => {
    if (current?.name !== undefined && current.version !== undefined) {
      out.push({
        name: current.name,
        version: current.version,
        source: current.source ?? null,
        dependencies: current.dependencies,
      });
    }
  };
  for (let start = 0; start < text.length;) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    const line = text.slice(start, end).replace(/\r$/, "").trim();
    start = end + 1;
    await clock.pause();
    if (inArray !== null) {
      if (line === "]") {
        inArray = null;
        continue;
      }
      const item = line.endsWith(",") ? stringValue(line.slice(0, -1)) : stringValue(line);
      if (item === null && line !== "" && !line.startsWith("#")) return null;
      if (item !== null) inArray.push(item);
      continue;
    }
    if (line === "" || line.startsWith("#")) continue;
    if (line.startsWith("[")) {
      if (!/^(?:\[\[[A-Za-z0-9_.-]+\]\]|\[[A-Za-z0-9_.-]+\])$/.test(line)) return null;
      flush();
      current = line === "[[package]]" ? { dependencies: [] } : null;
      continue;
    }
    const kv = KEY_VALUE.exec(line);
    if (kv === null) return null;
    const [, key, raw] = kv as unknown as [string, string, string];
    if (raw === "[" || raw === "[]") {
      const list: string[] = [];
      if (raw === "[") inArray = list;
      if (current !== null && key === "dependencies") current.dependencies = list;
      continue;
    }
    if (raw.startsWith("[")) return null; // A one-line array with items: not Cargo's layout.
    const value = stringValue(raw);
    if (value === null && !/^[0-9]+$/.test(raw)) return null;
    if (current !== null && value !== null && (key === "name" || key === "version" || key === "source")) {
      current[key] = value;
    }
  }
  if (inArray !== null) return null;
  flush();
  return out;
}
