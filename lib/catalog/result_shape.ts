/**
 * Learns what a tool without `outputSchema` returns: the bounded {@link Shape} of one unwrapped
 * value (JSON types only, never a value), and the merge of two shapes. Everything is bounded so
 * that any answer (60 MB wide, 10,000 keys, 1,000 levels deep) costs little of the host thread:
 * depth, keys per object, union members, array and map elements sampled, nodes visited per answer,
 * and the stored size per tool. Every cut keeps the shape true of the real answer (a subtree cut
 * becomes `unknown`, an object cut keeps an index signature).
 *
 * @module
 */
import {
  isOptionalProperty,
  type ObjectShape,
  propertyFlags,
  propertySightings,
  type Shape,
  SHAPE_SURE_SIGHTINGS,
  type ShapeProperty,
} from "../declarations/observed_shape.ts";
import { FieldKeyMemo } from "./_field_keys.ts";

export { FieldKeyMemo, isFieldKey } from "./_field_keys.ts";

/** Deepest nesting kept: objects and arrays below it are `unknown`. */
export const SHAPE_MAX_DEPTH = 6;
/** Most properties of a record; an object with more keys is a map (`Record<string, T>`). */
export const SHAPE_MAX_KEYS = 48;
/** Most members of a union; more become `unknown`. */
export const SHAPE_MAX_UNION = 6;
/** Largest stored shape of one tool, in UTF-16 units of its JSON (4 KiB). */
export const SHAPE_MAX_BYTES = 4_096;
/** Array elements (the first half, then spread evenly) and map values (the first) looked at per array or map. */
export const SHAPE_SAMPLE_ELEMENTS = 16;
/** Values visited per answer: past it, what is left to look at becomes `unknown`. */
export const SHAPE_MAX_NODES = 2_000;

/** Flags of a property present and not `null` once (see `ShapeProperty`). */
const SEEN_ONCE = propertyFlags(false, 1);
/** Flags of a property whose type is sure (a content block's own fields). */
const SURE = propertyFlags(false, SHAPE_SURE_SIGHTINGS);

/** The flags of a property seen on both sides (`a` and `b` are flags), or on one side only. */
function mergeFlags(a: number, b: number | undefined, across: boolean): number {
  if (b === undefined) return a | 1;
  const optional = isOptionalProperty(a) || isOptionalProperty(b);
  const [x, y] = [propertySightings(a), propertySightings(b)];
  // Elements of one answer are one sighting: only separate answers are evidence that it is never null.
  return propertyFlags(optional, across ? x + y : Math.max(x, y));
}

/** MCP content-block `type` words: the only string values a shape keeps (as tags of content blocks). */
const BLOCK_TYPES = new Set(["text", "image", "audio", "resource", "resource_link"]);
/**
 * The fields the MCP specification requires of each content block; its other fields (`annotations`,
 * `_meta`, a link's `title`...) are optional, whatever one answer showed.
 */
const BLOCK_REQUIRED: Readonly<Record<string, readonly string[]>> = {
  text: ["type", "text"],
  image: ["type", "data", "mimeType"],
  audio: ["type", "data", "mimeType"],
  resource: ["type", "resource"],
  resource_link: ["type", "uri", "name"],
};
/** Of an embedded resource's contents, only `uri` is required (`text` or `blob`, `mimeType?`). */
const RESOURCE_REQUIRED: readonly string[] = ["uri"];

/** Per-answer state of {@link deriveShape}: the node budget left. */
interface Walk {
  nodes: number;
  /** The answer is the tool's content blocks: `type` tags of blocks are kept. */
  blocks: boolean;
  keys: FieldKeyMemo;
  /** The object being derived is the `resource` of an embedded-resource content block. */
  inResource: boolean;
}

/**
 * The shape of one unwrapped tool result (see {@link Shape}): bounded to {@link SHAPE_MAX_DEPTH},
 * {@link SHAPE_MAX_KEYS} keys per record, {@link SHAPE_MAX_UNION} union members,
 * {@link SHAPE_SAMPLE_ELEMENTS} elements per array or values per map and {@link SHAPE_MAX_NODES}
 * values per answer. Objects whose keys are not all field names ({@link isFieldKey}), or that have
 * more than {@link SHAPE_MAX_KEYS}, become maps. Never throws for a JSON value; a value that is not
 * JSON (a function, `undefined`) is `unknown`.
 *
 * @param value The value the script received.
 * @param options.contentBlocks `true` when `value` is the call's content blocks as they are (not
 *   only text): their `type` tags are kept as literal types. @default false
 * @param options.keys Remembers which keys are field names across answers. @default a fresh one
 */
