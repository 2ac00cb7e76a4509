/**
 * The one table that says which declared key reaches which wire tool. The
 * declarations print exactly its keys and dispatch resolves through it, so
 * what is declared is what resolves; {@link resolveToolKey} adds the tolerant
 * lookup (case and punctuation ignored) on top.
 *
 * @module
 */

import { closestMatch, type Result, UserError } from "../diagnostics.ts";
import { isIdentifierName, sanitizeIdentifier } from "./_ts_text.ts";

/** One declared key. */
export interface BindingEntry {
  /** The property name a script writes: `server[key](...)` or `server.key(...)`. */
  key: string;
  /** The tool's name on the wire (`tools/call` `name`). */
  wire: string;
  /** `true` for the identifier spelling added next to a non-identifier wire name. */
  isAlias: boolean;
}

/** Declared key -> wire tool name, in declaration order (each primary key directly followed by its alias). */
export interface BindingTable {
  readonly entries: ReadonlyArray<BindingEntry>;
  /**
   * Wire name -> the index in `entries` of its primary key (its alias, if any, is the next entry), so
   * the keys of a few tools of a 50,000-tool table are found without walking the whole table.
   */
  readonly indexByWire: ReadonlyMap<string, number>;
}

/**
 * Keys a script cannot call on a server's global (the sandbox keeps `then` non-callable so a namespace
 * is never a thenable, and `__proto__` is the prototype; see `UNREACHABLE_TOOL_KEYS` in
 * `lib/sandbox/mod.ts`). A tool with such a name also gets a callable alias, `then_`.
 */
const UNREACHABLE_KEYS: ReadonlySet<string> = new Set(["then", "__proto__"]);

/**
 * Builds the binding table for the tools a server exposes (after any
 * allow/deny filtering: only tools in the table can be reached).
 *
 * Each distinct wire name is declared under itself (repeats dropped). A wire
 * name that is not an identifier (`[A-Za-z_$][A-Za-z0-9_$]*`) also gets an
 * alias: characters outside `[A-Za-z0-9_$]` become `_`, a leading digit gets a
 * `_` prefix, and a clash with any primary key or earlier alias is resolved
 * with `_2`, `_3`, ... - so a real `get_sum` keeps its name and `get-sum`'s alias
 * becomes `get_sum_2`. A tool named `then` or `__proto__` (which a script cannot call)
 * gets the alias `then_` / `__proto___`.
 *
 * @param wireNames Tool names in `tools/list` order.
 * @example
 * ```ts
 * import { buildBindingTable } from "./tool_binding.ts";
 * const table = buildBindingTable(["get-sum", "echo"]);
 * // [{key:"get-sum",wire:"get-sum",isAlias:false},{key:"get_sum",wire:"get-sum",isAlias:true},{key:"echo",...}]
 * ```
 */
export function buildBindingTable(wireNames: readonly string[]): BindingTable {
  const wires = [...new Set(wireNames)];
  const taken = new Set(wires);
  const aliases = new Map<string, string>();
  for (const wire of wires) {
    const unreachable = UNREACHABLE_KEYS.has(wire);
    if (isIdentifierName(wire) && !unreachable) continue;
    const base = unreachable ? `${wire}_` : sanitizeIdentifier(wire);
    let alias = base;
    for (let n = 2; taken.has(alias); n++) alias = `${base}_${n}`;
    taken.add(alias);
    aliases.set(wire, alias);
  }
  const entries: BindingEntry[] = [];
  const indexByWire = new Map<string, number>();
  for (const wire of wires) {
    indexByWire.set(wire, entries.length);
    entries.push({ key: wire, wire, isAlias: false });
    const alias = aliases.get(wire);
    if (alias !== undefined) entries.push({ key: alias, wire, isAlias: true });
  }
  return { entries, indexByWire };
}

/**
 * The entries of `table` for the wire names `wires` (the primary key, then its alias), in the table's
 * order; names the table does not hold are left out. Costs O(k log k) for k names, whatever the table's size.
 */
