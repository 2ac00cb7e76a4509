/**
 * The part of npm `semver` that Cargo requirements need (private to `lib/workspace/`): strict
 * versions, ranges of space-separated comparators (`^`, `~`, `=`, `>`, `>=`, `<`, `<=`, partial and
 * `x`/`*` versions; no `||` or hyphen ranges, which the requirements never produce), `satisfies` with
 * npm's prerelease rule, and `minVersion`. Written here because loading the npm package (CommonJS)
 * cost every `status` and session start ~100 ms; `tests/workspace/semver_test.ts` checks it against
 * npm `semver` on generated versions and ranges.
 *
 * @module
 */

/** A parsed version; `pre` holds the prerelease identifiers (numbers for numeric ones). */
export interface Version {
  major: number;
  minor: number;
  patch: number;
  pre: (string | number)[];
}

/** One primitive comparator after npm's desugaring; `version` `undefined` means "any". */
interface Primitive {
  op: ">=" | ">" | "<" | "<=" | "=";
  version: Version;
}

/** A range: every primitive must hold (`[]` = any version; `null` entries never happen). */
export interface Range {
  primitives: Primitive[];
  /** The range admits nothing (`<0.0.0-0`, `>*`). */
  empty: boolean;
}

const NUMBER = "0|[1-9]\\d*";
const PRE_ID = `(?:${NUMBER}|\\d*[A-Za-z-][0-9A-Za-z-]*)`;
const FULL = new RegExp(
  `^v?(${NUMBER})\\.(${NUMBER})\\.(${NUMBER})(?:-(${PRE_ID}(?:\\.${PRE_ID})*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$`,
);
const PART = `${NUMBER}|x|X|\\*`;
const PARTIAL = new RegExp(
  `^v?(${PART})(?:\\.(${PART})(?:\\.(${PART})(?:-(${PRE_ID}(?:\\.${PRE_ID})*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?)?)?$`,
);
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function preIds(text: string | undefined): (string | number)[] {
  if (text === undefined) return [];
  return text.split(".").map((id) => /^\d+$/.test(id) ? Number(id) : id);
}

/** A strict version (`1.2.3`, `1.2.3-rc.1+build`), or `null` (as npm `semver.valid`). */
export function parseVersion(text: string): Version | null {
  const m = FULL.exec(text.trim());
  if (!m) return null;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major > MAX_SAFE || minor > MAX_SAFE || patch > MAX_SAFE) return null;
  return { major, minor, patch, pre: preIds(m[4]) };
}

/** npm's order: by major, minor, patch, then a prerelease is lower than none, then identifier by identifier. */
export function compareVersions(a: Version, b: Version): number {
  if (a.major !== b.major) return a.major < b.major ? -1 : 1;
  if (a.minor !== b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch !== b.patch) return a.patch < b.patch ? -1 : 1;
  if (a.pre.length === 0 || b.pre.length === 0) {
    return b.pre.length - a.pre.length === 0 ? 0 : a.pre.length === 0 ? 1 : -1;
  }
  for (let i = 0;; i++) {
    const x = a.pre[i], y = b.pre[i];
    if (x === undefined && y === undefined) return 0;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    if (typeof x === "number" && typeof y === "number") return x < y ? -1 : 1;
    if (typeof x === "number") return -1;
    if (typeof y === "number") return 1;
    return x < y ? -1 : 1;
  }
}

/** The highest of `items` by `compare`, or `undefined` for none. */
export function maxVersion<T>(items: readonly T[], compare: (a: T, b: T) => number): T | undefined {
  let best: T | undefined;
  for (const item of items) if (best === undefined || compare(item, best) > 0) best = item;
  return best;
}

const v = (major: number, minor: number, patch: number, pre: (string | number)[] = []): Version => ({
  major,
  minor,
  patch,
  pre,
});
/** `-0`: the lowest prerelease of a version, which npm puts on exclusive upper bounds. */
const ZERO: (string | number)[] = [0];

