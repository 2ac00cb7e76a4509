/**
 * `cargo-agents report`: one self-contained HTML page of a session, read from its log in `<config>/logs/`
 * (each `execute` with its script, a timeline of its tool calls, its time, errors and the bytes it kept out
 * of the agent's context; the session's totals). Starts nothing, reads only the log.
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { CommandContext } from "./context.ts";
import { UsageError, UserError } from "../diagnostics.ts";
import { MAX_SESSION_LOG_BYTES, SESSION_LOG_NAME } from "../log.ts";
import { resolveConfigDir } from "../plugins/config.ts";
import { ensurePrivateDir, listOwnFiles, writePrivateFile } from "../secrets/mod.ts";
import { openBrowser } from "../auth/mod.ts";
import { parseSessionLog, type SessionRecords } from "../meta_server/trace_record.ts";
import { renderReportHtml, REPORT_TITLE_SUFFIX } from "./_report_html.ts";

/** Options of {@link runReport}. */
export interface ReportOptions {
  /** The session: its log file's name with or without `.log`. Default: the newest session that ran an `execute`. */
  session?: string | undefined;
  /** Where to write the page. Default `<config>/reports/<session>.html` (a private folder). */
  out?: string | undefined;
  /** Open the page in the browser (as `mcp login` opens its URL; `SYMPOSIUM_BROWSER` applies). Default false. */
  open?: boolean | undefined;
  /** Opens the page; for tests. Default `openBrowser`. */
  openUrl?: ((url: string) => boolean) | undefined;
}

/** Most bytes of a session log read: a log never grows past its cap, plus room for the end marker. */
const MAX_READ_BYTES = MAX_SESSION_LOG_BYTES + 64 * 1024;

/**
 * Writes the report of one session and prints its path (and how many executes it shows).
 *
 * @returns 0.
 * @throws {UserError} `REPORT_NO_SESSION` when the named session has no log here; `REPORT_NO_EXECUTES`
 *   when no session log holds an `execute` (without `--session`); `REPORT_UNWRITABLE` when the page
 *   cannot be written; `REPORT_OUT_EXISTS` when `--out` names a file that is not a report page (it is
 *   never replaced: a mistyped `--out Cargo.toml` must not cost the file).
 * @throws {UsageError} When `--session` is not a session id.
 */
export async function runReport(options: ReportOptions, ctx: CommandContext): Promise<number> {
  const configDir = resolveConfigDir(ctx.env, ctx.homeDir, ctx.configDir);
  const logDir = join(configDir, "logs");
  const found = options.session === undefined
    ? await newestWithExecutes(logDir)
    : await namedSession(logDir, options.session);
  const html = renderReportHtml({
    sessionId: found.id,
    records: found.records,
    generatedAt: new Date().toISOString(),
  });
  const out = options.out === undefined
    ? join(configDir, "reports", `${found.id}.html`)
    : resolve(ctx.cwd, options.out);
  if (options.out !== undefined) await refuseToClobber(out);
  try {
    if (options.out === undefined) ensurePrivateDir(dirname(out));
    await writePrivateFile(dirname(out), basename(out), new TextEncoder().encode(html));
  } catch (error) {
    throw new UserError("REPORT_UNWRITABLE", `Cannot write the report to "${out}": ${String(error)}`, {
      cause: error,
      hint: "pass --out with a file in a folder you can write",
    });
  }
  const count = found.records.executes.length;
  ctx.writeOut(`${out}\n`);
  ctx.writeErr(`report of session ${found.id}: ${count} execute${count === 1 ? "" : "s"}\n`);
  if (options.open === true) {
    const url = pathToFileURL(out).href;
    const opened = (options.openUrl ?? ((u) => openBrowser(u, { env: ctx.env, allowFile: true })))(url);
    if (!opened) ctx.writeErr(`could not open a browser; open ${url}\n`);
  }
  return 0;
}

/** Bytes at the start of an existing `--out` file read to tell whether it is a report page. */
const REPORT_HEAD_BYTES = 4096;

/**
 * Throws unless `out` is free to write: missing, or a report page this command wrote (its `<title>` ends
 * in {@link REPORT_TITLE_SUFFIX} within the first {@link REPORT_HEAD_BYTES} bytes), which is replaced.
 *
 * @throws {UserError} `REPORT_OUT_EXISTS` naming the file.
 */
async function refuseToClobber(out: string): Promise<void> {
  let head: string;
  try {
    using file = await Deno.open(out, { read: true });
    const buffer = new Uint8Array(REPORT_HEAD_BYTES);
    const n = await file.read(buffer);
    head = new TextDecoder().decode(buffer.subarray(0, n ?? 0));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    if (error instanceof Deno.errors.IsADirectory) head = "";
    else return; // Unreadable: the write says why, if it fails.
  }
  if (head.startsWith("<!DOCTYPE html>") && head.includes(`${REPORT_TITLE_SUFFIX}</title>`)) return;
  throw new UserError(
    "REPORT_OUT_EXISTS",
    `Cannot write the report to "${out}": something that is not a report page is there already`,
    {
      hint: "pass --out with a new file name (an earlier report page is replaced), or remove that file first",
    },
  );
}

interface FoundSession {
  id: string;
  records: SessionRecords;
}

/** The session logs of `logDir`, newest first (their names start with the UTC time they began). */
function sessionLogs(logDir: string): string[] {
  return listOwnFiles(logDir, SESSION_LOG_NAME).map((f) => f.name).sort().reverse();
}

async function readSession(logDir: string, name: string): Promise<FoundSession> {
  using file = await Deno.open(join(logDir, name), { read: true });
  const buffer = new Uint8Array(MAX_READ_BYTES);
  let read = 0;
  while (read < buffer.length) {
    const n = await file.read(buffer.subarray(read));
    if (n === null) break;
    read += n;
  }
  const text = new TextDecoder().decode(buffer.subarray(0, read));
  return { id: name.replace(/\.log$/, ""), records: parseSessionLog(text) };
}

async function newestWithExecutes(logDir: string): Promise<FoundSession> {
  const names = sessionLogs(logDir);
  for (const name of names) {
    const found = await readSession(logDir, name).catch(() => undefined); // unreadable: look further back
    if (found !== undefined && found.records.executes.length > 0) return found;
  }
  throw new UserError(
    "REPORT_NO_EXECUTES",
    `Cannot write a report: ${
      names.length === 0
        ? `there is no session log in "${logDir}"`
        : `none of the ${names.length} session logs in "${logDir}" ran an execute`
    }`,
    {
      hint: "run an agent with the symposium server (or `cargo agents mcp exec FILE`), then run report again",
    },
  );
}

async function namedSession(logDir: string, session: string): Promise<FoundSession> {
  const name = session.endsWith(".log") ? session : `${session}.log`;
  if (!SESSION_LOG_NAME.test(name)) {
    throw new UsageError(
      `Cannot use --session "${session.slice(0, 80)}": a session id looks like 2026-01-31T12-00-00-000Z-4242`,
      { hint: "run `cargo agents report --help`; the ids are the names of the files in <config>/logs/" },
    );
  }
  const names = sessionLogs(logDir);
  if (!names.includes(name)) {
    const recent = names.slice(0, 3).map((n) => n.replace(/\.log$/, "")).join(", ");
    throw new UserError(
      "REPORT_NO_SESSION",
      `Cannot write a report: no session "${session}" in "${logDir}"`,
      {
        hint: recent === "" ? "no session has been logged here yet" : `the newest sessions: ${recent}`,
      },
    );
  }
  return await readSession(logDir, name);
}
