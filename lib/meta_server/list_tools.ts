/**
 * The `list_tools` tool: reads its arguments and renders the index, declarations and Problems of
 * the servers in scope (also what `cargo-agents mcp tools` prints).
 *
 * @module
 */
import { type Catalog, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, type ServerTools } from "../catalog/mod.ts";
import { cutAtWord, renderIndexInSlices } from "../declarations/mod.ts";
import type { Tool } from "../backends/mod.ts";
import { buildBindingTable, resolveToolKey } from "../declarations/tool_binding.ts";
import { printable } from "../diagnostics.ts";
import { namespaceKey } from "../plugins/mod.ts";
import {
  configProblemLines,
  describeRefusal,
  dormantLines,
  sourceTag,
  untrustedIndexLines,
} from "./_problems.ts";
import { compileGlob, GlobError, type GlobMatcher } from "../glob.ts";
import {
  boundedDeclarations,
  byteLength,
  DECLARATIONS_MAX_BYTES,
  LIST_TOOLS_MAX_BYTES,
  summarizeIndex,
} from "./_bounded.ts";
import { renderSearchAnswer } from "./_search_answer.ts";
import type { SessionStore } from "./session_store.ts";
import { sessionDeclaration, sessionIndexLine } from "./_session_listing.ts";
import type { SavedScript } from "./saved_scripts.ts";
import {
  listSavedScripts,
  renderSavedScriptHits,
  renderSavedScriptsDeclarations,
  renderSavedScriptsIndex,
  type SavedScriptsSource,
  searchSavedScripts,
} from "./_saved_script_index.ts";
import { SCRIPTS_GLOBAL } from "../sandbox/mod.ts";

export { DECLARATIONS_MAX_BYTES, LIST_TOOLS_MAX_BYTES } from "./_bounded.ts";

/** A parsed `list_tools` request. */
export interface ListToolsQuery {
  servers?: string[] | undefined;
  tools?: string[] | undefined;
  pattern?: string | undefined;
  detail?: "names" | "signatures" | "full" | undefined;
  /** Ranked search: the best tools for these words (see `_search_answer.ts`). */
  query?: string | undefined;
  /** Most search results (1...50). @default 10 */
  limit?: number | undefined;
  /** Arguments not used as given (wrong type, out of range): shown under `Problems:`. */
  problems?: string[] | undefined;
}

/**
 * Reads `list_tools` arguments. Unknown keys are ignored; an argument of the wrong type or out of
 * range is not silently dropped: it is replaced by its default and a line in `problems` names the
 * argument, what it expects and what was used instead (shown under `Problems:`). Rules:
 * `servers`/`tools` arrays of strings (non-string items dropped, said so); `pattern` a string;
 * `detail` one of `names`/`signatures`/`full`; `query` a string (blank means none); `limit` a whole
 * number 1...{@link SEARCH_MAX_LIMIT} or a numeric string (default {@link SEARCH_DEFAULT_LIMIT}).
 *
 * @param args The raw `arguments` of the tool call (any JSON value; non-objects mean `{}`).
 * @returns The query; `problems` is set only when some argument was not used as given.
 */
