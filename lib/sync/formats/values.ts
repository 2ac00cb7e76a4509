/**
 * Plain-value helpers for the sync editors: structural equality of parsed documents and the
 * document a correct edit must produce, used to verify every edit by parsing its result back.
 * Private to `lib/sync/`.
 *
 * @module
 */

/** A plain object as parsers return it (possibly with a `null` prototype). */
export type PlainObject = Record<string, unknown>;

/** Whether `value` is a plain object (not an array, a date or `null`). */
export function isPlainObject(value: unknown): value is PlainObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/**
 * Structural equality of parsed values: object key order and prototypes are ignored, arrays are
 * compared in order, dates by their text, numbers with `Object.is` except that `0 === -0`.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && String(a) === String(b) && a.getTime() === b.getTime();
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isPlainObject(a) || isPlainObject(b)) {
    if (!isPlainObject(a) || !isPlainObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  if (typeof a === "number" && typeof b === "number") return a === b || (Number.isNaN(a) && Number.isNaN(b));
  return a === b;
}

/** The value at `path` in `doc`, or `undefined` when a step is missing or not an object. */
export function getAtPath(doc: unknown, path: readonly string[]): unknown {
  let node: unknown = doc;
  for (const key of path) {
    if (!isPlainObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/**
 * The document an edit must produce: `doc` with `path` set to `value` (or deleted when `value` is
 * `undefined`), missing objects on the way created. Containers on the path that end up empty are
 * dropped, because the editors may drop them. The input is not changed.
 */
export function expectedDocument(doc: unknown, path: readonly string[], value: unknown): unknown {
  const root: PlainObject = isPlainObject(doc) ? cloneObject(doc) : {};
  const parents: PlainObject[] = [root];
  let node = root;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    const copy: PlainObject = isPlainObject(next) ? cloneObject(next) : {};
    node[key] = copy;
    node = copy;
    parents.push(copy);
  }
  const last = path[path.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return pruneEmptyContainers(root, path);
}

/** `doc` with the objects along `path` removed (innermost first) while they are empty or `null`. */
export function pruneEmptyContainers(doc: unknown, path: readonly string[]): unknown {
  if (!isPlainObject(doc)) return doc;
  const root = cloneObject(doc);
  const chain: PlainObject[] = [root];
  let node: PlainObject = root;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === null) {
      // An empty YAML mapping reads as null (`extensions:`): as empty as `{}`.
      delete node[key];
      break;
    }
    if (!isPlainObject(next)) break;
    const copy = cloneObject(next);
    node[key] = copy;
    chain.push(copy);
    node = copy;
  }
  for (let i = chain.length - 1; i >= 1; i--) {
    if (Object.keys(chain[i]!).length > 0) break;
    delete chain[i - 1]![path[i - 1]!];
  }
  return root;
}

function cloneObject(obj: PlainObject): PlainObject {
  const copy: PlainObject = {};
  for (const [k, v] of Object.entries(obj)) copy[k] = v;
  return copy;
}
