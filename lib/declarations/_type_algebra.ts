/**
 * The small algebra of rendered TypeScript types used by the schema
 * converter: precedence-aware unions and intersections that absorb `unknown`
 * and `never`, drop duplicates and alias cycles, and maps that stay valid in
 * recursive aliases. Private to the declarations concept.
 *
 * @module
 */

/** Binding strength of a union (`A | B`), the loosest. */
export const PREC_UNION = 0;
/** Binding strength of an intersection (`A & B`). */
export const PREC_INTERSECTION = 1;
/** Binding strength of anything that needs no parentheses (names, literals, `{...}`, `T[]`). */
export const PREC_ATOM = 2;

/** A rendered type: its text, how tightly it binds, whether it names a hoisted type. */
export interface Rendered {
  text: string;
  prec: number;
  hasRef: boolean;
  /** A reference that would make a type alias circular; dropped by unions and intersections. */
  cycle?: true;
  /** The members of a union, so that nesting one union in another flattens and dedupes. */
  members?: Rendered[];
}

/** `unknown`. */
export const UNKNOWN: Rendered = { text: "unknown", prec: PREC_ATOM, hasRef: false };
/** `never`. */
export const NEVER: Rendered = { text: "never", prec: PREC_ATOM, hasRef: false };
/** `null`. */
export const NULL: Rendered = { text: "null", prec: PREC_ATOM, hasRef: false };
/** A reference that would close a type-alias cycle; unions and intersections drop it. */
export const CYCLE: Rendered = { text: "unknown", prec: PREC_ATOM, hasRef: false, cycle: true };

/** A type that binds tightly and names no hoisted type, e.g. `string`. */
export function atom(text: string): Rendered {
  return { text, prec: PREC_ATOM, hasRef: false };
}

/** The text of `r`, in parentheses when it binds looser than `minPrec`. */
export function parenthesize(r: Rendered, minPrec: number): string {
  return r.prec < minPrec ? `(${r.text})` : r.text;
}

/** A string-keyed map of `value`: `Record<string, T>`, or an index signature when `T` names a hoisted type. */
export function mapOf(value: Rendered): Rendered {
  // `Record<string, Self>` at the top of a type alias is circular; an index signature is not.
  const text = value.hasRef ? `{ [key: string]: ${value.text} }` : `Record<string, ${value.text}>`;
  return { text, prec: PREC_ATOM, hasRef: value.hasRef };
}

/** `A | B`: drops alias cycles, `never` and duplicates; any `unknown` absorbs the rest. */
export function unionOf(members: Rendered[]): Rendered {
  const live = members.filter((m) => !m.cycle).flatMap((m) => m.members ?? [m]);
  if (live.length === 0) return members.length > 0 ? CYCLE : NEVER;
  if (live.some((m) => m.text === "unknown")) return UNKNOWN;
  const kept = dedupe(live.filter((m) => m.text !== "never"));
  if (kept.length === 0) return NEVER;
  if (kept.length === 1) return kept[0]!;
  const text = kept.map((m) => m.text).join(" | ");
  return { text, prec: PREC_UNION, hasRef: kept.some((m) => m.hasRef), members: kept };
}

/** `A & B`: drops alias cycles, `unknown` and duplicates; any `never` absorbs the rest. */
export function intersectionOf(members: Rendered[]): Rendered {
  const live = members.filter((m) => !m.cycle);
  if (live.length === 0) return members.length > 0 ? CYCLE : UNKNOWN;
  if (live.some((m) => m.text === "never")) return NEVER;
  const kept = dedupe(live.filter((m) => m.text !== "unknown"));
  if (kept.length === 0) return UNKNOWN;
  if (kept.length === 1) return kept[0]!;
  const text = kept.map((m) => parenthesize(m, PREC_INTERSECTION)).join(" & ");
  return { text, prec: PREC_INTERSECTION, hasRef: kept.some((m) => m.hasRef) };
}

function dedupe(members: Rendered[]): Rendered[] {
  const seen = new Set<string>();
  return members.filter((m) => !seen.has(m.text) && seen.add(m.text));
}