export function deriveShape(
  value: unknown,
  options: { contentBlocks?: boolean; keys?: FieldKeyMemo | undefined } = {},
): Shape {
  const keys = options.keys ?? new FieldKeyMemo();
  const blocks = options.contentBlocks === true;
  return derive(value, 0, { nodes: SHAPE_MAX_NODES, blocks, keys, inResource: false });
}

function derive(value: unknown, depth: number, walk: Walk): Shape {
  if (walk.nodes-- <= 0) return "unknown";
  switch (typeof value) {
    case "string":
      return "string";
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "object":
      if (value === null) return "null";
      if (depth >= SHAPE_MAX_DEPTH) return "unknown";
      return Array.isArray(value) ? deriveArray(value, depth, walk) : deriveObject(value, depth, walk);
    default:
      return "unknown";
  }
}

/** Indexes of at most {@link SHAPE_SAMPLE_ELEMENTS} of `length` items: the first half, then spread. */
function sampleIndexes(length: number): number[] {
  if (length <= SHAPE_SAMPLE_ELEMENTS) return Array.from({ length }, (_, i) => i);
  const head = SHAPE_SAMPLE_ELEMENTS / 2;
  const out = Array.from({ length: head }, (_, i) => i);
  const step = (length - head) / head;
  for (let i = 0; i < head; i++) out.push(head + Math.floor(i * step));
  return out;
}

function deriveArray(value: unknown[], depth: number, walk: Walk): Shape {
  if (value.length === 0) return { a: null };
  let element: Shape | undefined;
  for (const i of sampleIndexes(value.length)) {
    const item = derive(value[i], depth + 1, walk);
    element = element === undefined ? item : merge(element, item, false);
  }
  return { a: element ?? "unknown" };
}

function deriveObject(value: object, depth: number, walk: Walk): Shape {
  const record = value as Record<string, unknown>;
  const keys: string[] = [];
  // One pass over the keys (a key walk of a 10,000-key map costs milliseconds): field names until
  // a key shows a map, then the first values of that map.
  let isMap = false;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    if (!isMap && keys.length < SHAPE_MAX_KEYS && walk.keys.isFieldKey(key)) {
      keys.push(key);
      continue;
    }
    isMap = true;
    keys.push(key);
    if (keys.length >= SHAPE_SAMPLE_ELEMENTS) break;
  }
  if (isMap) return deriveMap(record, keys.slice(0, SHAPE_SAMPLE_ELEMENTS), depth, walk);
  const props: ShapeProperty[] = [];
  // A content block's fields are typed by the protocol (`text` is a string, `annotations` optional):
  // nothing to guess there.
  const isBlock = walk.blocks && depth === 1;
  const isResource = walk.inResource;
  walk.inResource = false;
  const tag = isBlock && typeof record.type === "string" && BLOCK_TYPES.has(record.type)
    ? record.type
    : undefined;
  const required = isResource ? RESOURCE_REQUIRED : tag === undefined ? undefined : BLOCK_REQUIRED[tag];
  const seen = isBlock || isResource ? SURE : SEEN_ONCE;
  // A tagged variant (`{ type: "database_id", database_id: ... }`, a Notion block's `paragraph`): the
  // property the `type` tag names is the variant's own, another variant has another (only whether a
  // key equals the tag is looked at; the tag itself is not kept).
  const variant = tag === undefined && typeof record.type === "string" && record.type !== "type"
    ? record.type
    : undefined;
  for (const key of keys) {
    const item = record[key];
    const optional = (required !== undefined && !required.includes(key)) || key === variant;
    const flags = (item === null ? 0 : seen) | (optional ? 1 : 0);
    if (tag !== undefined && key === "type") {
      props.push([key, { t: tag }, flags]);
      walk.nodes--;
      continue;
    }
    walk.inResource = tag === "resource" && key === "resource";
    props.push([key, derive(item, depth + 1, walk), flags]);
    walk.inResource = false;
  }
  return isKeyedCollection(props) ? { r: mapValues({ o: props }, false) } : { o: props };
}

/** Keys of an object of at least this many properties whose values are all alike are a map's. */
export const SHAPE_COLLECTION_KEYS = 8;

/**
 * Whether an object's properties look like the entries of a collection keyed by name or id
 * (`{ alice: { id, email }, bob: { id, email }, ... }`) rather than fields: at least
 * {@link SHAPE_COLLECTION_KEYS} of them, every value an object with the same keys in the same order.
 * Fields with heterogeneous values, or primitive ones (`{ "+1": 3, laugh: 0 }`), stay fields.
 */
function isKeyedCollection(props: readonly ShapeProperty[]): boolean {
  if (props.length < SHAPE_COLLECTION_KEYS) return false;
  const first = props[0]![1];
  if (typeof first !== "object" || !("o" in first) || first.o.length === 0) return false;
  const names = first.o.map((p) => p[0]).join("\0");
  return props.every(([, shape]) =>
    typeof shape === "object" && "o" in shape && shape.o.map((p) => p[0]).join("\0") === names
  );
}

