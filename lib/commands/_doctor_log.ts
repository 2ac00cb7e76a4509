/**
 * The last session's log, as `doctor` reads it (private to `lib/commands/`): the newest session
 * file of `<config>/logs/` (what `mcp-serve`, `mcp exec` and `mcp tools` write), its error and
 * warning lines counted and the last error shown. Log lines never hold a secret (`lib/log.ts`).
 *
 * @module
 */
import { join } from "node:path";
import { SESSION_LOG_NAME } from "../log.ts";
import type { DoctorCheck } from "./_doctor_checks.ts";

/** Most of a session file read, from its end, in bytes (1 MiB): older lines are not counted. */
export const MAX_LOG_TAIL_BYTES = 1024 * 1024;

/** Longest last error line shown, in characters. */
const MAX_LINE_CHARS = 300;

/** A log line's level: `<ISO time> <LEVEL> ...` (see `lib/log.ts`). */
const LEVEL = /^\S+ (ERROR|WARN) /;

/**
 * One check about the newest session file in `<configDir>/logs`, or none when there is no log.
 * Errors in it are a warning (they may be fixed since); a file that cannot be read is skipped.
 */
export async function lastSessionLogCheck(configDir: string): Promise<DoctorCheck[]> {
  const dir = join(configDir, "logs");
  let newest: string | undefined;
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (
        entry.isFile && SESSION_LOG_NAME.test(entry.name) && (newest === undefined || entry.name > newest)
      ) {
        newest = entry.name;
      }
    }
  } catch {
    return []; // No logs folder (or not ours to read): nothing to say.
  }
  if (newest === undefined) return [];
  const path = join(dir, newest);
  let text: string;
  try {
    text = await readTail(path, MAX_LOG_TAIL_BYTES);
  } catch {
    return [];
  }
  let errors = 0, warnings = 0, lastError: string | undefined;
  for (const line of text.split("\n")) {
    const level = LEVEL.exec(line)?.[1];
    if (level === "ERROR") {
      errors++;
      lastError = line;
    } else if (level === "WARN") warnings++;
  }
  const counts = `${errors} error(s), ${warnings} warning(s)`;
  if (errors === 0) return [{ area: "log", subject: path, state: "ok", message: `last session: ${counts}` }];
  const shown = lastError!.length > MAX_LINE_CHARS
    ? `${lastError!.slice(0, MAX_LINE_CHARS)}\u2026`
    : lastError!;
  return [{
    area: "log",
    subject: path,
    state: "warn",
    message: `last session: ${counts}; the last: ${shown}`,
    fix: "read the file for the whole story; the lines above say whether it still happens",
  }];
}

/** The last `maxBytes` of the file at `path`, decoded (a character cut at the start is replaced). */
async function readTail(path: string, maxBytes: number): Promise<string> {
  using file = await Deno.open(path, { read: true });
  const size = (await file.stat()).size;
  const start = Math.max(0, size - maxBytes);
  await file.seek(start, Deno.SeekMode.Start);
  const buffer = new Uint8Array(size - start);
  let read = 0;
  while (read < buffer.length) {
    const n = await file.read(buffer.subarray(read));
    if (n === null) break;
    read += n;
  }
  return new TextDecoder().decode(buffer.subarray(0, read));
}