export function entriesOf(table: BindingTable, wires: Iterable<string>): BindingEntry[] {
  const at: number[] = [];
  for (const wire of wires) {
    const index = table.indexByWire.get(wire);
    if (index !== undefined) at.push(index);
  }
  at.sort((a, b) => a - b);
  const out: BindingEntry[] = [];
  for (const index of at) {
    const primary = table.entries[index]!;
    out.push(primary);
    const next = table.entries[index + 1];
    if (next !== undefined && next.isAlias && next.wire === primary.wire) out.push(next);
  }
  return out;
}

/**
 * Finds the wire tool a script's key means.
 *
 * Order: an exact declared key (primary or alias) wins; otherwise the key is
 * normalised (ASCII letters and digits only, lower-cased) and compared with
 * every declared key normalised the same way - one tool matching is the
 * answer (`createEntities` and `create-entities` reach `create_entities`).
 *
 * @param table From {@link buildBindingTable}.
 * @param server Server name as the script knows it, used in messages.
 * @param key The property the script called.
 * @returns `{ ok: true, value: wireName }`, or a `UserError` with code
 *   `TOOL_AMBIGUOUS` (several tools spelled alike; message names them all) or
 *   `TOOL_UNKNOWN` (nothing matches; message names the closest key - a
 *   plausible typo by edit distance, else the longest shared prefix - or says
 *   the server has no tools).
 */
export function resolveToolKey(table: BindingTable, server: string, key: string): Result<string, UserError> {
  const exact = table.entries.find((e) => e.key === key);
  if (exact !== undefined) return { ok: true, value: exact.wire };
  const wanted = normalizeKey(key);
  if (wanted !== "") {
    const wires = [
      ...new Set(table.entries.filter((e) => normalizeKey(e.key) === wanted).map((e) => e.wire)),
    ];
    if (wires.length === 1) return { ok: true, value: wires[0]! };
    if (wires.length > 1) {
      return {
        ok: false,
        error: new UserError(
          "TOOL_AMBIGUOUS",
          `\`${server}\` has more than one tool spelled like \`${key}\`: ${wires.join(", ")}. ` +
            "Use one of those names exactly.",
        ),
      };
    }
  }
  if (table.entries.length === 0) {
    return {
      ok: false,
      error: new UserError(
        "TOOL_UNKNOWN",
        `\`${server}\` exposes no tools. Call \`list_tools\` to see what is available.`,
      ),
    };
  }
  const keys = table.entries.map((e) => e.key);
  const closest = closestMatch(key, keys) ?? closestKey(key, keys);
  const suggestion = closest === undefined ? "" : ` Closest match: \`${closest}\`.`;
  return {
    ok: false,
    error: new UserError(
      "TOOL_UNKNOWN",
      `\`${server}\` has no tool \`${key}\`.${suggestion} Call \`list_tools\` for the full list.`,
    ),
  };
}

/** ASCII letters and digits of `key`, lower-cased: `"Create-Entities"` -> `"createentities"`. */
export function normalizeKey(key: string): string {
  return key.replace(/[^A-Za-z0-9]/g, "").toLowerCase();
}

/**
 * The key sharing the longest prefix with `key` once both are lower-cased
 * without `-`/`_` (ties -> the shorter key, then table order); it must share at
 * least the first character.
 */
function closestKey(key: string, candidates: readonly string[]): string | undefined {
  const squash = (s: string) => s.toLowerCase().replace(/[-_]/g, "");
  const wanted = squash(key);
  let best: string | undefined;
  let bestShared = 0;
  for (const candidate of candidates) {
    const other = squash(candidate);
    let shared = 0;
    while (shared < wanted.length && shared < other.length && wanted[shared] === other[shared]) shared++;
    if (shared === 0) continue;
    if (
      shared > bestShared || (shared === bestShared && best !== undefined && candidate.length < best.length)
    ) {
      best = candidate;
      bestShared = shared;
    }
  }
  return best;
}
