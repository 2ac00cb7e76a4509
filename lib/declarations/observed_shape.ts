/**
 * Result shapes learned from real answers of tools that declare no `outputSchema` (pure data and
 * text): the {@link Shape} data model that the catalog derives and stores, and its rendering as a
 * TypeScript type that a later answer's value type-checks against.
 *
 * @module
 */
import { renderKey } from "./_ts_text.ts";

/**
 * The JSON type of the values a tool returned, never a value: JSON-serializable, so the tool cache
 * stores it as it is.
 *
 * - `"string"`, `"number"`, `"boolean"`, `"null"`: a primitive; `"unknown"`: anything (a cut).
 * - `{ t: "text" }`: the `type` tag of an MCP content block (`text`, `image`, `audio`, `resource`,
 *   `resource_link` only: fixed protocol words, never a value of the answer's own data).
 * - `{ a: Shape | null }`: an array of that element shape; `null` when only empty arrays were seen.
 * - `{ o: [key, shape, flags][] }`: an object (a record) with those properties in first-seen order;
 *   `flags` is `1` for a property some answers lacked (optional), plus 2 × the times it was seen not
 *   `null` (counted up to {@link SHAPE_SURE_SIGHTINGS}). `x: 1` marks an object cut to its first
 *   properties: it renders an index signature `[key: string]: unknown`.
 * - `{ r: Shape }`: a map (`Record<string, T>`); its keys are never kept.
 * - `{ u: Shape[] }`: a union of 2 to 6 shapes, none of them a union or `"unknown"`.
 */
export type Shape =
  | "string"
  | "number"
  | "boolean"
  | "null"
  | "unknown"
  | TagShape
  | ArrayShape
  | ObjectShape
  | RecordShape
  | UnionShape;

/** The `type` tag of an MCP content block, e.g. `{ t: "image" }` (see {@link Shape}). */
export interface TagShape {
  readonly t: string;
}
/** An array; `a: null` when only empty arrays were seen (see {@link Shape}). */
export interface ArrayShape {
  readonly a: Shape | null;
}
/**
 * One property of an {@link ObjectShape}: name, shape, flags (`1` when optional, plus 2 × the
 * times it was seen not `null`, at most {@link SHAPE_SURE_SIGHTINGS}).
 */
export type ShapeProperty = readonly [key: string, shape: Shape, flags: number];

/**
 * Times a property must be seen not `null` before a string, number or object there is declared
 * without `| null`: one answer cannot tell that `body: "text"` is never `null`.
 */
export const SHAPE_SURE_SIGHTINGS = 3;

/** Whether a property's flags mark it optional. */
export function isOptionalProperty(flags: number): boolean {
  return (flags & 1) === 1;
}

/** Times a property was seen not `null` (at most {@link SHAPE_SURE_SIGHTINGS}). */
export function propertySightings(flags: number): number {
  return flags >> 1;
}

/** Flags of a property: optional or not, seen not `null` `sightings` times (capped). */
export function propertyFlags(optional: boolean, sightings: number): number {
  return (optional ? 1 : 0) + 2 * Math.min(SHAPE_SURE_SIGHTINGS, sightings);
}
/** A record-like object (see {@link Shape}). */
export interface ObjectShape {
  readonly o: readonly ShapeProperty[];
  /** `1`: cut to its first properties (rendered with `[key: string]: unknown`). */
  readonly x?: 1;
}
/** A map whose keys are not kept (see {@link Shape}). */
export interface RecordShape {
  readonly r: Shape;
}
/** A bounded union (see {@link Shape}). */
export interface UnionShape {
  readonly u: readonly Shape[];
}

/** What is known of one tool's results: its merged shape and how many answers it was learned from. */
export interface ObservedResult {
  /** Successful calls observed (all sessions since the tool last changed). */
  calls: number;
  shape: Shape;
}

/**
 * Finds the observed result of a tool as listed (its name, description and input schema must be
 * those it was learned for), if any; declared `outputSchema`s are checked by the caller.
 */
