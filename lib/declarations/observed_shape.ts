/**
 * Result shapes learned from real answers of tools that declare no `outputSchema` (pure data and
 * text): the {@link Shape} data model that the catalog derives and stores, and its rendering as a
 * TypeScript type that a later answer's value type-checks against.
 *
 * The stored shape is what the answers showed; what one answer cannot show is decided here, when it
 * is rendered (so a rule applies to shapes already in the cache, and nothing but shapes is stored):
 * a string, object or map seen non-null fewer than 3 times may be `null`; a free-form field's flat
 * object is open; a value slot is `string | number | null`; a pagination cursor (and an object of
 * cursors only) may be `null` or absent; list items that differ in several fields have each field
 * optional; a map of values of mixed kinds is `Record<string, unknown>`; content blocks admit both
 * forms of a resource; a text tool with a media switch may answer blocks, and a blocks tool text
 * (see {@link renderShape} and {@link renderObservedType}; the names are in `_shape_hints.ts`).
 *
 * @module
 */
import { renderKey } from "./_ts_text.ts";
import { isCursorKey, isOpenObjectKey, isValueSlotKey, mediaSwitches } from "./_shape_hints.ts";

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
 * Every rendering type-checks under strict `deno check` (`exactOptionalPropertyTypes` included).
 *
 * It declares what the answers seen showed, widened only where one answer is known not to show
 * what the next may hold (each rule a kind of failure of the recorded corpus):
 * - a shape that is `"null"` alone renders `unknown` (a value seen only as `null` says nothing of
 *   its type otherwise); beside other members it stays `null`, listed last;
 * - **null later**: a property seen not `null` fewer than {@link SHAPE_SURE_SIGHTINGS} times whose
 *   shape is a string, object or map (nullable in many APIs; ids, counts and flags rarely) gets
 *   `| null`, and a pagination cursor (`endCursor`, `next_cursor`, `next`...) always does;
 * - **missing later**: the object of a free-form field (`metadata`, `extra`, `attributes`,
 *   `payload`, `settings`...) whose values are all primitives or arrays of primitives keeps its
 *   property names and types, but each is optional and an index signature `[key: string]: unknown`
 *   follows: which keys one answer shows says nothing of the next (an object holding arrays or
 *   objects there, such as a connection's `labels: { nodes }`, is a structure and stays as seen);
 * - **number vs string**: a string or number under a name like `value` (`defaultValue`,
 *   `field_value`: a custom field's, a setting's, a tag's, whose type is the data's own) renders
 *   `string | number | null`;
 * - **block kind**: content blocks with an embedded `resource` also admit a `resource_link`, and
 *   the other way round (the same resource, linked or embedded, often by an argument's choice).
 *
 * An optional property named like a member every object inherits (`toString`, `constructor`...) also
 * admits that member (`toString?: boolean | Object["toString"]`): TypeScript checks an answer without
 * the property against the inherited member.
 *
 * @param shape The shape.
 * @param indent Nesting level of the line the type starts on. @default 0
 * @example
 * ```ts
 * import { renderShape } from "./observed_shape.ts";
 * renderShape({ o: [["id", "number", 0], ["next", "string", 1]] }); // "{ id: number; next?: string | null }"
 * ```
 */
export function renderShape(shape: Shape, indent = 0): string {
  return render(shape, indent, "closed");
}

/**
 * How an object renders: as seen (`closed`); a free-form field's (`open`: every property optional,
 * then `[key: string]: unknown`); an item of a list whose items differ in the fields they have
 * (`loose`: every property optional).
 */
type ObjectMode = "closed" | "open" | "loose";

/** {@link renderShape}; `open`: `shape` is a free-form field's (its objects render open). */
function render(shape: Shape, indent: number, mode: ObjectMode): string {
  // A value seen only as `null` says nothing of its type when it is not null (`email: null` today,
  // a string tomorrow): it is `unknown`. Beside other members (`string | null`) it stays `null`.
  if (shape === "null") return "unknown";
  if (typeof shape === "string") return shape;
  if ("t" in shape) return JSON.stringify(shape.t);
  if ("a" in shape) {
    if (shape.a === null) return "unknown[]";
    const members = typeof shape.a === "object" && "u" in shape.a ? shape.a.u : [shape.a];
    const extra = siblingBlocks(members);
    // Items that differ in the fields they have (some left out of some items) are variants: which
    // of their fields the next item has, the ones seen cannot tell.
    const items: ObjectMode = members.some(isOfSeveralKinds) ? "loose" : "closed";
    const element = extra.length === 0 ? render(shape.a, indent, items) : [
      ...members.map((m) => render(m, indent, items)),
      ...extra,
    ].join(" | ");
    return members.length > 1 || extra.length > 0 ? `(${element})[]` : `${element}[]`;
  }
  if ("r" in shape) {
    // Values of different kinds (a string, an object, an array) are a record's fields under keys
    // that look like ids (Jira's `customfield_10016`), only the first of which were sampled: any value.
    return `Record<string, ${isMixedKinds(shape.r) ? "unknown" : render(shape.r, indent, "closed")}>`;
  }
  if ("u" in shape) {
    const members = shape.u.filter((m) => m !== "null").map((m) => render(m, indent, mode));
    return (shape.u.includes("null") ? [...members, "null"] : members).join(" | ");
  }
  return renderObject(shape, indent, mode);
}

/**
 * The members TypeScript's `Object` type gives every object. An object literal without such a property is
 * checked against the inherited member (`{}` is not a `{ toString?: boolean }`), so an optional one also
 * admits the inherited member's type.
 */
const INHERITED_MEMBERS: ReadonlySet<string> = new Set([
  "constructor",
  "toString",
  "toLocaleString",
  "valueOf",
  "hasOwnProperty",
  "isPrototypeOf",
  "propertyIsEnumerable",
]);

function renderObject(shape: ObjectShape, indent: number, mode: ObjectMode): string {
  const members = shape.o.map(([key, value, flags]) => {
    const cursor = isCursorKey(key) && value === "string";
    const optional = mode !== "closed" || cursor || isPagingObject(value) || isOptionalProperty(flags)
      ? "?"
      : "";
    const inherited = optional && INHERITED_MEMBERS.has(key) ? ` | Object[${JSON.stringify(key)}]` : "";
    if (isValueSlotKey(key) && isStringOrNumber(value)) {
      return `${renderKey(key)}${optional}: string | number | null${inherited}`;
    }
    const type = render(value, indent + 1, isOpenObjectKey(key) && isFlatObject(value) ? "open" : "closed");
    const mayBeNull = isNullableKind(value) &&
      (propertySightings(flags) < SHAPE_SURE_SIGHTINGS || cursor);
    return `${renderKey(key)}${optional}: ${type}${mayBeNull ? " | null" : ""}${
      type === "unknown" ? "" : inherited
    }`;
  });
  if (shape.x || (mode === "open" && members.length > 0)) members.push("[key: string]: unknown");
  if (members.length === 0) return "{}";
  const inline = `{ ${members.join("; ")} }`;
  if (inline.length <= INLINE_OBJECT_MAX_CHARS && !inline.includes("\n")) return inline;
  const pad = "  ".repeat(indent + 1);
  return `{\n${members.map((m) => `${pad}${m};`).join("\n")}\n${"  ".repeat(indent)}}`;
}

/**
 * An object (or objects, or `null`) whose properties are all strings, numbers, booleans, `null` or
 * arrays of them: a free-form field's bag of values (`{ title, value, filename }`), not a structure
 * such as a connection's `{ nodes: [...] }` under `labels`.
 */
function isFlatObject(shape: Shape): boolean {
  if (typeof shape !== "object") return false;
  if ("u" in shape) {
    return shape.u.some((m) => m !== "null") && shape.u.every((m) => m === "null" || isFlatObject(m));
  }
  return "o" in shape && shape.o.every(([, v]) => isScalar(v));
}

/** A primitive, an array of primitives, or a union of them. */
function isScalar(shape: Shape, inArray = false): boolean {
  if (typeof shape === "string") return true;
  if ("a" in shape) return !inArray && (shape.a === null || isScalar(shape.a, true));
  return "u" in shape && shape.u.every((m) => isScalar(m, inArray));
}

/**
 * Properties some items of a list lack, at least, for the items to be of several kinds (a bot's
 * message, a user's, a thread's) rather than one kind with an optional part (a GitHub issue's
 * `pull_request`).
 */
const VARIANT_ITEM_OPTIONALS = 2;

/** An object (not a content block) with {@link VARIANT_ITEM_OPTIONALS} or more properties some of its values lacked. */
function isOfSeveralKinds(shape: Shape): boolean {
  return typeof shape === "object" && "o" in shape && blockTag(shape) === undefined &&
    shape.o.filter(([, , flags]) => isOptionalProperty(flags)).length >= VARIANT_ITEM_OPTIONALS;
}

/**
 * An object that holds cursors only (Slack's `response_metadata: { next_cursor }`): a page's
 * pagination, which an API leaves out when there is no other page.
 */
function isPagingObject(shape: Shape): boolean {
  return typeof shape === "object" && "o" in shape && shape.o.length > 0 &&
    shape.o.every(([key, value]) => isCursorKey(key) && value === "string");
}

/** A union with members of two or more kinds among primitives, arrays and objects (`null` aside). */
function isMixedKinds(shape: Shape): boolean {
  if (typeof shape !== "object" || !("u" in shape)) return false;
  const kinds = new Set(
    shape.u.filter((m) => m !== "null").map((m) =>
      typeof m === "string" || "t" in m ? "p" : "a" in m ? "a" : "o"
    ),
  );
  return kinds.size > 1;
}

/** Strings, numbers and `null` only (at least one string or number): a value slot's shapes. */
function isStringOrNumber(shape: Shape): boolean {
  if (shape === "string" || shape === "number") return true;
  return typeof shape === "object" && "u" in shape && shape.u.some((m) => m !== "null") &&
    shape.u.every((m) => m === "string" || m === "number" || m === "null");
}

/** Strings, objects and maps (and unions of them without `null`): often `null` in APIs (ids and counts rarely). */
function isNullableKind(shape: Shape): boolean {
  if (shape === "string") return true;
  if (typeof shape !== "object") return false;
  if ("u" in shape) return shape.u.every(isNullableKind);
  return "o" in shape || "r" in shape;
}

/** The `type` tag of a content block's shape, if it is one. */
function blockTag(shape: Shape): string | undefined {
  if (typeof shape !== "object" || !("o" in shape)) return undefined;
  const tag = shape.o.find((p) => p[0] === "type")?.[1];
  return typeof tag === "object" && "t" in tag ? tag.t : undefined;
}

/** An array of content blocks (its elements carry a block `type` tag). */
function isBlockArray(shape: Shape): boolean {
  if (typeof shape !== "object" || !("a" in shape) || shape.a === null) return false;
  const members = typeof shape.a === "object" && "u" in shape.a ? shape.a.u : [shape.a];
  return members.some((m) => blockTag(m) !== undefined);
}

/** The two forms of a resource in content blocks, as the MCP specification declares them. */
const RESOURCE_BLOCK =
  '{ type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }';
const RESOURCE_LINK_BLOCK =
  '{ type: "resource_link"; uri: string; name: string; mimeType?: string; description?: string }';
const TEXT_BLOCK = '{ type: "text"; text: string }';
const MEDIA_BLOCKS = {
  image: '{ type: "image"; data: string; mimeType: string }',
  audio: '{ type: "audio"; data: string; mimeType: string }',
} as const;

/** The resource form not seen beside the one seen among content blocks' `members`, rendered. */
function siblingBlocks(members: readonly Shape[]): string[] {
  const tags = new Set(members.map(blockTag));
  if (tags.has("resource") && !tags.has("resource_link")) return [RESOURCE_LINK_BLOCK];
  if (tags.has("resource_link") && !tags.has("resource")) return [RESOURCE_BLOCK];
  return [];
}

/**
 * The type of a tool's observed results as declared: {@link renderShape}, except that a tool seen
 * answering text alone whose input schema has a switch that adds media (`includeImage: boolean`)
 * is declared `string | ({ type: "text"; text: string } | { type: "image"; ... })[]` (**text vs
 * media**: with the switch on, the answer is content blocks, which the script receives as they are).
 *
 * @param observed The tool's observed result.
 * @param options.tool The tool as listed (its input schema is read). @default none
 * @param options.indent Nesting level of the line the type starts on. @default 0
 */
export function renderObservedType(
  observed: Pick<ObservedResult, "shape">,
  options: { tool?: { inputSchema?: unknown } | undefined; indent?: number } = {},
): string {
  const type = renderShape(observed.shape, options.indent ?? 0);
  if (options.tool === undefined) return type;
  const blocks = isBlockArray(observed.shape);
  if (observed.shape !== "string" && !blocks) return type;
  const media = mediaSwitches(options.tool.inputSchema);
  if (media.length === 0) return type;
  // Seen with the switch off: text; seen with it on: blocks, and text alone once it is off again.
  if (blocks) return `string | ${type}`;
  return `string | (${[TEXT_BLOCK, ...media.map((kind) => MEDIA_BLOCKS[kind])].join(" | ")})[]`;
}

/**
 * The marked return type of a method whose result type was learned, e.g.
 * `/** Returns (observed in 12 calls): *\/ Promise<{ id: number }>` (the marker says it is a
 * hint, not a promise of the server).
 *
 * @param observed The tool's observed result.
 * @param indent Nesting level of the method's line. @default 1
 * @param tool The tool as listed, for {@link renderObservedType}. @default none
 */
export function renderObservedReturn(
  observed: ObservedResult,
  indent = 1,
  tool?: { inputSchema?: unknown },
): string {
  const calls = `${observed.calls} call${observed.calls === 1 ? "" : "s"}`;
  return `/** Returns (observed in ${calls}): */ Promise<${renderObservedType(observed, { tool, indent })}>`;
}
