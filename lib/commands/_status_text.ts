/**
 * The text form of `status` (private to `lib/commands/`): sections Config, Workspace, Sources,
 * Plugins, Problems.
 *
 * @module
 */
import { join } from "node:path";
import { printable, renderDiagnostic, UserError } from "../diagnostics.ts";
import { CONFIG_FILE_NAME } from "../plugins/config.ts";
import { USER_PLUGINS_SOURCE } from "../plugins/mod.ts";
import type { ToolCacheState } from "../catalog/tool_cache.ts";
import { envText } from "./_status_checks.ts";
import { sourceLabel, sourceLine } from "./_status_sources.ts";
import type { StatusReport, StatusServer } from "./_status_types.ts";

/** `42 s`, `5 min`, `3 h`, `2 d`. */
function ageText(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}

/** The era line of a server that applies. */
const ERA_TEXT = {
  modern: "protocol: modern (MCP 2026-07-28: server/discover, no initialize)",
  legacy: "protocol: legacy (initialize, MCP 2025-11-25 or earlier)",
  unknown: "protocol: not known yet (probed with server/discover at its next start)",
} as const;

/** The tool-cache line of a server that applies. */
function toolCacheText(cache: ToolCacheState): string {
  switch (cache.state) {
    case "fresh":
      return `tool cache: fresh (${cache.toolCount} tools, listed ${
        ageText(cache.ageMs)
      } ago; list_tools answers without starting the server)`;
    case "stale":
      return `tool cache: stale (listed ${ageText(cache.ageMs)} ago; the server starts for list_tools)`;
    default:
      return "tool cache: none (the server starts for list_tools)";
  }
}

/**
 * The observed-results line of a server that applies: how many of its cached tools without an
 * `outputSchema` (the only ones learned) have a learned result shape; none without a tool cache (nothing is
 * known of its tools yet).
 */
function observedText(cache: ToolCacheState, isObserving: boolean | undefined): string | undefined {
  if (isObserving === false) return "result shapes: not observed (observe-results = false)";
  if (cache.state === "none") return undefined;
  const declaring = cache.toolCount - cache.learnableCount;
  if (cache.learnableCount === 0) {
    return `result shapes: none to learn (every tool declares an outputSchema)`;
  }
  const declared = declaring > 0
    ? `; ${declaring} more ${declaring === 1 ? "declares" : "declare"} an outputSchema`
    : "";
  return `result shapes: ${cache.shapeCount} of ${cache.learnableCount} tools without an outputSchema ` +
    `learned from their answers${declared}`;
}

/** The sign-in line of a remote server (never a token). */
function authText(server: StatusServer, nowMs: number): string {
  const hint = server.authHint ? `; ${server.authHint}` : "";
  const expiry = server.authExpiresAt === undefined ? "" : new Date(server.authExpiresAt).toISOString();
  switch (server.auth) {
    case "signed-in":
      return expiry
        ? `signed in (token expires ${expiry}, in ${
          Math.max(0, Math.round((server.authExpiresAt! - nowMs) / 60_000))
        } min)`
        : "signed in";
    case "expired-refreshable":
      return `signed in, token expired ${expiry}; it is refreshed on next use`;
    case "expired":
      return `token expired ${expiry}${hint}`;
    case "header-auth":
      return "authorization header configured";
    default:
      return server.authStored === false
        ? `no stored sign-in (${server.authHint ?? "none needed so far"})`
        : `not signed in${hint}`;
  }
}

/**
 * The text form of {@link StatusReport}: sections Config, Workspace, Plugins, Problems.
 *
 * @param options.nowMs The current time, ms since the epoch (token expiry). @default Date.now()
 */
