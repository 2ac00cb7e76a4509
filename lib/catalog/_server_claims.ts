/**
 * Who keeps a server name when several plugins declare it (private to `lib/catalog/`, used by
 * `resolveServers()`), and how two gates combine.
 *
 * @module
 */
import { type LoadedPlugin, type McpServerDecl, USER_PLUGINS_SOURCE } from "../plugins/mod.ts";
import type { PredicateVerdict } from "../workspace/mod.ts";

/** A gate that holds only when both do (`undefined`: no second gate). */
export function combineGates(a: PredicateVerdict, b: PredicateVerdict | undefined): PredicateVerdict {
  if (b === undefined || a.holds === false) return a;
  if (b.holds === false || a.holds === true) {
    return b.holds === true ? { holds: true, reason: `${a.reason}; ${b.reason}` } : b;
  }
  return a;
}

/** A server that passed its gates and trust, waiting to keep its name. */
export interface Candidate {
  plugin: LoadedPlugin;
  decl: McpServerDecl;
  /** The script global. */
  key: string;
  refuse: (code: string, reason: string, hint?: string) => void;
}

/**
 * Which candidates keep their name: within one source the first claim of a name or global wins (the
 * later ones are refused); across sources nobody wins (all refused, naming both files) unless one is
 * the user's own plugin, which wins with a note on the others.
 */
export function settleClaims(candidates: readonly Candidate[]): Candidate[] {
  const sourceOf = (c: Candidate) => c.plugin.source ?? USER_PLUGINS_SOURCE;
  const winners: Candidate[] = [];
  const byKey = new Map<string, Candidate[]>();
  for (const c of candidates) byKey.set(c.key, [...(byKey.get(c.key) ?? []), c]);
  for (const group of byKey.values()) {
    const first = group[0]!;
    const user = group.find((c) => sourceOf(c) === USER_PLUGINS_SOURCE);
    const crossSource = group.some((c) => sourceOf(c) !== sourceOf(first));
    const winner = !crossSource ? first : user;
    if (winner) winners.push(winner);
    for (const c of group) {
      if (c === winner) continue;
      const other = winner ?? group.find((o) => sourceOf(o) !== sourceOf(c)) ?? first;
      const where = (x: Candidate) => `${x.plugin.file} (${sourceOf(x)})`;
      const same = other.decl.name === c.decl.name;
      const code = same ? "SERVER_DUPLICATE" : "SERVER_NAME_CLASH";
      const what = same
        ? `server "${c.decl.name}" is declared by both plugin "${other.plugin.name}" and plugin "${c.plugin.name}"`
        : `server "${c.decl.name}" (plugin "${c.plugin.name}") and server "${other.decl.name}" (plugin "${other.plugin.name}") both appear as "${c.key}" in scripts`;
      if (!crossSource) {
        c.refuse(
          code,
          what,
          same
            ? `rename or remove one of them; the one from "${other.plugin.name}" is used`
            : `rename one of them; "${other.decl.name}" is used`,
        );
      } else if (winner) {
        c.refuse(
          code,
          `${what}: ${where(other)} and ${where(c)}`,
          `the one in your own plugins (${other.plugin.file}) is used; remove it there to use this one`,
        );
      } else {
        c.refuse(
          code,
          `${what}, from two sources: ${where(other)} and ${where(c)}; neither is used`,
          "rename one of them, or disable one source in config.toml",
        );
      }
    }
  }
  return winners;
}
