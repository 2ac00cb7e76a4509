/**
 * Structural questions about JSON Schema objects that the converter asks
 * before rendering: which keywords constrain, how siblings of a composition
 * fold into its branches, and how a tool takes its argument. Private to the
 * declarations concept.
 *
 * @module
 */

import { isPlainObject, refOf, SchemaDocument } from "./_schema_refs.ts";

/** Keywords that make a schema a reference. */
export const REF_KEYS = ["$ref", "$dynamicRef", "$recursiveRef"];
/** Composition keywords. */
export const COMPOSITION_KEYS = ["allOf", "anyOf", "oneOf"];
/** Keywords that narrow a type; a schema with none of them (and no composition or ref) is `unknown`. */
const CONSTRAINT_KEYS = [
  "type",
  "properties",
  "patternProperties",
  "additionalProperties",
  "items",
  "prefixItems",
  "additionalItems",
  "required",
  "const",
  "enum",
];

/**
 * How a tool takes its argument, judged from its input schema: `none` when it
 * declares no properties (nor a map, nor branches that do), `required` when
 * something is required (in every `anyOf`/`oneOf` branch, or anywhere in
 * `allOf`), else `optional`. A root `$ref` is followed.
 */
export function inputArity(schema: unknown): "none" | "optional" | "required" {
  const doc = new SchemaDocument(schema);
  const level = arityOf(doc, schema, 0);
  return level === 0 ? "none" : level === 1 ? "optional" : "required";
}

function arityOf(doc: SchemaDocument, schema: unknown, depth: number): number {
  if (!isPlainObject(schema) || depth > 16) return 0;
  let level = 0;
  const ref = refOf(schema);
  if (ref !== undefined) {
    const target = doc.resolve(ref);
    if (target.ok) level = arityOf(doc, target.schema, depth + 1);
  }
  const hasProperties = isPlainObject(schema.properties) && Object.keys(schema.properties).length > 0;
  const hasRequired = Array.isArray(schema.required) && schema.required.length > 0;
  const hasMap =
    (isPlainObject(schema.additionalProperties) && Object.keys(schema.additionalProperties).length > 0) ||
    (isPlainObject(schema.patternProperties) && Object.keys(schema.patternProperties).length > 0);
  if (hasRequired) level = 2;
  else if (hasProperties || hasMap) level = Math.max(level, 1);
  if (Array.isArray(schema.allOf)) {
    for (const member of schema.allOf) level = Math.max(level, arityOf(doc, member, depth + 1));
  }
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = schema[keyword];
    if (!Array.isArray(branches) || branches.length === 0) continue;
    const levels = branches.map((b) => arityOf(doc, b, depth + 1));
    level = Math.max(level, levels.every((l) => l === 2) ? 2 : Math.max(...levels) > 0 ? 1 : 0);
  }
  return level;
}

/** A shallow copy of `schema` without `keys`. */
export function omit(schema: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/** Whether `schema` narrows a type by itself (a type keyword, `const`/`enum`, or a reference). */
export function hasConstraints(schema: Record<string, unknown>): boolean {
  return CONSTRAINT_KEYS.some((k) => Object.hasOwn(schema, k)) || refOf(schema) !== undefined;
}

/** Whether `schema` has `allOf`, `anyOf` or `oneOf`. */
export function hasComposition(schema: Record<string, unknown>): boolean {
  return COMPOSITION_KEYS.some((k) => Array.isArray(schema[k]));
}

/** `object` when object keywords are present, `array` for array keywords, else nothing to go on. */
export function inferType(schema: Record<string, unknown>): "object" | "array" | undefined {
  if (
    ["properties", "patternProperties", "additionalProperties", "required"].some((k) =>
      Object.hasOwn(schema, k)
    )
  ) {
    return "object";
  }
  if (["items", "prefixItems", "additionalItems"].some((k) => Object.hasOwn(schema, k))) return "array";
  return undefined;
}

/** Sibling keywords can be folded into each branch when no branch is a ref or a composition. */
export function canDistribute(own: Record<string, unknown>, branches: unknown[]): boolean {
  if (Object.hasOwn(own, "const") || Object.hasOwn(own, "enum")) return false;
  return branches.every((b) => isPlainObject(b) && refOf(b) === undefined && !hasComposition(b));
}

/** Both schemas at once (`allOf` of two inline schemas), or `false` when their types cannot meet. */
export function mergeSchemas(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
): Record<string, unknown> | false {
  const out: Record<string, unknown> = { ...a, ...b };
  if (a.type !== undefined && b.type !== undefined) {
    const types = intersectTypes(a.type, b.type);
    if (types.length === 0) return false;
    out.type = types.length === 1 ? types[0] : types;
  }
  if (isPlainObject(a.properties) || isPlainObject(b.properties)) {
    const props: Record<string, unknown> = { ...(isPlainObject(a.properties) ? a.properties : {}) };
    for (const [k, v] of Object.entries(isPlainObject(b.properties) ? b.properties : {})) {
      const mine = props[k];
      const mergeable = isPlainObject(mine) && isPlainObject(v) && refOf(mine) === undefined &&
        refOf(v) === undefined &&
        !hasComposition(mine) && !hasComposition(v);
      const merged = mergeable ? mergeSchemas(mine, v) : undefined;
      props[k] = mine === undefined ? v : merged !== undefined ? merged : { allOf: [mine, v] };
    }
    out.properties = props;
  }
  const required = [a.required, b.required].flatMap((r) => (Array.isArray(r) ? r : []));
  if (required.length > 0) out.required = [...new Set(required)];
  return out;
}

/** The `type` names both sides allow (`integer` & `number` = `integer`). */
export function intersectTypes(a: unknown, b: unknown): string[] {
  const list = (t: unknown) => (Array.isArray(t) ? t : [t]).filter((x): x is string => typeof x === "string");
  const right = list(b);
  const out: string[] = [];
  for (const t of list(a)) {
    if (right.includes(t)) out.push(t);
    else if (t === "number" && right.includes("integer")) out.push("integer");
    else if (t === "integer" && right.includes("number")) out.push("integer");
  }
  return [...new Set(out)];
}
