/**
 * Cargo's version-requirement rules on top of npm's range syntax (`_semver.ts`, which reads what npm
 * `semver` reads for the ranges made here). Private to `lib/workspace/`.
 *
 * Cargo and npm agree on `^`, `~`, `<`, `<=`, `>`, `>=`, partial versions and wildcards (`1.*`);
 * they differ in three places handled here: a bare version means `^` in Cargo (exact in npm),
 * comparators are separated by `,` in Cargo (spaces in npm), and spaces may follow an operator.
 *
 * @module
 */
import { compareVersions, maxVersion, minVersionOf, parseRange, parseVersion, satisfies } from "./_semver.ts";

/** One comparator of a requirement, e.g. `{ op: ">=", version: "1.2" }`; `op` `""` = none written. */
export interface Comparator {
  op: "" | "=" | "==" | ">=" | "<=" | ">" | "<" | "^" | "~";
  version: string;
}

const PARTIAL_VERSION =
  /^(?:\*|[xX]|\d+)(?:\.(?:\*|[xX]|\d+)(?:\.(?:\*|[xX]|\d+)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)?)?$/;

/** True for `1`, `1.2`, `1.2.3`, `1.2.3-rc.1+build`, `1.*`, `*`. */
export function isPartialVersion(text: string): boolean {
  return PARTIAL_VERSION.test(text);
}

/**
 * Turns comparators into an npm range. `=` follows `equalsMeans` (`"exact"` as in `Cargo.toml`,
 * `"caret"` as in a `depends-on` atom); `==` is always exact; no operator means caret (or a
 * wildcard range when the version has `*`).
 *
 * @returns The npm range, or `null` when npm cannot read it.
 */
export function comparatorsToRange(
  comparators: readonly Comparator[],
  equalsMeans: "exact" | "caret",
): string | null {
  const parts = comparators.map(({ op, version }) => {
    const wildcard = /[*xX]/.test(version);
    switch (op) {
      case "":
        return wildcard ? version : `^${version}`;
      case "=":
        return equalsMeans === "caret" && !wildcard ? `^${version}` : `=${version}`;
      case "==":
        return `=${version}`;
      default:
        return `${op}${version}`;
    }
  });
  const range = parts.join(" ");
  return parts.length > 0 && parseRange(range) !== null ? range : null;
}

/**
 * Reads a `Cargo.toml` version requirement (`"1.0"`, `">=1.2, <1.5"`, `"=0.4.3"`, `"~1"`, `"*"`).
 *
 * @returns The npm range, or `null` when it is not a requirement Cargo would accept.
 */
export function cargoRequirementToRange(requirement: string): string | null {
  const comparators: Comparator[] = [];
  for (const raw of requirement.split(",")) {
    const m = /^\s*(==|=|>=|<=|>|<|\^|~)?\s*(\S+)\s*$/.exec(raw);
    if (!m || !isPartialVersion(m[2]!)) return null;
    comparators.push({ op: (m[1] ?? "") as Comparator["op"], version: m[2]! });
  }
  return comparatorsToRange(comparators, "exact");
}

/** True when `version` (a full semver version, e.g. from `Cargo.lock`) is in `range` (npm syntax). */
export function satisfiesRange(version: string, range: string): boolean {
  const v = parseVersion(version);
  const r = parseRange(range);
  return v !== null && r !== null && satisfies(v, r);
}

/**
 * The highest of `versions` in `range` (any when `range` is `null`).
 *
 * @returns That version, or `null` when none fits.
 */
export function highestMatching(versions: readonly string[], range: string | null): string | null {
  const parsed = versions.map((text) => ({ text, v: parseVersion(text) })).filter((x) => x.v !== null);
  const r = range === null ? undefined : parseRange(range);
  if (r === null) return null;
  const fitting = r === undefined ? parsed : parsed.filter((x) => satisfies(x.v!, r));
  return maxVersion(fitting, (a, b) => compareVersions(a.v!, b.v!))?.text ?? null;
}

/** The lowest version `range` admits, e.g. `"1.2.0"` for `^1.2`; `null` when none. */
export function lowestInRange(range: string): string | null {
  const r = parseRange(range);
  return r === null ? null : minVersionOf(r);
}
