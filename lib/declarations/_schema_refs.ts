/**
 * One JSON Schema document as seen by the declarations renderer: resolves
 * local `$ref`s (JSON pointers, anchors, the document's own `$id`) and gives
 * each referenced subschema a content fingerprint so that two tools' same-named
 * `$defs` share a type only when they really are the same. Never reads a file
 * or the network: anything not inside the document is reported as external.
 *
 * @module
 */

/** Where a `$ref` points, or why it cannot be followed. Pointers are RFC 6901 without the leading `#`. */
export type RefTarget =
  | { ok: true; pointer: string; schema: unknown }
  | { ok: false; reason: "external" | "unresolvable" };

/** Keywords whose values are data, not subschemas: never scanned for `$ref` or anchors. */
const DATA_KEYWORDS: ReadonlySet<string> = new Set(["const", "enum", "default", "examples", "example"]);

/** Longest walk when scanning for anchors or refs, or canonicalising; deeper parts are summarised. */
const MAX_WALK_DEPTH = 128;
/** Most nodes visited by one anchor scan. */
const MAX_WALK_NODES = 50_000;

/** A plain JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The `$ref`-like reference a schema object carries, if any (`$recursiveRef` reads as `#`). */
export function refOf(schema: Record<string, unknown>): string | undefined {
  if (typeof schema.$ref === "string") return schema.$ref;
  if (typeof schema.$dynamicRef === "string") return schema.$dynamicRef;
  if (typeof schema.$recursiveRef === "string") return "#";
  return undefined;
}

/** A JSON Schema document: its root plus lazily built anchor and fingerprint tables. */
export class SchemaDocument {
  readonly root: unknown;
  #baseId: string | undefined;
  #anchors: Map<string, string> | undefined;
  #canonical = new Map<string, string>();
  #fingerprints = new Map<string, string>();

  constructor(root: unknown) {
    this.root = root;
    const id = isPlainObject(root) && typeof root.$id === "string" ? root.$id : undefined;
    this.#baseId = id === undefined ? undefined : id.replace(/#.*$/, "");
  }

