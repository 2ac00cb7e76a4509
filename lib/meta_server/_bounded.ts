/**
 * Size caps of `list_tools` answers: an index too large for one answer becomes a per-server
 * summary that says how to narrow, and declarations past the cap keep whole tools up to it and
 * name the ones left out.
 *
 * @module
 */
import type { ServerTools } from "../catalog/mod.ts";
import type { Tool } from "../backends/mod.ts";
import { cutAtWord, type Detail, renderDeclarations, renderToolWithin } from "../declarations/mod.ts";
import { buildBindingTable } from "../declarations/tool_binding.ts";
import { namespaceKey } from "../plugins/mod.ts";
import { quotedText } from "../diagnostics.ts";

/** Largest unfiltered `list_tools` answer (and search answer), in UTF-8 bytes (16 KiB). */
export const LIST_TOOLS_MAX_BYTES = 16_384;
/** Largest declarations answer for named `servers`/`tools`, in UTF-8 bytes (32 KiB). */
export const DECLARATIONS_MAX_BYTES = 32_768;
/** Tool names a summary line shows per server. */
export const SUMMARY_NAMES_PER_SERVER = 5;

const encoder = new TextEncoder();
/** UTF-8 length of `text`, in bytes. */
export function byteLength(text: string): number {
  return encoder.encode(text).length;
}

/** `1234567` -> `"1,234,567"` (fixed locale, so answers do not vary by machine). */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** `"12.3 KB"` / `"1.2 MB"` for a byte count (1 KB = 1,024 bytes). */
export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${(bytes / 1024).toFixed(1)} KB`;
}

/** The header of a server in answers: `server`, or `server (as key)` when scripts use another global. */
export function serverLabel(server: string): string {
  const key = namespaceKey(server);
  return key === server ? server : `${server} (as ${key})`;
}

/** How to narrow a large answer, one line per filter (shared by the summary and the markers). */
export const NARROWING_HINT = [
  "Narrow it with:",
  '  query: ranked search by what a tool does, e.g. list_tools { query: "create an issue" } (best 10; limit up to 50)',
  '  servers: one server\'s declarations, e.g. list_tools { servers: ["github"] }',
  '  pattern: a glob on tool names, e.g. list_tools { pattern: "*issue*" }',
].join("\n");

/**
 * The summary given instead of an index over `maxBytes`: counts, how to narrow, then one line per
 * server with its tool count and first {@link SUMMARY_NAMES_PER_SERVER} names (lines cut at 160
 * characters). Servers that no longer fit are counted in a last line.
 *
 * @param shown Per server, the tools the index would have listed.
 * @param indexBytes Size of the index this replaces, in bytes (said in the first line).
 * @param maxBytes Budget of the summary, in bytes.
 */
export function summarizeIndex(
  shown: readonly { server: string; tools: readonly Tool[] }[],
  indexBytes: number,
  maxBytes: number,
): string {
  const total = shown.reduce((n, s) => n + s.tools.length, 0);
  const head = `${formatCount(total)} tools on ${formatCount(shown.length)} servers: the index (${
    formatBytes(indexBytes)
  }) is over the ${formatBytes(maxBytes)} answer cap, so this is a summary. ${NARROWING_HINT}\n`;
  const lines = [head];
  let used = byteLength(head) + 200; // room for the "more servers" line
  for (let i = 0; i < shown.length; i++) {
    const { server, tools } = shown[i]!;
    const names = tools.slice(0, SUMMARY_NAMES_PER_SERVER).map((t) => t.name);
    const more = tools.length > names.length ? ", \u2026" : "";
    const line = cutAtWord(
      `${serverLabel(server)} (${formatCount(tools.length)} tool${tools.length === 1 ? "" : "s"}): ${
        names.join(", ")
      }${more}`,
      160,
    );
    if (used + byteLength(line) + 1 > maxBytes) {
      const rest = shown.length - i;
      lines.push(
        `\u2026 and ${formatCount(rest)} more servers; name them in \`servers\` or search with \`query\``,
      );
      break;
    }
    lines.push(line);
    used += byteLength(line) + 1;
  }
  return lines.join("\n");
}

/** Room for the marker of a simplified declaration (what was simplified, ~250 bytes, and the tool's name). */
const SIMPLIFIED_MARKER_BYTES = 600;
/** Longest list of names a `// ...` marker shows, UTF-8 bytes (cut at a word, with "..."). */
const MARKER_NAMES_BYTES = 600;
/**
 * Room kept below the cap for the markers, bytes: the tools left out of one server and the servers left
 * out, each at most {@link MARKER_NAMES_BYTES} of names and ~250 bytes of text (a cut declaration's marker
 * is counted with the declaration it ends).
 */
const MARKERS_RESERVE_BYTES = 2 * (MARKER_NAMES_BYTES + 250);

/**
 * `names` joined by ", " and cut at a word to at most `maxBytes` UTF-8 bytes. A name that is not plain
 * is quoted with every control, line-break and bidi character escaped (`quotedText`), so a tool name
 * holding a newline cannot end the `//` comment the names are in and forge code lines.
 */