export function parseListToolsArgs(args: unknown): ListToolsQuery {
  const a = (typeof args === "object" && args !== null && !Array.isArray(args) ? args : {}) as Record<
    string,
    unknown
  >;
  const problems: string[] = [];
  const got = (v: unknown) => {
    const shown = typeof v === "string" ? JSON.stringify(cutAtWord(v, 60)) : JSON.stringify(v) ?? String(v);
    return `${Array.isArray(v) ? "an array" : v === null ? "null" : `a ${typeof v}`} (${
      cutAtWord(shown, 80)
    })`;
  };
  const present = (key: string) => Object.hasOwn(a, key) && a[key] !== undefined;
  const list = (key: "servers" | "tools") => {
    if (!present(key)) return undefined;
    const v = a[key];
    if (!Array.isArray(v)) {
      problems.push(`\`${key}\`: expected an array of strings, got ${got(v)}; ignored it (no ${key} filter)`);
      return undefined;
    }
    const names = v.filter((x): x is string => typeof x === "string");
    if (names.length < v.length) {
      problems.push(
        `\`${key}\`: expected an array of strings; ignored ${
          v.length - names.length
        } item(s) that are not strings`,
      );
    }
    return names;
  };
  const servers = list("servers");
  const tools = list("tools");
  let pattern: string | undefined;
  if (present("pattern")) {
    if (typeof a.pattern === "string") pattern = a.pattern;
    else {problems.push(
        `\`pattern\`: expected a string glob (\`*\` wildcards), got ${got(a.pattern)}; ignored it`,
      );}
  }
  let detail: ListToolsQuery["detail"];
  if (present("detail")) {
    if (["names", "signatures", "full"].includes(a.detail as string)) {
      detail = a.detail as ListToolsQuery["detail"];
    } else {
      problems.push(
        `\`detail\`: expected one of "names", "signatures", "full", got ${got(a.detail)}; used the default`,
      );
    }
  }
  let query: string | undefined;
  if (present("query")) {
    if (typeof a.query === "string") query = a.query.trim() === "" ? undefined : a.query;
    else problems.push(`\`query\`: expected a string of words, got ${got(a.query)}; ignored it (no search)`);
  }
  let limit: number | undefined;
  if (present("limit")) {
    const v = a.limit;
    const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
    if (Number.isInteger(n) && n >= 1 && n <= SEARCH_MAX_LIMIT) limit = n;
    else if (Number.isFinite(n) && n >= 1) {
      limit = Math.min(SEARCH_MAX_LIMIT, Math.floor(n));
      problems.push(
        `\`limit\`: expected a whole number 1\u2026${SEARCH_MAX_LIMIT}, got ${got(v)}; used ${limit}`,
      );
    } else {
      problems.push(
        `\`limit\`: expected a whole number 1\u2026${SEARCH_MAX_LIMIT}, got ${
          got(v)
        }; used the default ${SEARCH_DEFAULT_LIMIT}`,
      );
    }
  }
  return {
    servers,
    tools,
    pattern,
    detail,
    query,
    limit,
    ...(problems.length > 0 ? { problems } : {}),
  };
}

/**
 * The `pattern` glob (`*` only, matched without a backtracking engine: see `lib/glob.ts`); a glob
 * over `MAX_GLOB_CHARS` matches nothing and says so under Problems.
 */
function patternMatcher(glob: string, problems: string[]): GlobMatcher {
  try {
    return compileGlob(glob, { question: false });
  } catch (error) {
    if (!(error instanceof GlobError)) throw error;
    problems.push(`pattern: ${error.message}; write a shorter glob`);
    return { test: () => false };
  }
}

/**
 * Longest wait for one server's tools in an unfiltered `list_tools`, in ms. A server still
 * starting after it is reported under Problems as still starting (its start goes on, for the
 * next call); a call naming the server in `servers` waits for it as long as its start takes.
 */
export const LIST_TOOLS_UNFILTERED_WAIT_MS = 5_000;

/** Options of {@link renderListTools}. */
export interface RenderListToolsOptions {
  /** Wait per server when `servers` is not given, in ms. @default LIST_TOOLS_UNFILTERED_WAIT_MS */
  unfilteredWaitMs?: number | undefined;
  /**
   * More Problems lines, asked for once the servers were listed (so they see what this answer started),
   * e.g. the `[mcp] direct-tools` ones (`direct_tools.ts`). @default none
   */
  problems?: (() => Promise<readonly string[]>) | undefined;
  /**
   * The agent session's `$session` store: the index names its keys and their sizes, unfiltered
   * declarations declare `$session`. Default: none (nothing about session state is shown).
   */
  session?: SessionStore | undefined;
  /** The session's saved scripts, listed as `scripts` (see `_saved_script_index.ts`). Default: none. */
  savedScripts?: SavedScriptsSource | undefined;
}

/**
 * The text `list_tools` answers (also what `cargo-agents mcp tools` prints). Answers from the
 * tool cache when fresh, else starts the servers it lists; never throws for a failing server:
 * it goes under `Problems:` with its error (stderr tail included). Without a `servers` filter,
 * a server not ready within {@link LIST_TOOLS_UNFILTERED_WAIT_MS} is reported as still starting.
 *
 * With `query`, a ranked search that starts nothing (running servers and fresh caches only).
 * Answers are capped: an index over {@link LIST_TOOLS_MAX_BYTES} becomes a per-server summary;
 * declarations stop at {@link LIST_TOOLS_MAX_BYTES} unfiltered and {@link DECLARATIONS_MAX_BYTES}
 * for named `servers`/`tools`, with a marker naming what was left out.
 */
