/**
 * The HTML page of `cargo agents report` (private to `lib/commands/`): one self-contained file (inline CSS,
 * no script, no font, no image, a Content-Security-Policy that allows nothing else), so opening it makes
 * no request. Every string from the log is HTML-escaped: a script text or a tool name is data, never markup.
 *
 * @module
 */
import type { ExecuteRecord, SessionRecords, TracedCall } from "../meta_server/trace_record.ts";

/** What the page shows. */
export interface ReportPage {
  /** The session's id (its log file's name without `.log`). */
  sessionId: string;
  records: SessionRecords;
  /** When the page was written, ISO 8601. */
  generatedAt: string;
}

/** The page's policy: nothing may load; inline styles only (no script runs, even one smuggled in). */
export const REPORT_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/** The end of the page's `<title>`: how `report` knows an existing `--out` file is a page it wrote. */
export const REPORT_TITLE_SUFFIX = " · cargo agents report";

/** `text` safe as HTML text and as a double- or single-quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const NUMBER = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });
/** A number as the page shows it: `12,345.6`. */
const fmt = (n: number) => NUMBER.format(n);
/** A number in an element the tests (and a reader's tools) find by `data-k`. */
const field = (key: string, n: number) => `<span data-k="${key}">${fmt(n)}</span>`;
/** Bytes kept out of the agent's context: from servers minus what the agent got, never below 0. */
const keptOut = (t: { bytesFromServers: number; bytesToAgent: number }) =>
  Math.max(0, t.bytesFromServers - t.bytesToAgent);

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:16px 24px}header h1{margin:0 0 6px;font-size:20px}
.totals{display:flex;flex-wrap:wrap;gap:8px 24px;margin:0}.totals div{white-space:nowrap}
.totals dt{display:inline;opacity:.75}.totals dd{display:inline;margin:0 0 0 6px;font-weight:600}
main{padding:16px 24px;max-width:1200px}
section.execute{background:#fff;border:1px solid #d9dde5;border-radius:8px;margin:0 0 20px;padding:12px 16px}
section.execute h2{font-size:16px;margin:0 0 8px}.ok{color:#137333}.err{color:#b3261e}
pre{background:#f1f3f6;padding:8px;overflow:auto;max-height:320px;white-space:pre-wrap;word-break:break-all}
.timeline{margin:10px 0;border-left:1px solid #9aa3b2;position:relative}
.axis{position:relative;height:18px;font-size:11px;color:#5f6775;margin-left:220px;border-bottom:1px solid #9aa3b2}
.axis span{position:absolute;transform:translateX(-50%);white-space:nowrap}
.axis span:first-child{transform:none}.axis span:last-child{transform:translateX(-100%)}.row{display:flex;align-items:center;height:18px}
.row .name{width:212px;padding-right:8px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-size:12px}
.lane{position:relative;flex:1;height:12px;background:repeating-linear-gradient(90deg,#fff 0 24.9%,#eceef2 25% 25.2%)}
.bar{position:absolute;top:0;height:12px;min-width:2px;border-radius:2px;background:#3b6fd8}.bar.failed{background:#c5362c}
table{border-collapse:collapse;width:100%;font-size:12px;margin-top:8px}
th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #eceef2}td.n,th.n{text-align:right}
.note{color:#5f6775;font-size:12px}
`;

/** The whole page. */
export function renderReportHtml(page: ReportPage): string {
  const { records } = page;
  const executes = [...records.executes].sort((a, b) => a.startedAtEpochMs - b.startedAtEpochMs);
  const sum = (pick: (e: ExecuteRecord) => number) => executes.reduce((n, e) => n + pick(e), 0);
  const totals = {
    bytesFromServers: sum((e) => e.trace.totals.bytesFromServers),
    bytesToAgent: sum((e) => e.trace.totals.bytesToAgent),
  };
  const title = `Session ${page.sessionId}`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}${REPORT_TITLE_SUFFIX}</title>
<style>${STYLE}</style></head>
<body><header><h1>${escapeHtml(title)}</h1>
<dl class="totals" data-session>
<div><dt>started</dt><dd>${escapeHtml(records.startedAt ?? "unknown")}</dd></div>
<div><dt>agent</dt><dd>${escapeHtml(records.agent ?? "unknown")}</dd></div>
<div><dt>executes</dt><dd>${field("executes", executes.length)}</dd></div>
<div><dt>tool calls</dt><dd>${field("calls", sum((e) => e.trace.totals.calls))}</dd></div>
<div><dt>failed calls</dt><dd>${field("errors", sum((e) => e.trace.totals.errors))}</dd></div>
<div><dt>time in executes</dt><dd>${field("ms", sum((e) => e.trace.totals.ms))} ms</dd></div>
<div><dt>bytes from servers</dt><dd>${field("from", totals.bytesFromServers)}</dd></div>
<div><dt>bytes to the agent</dt><dd>${field("to", totals.bytesToAgent)}</dd></div>
<div><dt>kept out of the agent's context</dt><dd>${
    field("kept", sum((e) => keptOut(e.trace.totals)))
  } bytes</dd></div>
</dl></header>
<main>
${executes.length === 0 ? '<p class="note">This session ran no execute.</p>' : ""}
${executes.map((e, i) => renderExecute(e, i + 1)).join("\n")}
${
    records.unreadableLines > 0
      ? `<p class="note">${fmt(records.unreadableLines)} record line(s) of the log could not be read.</p>`
      : ""
  }
<p class="note">Written ${escapeHtml(page.generatedAt)} by cargo agents report from the session log. Sizes are
UTF-8 bytes of JSON; the log keeps names and sizes, never argument or result values.</p>
</main></body></html>
`;
}

/** One execute: its numbers, its script, the timeline of its calls and their table. */
function renderExecute(e: ExecuteRecord, index: number): string {
  const t = e.trace.totals;
  const isOk = e.outcome === "ok";
  const started = e.startedAtEpochMs > 0 ? new Date(e.startedAtEpochMs).toISOString() : "unknown";
  const cut = e.isScriptCut ? `, cut at ${fmt(e.script.length)}` : "";
  // HTML drops a newline right after `<pre>`: one is given, so a script's own first newline is kept.
  return `<section class="execute" data-id="${escapeHtml(e.id)}" data-outcome="${escapeHtml(e.outcome)}">
<h2>Execute ${index} · <span class="${isOk ? "ok" : "err"}">${escapeHtml(e.outcome)}</span> · ${
    field("ms", t.ms)
  } ms</h2>
<dl class="totals">
<div><dt>started</dt><dd>${escapeHtml(started)}</dd></div>
<div><dt>tool calls</dt><dd>${field("calls", t.calls)}</dd></div>
<div><dt>failed</dt><dd>${field("errors", t.errors)}</dd></div>
<div><dt>bytes from servers</dt><dd>${field("from", t.bytesFromServers)}</dd></div>
<div><dt>bytes to the agent</dt><dd>${field("to", t.bytesToAgent)}</dd></div>
<div><dt>kept out of context</dt><dd>${field("kept", keptOut(t))} bytes</dd></div>
<div><dt>trace asked</dt><dd>${e.traced ? "yes" : "no"}</dd></div>
</dl>
<details open><summary>Script (${fmt(e.scriptChars)} characters${cut})</summary>
<pre data-k="script">\n${escapeHtml(e.script)}</pre></details>
${renderTimeline(e.trace.calls, t.ms)}
${
    e.trace.omittedCalls > 0
      ? `<p class="note"><span data-k="omitted">${
        fmt(e.trace.omittedCalls)
      }</span> more call(s) past the first ${fmt(e.trace.calls.length)} are counted above, not shown.</p>`
      : ""
  }
</section>`;
}

/** Bars on a time axis from 0 to the execute's duration: calls that overlap (`Promise.all`) overlap here. */
function renderTimeline(calls: TracedCall[], totalMs: number): string {
  if (calls.length === 0) return '<p class="note">No tool calls.</p>';
  const spanMs = Math.max(totalMs, ...calls.map((c) => c.startMs + c.ms), 1);
  const pct = (ms: number) => `${Math.min(100, Math.max(0, (ms / spanMs) * 100)).toFixed(2)}%`;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) =>
    `<span style="left:${f * 100}%">${fmt(f * spanMs)} ms</span>`
  ).join("");
  const rows = calls.map((c) => {
    const name = escapeHtml(`${c.server}.${c.tool}`);
    const status = c.ok ? "ok" : escapeHtml(c.error ?? "FAILED");
    const tip = `${name}: starts at ${fmt(c.startMs)} ms, takes ${fmt(c.ms)} ms, ${status}`;
    return `<div class="row"><div class="name" title="${name}">${name}</div><div class="lane"><div class="bar${
      c.ok ? "" : " failed"
    }" style="left:${pct(c.startMs)};width:${
      pct(c.ms)
    }" title="${tip}" data-start="${c.startMs}" data-ms="${c.ms}"></div></div></div>`;
  }).join("\n");
  const table = calls.map((c, i) =>
    `<tr><td class="n">${i + 1}</td><td>${escapeHtml(c.server)}</td><td>${
      escapeHtml(c.tool)
    }</td><td class="n">${fmt(c.startMs)}</td><td class="n">${fmt(c.ms)}</td><td class="n">${
      fmt(c.argsBytes)
    }</td><td class="n">${fmt(c.resultBytes)}</td><td class="${c.ok ? "ok" : "err"}">${
      c.ok ? "ok" : escapeHtml(c.error ?? "FAILED")
    }</td></tr>`
  ).join("\n");
  return `<div class="timeline"><div class="axis">${ticks}</div>
${rows}</div>
<details${calls.length <= 20 ? " open" : ""}><summary>Calls (${fmt(calls.length)})</summary>
<table><thead><tr><th class="n">#</th><th>server</th><th>tool</th><th class="n">start (ms)</th><th class="n">took (ms)</th>
<th class="n">argument bytes</th><th class="n">result bytes</th><th>status</th></tr></thead>
<tbody>${table}</tbody></table></details>`;
}
