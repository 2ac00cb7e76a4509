// The key tables of docs/configuration.md follow the tables the code reads: every key the code accepts is
// documented, no documented key is refused by the code, and each documented default (and type, and range) is
// the code's own. A renamed key, a new key or a changed default fails here, not in a reader's hands.
import { expect } from "expect";
import { join } from "node:path";
import { REPO_ROOT } from "./_fakes_foundation.ts";
import { MCP_CONFIG_KEYS, MCP_KEY_RULES } from "../lib/plugins/config.ts";
import { DEFAULT_MCP_CONFIG } from "../lib/plugins/config_types.ts";
import {
  CRATE_REFERENCE_KEYS,
  FOREIGN_PLUGIN_KEYS,
  PLUGIN_KEYS,
  SERVER_KEYS,
  UNSUPPORTED_SERVER_KEYS,
} from "../lib/plugins/_manifest_keys.ts";
import { REGISTRY_DEFAULTS, SOURCES_DEFAULTS } from "../lib/plugin_sources/sources_config.ts";

const PAGE = "docs/configuration.md";
const page = await Deno.readTextFile(join(REPO_ROOT, PAGE));

/** The text under the heading written exactly `heading` (after its `#`s), up to the next heading. */
function section(heading: string): string {
  const lines = page.split("\n");
  const start = lines.findIndex((line) => line.replace(/^#+ /, "") === heading && line.startsWith("#"));
  if (start < 0) throw new Error(`${PAGE} has no heading "${heading}"`);
  const end = lines.findIndex((line, i) => i > start && /^#{1,6} /.test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end).join("\n");
}

/** The first Markdown table of `text`: one record per row, keyed by the header cells. */
function table(text: string): Record<string, string>[] {
  const rows = text.split("\n").filter((line) => line.startsWith("|"));
  const cells = (line: string) => line.slice(1, -1).split(/(?<!\\)\|/).map((cell) => cell.trim());
  const header = cells(rows[0] ?? "|");
  return rows.slice(2).map((row) => Object.fromEntries(cells(row).map((cell, i) => [header[i]!, cell])));
}

/** The documented rows of a section's table, by key (the backticks of the `key` cell removed). */
function rowsByKey(heading: string): Map<string, Record<string, string>> {
  const rows = table(section(heading));
  expect(rows.length).toBeGreaterThan(0);
  return new Map(rows.map((row) => [row.key!.replace(/^`|`$/g, ""), row]));
}

/** A default as the page writes it: numbers and booleans bare, strings and arrays as JSON. */
function written(value: unknown): string {
  return typeof value === "string" || Array.isArray(value) ? JSON.stringify(value) : String(value);
}

Deno.test("docs/configuration.md documents exactly the [mcp] keys the code accepts, with their types, defaults and ranges", () => {
  const rows = rowsByKey("`[mcp]` in `config.toml`");
  expect([...rows.keys()].sort()).toEqual([...MCP_CONFIG_KEYS].sort());
  const wrong: string[] = [];
  for (const [key, rule] of Object.entries(MCP_KEY_RULES)) {
    const row = rows.get(key)!;
    const type = rule.kind === "choice"
      ? "string"
      : rule.kind === "patterns"
      ? "array of strings"
      : rule.kind;
    const fallback = rule.field === null ? "–" : written(DEFAULT_MCP_CONFIG[rule.field]);
    const range = rule.kind === "integer" ? `${rule.min}…${rule.max}` : "–";
    if (row.type !== type) wrong.push(`${key}: type ${row.type}, the code reads ${type}`);
    if (row.default !== fallback) wrong.push(`${key}: default ${row.default}, the code's is ${fallback}`);
    if (row.range !== range) wrong.push(`${key}: range ${row.range}, the code's is ${range}`);
    for (const choice of rule.choices ?? []) {
      if (!row.meaning!.includes(`"${choice}"`)) wrong.push(`${key}: its value "${choice}" is not named`);
    }
  }
  expect(wrong).toEqual([]);
});

Deno.test("docs/configuration.md documents exactly the [defaults] and [[registry]] keys, with the code's defaults", () => {
  const defaults = rowsByKey("`[defaults]` in `config.toml`");
  expect([...defaults.keys()].sort()).toEqual(Object.keys(SOURCES_DEFAULTS).sort());
  for (const [key, value] of Object.entries(SOURCES_DEFAULTS)) {
    expect({ key, default: defaults.get(key)!.default }).toEqual({ key, default: written(value) });
  }
  const registry = rowsByKey("`[[registry]]` in `config.toml`");
  expect([...registry.keys()].sort()).toEqual(Object.keys(REGISTRY_DEFAULTS).sort());
  for (const [key, value] of Object.entries(REGISTRY_DEFAULTS)) {
    const documented = registry.get(key)!.default;
    const expected = value === undefined ? (key === "name" ? "required" : "–") : written(value);
    expect({ key, default: documented }).toEqual({ key, default: expected });
  }
});

Deno.test("docs/configuration.md documents exactly the SYMPOSIUM.toml keys the manifest checker reads", () => {
  expect([...rowsByKey("Top-level keys").keys()].sort()).toEqual([...PLUGIN_KEYS].sort());
  expect([...rowsByKey("`[[mcp_servers]]`").keys()].sort()).toEqual([...SERVER_KEYS].sort());
  expect([...rowsByKey("`[[plugins]]`").keys()].sort()).toEqual([...CRATE_REFERENCE_KEYS].sort());
});

Deno.test("docs/configuration.md names the upstream keys that are accepted unread, and those that are refused", () => {
  const text = section("Top-level keys");
  const unnamed = [...Object.keys(FOREIGN_PLUGIN_KEYS), ...Object.keys(UNSUPPORTED_SERVER_KEYS)]
    .filter((key) => !text.includes(`\`${key}\``));
  expect(unnamed).toEqual([]);
});

Deno.test("docs/configuration.md's per-server defaults are the [mcp] keys they override", () => {
  const rows = rowsByKey("`[[mcp_servers]]`");
  expect(rows.get("observe-results")!.default).toBe(written(DEFAULT_MCP_CONFIG.observeResults));
  expect(rows.get("startup-timeout-secs")!.default).toBe("`[mcp] server-startup-timeout-secs`");
  expect(rows.get("tool-call-timeout-secs")!.default).toBe("`[mcp] tool-call-timeout-secs`");
  expect(MCP_CONFIG_KEYS).toEqual(
    expect.arrayContaining(["server-startup-timeout-secs", "tool-call-timeout-secs"]),
  );
});