export async function renderListTools(
  catalog: Catalog,
  query: ListToolsQuery,
  signal?: AbortSignal,
  options: RenderListToolsOptions = {},
): Promise<string> {
  await catalog.refreshIfChanged({ trustWatch: true });
  const problems: string[] = [...query.problems ?? []];
  problems.push(...configProblemLines(catalog), ...catalog.sourceProblems);
  for (const r of catalog.refused) problems.push(describeRefusal(r));
  if (catalog.servers.length === 0 && catalog.refused.length === 0) {
    return ["No MCP servers apply to this workspace.", ...dormantLines(catalog)].join("\n");
  }
  const narrowed = query.servers !== undefined || query.tools !== undefined;
  // Naming servers or tools implies full declarations, unless `detail` was given: what is asked for wins.
  const detail = query.detail ?? (narrowed ? "full" : "names");
  const wanted = query.servers?.filter((name) => name !== SCRIPTS_GLOBAL);
  const saved = options.savedScripts === undefined
    ? undefined
    : await listSavedScripts(options.savedScripts, catalog);
  problems.push(...saved?.problems ?? []);
  const scriptsShown = query.servers === undefined || query.servers.includes(SCRIPTS_GLOBAL)
    ? selectScripts(saved?.set.usable ?? [], query)
    : [];
  const chosen = catalog.servers.filter((s) =>
    wanted === undefined || wanted.includes(s.name) || wanted.includes(namespaceKey(s.name))
  );
  for (const name of wanted ?? []) {
    if (!catalog.servers.some((s) => s.name === name || namespaceKey(s.name) === name)) {
      const unavailable = catalog.unavailableReason(name);
      if (unavailable !== undefined) {
        // A refused server is already under Problems with its reason; a dormant one is explained here.
        if (catalog.dormant.some((d) => d.server === name || namespaceKey(d.server) === name)) {
          problems.push(unavailable);
        }
        continue;
      }
      problems.push(
        `no server named \`${name}\`. Available: ${catalog.servers.map((s) => s.name).join(", ") || "none"}`,
      );
    }
  }
  const pattern = query.pattern === undefined ? undefined : patternMatcher(query.pattern, problems);
  if (query.query !== undefined) {
    const servers = wanted === undefined ? undefined : new Set(chosen.map((s) => s.name));
    problems.push(...await options.problems?.() ?? []);
    const hits = renderSavedScriptHits(
      searchSavedScripts(scriptsShown, query.query, Math.min(5, query.limit ?? SEARCH_DEFAULT_LIMIT)),
      query.query,
    );
    const answer = await renderSearchAnswer(catalog, {
      query: query.query,
      limit: query.limit,
      servers,
      tools: query.tools,
      pattern,
      withSignatures: query.detail !== "names",
    }, problems);
    return hits === "" ? answer : `${hits}\n\n${answer}`;
  }
  const waitMs = wanted === undefined ? options.unfilteredWaitMs ?? LIST_TOOLS_UNFILTERED_WAIT_MS : undefined;
  const listed = await Promise.all(chosen.map(async (spec) => {
    try {
      if (waitMs === undefined) return await catalog.listServerTools(spec, signal ? { signal } : {});
      // Not tied to this request's signal: a start outlives the bounded wait, for the next call.
      const listing = catalog.listServerTools(spec);
      listing.catch(() => {}); // A late failure is seen by the next call (under Problems then).
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), waitMs)));
      try {
        const first = await Promise.race([listing, late]);
        if (first !== "late") return first;
      } finally {
        clearTimeout(timer);
      }
      problems.push(`\`${spec.name}\`: still starting; call list_tools again or name it in \`servers\``);
      return undefined;
    } catch (error) {
      problems.push(
        `\`${spec.name}\`${sourceTag(spec.source)}: ${
          error instanceof Error ? error.message : String(error)
        }`,
      );
      return undefined;
    }
  }));
  problems.push(...await options.problems?.() ?? []);
  const shown: { entry: ServerTools; shown: Tool[] }[] = [];
  for (const entry of listed) {
    if (!entry) continue;
    problems.push(...entry.warnings);
    const tools = selectTools(entry, query, pattern);
    if (tools.length === 0) {
      if (query.tools === undefined && pattern === undefined && entry.hiddenCount > 0) {
        problems.push(`\`${entry.spec.name}\`: no tools visible (${entry.hiddenCount} hidden by filters)`);
      }
      if (query.tools !== undefined || pattern !== undefined) continue;
    }
    shown.push({ entry, shown: tools });
  }
  if (shown.length === 0 && (query.tools !== undefined || pattern !== undefined)) {
    const searched = listed.filter((e) => e !== undefined);
    if (searched.length > 0) problems.unshift(nothingMatched(query, searched));
  }
  let body: string;
  if (detail === "names") {
    const indexes: string[] = [];
    for (const s of shown) indexes.push(await renderIndexInSlices(s.entry.spec.name, s.shown));
    const scriptsIndex = renderSavedScriptsIndex(scriptsShown);
    body = [...indexes, ...(scriptsIndex === "" ? [] : [scriptsIndex]), ...untrustedIndexLines(catalog)].join(
      "\n",
    );
    // What the session kept stays in view even when the index becomes a summary.
    const kept = options.session ? sessionIndexLine(options.session, catalog.workspace.root ?? "") : "";
    const room = LIST_TOOLS_MAX_BYTES - problems.reduce((n, p) => n + byteLength(p) + 3, 12) -
      byteLength(kept);
    const bytes = byteLength(body);
    if (bytes > room) {
      body = summarizeIndex(shown.map((s) => ({ server: s.entry.spec.name, tools: s.shown })), bytes, room);
    }
    if (kept !== "") body = body === "" ? kept : `${body}\n${kept}`;
  } else {
    // Bound over every visible tool, not the filtered subset, so the declared keys are exactly
    // the keys `execute` resolves (aliases depend on the whole set).
    // Unfiltered declarations end with `$session`'s, within the same cap.
    options.session?.bindWorkspace(catalog.workspace.root ?? "");
    const session = options.session && !narrowed ? `\n\n${sessionDeclaration(options.session)}` : "";
    const rendered = boundedDeclarations(
      shown,
      detail,
      (narrowed ? DECLARATIONS_MAX_BYTES : LIST_TOOLS_MAX_BYTES) - byteLength(session),
    );
    const scriptsDeclared = renderSavedScriptsDeclarations(scriptsShown, detail === "full");
    body = [rendered.text, scriptsDeclared].filter((t) => t !== "").join("\n\n") + session;
    problems.push(...rendered.warnings);
  }
  if (body === "" && problems.length === 0) return "No tools matched.";
  const parts = [body];
  // Every line escaped here, once for all its sources: a server's stderr tail, a reason from a file
  // or an argument cannot break a line (forging one the agent reads) nor send a terminal code.
  if (problems.length > 0) parts.push(`Problems:\n${problems.map((p) => `  ${printable(p)}`).join("\n")}`);
  return parts.filter((p) => p !== "").join("\n\n");
}

