/**
 * `cargo agents report` (`lib/commands/report.ts`) on session logs written by the real logger, and its
 * page (`lib/commands/_report_html.ts`). The page in a browser: `tests/e2e/trace_e2e_test.ts`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createLogger } from "../../lib/log.ts";
import { CallTrace } from "../../lib/meta_server/call_trace.ts";
import { logExecuteRecord, parseSessionLog } from "../../lib/meta_server/trace_record.ts";
import { runReport } from "../../lib/commands/report.ts";
import { escapeHtml, renderReportHtml } from "../../lib/commands/_report_html.ts";
import type { CommandContext } from "../../lib/commands/context.ts";
import { UsageError, UserError } from "../../lib/diagnostics.ts";
import { runMain } from "../_fakes_foundation.ts";

const HOSTILE = `</pre><script>alert("x")</script><img src=x onerror=alert(1)>'"&`;

/** A session log in `<home>/logs` named `name`, with one record per script (a call each). */
async function writeSession(home: string, name: string, scripts: string[], tool = "echo"): Promise<void> {
  const logger = createLogger({ logDir: join(home, "logs"), sessionName: name, coalesceMs: 0 });
  logger.info("agent: test-agent 1.0");
  for (const [i, script] of scripts.entries()) {
    const trace = new CallTrace();
    const request = { namespace: "srv", key: tool, args: {} };
    const call = trace.begin(request);
    trace.end(call, { server: "srv", tool });
    trace.replied(request, "{}", '"abc"');
    const done = trace.finish({ content: [{ type: "text", text: "{}" }] });
    logExecuteRecord(logger, {
      id: `0000000${i}`,
      script,
      outcome: "ok",
      traced: false,
      startedAtEpochMs: 1_700_000_000_000 + i,
    }, done);
  }
  await logger.close();
}

function context(home: string, out: string[] = []): CommandContext {
  return {
    env: { SYMPOSIUM_HOME: home },
    cwd: home,
    homeDir: home,
    execPath: Deno.execPath(),
    selfCommand: { command: Deno.execPath(), args: [] },
    verbose: false,
    writeOut: (text) => void out.push(text),
    writeErr: () => {},
    signal: new AbortController().signal,
  };
}

Deno.test("renderReportHtml() escapes every string from the log and allows nothing to load", async () => {
  const home = await Deno.makeTempDir({ prefix: "report-" });
  try {
    await writeSession(home, "2026-01-01T00-00-00-000Z-1.log", [HOSTILE], HOSTILE);
    const records = parseSessionLog(
      await Deno.readTextFile(join(home, "logs", "2026-01-01T00-00-00-000Z-1.log")),
    );
    const html = renderReportHtml({ sessionId: HOSTILE, records, generatedAt: HOSTILE });
    assert.ok(!/<script|<img|onerror=alert\(1\)>/i.test(html), "markup from the log reached the page");
    assert.ok(html.includes(escapeHtml(HOSTILE)));
    assert.match(
      html,
      /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'/,
    );
    const own = html.replaceAll(escapeHtml(HOSTILE), "");
    assert.ok(!/\b(?:src|href)=/i.test(own), "the page names something to load");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("runReport() takes the newest session that ran an execute, writes the page privately and opens it", async () => {
  const home = await Deno.makeTempDir({ prefix: "report-" });
  try {
    await writeSession(home, "2026-01-01T00-00-00-000Z-1.log", ["return 'older'"]);
    await writeSession(home, "2026-01-02T00-00-00-000Z-2.log", ["return 'newest with an execute'"]);
    await writeSession(home, "2026-01-03T00-00-00-000Z-3.log", []); // `mcp tools`: no execute
    const out: string[] = [];
    const opened: string[] = [];
    assert.equal(
      await runReport({ open: true, openUrl: (url) => opened.push(url) > 0 }, context(home, out)),
      0,
    );
    const page = join(home, "reports", "2026-01-02T00-00-00-000Z-2.html");
    assert.deepEqual(out, [`${page}\n`]);
    assert.deepEqual(opened, [`file://${page}`]);
    assert.equal((await Deno.stat(page)).mode! & 0o777, 0o600);
    assert.match(await Deno.readTextFile(page), /return &#39;newest with an execute&#39;/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("runReport() --out never replaces a file that is not a report page; an earlier page it replaces", async () => {
  const home = await Deno.makeTempDir({ prefix: "report-" });
  try {
    await writeSession(home, "2026-01-02T00-00-00-000Z-2.log", ["return 1"]);
    const precious = join(home, "Cargo.toml");
    await Deno.writeTextFile(precious, '[package]\nname = "mine"\n');
    await assert.rejects(runReport({ out: "Cargo.toml" }, context(home)), (e: unknown) => {
      return e instanceof UserError && e.code === "REPORT_OUT_EXISTS" && e.message.includes(precious);
    });
    assert.equal(await Deno.readTextFile(precious), '[package]\nname = "mine"\n');
    await assert.rejects(runReport({ out: "." }, context(home)), (e: unknown) => {
      return e instanceof UserError && e.code === "REPORT_OUT_EXISTS";
    });
    assert.equal(await runReport({ out: "page.html" }, context(home)), 0);
    assert.equal(await runReport({ out: "page.html" }, context(home)), 0); // its own page: replaced
    assert.match(await Deno.readTextFile(join(home, "page.html")), /return 1/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("runReport() says why when there is no session, no execute, or no such session", async () => {
  const home = await Deno.makeTempDir({ prefix: "report-" });
  try {
    await assert.rejects(runReport({}, context(home)), (e: unknown) => {
      return e instanceof UserError && e.code === "REPORT_NO_EXECUTES" && /no session log in/.test(e.message);
    });
    await writeSession(home, "2026-01-03T00-00-00-000Z-3.log", []);
    await assert.rejects(runReport({}, context(home)), (e: unknown) => {
      return e instanceof UserError && e.code === "REPORT_NO_EXECUTES" &&
        /none of the 1 session logs/.test(e.message);
    });
    await assert.rejects(
      runReport({ session: "2026-01-09T00-00-00-000Z-9" }, context(home)),
      (e: unknown) => {
        return e instanceof UserError && e.code === "REPORT_NO_SESSION" &&
          /2026-01-03T00-00-00-000Z-3/.test(e.hint ?? "");
      },
    );
    await assert.rejects(runReport({ session: "../../etc/passwd" }, context(home)), UsageError);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("report --help shows examples, and --last with --session is a usage error", async () => {
  const home = await Deno.makeTempDir({ prefix: "report-" });
  try {
    const help = await runMain(["report", "--help"], { cwd: home, env: { SYMPOSIUM_HOME: home } });
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Examples:\n {2}cargo agents report --open/);
    const both = await runMain(["report", "--last", "--session", "x"], {
      cwd: home,
      env: { SYMPOSIUM_HOME: home },
    });
    assert.equal(both.code, 2);
    assert.match(both.stderr, /Cannot use --last with --session/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