/** A map: the merged shape of the values of its first `keys`; no key is kept. */
function deriveMap(
  record: Record<string, unknown>,
  keys: readonly string[],
  depth: number,
  walk: Walk,
): Shape {
  let values: Shape | undefined;
  for (const key of keys) {
    const item = derive(record[key], depth + 1, walk);
    values = values === undefined ? item : merge(values, item, false);
  }
  return { r: values ?? "unknown" };
}

type Kind = "p" | "t" | "a" | "o" | "u";

function kindOf(shape: Shape): Kind | "unknown" {
  if (shape === "unknown") return "unknown";
  if (typeof shape === "string") return "p";
  if ("t" in shape) return "t";
  if ("a" in shape) return "a";
  if ("u" in shape) return "u";
  return "o"; // objects and maps merge with each other
}

/** The `type` tag of an object shape, when it is a content block's. */
function tagOf(shape: Shape): string | undefined {
  if (typeof shape !== "object" || !("o" in shape)) return undefined;
  const tag = shape.o.find((p) => p[0] === "type")?.[1];
  return typeof tag === "object" && "t" in tag ? tag.t : undefined;
}

/** Whether `a` and `b` are one union member (merged into one) rather than two. */
function isSameMember(a: Shape, b: Shape): boolean {
  const kind = kindOf(a);
  if (kind !== kindOf(b)) return (kind === "t" && b === "string") || (a === "string" && kindOf(b) === "t");
  if (kind === "p") return a === b;
  if (kind === "t") return true;
  if (kind === "o") return tagOf(a) === tagOf(b);
  return true;
}

/**
 * The shape of every value either shape describes. Returns `a` itself when `b` adds nothing (so
 * a caller sees "unchanged" by identity). Objects merge property by property (a property missing
 * on one side becomes optional); a record with more than {@link SHAPE_MAX_KEYS} properties, or one
 * merged with a map, becomes a map; content blocks with different `type` tags stay separate union
 * members; a union past {@link SHAPE_MAX_UNION} members is `unknown`.
 *
 * @example
 * ```ts
 * import { mergeShapes } from "./result_shape.ts";
 * mergeShapes({ o: [["id", "number", 0]] }, { o: [["id", "number", 0], ["next", "string", 0]] });
 * // { o: [["id", "number", 0], ["next", "string", 1]] }
 * ```
 */
export function mergeShapes(a: Shape, b: Shape): Shape {
  return merge(a, b, true);
}

/** {@link mergeShapes}; `across: false` merges parts of one answer (sightings are not added up). */
function merge(a: Shape, b: Shape, across: boolean): Shape {
  if (a === b || a === "unknown") return a;
  if (b === "unknown") return b;
  const aMembers = typeof a === "object" && "u" in a ? a.u : [a];
  const bMembers = typeof b === "object" && "u" in b ? b.u : [b];
  if (aMembers.length === 1 && bMembers.length === 1 && isSameMember(a, b)) return mergeMember(a, b, across);
  const members = [...aMembers];
  let changed = false;
  for (const member of bMembers) {
    const at = members.findIndex((m) => isSameMember(m, member));
    if (at < 0) {
      members.push(member);
      changed = true;
      continue;
    }
    const merged = mergeMember(members[at]!, member, across);
    if (merged !== members[at]) {
      members[at] = merged;
      changed = true;
    }
  }
  if (!changed && typeof a === "object" && "u" in a) return a;
  if (members.length > SHAPE_MAX_UNION || members.includes("unknown")) return "unknown";
  return members.length === 1 ? members[0]! : { u: members };
}

/** Merges two shapes of one union member ({@link isSameMember}). */
function mergeMember(a: Shape, b: Shape, across: boolean): Shape {
  if (a === b || typeof a === "string") return a === "string" || b === "string" ? "string" : a;
  if (typeof b === "string") return b; // a tag merged with "string"
  if ("t" in a) return "t" in b && a.t === b.t ? a : "string";
  if ("a" in a && "a" in b) {
    if (b.a === null || a.a === b.a) return a;
    if (a.a === null) return b;
    const element = merge(a.a, b.a, across);
    return element === a.a ? a : { a: element };
  }
  if ("r" in a || "r" in b) {
    const values = merge(mapValues(a, across), mapValues(b, across), across);
    return "r" in a && values === a.r ? a : { r: values };
  }
  return mergeObjects(a as ObjectShape, b as ObjectShape, across);
}

