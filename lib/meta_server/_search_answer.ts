/**
 * The `list_tools { query }` answer: the best tools for a query, each with its server, wire name,
 * first sentence and TypeScript call signature, from what is known without starting a server;
 * the servers that could not be searched are named with how to include them.
 *
 * @module
 */
import type { GlobMatcher } from "../glob.ts";
import { type Catalog, SearchQueryError, type ServerTools } from "../catalog/mod.ts";
import type { Tool } from "../backends/mod.ts";
import { cutAtWord, firstSentence, renderToolSignature } from "../declarations/mod.ts";
import { type BindingTable, buildBindingTable, normalizeKey } from "../declarations/tool_binding.ts";
import { namespaceKey } from "../plugins/mod.ts";
import { byteLength, formatBytes, formatCount, LIST_TOOLS_MAX_BYTES } from "./_bounded.ts";

/** What the search answer is asked for (the `list_tools` arguments it reads). */
export interface SearchRequest {
  query: string;
  limit?: number | undefined;
  /** Raw server names to search within; `undefined` for all in scope. */
  servers?: ReadonlySet<string> | undefined;
  /** `tools` filter: keys compared as `execute` resolves them (case and punctuation ignored). */
  tools?: readonly string[] | undefined;
  pattern?: GlobMatcher | undefined;
  /** `false` (`detail: "names"`): no signatures. @default true */
  withSignatures?: boolean | undefined;
}

/**
 * Renders the ranked search answer (never starts a server).
 *
 * @param problems Problems gathered so far (refusals, unknown server names); more are added.
 * @returns The answer text; a refused query (`QUERY_TOO_LONG`) is a Problems line.
 */
export async function renderSearchAnswer(
  catalog: Catalog,
  request: SearchRequest,
  problems: string[],
): Promise<string> {
  const wantedKeys = request.tools === undefined ? undefined : new Set(request.tools.map(normalizeKey));
  const pattern = request.pattern;
  const accept = wantedKeys === undefined && pattern === undefined ? undefined : (_server: string, tool: {
    name: string;
  }) =>
    (wantedKeys === undefined || wantedKeys.has(normalizeKey(tool.name))) &&
    (pattern === undefined || pattern.test(tool.name));
  let answer;
  try {
    answer = await catalog.toolSearch.search(request.query, {
      limit: request.limit,
      servers: request.servers,
      accept,
    });
  } catch (error) {
    if (!(error instanceof SearchQueryError)) throw error;
    problems.push(`${error.message}; hint: ${error.hint}`);
    return renderProblems([], problems);
  }
  const toolCount = answer.searched.reduce((n, e) => n + e.tools.length, 0);
  const scope = `${formatCount(toolCount)} tools of ${formatCount(answer.searched.length)} server${
    answer.searched.length === 1 ? "" : "s"
  }`;
  const lines: string[] = [];
  if (answer.searched.length === 0) {
    lines.push("Nothing to search yet: no server in scope is running or has a fresh tool cache.");
  } else if (answer.matches.length === 0) {
    lines.push(
      `No tool matches ${JSON.stringify(request.query)} among ${scope}. Try other words for what the tool ` +
        'does (e.g. "create issue", "read file"), or call list_tools without `query` for the index.',
    );
  } else {
    lines.push(`Best ${answer.matches.length} of ${scope} for ${JSON.stringify(request.query)}, best first:`);
  }
  const tables = new Map<string, BindingTable>();
  const tableOf = (entry: ServerTools) => {
    let table = tables.get(entry.spec.name);
    if (!table) tables.set(entry.spec.name, table = buildBindingTable(entry.tools.map((t) => t.name)));
    return table;
  };
  const notSearched = describeNotSearched(answer.notSearched, problems);
  let used = byteLength(lines[0]!) + byteLength(notSearched) +
    problems.reduce((n, p) => n + byteLength(p) + 3, 0);
  const heads = answer.matches.map((m, i) => hitLine(i + 1, m.entry.spec.name, m.tool));
  used += heads.reduce((n, h) => n + byteLength(h) + 2, 0);
  let withoutSignature = 0;
  answer.matches.forEach((match, i) => {
    let block = heads[i]!;
    if (request.withSignatures !== false) {
      const signature = renderToolSignature(match.entry.spec.name, match.tool, {
        table: tableOf(match.entry),
        observed: match.entry.observed,
      });
      const indented = signature.text.split("\n").map((line) => `   ${line}`).join("\n");
      if (used + byteLength(indented) + 1 <= LIST_TOOLS_MAX_BYTES) {
        block += `\n${indented}`;
        used += byteLength(indented) + 1;
      } else withoutSignature++;
    }
    lines.push(block);
  });
  if (withoutSignature > 0) {
    lines.push(
      `(${withoutSignature} signature${withoutSignature === 1 ? "" : "s"} left out to stay within ${
        formatBytes(LIST_TOOLS_MAX_BYTES)
      }: ask for them with \`servers\` and \`tools\`, or use a smaller \`limit\`.)`,
    );
  }
  if (notSearched !== "") lines.push(notSearched);
  return renderProblems([lines.join("\n\n")], problems);
}

/** `1. github.list_issues - List issues in a GitHub repository.` */
function hitLine(rank: number, server: string, tool: Tool): string {
  const summary = firstSentence(tool.description);
  // deno-lint-ignore no-control-regex
  const name = /[\u0000-\u001f\u007f\u2028\u2029]/.test(tool.name) ? JSON.stringify(tool.name) : tool.name;
  return `${rank}. ${namespaceKey(server)}.${name}${summary === "" ? "" : ` - ${summary}`}`;
}

/**
 * The "not searched" paragraph for servers whose tools are unknown without starting them, with how
 * to include them; other failures (a server given up for the session) go to `problems`.
 */
function describeNotSearched(
  notSearched: { spec: { name: string }; reason: string; isUnlisted: boolean }[],
  problems: string[],
): string {
  const unknown: string[] = [];
  for (const { spec, reason, isUnlisted } of notSearched) {
    if (isUnlisted) unknown.push(spec.name);
    else problems.push(`\`${spec.name}\`: not searched: ${reason}`);
  }
  if (unknown.length === 0) return "";
  return `Not searched: ${
    cutAtWord(unknown.join(", "), 1_000)
  } (not running and no fresh tool cache, so their tools are not ` +
    `known yet). To include them, call list_tools { servers: ${
      JSON.stringify(unknown.slice(0, 5))
    } } once: it starts them and caches their tools for later searches.`;
}

function renderProblems(parts: string[], problems: string[]): string {
  if (problems.length > 0) parts.push(`Problems:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  return parts.filter((p) => p !== "").join("\n\n");
}
