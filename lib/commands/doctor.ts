/**
 * `cargo-agents doctor [--json] [--timeout-secs N]`: the first thing to run when something does not
 * work. Without a model and in seconds, it checks and prints one line per finding, each a check mark (fine),
 * `!` (worth knowing) or a cross (to fix, with the fix on the next line):
 *
 * - the program and its version;
 * - `config.toml` (loads without a Problem), the workspace, and every Problem `status` lists (plugins
 *   that do not load, refused servers, the endpoint policy, our private folders' modes and owners);
 * - workspace and crate plugins not trusted or changed since trusted, with the `trust` command;
 * - git registries: fetched, and when;
 * - each agent `sync` detects: its config file parses and holds the `symposium` entry `sync` would
 *   write now (a dry run of `sync`), else the `sync --agent` command; and a project-level file
 *   (`sync --project`) whose entry starts something else;
 * - each server in scope: started through the pool and asked `tools/list`, all at once, each bounded
 *   by `--timeout-secs`, with its tool count and time; remote ones: the stored sign-in's state;
 * - the tool cache: how many servers in scope had a fresh listing before the servers were started;
 * - the sandbox: a `return 1` script runs;
 * - the last session's log (`<config>/logs/`): its errors and warnings counted, the last error shown.
 *
 * Every line goes through `printable` (a manifest or a server cannot put control characters on the
 * terminal), and only names, states, paths and codes are shown: never a header value, token or
 * expanded `${VAR}`.
 *
 * `--json` prints one document of this stable shape ({@link DoctorReport}):
 *
 * ```json
 * { "schema": 1, "ok": false, "version": "0.9.0",
 *   "checks": [ { "area": "server", "subject": "broken", "state": "fail", "code": "START_FAILED",
 *                 "message": "broken failed to start: ...", "fix": "check its declaration at ...",
 *                 "elapsedMs": 41 } ] }
 * ```
 *
 * `area` is one of `program`, `config`, `workspace`, `problem`, `plugin`, `registry`, `agent`,
 * `sign-in`, `tool-cache`, `server`, `sandbox`, `session`, `log`; `state` one of `ok`, `warn`, `fail`; `fix`, `code`,
 * `elapsedMs` (ms), `toolCount` and `era` appear when known. New areas and fields may be added; none is
 * renamed without a new `schema`.
 *
 * @module
 */
import type { CommandContext } from "./context.ts";
import { printable } from "../diagnostics.ts";
import { denoFileSystem } from "../file_system.ts";
import { maskSecrets } from "../secrets/mod.ts";
import { type LoadedResolution, loadResolution } from "../catalog/resolve.ts";
import { buildStatusReport } from "./status.ts";
import {
  agentChecks,
  configChecks,
  type DoctorCheck,
  type DoctorState,
  projectAgentChecks,
  registryChecks,
  signInChecks,
  toolCacheCheck,
  trustChecks,
} from "./_doctor_checks.ts";
import { probeSandbox, probeServers } from "./_doctor_probes.ts";
import { lastSessionLogCheck } from "./_doctor_log.ts";

export type { DoctorCheck, DoctorState } from "./_doctor_checks.ts";

/** Default deadline of each server's start plus `tools/list`, and of the sandbox script, in ms (10 s). */
export const DOCTOR_TIMEOUT_MS = 10_000;

/** The `--json` document. */
export interface DoctorReport {
  /** The shape's version: 1. */
  schema: 1;
  /** No check failed (warnings allowed): the exit code is 0. */
  ok: boolean;
  /** The program's version. */
  version: string;
  checks: DoctorCheck[];
}

/** Options of {@link runDoctor}. */
export interface DoctorOptions {
  json: boolean;
  /** The program's version (from `deno.json`). */
  version: string;
  /** Deadline of each server and of the sandbox script, in ms. @default DOCTOR_TIMEOUT_MS */
  timeoutMs?: number | undefined;
}

/**
 * Runs every check and prints them (text, or {@link DoctorReport} with `json`). Writes nothing but the tool
 * cache the live listings refresh (no session log: it reads the last one); every server it started is
 * stopped before it returns.
 *
 * @returns 0 when no check failed (warnings allowed), else 1.
 */