export type ObservedLookup = (
  tool: { name: string; description?: string | undefined; inputSchema?: unknown },
) => ObservedResult | undefined;

/** Longest one-line rendering of an object before it is laid out one property per line, in UTF-16 units. */
const INLINE_OBJECT_MAX_CHARS = 90;

/**
 * The TypeScript type of `shape`, e.g. `{ items: { id: number; title: string }[]; next?: string }`.
 * Objects longer than 90 characters on one line are laid out one property per line, indented by
 * two spaces per level from `indent`. Property names are quoted where they are not identifiers.
 * A shape that is `"null"` alone renders `unknown` (a value seen only as `null` says nothing of
 * its type otherwise), and a property seen not `null` fewer than {@link SHAPE_SURE_SIGHTINGS}
 * times whose shape is a string, object or map (nullable in many APIs) gets `| null`. Unions
 * list `null` last.
 * Every rendering type-checks under strict `deno check` (`exactOptionalPropertyTypes` included).
 *
 * @param shape The shape.
 * @param indent Nesting level of the line the type starts on. @default 0
 * @example
 * ```ts
 * import { renderShape } from "./observed_shape.ts";
 * renderShape({ o: [["id", "number", 0], ["next", "string", 1]] }); // "{ id: number; next?: string }"
 * ```
 */
export function renderShape(shape: Shape, indent = 0): string {
  // A value seen only as `null` says nothing of its type when it is not null (`email: null` today,
  // a string tomorrow): it is `unknown`. Beside other members (`string | null`) it stays `null`.
  if (shape === "null") return "unknown";
  if (typeof shape === "string") return shape;
  if ("t" in shape) return JSON.stringify(shape.t);
  if ("a" in shape) {
    if (shape.a === null) return "unknown[]";
    const element = renderShape(shape.a, indent);
    return typeof shape.a === "object" && "u" in shape.a ? `(${element})[]` : `${element}[]`;
  }
  if ("r" in shape) return `Record<string, ${renderShape(shape.r, indent)}>`;
  if ("u" in shape) {
    const members = shape.u.filter((m) => m !== "null").map((m) => renderShape(m, indent));
    return (shape.u.includes("null") ? [...members, "null"] : members).join(" | ");
  }
  return renderObject(shape, indent);
}

function renderObject(shape: ObjectShape, indent: number): string {
  const members = shape.o.map(([key, value, flags]) => {
    const type = renderShape(value, indent + 1);
    const mayBeNull = propertySightings(flags) < SHAPE_SURE_SIGHTINGS && isNullableKind(value);
    return `${renderKey(key)}${isOptionalProperty(flags) ? "?" : ""}: ${type}${mayBeNull ? " | null" : ""}`;
  });
  if (shape.x) members.push("[key: string]: unknown");
  if (members.length === 0) return "{}";
  const inline = `{ ${members.join("; ")} }`;
  if (inline.length <= INLINE_OBJECT_MAX_CHARS && !inline.includes("\n")) return inline;
  const pad = "  ".repeat(indent + 1);
  return `{\n${members.map((m) => `${pad}${m};`).join("\n")}\n${"  ".repeat(indent)}}`;
}

/** Strings, objects and maps (and unions of them without `null`): often `null` in APIs (ids and counts rarely). */
function isNullableKind(shape: Shape): boolean {
  if (shape === "string") return true;
  if (typeof shape !== "object") return false;
  if ("u" in shape) return shape.u.every(isNullableKind);
  return "o" in shape || "r" in shape;
}

/**
 * The marked return type of a method whose result type was learned, e.g.
 * `/** Returns (observed in 12 calls): *\/ Promise<{ id: number }>` (the marker says it is a
 * hint, not a promise of the server).
 *
 * @param observed The tool's observed result.
 * @param indent Nesting level of the method's line. @default 1
 */
export function renderObservedReturn(observed: ObservedResult, indent = 1): string {
  const calls = `${observed.calls} call${observed.calls === 1 ? "" : "s"}`;
  return `/** Returns (observed in ${calls}): */ Promise<${renderShape(observed.shape, indent)}>`;
}