  /**
   * Follows a reference inside this document. `#`, `#/json/pointer` (with
   * `~0`/`~1` and percent escapes), `#anchor` (`$anchor`, `$dynamicAnchor`, or a
   * draft-07 `$id: "#anchor"`) and refs prefixed with the root's own `$id` are
   * local; anything else is `external`. Never fetches or reads anything.
   */
  resolve(ref: string): RefTarget {
    let fragment: string;
    if (ref.startsWith("#")) fragment = ref.slice(1);
    else if (this.#baseId !== undefined && this.#baseId !== "" && ref.startsWith(this.#baseId)) {
      const rest = ref.slice(this.#baseId.length);
      if (rest !== "" && !rest.startsWith("#")) return { ok: false, reason: "external" };
      fragment = rest.slice(1);
    } else return { ok: false, reason: "external" };
    let decoded: string;
    try {
      decoded = decodeURIComponent(fragment);
    } catch {
      return { ok: false, reason: "unresolvable" }; // malformed percent escape: not a pointer we can follow
    }
    if (decoded === "" || decoded.startsWith("/")) {
      const schema = this.#walkPointer(decoded);
      return schema === undefined
        ? { ok: false, reason: "unresolvable" }
        : { ok: true, pointer: decoded, schema };
    }
    const pointer = this.#anchorTable().get(decoded);
    if (pointer === undefined) return { ok: false, reason: "unresolvable" };
    return { ok: true, pointer, schema: this.#walkPointer(pointer) };
  }

  /** Whether some `$ref` in the document points at the root (`#`), so the root needs a name. */
  refersToRoot(): boolean {
    let found = false;
    walkSchemas(this.root, "", (node) => {
      if (found || !isPlainObject(node)) return;
      const ref = refOf(node);
      if (ref === undefined) return;
      const target = this.resolve(ref);
      if (target.ok && target.pointer === "") found = true;
    });
    return found;
  }

  /**
   * A content fingerprint of the subschema at `pointer`: its canonical JSON plus
   * the canonical JSON of every subschema it reaches through `$ref`s. Equal
   * fingerprints mean the same type, whichever document they come from.
   */
  fingerprint(pointer: string): string {
    const cached = this.#fingerprints.get(pointer);
    if (cached !== undefined) return cached;
    const seen = new Map<string, string>();
    const queue = [pointer];
    while (queue.length > 0) {
      const next = queue.shift()!;
      if (seen.has(next)) continue;
      const schema = this.#walkPointer(next);
      seen.set(next, this.#canonicalAt(next, schema));
      walkSchemas(schema, next, (node) => {
        if (!isPlainObject(node)) return;
        const ref = refOf(node);
        if (ref === undefined) return;
        const target = this.resolve(ref);
        if (target.ok && !seen.has(target.pointer)) queue.push(target.pointer);
      });
    }
    const [first, ...rest] = [...seen.entries()];
    rest.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const text = JSON.stringify([first![1], ...rest]);
    this.#fingerprints.set(pointer, text);
    return text;
  }

  #canonicalAt(pointer: string, schema: unknown): string {
    let text = this.#canonical.get(pointer);
    if (text === undefined) {
      text = canonicalJson(schema, 0);
      this.#canonical.set(pointer, text);
    }
    return text;
  }

  #walkPointer(pointer: string): unknown {
    if (pointer === "") return this.root;
    let node: unknown = this.root;
    for (const raw of pointer.slice(1).split("/")) {
      const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
      if (Array.isArray(node) && /^(0|[1-9][0-9]*)$/.test(segment)) node = node[Number(segment)];
      else if (isPlainObject(node) && Object.hasOwn(node, segment)) node = node[segment];
      else return undefined;
      if (node === undefined) return undefined;
    }
    return node;
  }

  #anchorTable(): Map<string, string> {
    if (this.#anchors !== undefined) return this.#anchors;
    const anchors = new Map<string, string>();
    walkSchemas(this.root, "", (node, pointer) => {
      if (!isPlainObject(node)) return;
      for (const key of ["$anchor", "$dynamicAnchor"]) {
        const value = node[key];
        if (typeof value === "string" && !anchors.has(value)) anchors.set(value, pointer);
      }
      const id = node.$id;
      if (typeof id === "string" && id.startsWith("#") && !anchors.has(id.slice(1))) {
        anchors.set(id.slice(1), pointer);
      }
    });
    this.#anchors = anchors;
    return anchors;
  }
}

/** The last segment of a pointer, unescaped: `/$defs/a~1b` -> `a/b`. */
export function lastPointerSegment(pointer: string): string {
  const raw = pointer.slice(pointer.lastIndexOf("/") + 1);
  return raw.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** Calls `visit` on every schema-position value under `node` (bounded depth and count). */
function walkSchemas(node: unknown, pointer: string, visit: (node: unknown, pointer: string) => void): void {
  let visited = 0;
  const stack: Array<[unknown, string, number]> = [[node, pointer, 0]];
  while (stack.length > 0 && visited < MAX_WALK_NODES) {
    const [current, at, depth] = stack.pop()!;
    visited++;
    visit(current, at);
    if (depth >= MAX_WALK_DEPTH || typeof current !== "object" || current === null) continue;
    if (Array.isArray(current)) {
      current.forEach((child, i) => stack.push([child, `${at}/${i}`, depth + 1]));
      continue;
    }
    for (const [key, child] of Object.entries(current)) {
      if (DATA_KEYWORDS.has(key)) continue;
      stack.push([child, `${at}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`, depth + 1]);
    }
  }
}

/** JSON with sorted keys; values nested deeper than {@link MAX_WALK_DEPTH} are summarised as `"..."`. */
function canonicalJson(value: unknown, depth: number): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null";
  if (depth >= MAX_WALK_DEPTH) return '"\u2026"';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(",")}]`;
  const keys = Object.keys(value).sort();
  const record = value as Record<string, unknown>;
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k], depth + 1)}`).join(",")}}`;
}