export async function runDoctor(options: DoctorOptions, ctx: CommandContext): Promise<number> {
  const timeoutMs = options.timeoutMs ?? DOCTOR_TIMEOUT_MS;
  const checks: DoctorCheck[] = [{
    area: "program",
    subject: "",
    state: "ok",
    message: `cargo-agents ${options.version} (${ctx.execPath})`,
  }];
  const loaded = await loadResolution({
    cwd: ctx.cwd,
    env: ctx.env,
    homeDir: ctx.homeDir,
    configDir: ctx.configDir,
  });
  const report = await buildStatusReport(loaded, denoFileSystem, { env: ctx.env });
  checks.push(...configChecks(report), ...trustChecks(loaded), ...registryChecks(report));
  const [agents, projectAgents, live] = await Promise.all([
    agentChecks(ctx),
    projectAgentChecks(ctx),
    liveChecks(loaded, ctx, timeoutMs),
  ]);
  checks.push(
    ...agents,
    ...projectAgents,
    ...signInChecks(report),
    ...toolCacheCheck(report),
    ...live,
    ...await lastSessionLogCheck(loaded.configDir),
  );
  // A server's stderr tail may echo what it was given: every secret this process expanded is masked.
  for (const c of checks) {
    c.message = maskSecrets(c.message);
    if (c.fix !== undefined) c.fix = maskSecrets(c.fix);
  }
  const ok = checks.every((c) => c.state !== "fail");
  if (options.json) {
    const doc: DoctorReport = { schema: 1, ok, version: options.version, checks };
    ctx.writeOut(JSON.stringify(doc, null, 2) + "\n");
  } else ctx.writeOut(renderDoctorText(checks));
  return ok ? 0 : 1;
}

/** The servers and the sandbox, in one session (closed before this returns). */
async function liveChecks(
  loaded: LoadedResolution,
  ctx: CommandContext,
  timeoutMs: number,
): Promise<DoctorCheck[]> {
  let first: LoadedResolution | undefined = loaded;
  const load = (o: Parameters<typeof loadResolution>[0]) => {
    const reuse = first;
    first = undefined;
    return reuse ? Promise.resolve(reuse) : loadResolution(o);
  };
  let session;
  try {
    const { openSession } = await import("./_session.ts");
    session = await openSession(ctx, { stderrLevel: "error", noLogFile: true, load });
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown; hint?: unknown };
    return [{
      area: "session",
      subject: "",
      state: "fail",
      code: typeof e.code === "string" ? e.code : undefined,
      message: `cannot open a session: ${typeof e.message === "string" ? e.message : String(error)}`,
      fix: typeof e.hint === "string" ? e.hint : "run `cargo agents mcp tools -v` for the cause",
    }];
  }
  try {
    const [servers, sandbox] = await Promise.all([
      probeServers(session, timeoutMs, ctx.signal),
      probeSandbox(session, timeoutMs, ctx.signal),
    ]);
    return [...servers, sandbox];
  } finally {
    await session.close();
  }
}

const MARKS: Record<DoctorState, string> = { ok: "\u2713", warn: "!", fail: "\u2717" };

/** The text form: one line per check, its fix indented below, then a summary line. Every line printable. */
export function renderDoctorText(checks: readonly DoctorCheck[]): string {
  const lines: string[] = [];
  for (const c of checks) {
    lines.push(printable(`${MARKS[c.state]} ${c.area}${c.subject ? ` ${c.subject}` : ""}: ${c.message}`));
    if (c.fix !== undefined && c.state !== "ok") lines.push(printable(`    fix: ${c.fix}`));
  }
  const failed = checks.filter((c) => c.state === "fail").length;
  const warned = checks.filter((c) => c.state === "warn").length;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  lines.push(
    "",
    failed === 0
      ? `All is well${warned > 0 ? ` (${plural(warned, "warning")})` : ""}.`
      : `${plural(failed, "problem")}${warned > 0 ? `, ${plural(warned, "warning")}` : ""}: ` +
        "fix the \u2717 lines above and run `cargo agents doctor` again.",
  );
  return lines.join("\n") + "\n";
}