export function renderStatusText(report: StatusReport, options: { nowMs?: number } = {}): string {
  const nowMs = options.nowMs ?? Date.now();
  const lines: string[] = [];
  lines.push(`Config:    ${report.configDir}${report.configDirPresent ? "" : " (not present)"}`);
  lines.push(
    `           ${CONFIG_FILE_NAME}: ${
      report.configError
        ? "has problems (see Problems): a bad key keeps its default, a syntax error costs the file"
        : report.configFilePresent
        ? "ok"
        : "not present (defaults)"
    }`,
  );
  const ws = report.workspace;
  if (ws.root === null) {
    lines.push('Workspace: none (no Cargo.toml here or above); only depends-on "*" servers apply');
  } else {
    const lock = ws.lockfile ? "Cargo.lock" : "no Cargo.lock yet";
    lines.push(`Workspace: ${ws.root}`);
    lines.push(
      `           ${ws.manifests.length} manifest(s), ${ws.dependencyCount} direct dependencies, ${lock}`,
    );
  }
  if (report.sources.length > 0) {
    lines.push("", "Sources:");
    for (const src of report.sources) lines.push(`  ${sourceLine(src, report)}`);
  }
  lines.push("");
  if (report.plugins.length === 0) {
    lines.push(`Plugins: none loaded from ${join(report.configDir, "plugins")}`);
  } else {
    lines.push(`Plugins (${report.plugins.length}):`);
  }
  for (const plugin of report.plugins) {
    const from = plugin.source === USER_PLUGINS_SOURCE ? "" : ` [${sourceLabel(plugin.source)}]`;
    const trust = plugin.trust === undefined
      ? ""
      : ` (${plugin.trust}${plugin.gitIgnored ? ", git-ignored" : ""})`;
    lines.push(`  ${plugin.name}${from}${trust}  ${plugin.file}`);
    for (
      const server of report.servers.filter((s) =>
        s.plugin === plugin.name && s.source === plugin.source && s.location.file === plugin.file
      )
    ) {
      lines.push(`    ${server.name}: ${server.state} - ${server.reason}`);
      if (server.trustCommand) lines.push(`      to trust it: ${server.trustCommand}`);
      if (server.command !== undefined) {
        const cwd = server.cwd ? ` (in ${server.cwd})` : "";
        lines.push(`      stdio: ${[server.command, ...(server.args ?? [])].map(quoteArg).join(" ")}${cwd}`);
        if (server.envNames) lines.push(`      ${envText(server.envNames, server.missingPassthrough ?? [])}`);
      } else {
        const headers = server.headerNames?.length ? ` [headers: ${server.headerNames.join(", ")}]` : "";
        const sse = server.transport === "sse" ? " (sse)" : "";
        lines.push(`      http${sse}: ${server.url}${headers}`);
        // Signing in cannot help a URL the policy refuses: its state line says what is wrong.
        if (server.auth && !server.endpointRefusal) lines.push(`      ${authText(server, nowMs)}`);
      }
      if (server.toolCache) lines.push(`      ${toolCacheText(server.toolCache)}`);
      if (server.era) lines.push(`      ${ERA_TEXT[server.era]}`);
      const observed = server.toolCache && observedText(server.toolCache, server.observeResults);
      if (observed) lines.push(`      ${observed}`);
    }
  }
  const count = (state: StatusServer["state"]) => report.servers.filter((s) => s.state === state).length;
  lines.push("");
  const untrustedCount = count("untrusted") > 0 ? `, ${count("untrusted")} untrusted` : "";
  lines.push(
    `Servers: ${count("applies")} apply, ${count("dormant")} dormant, ${
      count("refused")
    } refused${untrustedCount}`,
  );
  for (const note of report.notes) lines.push(`  note: ${note}`);
  if (report.problems.length > 0) {
    lines.push("", "Problems:");
    for (const p of report.problems) {
      const location = p.location && { ...p.location, file: printable(p.location.file) };
      const hint = p.hint && printable(p.hint);
      // Each part made printable before rendering: only the diagnostic's own line breaks stay.
      lines.push(
        ...renderDiagnostic(new UserError(printable(p.code), printable(p.message), { hint, location }))
          .split("\n"),
      );
    }
  }
  // Every line is printable: a path, name or reason from a cloned repository cannot write escape codes.
  return lines.map(printable).join("\n") + "\n";
}

function quoteArg(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}
