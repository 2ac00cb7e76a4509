/**
 * Cargo's version-requirement rules on top of npm `semver` (which has no type declarations, hence
 * the typed facade below). Private to `mod.ts` and `depends_on.ts`.
 *
 * Cargo and npm agree on `^`, `~`, `<`, `<=`, `>`, `>=`, partial versions and wildcards (`1.*`);
 * they differ in three places handled here: a bare version means `^` in Cargo (exact in npm),
 * comparators are separated by `,` in Cargo (spaces in npm), and spaces may follow an operator.
 *
 * @module
 */
import semverUntyped from "semver";

interface SemverApi {
  valid(version: string): string | null;
  validRange(range: string): string | null;
  satisfies(version: string, range: string): boolean;
  maxSatisfying(versions: readonly string[], range: string): string | null;
  minVersion(range: string): { version: string } | null;
  rcompare(a: string, b: string): number;
}

const semver = semverUntyped as SemverApi;

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
  return parts.length > 0 && semver.validRange(range) !== null ? range : null;
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
  return semver.valid(version) !== null && semver.satisfies(version, range);
}

/**
 * The highest of `versions` in `range` (any when `range` is `null`).
 *
 * @returns That version, or `null` when none fits.
 */
export function highestMatching(versions: readonly string[], range: string | null): string | null {
  const valid = versions.filter((v) => semver.valid(v) !== null);
  if (range === null) return valid.sort(semver.rcompare)[0] ?? null;
  return semver.maxSatisfying(valid, range);
}

/** The lowest version `range` admits, e.g. `"1.2.0"` for `^1.2`; `null` when none. */
export function lowestInRange(range: string): string | null {
  return semver.minVersion(range)?.version ?? null;
}