/** The values of an object or map shape as one shape (an object's property shapes merged). */
function mapValues(shape: Shape, across: boolean): Shape {
  if (typeof shape === "object" && "r" in shape) return shape.r;
  const props = (shape as ObjectShape).o;
  let values: Shape | undefined;
  for (const [, value] of props) values = values === undefined ? value : merge(values, value, across);
  return values ?? "unknown";
}

function mergeObjects(a: ObjectShape, b: ObjectShape, across: boolean): Shape {
  // The usual case, an answer like the ones before: the same keys in the same order.
  if (a.o.length === b.o.length && (b.x !== 1 || a.x === 1)) {
    let same = true;
    let out: ShapeProperty[] | undefined;
    for (let i = 0; i < a.o.length && same; i++) {
      const pa = a.o[i]!, pb = b.o[i]!;
      if (pa[0] !== pb[0]) same = false;
      else {
        const shape = merge(pa[1], pb[1], across);
        const flags = mergeFlags(pa[2], pb[2], across);
        if (shape !== pa[1] || flags !== pa[2]) (out ??= a.o.slice(0, i)).push([pa[0], shape, flags]);
        else out?.push(pa);
      }
    }
    if (same) return out === undefined ? a : a.x === 1 ? { o: out, x: 1 } : { o: out };
  }
  const byKey = new Map<string, ShapeProperty>();
  for (const prop of b.o) byKey.set(prop[0], prop);
  let changed = b.x === 1 && a.x !== 1;
  const out: ShapeProperty[] = [];
  for (const prop of a.o) {
    const other = byKey.get(prop[0]);
    if (other === undefined) {
      if (!isOptionalProperty(prop[2])) changed = true;
      out.push(
        isOptionalProperty(prop[2]) ? prop : [prop[0], prop[1], mergeFlags(prop[2], undefined, across)],
      );
      continue;
    }
    byKey.delete(prop[0]);
    const shape = merge(prop[1], other[1], across);
    const flags = mergeFlags(prop[2], other[2], across);
    if (shape !== prop[1] || flags !== prop[2]) changed = true;
    out.push(shape === prop[1] && flags === prop[2] ? prop : [prop[0], shape, flags]);
  }
  for (const prop of byKey.values()) {
    changed = true;
    out.push([prop[0], prop[1], mergeFlags(prop[2], undefined, across)]);
  }
  if (!changed) return a;
  // Keys that grow from answer to answer with alike values were a collection's all along.
  if (out.length > SHAPE_MAX_KEYS || isKeyedCollection(out)) return { r: mapValues({ o: out }, across) };
  return a.x === 1 || b.x === 1 ? { o: out, x: 1 } : { o: out };
}

/**
 * `shape` within `maxChars` of JSON (default {@link SHAPE_MAX_BYTES}): itself when it fits, else cut
 * from the deepest level up (subtrees become `unknown`), then objects cut to their first 8
 * properties (an index signature keeps them true), else `"unknown"`. Every cut describes at least
 * every value the shape described.
 *
 * @returns The shape that fits and its JSON text length in UTF-16 units.
 */
export function boundShape(shape: Shape, maxChars = SHAPE_MAX_BYTES): { shape: Shape; chars: number } {
  let chars = JSON.stringify(shape).length;
  if (chars <= maxChars) return { shape, chars };
  for (let depth = SHAPE_MAX_DEPTH - 1; depth >= 1; depth--) {
    const cut = cutShape(shape, depth, Infinity);
    chars = JSON.stringify(cut).length;
    if (chars <= maxChars) return { shape: cut, chars };
  }
  const narrow = cutShape(shape, 2, 8);
  chars = JSON.stringify(narrow).length;
  return chars <= maxChars ? { shape: narrow, chars } : { shape: "unknown", chars: 9 };
}

/** `shape` with everything below `depth` levels `unknown` and objects cut to `maxKeys` properties. */
function cutShape(shape: Shape, depth: number, maxKeys: number): Shape {
  if (typeof shape === "string" || "t" in shape) return shape;
  if (depth <= 0) return "unknown";
  if ("a" in shape) return shape.a === null ? shape : { a: cutShape(shape.a, depth - 1, maxKeys) };
  if ("r" in shape) return { r: cutShape(shape.r, depth - 1, maxKeys) };
  if ("u" in shape) return mergeAll(shape.u.map((m) => cutShape(m, depth, maxKeys)));
  const kept = shape.o.slice(0, maxKeys).map((
    [k, v, o],
  ): ShapeProperty => [k, cutShape(v, depth - 1, maxKeys), o]);
  return kept.length < shape.o.length || shape.x === 1 ? { o: kept, x: 1 } : { o: kept };
}

function mergeAll(shapes: readonly Shape[]): Shape {
  return shapes.reduce((acc, s) => merge(acc, s, false));
}