/** Desugars one comparator token into primitives, or `null` when it does not parse. */
function desugar(token: string): { primitives: Primitive[]; empty: boolean } | null {
  const m = /^(\^|~>?|>=|<=|>|<|=)?\s*(.*)$/.exec(token);
  if (!m) return null;
  const op = m[1] === "~>" ? "~" : m[1] ?? "";
  const p = PARTIAL.exec(m[2]!);
  if (!p) return null;
  const isX = (part: string | undefined) =>
    part === undefined || part === "x" || part === "X" || part === "*";
  const xM = isX(p[1]), xm = xM || isX(p[2]), xp = xm || isX(p[3]);
  const M = xM ? 0 : Number(p[1]), mi = xm ? 0 : Number(p[2]), pa = xp ? 0 : Number(p[3]);
  if (M > MAX_SAFE || mi > MAX_SAFE || pa > MAX_SAFE) return null;
  const pre = preIds(p[4]);
  const any = { primitives: [], empty: false };
  const none = { primitives: [], empty: true };
  const range = (lo: Version | undefined, hi: Version | undefined) => ({
    primitives: [
      ...(lo ? [{ op: ">=" as const, version: lo }] : []),
      ...(hi ? [{ op: "<" as const, version: hi }] : []),
    ],
    empty: false,
  });
  switch (op) {
    case "^":
      if (xM) return any;
      if (xm) return range(v(M, 0, 0), v(M + 1, 0, 0, ZERO));
      if (xp) {
        return M > 0 ? range(v(M, mi, 0), v(M + 1, 0, 0, ZERO)) : range(v(0, mi, 0), v(0, mi + 1, 0, ZERO));
      }
      if (M > 0) return range(v(M, mi, pa, pre), v(M + 1, 0, 0, ZERO));
      if (mi > 0) return range(v(0, mi, pa, pre), v(0, mi + 1, 0, ZERO));
      return range(v(0, 0, pa, pre), v(0, 0, pa + 1, ZERO));
    case "~":
      if (xM) return any;
      if (xm) return range(v(M, 0, 0), v(M + 1, 0, 0, ZERO));
      return range(v(M, mi, xp ? 0 : pa, xp ? [] : pre), v(M, mi + 1, 0, ZERO));
    case "":
    case "=":
      if (xM) return any;
      if (xm) return range(v(M, 0, 0), v(M + 1, 0, 0, ZERO));
      if (xp) return range(v(M, mi, 0), v(M, mi + 1, 0, ZERO));
      return { primitives: [{ op: "=", version: v(M, mi, pa, pre) }], empty: false };
    case ">":
      if (xM) return none;
      if (xm) return range(v(M + 1, 0, 0), undefined);
      if (xp) return range(v(M, mi + 1, 0), undefined);
      return { primitives: [{ op: ">", version: v(M, mi, pa, pre) }], empty: false };
    case ">=":
      if (xM) return any;
      return range(v(M, xm ? 0 : mi, xp ? 0 : pa, xp ? [] : pre), undefined);
    case "<":
      if (xM) return none;
      if (xm) return range(undefined, v(M, 0, 0, ZERO));
      if (xp) return range(undefined, v(M, mi, 0, ZERO));
      return range(undefined, v(M, mi, pa, pre));
    case "<=":
      if (xM) return any;
      if (xm) return range(undefined, v(M + 1, 0, 0, ZERO));
      if (xp) return range(undefined, v(M, mi + 1, 0, ZERO));
      return { primitives: [{ op: "<=", version: v(M, mi, pa, pre) }], empty: false };
  }
  return null;
}

const RANGES = new Map<string, Range | null>();
const MAX_CACHED_RANGES = 4096;

/**
 * Reads an npm range of space-separated comparators (an operator may be followed by spaces), or
 * `null` when one does not parse (as npm `semver.validRange` for these ranges). Memoized.
 */
export function parseRange(text: string): Range | null {
  const held = RANGES.get(text);
  if (held !== undefined || RANGES.has(text)) return held ?? null;
  const tokens = text.trim().replace(/(\^|~>?|>=|<=|>|<|=)\s+/g, "$1").split(/\s+/).filter((t) => t !== "");
  let range: Range | null = { primitives: [], empty: false };
  for (const token of tokens) {
    const part = desugar(token);
    if (part === null) {
      range = null;
      break;
    }
    // As npm: a desugared `>=0.0.0` means any version (so `0.0.0-0` is not below it).
    range.primitives.push(
      ...part.primitives.filter((p) =>
        !(p.op === ">=" && p.version.major === 0 && p.version.minor === 0 && p.version.patch === 0 &&
          p.version.pre.length === 0)
      ),
    );
    range.empty ||= part.empty;
  }
  if (RANGES.size >= MAX_CACHED_RANGES) RANGES.clear();
  RANGES.set(text, range);
  return range;
}

function holds(p: Primitive, version: Version): boolean {
  const c = compareVersions(version, p.version);
  switch (p.op) {
    case ">=":
      return c >= 0;
    case ">":
      return c > 0;
    case "<":
      return c < 0;
    case "<=":
      return c <= 0;
    case "=":
      return c === 0;
  }
}

/** Whether `version` is in `range`, with npm's rule that a prerelease needs a comparator on its own `major.minor.patch` with a prerelease. */
export function satisfies(version: Version, range: Range): boolean {
  if (range.empty || !range.primitives.every((p) => holds(p, version))) return false;
  if (version.pre.length === 0) return true;
  return range.primitives.some((p) =>
    p.version.pre.length > 0 && p.version.major === version.major && p.version.minor === version.minor &&
    p.version.patch === version.patch
  );
}

function format(version: Version): string {
  const pre = version.pre.length > 0 ? `-${version.pre.join(".")}` : "";
  return `${version.major}.${version.minor}.${version.patch}${pre}`;
}

/** The lowest version `range` admits, as npm `semver.minVersion` finds it; `null` when none. */
export function minVersionOf(range: Range): string | null {
  for (const candidate of [v(0, 0, 0), v(0, 0, 0, ZERO)]) {
    if (satisfies(candidate, range)) return format(candidate);
  }
  let lowest: Version | undefined;
  for (const p of range.primitives) {
    let candidate: Version;
    if (p.op === ">") {
      candidate = p.version.pre.length === 0
        ? v(p.version.major, p.version.minor, p.version.patch + 1)
        : v(p.version.major, p.version.minor, p.version.patch, [...p.version.pre, 0]);
    } else if (p.op === ">=" || p.op === "=") candidate = p.version;
    else continue;
    if (lowest === undefined || compareVersions(candidate, lowest) > 0) lowest = candidate;
  }
  return lowest !== undefined && satisfies(lowest, range) ? format(lowest) : null;
}
