/**
 * The live checks of `doctor` (private to `lib/commands/`): every server in scope started through the
 * session's pool and asked `tools/list`, all at once, each under a deadline; and one `return 1` script
 * run in the sandbox, as `execute` runs scripts.
 *
 * @module
 */
import type { Session } from "./_session.ts";
import type { DoctorCheck } from "./_doctor_checks.ts";
import type { ServerSpec } from "../plugins/mod.ts";
import { readToolCacheState } from "../catalog/mod.ts";

/** Longest part of a server's error shown on its line, in characters (the stderr tail can be long). */
export const MAX_PROBE_MESSAGE_CHARS = 400;

/** What the sandbox must answer to `return 1`. */
const SANDBOX_SCRIPT = "return 1";
/** Its answer: `1`, as the agent gets it (`{"result":1}`: a scalar travels wrapped). */
const SANDBOX_ANSWER = /^(1|\{"result":\s*1\})$/;

/**
 * Starts every server in scope at once and lists its tools live (skipping the tool cache), each
 * bounded by `timeoutMs`; a server past it is reported as not answering (the session's close stops it).
 *
 * @param timeoutMs Deadline of each server's start plus `tools/list`, in ms.
 * @returns One check per server, in the catalog's order.
 */
export async function probeServers(
  session: Session,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<DoctorCheck[]> {
  return await Promise.all(
    session.catalog.servers.map((spec) => probeServer(session, spec, timeoutMs, signal)),
  );
}

async function probeServer(
  session: Session,
  spec: ServerSpec,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<DoctorCheck> {
  const startMs = performance.now();
  const deadline = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), timeoutMs + 250));
  const where = `${spec.location.file}:${spec.location.line}:${spec.location.column}`;
  try {
    const listed = await Promise.race([
      session.catalog.listServerTools(spec, { live: true, signal: deadline }),
      late,
    ]);
    const elapsedMs = Math.round(performance.now() - startMs);
    if (listed === "late" || deadline.aborted) return lateCheck(spec, elapsedMs, timeoutMs, where);
    const era = await eraOf(session, spec);
    return {
      area: "server",
      subject: spec.name,
      state: "ok",
      message: `${spec.transport}${
        era ? `, ${era} era` : ""
      }: started and listed ${listed.tools.length} tool(s) in ${elapsedMs} ms`,
      elapsedMs,
      toolCount: listed.tools.length,
      ...(era ? { era } : {}),
    };
  } catch (error) {
    const elapsedMs = Math.round(performance.now() - startMs);
    if (deadline.aborted && !signal.aborted) return lateCheck(spec, elapsedMs, timeoutMs, where);
    const e = error as { code?: unknown; message?: unknown; hint?: unknown };
    const code = typeof e.code === "string" ? e.code : undefined;
    const message = cut(typeof e.message === "string" ? e.message : String(error));
    const signIn = code === "NEEDS_SIGN_IN" ? `run \`cargo agents mcp login ${spec.name}\`` : undefined;
    return {
      area: "server",
      subject: spec.name,
      state: "fail",
      code,
      message,
      fix: signIn ?? (typeof e.hint === "string" ? e.hint : undefined) ??
        `check its declaration at ${where} (\`cargo agents status\` shows its command, cwd and environment names)`,
      elapsedMs,
    };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The protocol era (`legacy`: `initialize` first; `modern`: 2026-07-28) the live listing just recorded
 * in the tool cache, when the cache records eras; else `undefined`.
 */
async function eraOf(session: Session, spec: ServerSpec): Promise<"legacy" | "modern" | undefined> {
  try {
    const state = await readToolCacheState(session.catalog.configDir, spec) as { era?: unknown };
    return state.era === "legacy" || state.era === "modern" ? state.era : undefined;
  } catch {
    return undefined;
  }
}

function lateCheck(spec: ServerSpec, elapsedMs: number, timeoutMs: number, where: string): DoctorCheck {
  return {
    area: "server",
    subject: spec.name,
    state: "fail",
    code: "STARTUP_TIMEOUT",
    message: `did not start and answer tools/list within ${timeoutMs} ms`,
    fix: `a first start may download its package: try \`cargo agents mcp tools ${spec.name}\`; ` +
      `else check its declaration at ${where}`,
    elapsedMs,
  };
}

function cut(text: string): string {
  return text.length <= MAX_PROBE_MESSAGE_CHARS
    ? text
    : `${text.slice(0, MAX_PROBE_MESSAGE_CHARS)}\u2026 ${
      text.length - MAX_PROBE_MESSAGE_CHARS
    } more characters`;
}

/**
 * Runs `return 1` in the session's sandbox with no server in scope, bounded by `timeoutMs`.
 *
 * @returns `ok` when the answer is `1`.
 */
export async function probeSandbox(
  session: Session,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<DoctorCheck> {
  const startMs = performance.now();
  const deadline = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
  const result = await session.runner.run({
    script: SANDBOX_SCRIPT,
    namespaces: [],
    hostCall: () => Promise.reject(new Error("no server is in the doctor's script")),
    notices: () => [],
    signal: deadline,
  });
  const elapsedMs = Math.round(performance.now() - startMs);
  if (!result.isError && SANDBOX_ANSWER.test(result.text.trim())) {
    return {
      area: "sandbox",
      subject: "",
      state: "ok",
      message: `\`${SANDBOX_SCRIPT}\` ran in ${elapsedMs} ms`,
      elapsedMs,
    };
  }
  return {
    area: "sandbox",
    subject: "",
    state: "fail",
    message: `\`${SANDBOX_SCRIPT}\` answered ${cut(result.text)}`,
    fix: "run `cargo agents mcp exec -` with `return 1` on stdin and -v for the cause",
    elapsedMs,
  };
}
