/**
 * The short table `sync` prints: one row per agent file with what happened, then a count.
 *
 * @module
 */
import { displayPath } from "./platform_paths.ts";
import type { AgentListing, SyncOutcome, SyncStatus } from "./sync_agents.ts";

/** Options of {@link renderSyncReport}. */
export interface ReportOptions {
  /** Shown as `~` in paths; `""` shows paths in full. */
  homeDir: string;
  /** Word the results as what would happen. @default false */
  dryRun?: boolean;
}

const DRY_RUN_WORDS: Partial<Record<SyncStatus, string>> = {
  written: "would write",
  removed: "would remove",
};

/**
 * Renders the outcomes as an aligned table, e.g.
 *
 * ```
 * agent           result     details
 * Claude Code     written    ~/.claude.json (added the entry)
 * Cursor          unchanged  ~/.cursor/mcp.json (already registered)
 * Windsurf        skipped    not detected (no ~/.codeium/windsurf, no windsurf on PATH)
 * Zed             error      ~/.config/zed/settings.json:4:3 (invalid JSONC: expected a comma)
 *
 * 1 written, 1 unchanged, 1 skipped, 1 error
 * ```
 *
 * @returns The text, ending with a newline.
 */
export function renderSyncReport(outcomes: readonly SyncOutcome[], options: ReportOptions): string {
  const rows = outcomes.map((
    o,
  ) => [o.agentName, resultWord(o.status, options.dryRun === true), describe(o, options)]);
  const header = ["agent", "result", "details"];
  const widths = [0, 1].map((i) => Math.max(header[i]!.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]}`.trimEnd();
  const counts = new Map<SyncStatus, number>();
  for (const o of outcomes) counts.set(o.status, (counts.get(o.status) ?? 0) + 1);
  const order: SyncStatus[] = ["written", "removed", "unchanged", "skipped", "error"];
  const summary = order.filter((s) => counts.has(s)).map((s) => {
    const n = counts.get(s)!;
    const word = s === "error" ? (n === 1 ? "error" : "errors") : resultWord(s, options.dryRun === true);
    return `${n} ${word}`;
  });
  const tail = options.dryRun === true ? " (dry run: nothing was written)" : "";
  return [line(header), ...rows.map(line), "", (summary.join(", ") || "nothing to do") + tail].join("\n") +
    "\n";
}

function resultWord(status: SyncStatus, dryRun: boolean): string {
  return (dryRun ? DRY_RUN_WORDS[status] : undefined) ?? status;
}

function describe(o: SyncOutcome, options: ReportOptions): string {
  if (o.file === undefined) return o.detail;
  const loc = o.error?.location;
  const where = displayPath(o.file, options.homeDir) +
    (loc === undefined ? "" : `:${loc.line}:${loc.column}`);
  if (o.status !== "error") return `${where} (${o.detail})`;
  // The message repeats the path ('Cannot read "<file>": ...'): keep only what follows it.
  const reason = o.detail.replace(/^Cannot [^:]*"[^"]*": /, "");
  return `${where} (${reason})`;
}

/**
 * Renders `sync --list`: one block per agent, e.g.
 *
 * ```
 * claude-code     Claude Code     detected      ~/.claude exists
 *                                 file          ~/.claude.json
 * windsurf        Windsurf        not detected  no ~/.codeium/windsurf, no windsurf on PATH
 *                                 file          ~/.codeium/windsurf/mcp_config.json
 *
 * 1 of 2 agents detected; `cargo-agents sync` writes the detected ones, `--agent ID` any of them
 * ```
 *
 * @param options.homeDir Shown as `~` in paths; `""` shows paths in full.
 * @returns The text, ending with a newline.
 */
export function renderAgentList(rows: readonly AgentListing[], options: { homeDir: string }): string {
  const idWidth = Math.max(2, ...rows.map((r) => r.agent.id.length));
  const nameWidth = Math.max(4, ...rows.map((r) => r.agent.name.length));
  const pad = " ".repeat(idWidth + nameWidth + 4);
  const lines = [
    `${"id".padEnd(idWidth)}  ${"name".padEnd(nameWidth)}  ${"detected".padEnd(12)}  why / files`,
  ];
  for (const r of rows) {
    const state = r.isDetected ? "detected" : "not detected";
    lines.push(
      `${r.agent.id.padEnd(idWidth)}  ${r.agent.name.padEnd(nameWidth)}  ${state.padEnd(12)}  ${r.reason}`,
    );
    const files = r.files.length === 0 ? ["(no project-level file)"] : r.files;
    for (const f of files) {
      lines.push(`${pad}${"file".padEnd(12)}  ${displayPath(f, options.homeDir)}`.trimEnd());
    }
  }
  const detected = rows.filter((r) => r.isDetected).length;
  lines.push(
    "",
    `${detected} of ${rows.length} agents detected; \`cargo-agents sync\` writes the detected ones, ` +
      "`--agent ID` any of them",
  );
  return lines.join("\n") + "\n";
}