/** The saved scripts `query.tools` (names) and `query.pattern` select. */
function selectScripts(scripts: readonly SavedScript[], query: ListToolsQuery): SavedScript[] {
  const pattern = query.pattern === undefined ? undefined : patternMatcher(query.pattern, []);
  return scripts.filter((s) =>
    (query.tools === undefined || query.tools.includes(s.name)) &&
    (pattern === undefined || pattern.test(s.name))
  );
}

/**
 * The line saying a `pattern` / `tools` filter matched no tool of the servers listed, with how to
 * broaden it (as a `query` that matches nothing says what to try instead).
 */
function nothingMatched(query: ListToolsQuery, searched: readonly ServerTools[]): string {
  const toolCount = searched.reduce((n, e) => n + e.tools.length, 0);
  const scope = `${toolCount} tool${toolCount === 1 ? "" : "s"} of ${searched.length} server${
    searched.length === 1 ? "" : "s"
  }`;
  const what = [
    query.pattern === undefined ? "" : `the pattern ${JSON.stringify(cutAtWord(query.pattern, 100))}`,
    query.tools === undefined ? "" : `\`tools\` ${cutAtWord(JSON.stringify(query.tools), 200)}`,
  ].filter((w) => w !== "").join(" with ");
  const how = query.pattern === undefined
    ? "check the names in the index (list_tools without `tools`)"
    : 'patterns match whole, case-sensitive tool names with `*` for any run of characters: widen it (e.g. "*issue*"), ' +
      "or drop `pattern` for the index";
  return `No tool matches ${what} among ${scope}: ${how}, or search by words with \`query\`.`;
}

/**
 * The tools of `entry` that `query.tools` and `pattern` select. A `tools` name is resolved as
 * `execute` resolves a key (exact, then tolerant spelling: `getSum` finds `get-sum`).
 */
function selectTools(entry: ServerTools, query: ListToolsQuery, pattern: GlobMatcher | undefined) {
  let named: Set<string> | undefined;
  if (query.tools !== undefined) {
    const table = buildBindingTable(entry.tools.map((t) => t.name));
    named = new Set(query.tools.flatMap((key) => {
      const resolved = resolveToolKey(table, entry.spec.name, key);
      return resolved.ok ? [resolved.value] : [];
    }));
  }
  return entry.tools.filter((t) =>
    (named === undefined || named.has(t.name)) && (pattern === undefined || pattern.test(t.name))
  );
}