function namesWithin(names: readonly string[], maxBytes: number): string {
  const shown = names.map((n) => /^[\w$.@:() -]+$/.test(n) ? n : quotedText(n));
  let text = cutAtWord(shown.join(", "), maxBytes);
  while (byteLength(text) > maxBytes) text = cutAtWord(text, Math.floor(text.length * 0.8));
  return text;
}

/**
 * Declarations of the given servers' tools within `maxBytes`: whole servers while they fit, then
 * as many whole tools of the next server as fit, and a `// ...` marker naming what was left out
 * (tools of that server, then the servers not shown at all). The first tool is always shown: when its
 * declaration alone passes `maxBytes` it is simplified until it fits (`renderToolWithin`: still valid
 * TypeScript), with a marker saying what was simplified.
 *
 * @param entries Per server, its listing (the binding table spans all its visible tools) and the
 *   tools asked for.
 * @returns The text (sections joined by a blank line) and the warnings of what was rendered.
 */
export function boundedDeclarations(
  entries: readonly { entry: ServerTools; shown: Tool[] }[],
  detail: Exclude<Detail, "names">,
  maxBytes: number,
): { text: string; warnings: string[] } {
  const sections: string[] = [];
  const warnings: string[] = [];
  let used = 0;
  const left: string[] = [];
  for (const { entry, shown } of entries) {
    const server = entry.spec.name;
    if (left.length > 0) {
      left.push(`${server} (${shown.length} tools)`);
      continue;
    }
    const table = buildBindingTable(entry.tools.map((t) => t.name));
    const resources = entry.hasResources;
    const observed = entry.observed;
    const render = (tools: Tool[]) =>
      renderDeclarations(server, tools, { detail, table, resources, observed });
    const room = maxBytes - used - MARKERS_RESERVE_BYTES;
    // Whole tools only: estimate from each tool's own size first and stop once past the room, so a
    // 50,000-tool server is not rendered whole to learn that it does not fit (that held the thread
    // for seconds). Tools sharing named types are over-estimated: a few of them are rendered whole.
    let count = 0;
    let estimate = 0;
    while (count < shown.length) {
      estimate += byteLength(render([shown[count]!]).text) - 20;
      if (estimate > room) break;
      count++;
    }
    let rendered = render(shown.slice(0, count));
    let bytes = byteLength(rendered.text);
    if (count < shown.length && shown.length <= 4 * Math.max(count, 8)) {
      const whole = render(shown);
      const wholeBytes = byteLength(whole.text);
      if (wholeBytes <= room) [count, rendered, bytes] = [shown.length, whole, wholeBytes];
    }
    while (bytes > room && count > 0) {
      count = Math.max(0, count - Math.max(1, Math.ceil((count * (bytes - room)) / bytes)));
      rendered = render(shown.slice(0, count));
      bytes = byteLength(rendered.text);
    }
    if (count === 0 && sections.length === 0 && shown.length > 0) {
      // A tool asked for alone is shown even when its declaration alone passes the cap: simplified until
      // it fits, still valid TypeScript, with a marker saying what was simplified.
      const one = renderToolWithin(server, shown[0]!, Math.max(0, room - SIMPLIFIED_MARKER_BYTES), {
        detail,
        table,
        resources,
        observed,
      });
      const marker = `\n// \u2026 the declaration of ${server}.${namesWithin([shown[0]!.name], 200)} is ${
        formatBytes(one.wholeBytes)
      }: simplified to fit the answer cap (${formatBytes(maxBytes)}): ${one.simplified.join("; ")}`;
      sections.push(one.text + marker);
      warnings.push(...one.warnings.map((w) => `\`${server}\`: ${w}`));
      used += byteLength(one.text) + byteLength(marker) + 2;
      count = 1;
    } else if (count > 0) {
      sections.push(rendered.text);
      warnings.push(...rendered.warnings.map((w) => `\`${server}\`: ${w}`));
      used += bytes + 2;
    }
    if (count < shown.length) {
      const rest = shown.slice(count).map((t) => t.name);
      const names = namesWithin(rest, MARKER_NAMES_BYTES);
      sections.push(
        `// \u2026 ${formatCount(rest.length)} more tool${
          rest.length === 1 ? "" : "s"
        } of ${server} left out ` +
          `(answer cap ${formatBytes(maxBytes)}): ${names}\n` +
          `// Name them in \`tools\` (a few at a time) or find one with \`query\`.`,
      );
      left.push("");
    }
  }
  const servers = left.filter((s) => s !== "");
  if (servers.length > 0) {
    sections.push(
      `// \u2026 servers left out (answer cap ${formatBytes(maxBytes)}): ${
        namesWithin(servers, MARKER_NAMES_BYTES)
      }\n` +
        "// Name them in `servers` to see their declarations.",
    );
  }
  return { text: sections.join("\n\n"), warnings };
}
