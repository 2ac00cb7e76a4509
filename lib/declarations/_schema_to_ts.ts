/**
 * JSON Schema -> TypeScript type text for agent-facing declarations. Never
 * throws: a construct that cannot be typed becomes `unknown` and adds a
 * warning. One {@link TypeRenderer} serves one server, so named types
 * (`$defs`, `definitions`, any local `$ref` target) are hoisted once per
 * server, and two tools' different bodies under one name are kept apart.
 *
 * @module
 */

import { isPlainObject, lastPointerSegment, refOf, SchemaDocument } from "./_schema_refs.ts";
import {
  canDistribute,
  COMPOSITION_KEYS,
  hasComposition,
  hasConstraints,
  inferType,
  mergeSchemas,
  omit,
  REF_KEYS,
} from "./_schema_shape.ts";
import {
  atom,
  CYCLE,
  intersectionOf,
  mapOf,
  NEVER,
  NULL,
  parenthesize,
  PREC_ATOM,
  type Rendered,
  unionOf,
  UNKNOWN,
} from "./_type_algebra.ts";
import { renderJsDoc, renderKey, renderLiteral, sanitizeTypeName } from "./_ts_text.ts";

/** Deepest nesting of schema nodes rendered before the rest becomes `unknown`. */
export const MAX_SCHEMA_DEPTH = 64;
/** Most schema nodes rendered for one tool input or output before the rest becomes `unknown`. */
export const MAX_SCHEMA_NODES = 10_000;

const NO_NAMES: ReadonlySet<string> = new Set();

const SCALARS: Readonly<Record<string, string>> = {
  string: "string",
  number: "number",
  integer: "number",
  boolean: "boolean",
  null: "null",
};

/** A hoisted named type of one server. */
interface NamedType {
  fingerprint: string;
  body: string | undefined;
  description: string | undefined;
}

/** State of one top-level render (one tool's input or output). */
interface Scope {
  doc: SchemaDocument;
  pathBase: string;
  rootName: string;
  toolPrefix: string;
  names: Map<string, string>;
  nodes: number;
  nodesWarned: boolean;
}

interface Ctx {
  scope: Scope;
  path: string;
  depth: number;
  indent: number;
  /** Names whose bodies are being rendered with no object, array or tuple in between (alias-cycle guard). */
  eager: ReadonlySet<string>;
}

/** What one schema render needs to know about where it is. */
export interface RenderTarget {
  /** Warning prefix, e.g. `tools.search.input`. */
  path: string;
  /** Name for the root when a `$ref: "#"` needs it, e.g. `SearchInput`. */
  rootName: string;
  /** Prefix for a `$defs` name already taken by a different body, e.g. `Search` -> `Search_Config`. */
  toolPrefix: string;
}

/** Options of {@link TypeRenderer}. */
export interface TypeRendererOptions {
  /** Emit `description`s as JSDoc on properties and named types. @default true */
  withDocs?: boolean;
  /** See {@link MAX_SCHEMA_DEPTH}. @default 64 */
  maxDepth?: number;
  /** See {@link MAX_SCHEMA_NODES}. @default 10_000 */
  maxNodes?: number;
}

/**
 * Renders schemas of one server to TypeScript type text, collecting hoisted
 * named types and warnings (`<path>: <what> replaced by unknown`).
 */
export class TypeRenderer {
  readonly #withDocs: boolean;
  readonly #maxDepth: number;
  readonly #maxNodes: number;
  readonly #named = new Map<string, NamedType>();
  readonly #warnings = new Set<string>();

  constructor(options: TypeRendererOptions = {}) {
    this.#withDocs = options.withDocs ?? true;
    this.#maxDepth = options.maxDepth ?? MAX_SCHEMA_DEPTH;
    this.#maxNodes = options.maxNodes ?? MAX_SCHEMA_NODES;
  }

  /** Warnings so far, in the order they arose, without duplicates. */
  get warnings(): string[] {
    return [...this.#warnings];
  }

  /**
   * Renders `node` (default: the root of `schema`) as type text whose first
   * line continues a line at `indent` levels of two spaces.
   *
   * @param schema The whole schema document (where `$ref`s resolve).
   * @param target Warning path and naming of the root and colliding `$defs`.
   * @param options.indent Indent level of the line the type starts on. @default 0
   * @param options.node A subschema of `schema` to render instead of its root.
   */
  render(schema: unknown, target: RenderTarget, options: { indent?: number; node?: unknown } = {}): string {
    const scope: Scope = {
      doc: new SchemaDocument(schema),
      pathBase: target.path,
      rootName: target.rootName,
      toolPrefix: target.toolPrefix,
      names: new Map(),
      nodes: 0,
      nodesWarned: false,
    };
    const ctx: Ctx = { scope, path: target.path, depth: 0, indent: options.indent ?? 0, eager: NO_NAMES };
    if (options.node === undefined && scope.doc.refersToRoot()) {
      return this.#materialize(this.#renderRef("#", ctx), ctx).text;
    }
    const node = options.node === undefined ? schema : options.node;
    return this.#materialize(this.#renderNode(node, ctx), ctx).text;
  }

  /** The hoisted `type` declarations, sorted by name, each followed by a blank line; `""` when none. */
  renderNamedTypes(): string {
    const names = [...this.#named.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return names.map((name) => {
      const entry = this.#named.get(name)!;
      const doc = this.#withDocs && entry.description !== undefined ? renderJsDoc(entry.description, 0) : "";
      return `${doc}type ${name} = ${entry.body ?? "unknown"};\n\n`;
    }).join("");
  }

  /** Records `<path>: <message>` (once) among {@link warnings}. */
  warn(path: string, message: string): void {
    this.#warnings.add(`${path}: ${message}`);
  }

  #materialize(r: Rendered, ctx: Ctx): Rendered {
    if (!r.cycle) return r;
    this.warn(ctx.path, "self-referencing type alias replaced by unknown");
    return UNKNOWN;
  }

  #child(ctx: Ctx, path: string, options: { indent?: number; deferred?: boolean } = {}): Ctx {
    return {
      scope: ctx.scope,
      path,
      depth: ctx.depth + 1,
      indent: options.indent ?? ctx.indent,
      eager: options.deferred ? NO_NAMES : ctx.eager,
    };
  }

  #renderNode(schema: unknown, ctx: Ctx): Rendered {
    const scope = ctx.scope;
    scope.nodes++;
    if (scope.nodes > this.#maxNodes) {
      if (!scope.nodesWarned) {
        scope.nodesWarned = true;
        this.warn(scope.pathBase, `schema larger than ${this.#maxNodes} nodes; the rest replaced by unknown`);
      }
      return UNKNOWN;
    }
    if (ctx.depth > this.#maxDepth) {
      this.warn(ctx.path, `schema nested deeper than ${this.#maxDepth} levels replaced by unknown`);
      return UNKNOWN;
    }
    if (schema === true) return UNKNOWN;
    if (schema === false) return NEVER;
    if (!isPlainObject(schema)) {
      this.warn(ctx.path, `invalid schema (${schema === null ? "null" : typeof schema}) replaced by unknown`);
      return UNKNOWN;
    }
    const core = this.#renderCore(schema, ctx);
    return schema.nullable === true ? unionOf([core, NULL]) : core;
  }

  #renderCore(schema: Record<string, unknown>, ctx: Ctx): Rendered {
    const ref = refOf(schema);
    if (ref !== undefined) {
      const named = this.#renderRef(ref, ctx);
      const rest = omit(schema, REF_KEYS);
      if (!hasConstraints(rest) && !hasComposition(rest)) return named;
      return intersectionOf([named, this.#renderCore(rest, ctx)]);
    }
    if (Object.hasOwn(schema, "const")) return atom(renderLiteral(schema.const));
    if (Array.isArray(schema.enum)) return unionOf(schema.enum.map((v) => atom(renderLiteral(v))));
    if (hasComposition(schema)) return this.#renderComposition(schema, ctx);
    return this.#renderTyped(schema, ctx);
  }

  #renderComposition(schema: Record<string, unknown>, ctx: Ctx): Rendered {
    const own = omit(schema, COMPOSITION_KEYS);
    let ownPending = hasConstraints(own);
    const parts: Rendered[] = [];
    for (const keyword of ["anyOf", "oneOf"]) {
      const branches = schema[keyword];
      if (!Array.isArray(branches)) continue;
      if (ownPending && canDistribute(own, branches)) {
        // Sibling keywords apply to every branch: render each branch merged with them.
        ownPending = false;
        parts.push(unionOf(branches.map((branch, i) => {
          const merged = mergeSchemas(own, branch as Record<string, unknown>);
          return merged === false
            ? NEVER
            : this.#renderNode(merged, this.#child(ctx, `${ctx.path}.${keyword}[${i}]`));
        })));
      } else {
        parts.push(
          unionOf(
            branches.map((b, i) => this.#renderNode(b, this.#child(ctx, `${ctx.path}.${keyword}[${i}]`))),
          ),
        );
      }
    }
    if (Array.isArray(schema.allOf)) {
      schema.allOf.forEach((b, i) =>
        parts.push(this.#renderNode(b, this.#child(ctx, `${ctx.path}.allOf[${i}]`)))
      );
    }
    if (ownPending) parts.unshift(this.#renderTyped(own, ctx));
    return intersectionOf(parts);
  }

  #renderTyped(schema: Record<string, unknown>, ctx: Ctx): Rendered {
    let types: string[];
    if (typeof schema.type === "string") types = [schema.type];
    else if (Array.isArray(schema.type)) {
      types = [...new Set(schema.type.filter((t) => typeof t === "string"))];
    } else {
      const inferred = inferType(schema);
      if (inferred === undefined) return UNKNOWN;
      types = [inferred];
    }
    if (types.length === 0) return UNKNOWN;
    return unionOf(types.map((type) => {
      const scalar = SCALARS[type];
      if (scalar !== undefined) return atom(scalar);
      if (type === "array") return this.#renderArray(schema, ctx);
      if (type === "object") return this.#renderObject(schema, ctx);
      this.warn(ctx.path, `unknown type ${JSON.stringify(type)} replaced by unknown`);
      return UNKNOWN;
    }));
  }

  #renderArray(schema: Record<string, unknown>, ctx: Ctx): Rendered {
    const prefix = Array.isArray(schema.prefixItems)
      ? schema.prefixItems
      : Array.isArray(schema.items)
      ? schema.items
      : undefined;
    if (prefix === undefined) {
      const items = schema.items;
      if (items === undefined || items === true) return atom("unknown[]");
      if (items === false) return atom("[]");
      const element = this.#materialize(
        this.#renderNode(items, this.#child(ctx, `${ctx.path}[]`, { deferred: true })),
        ctx,
      );
      return { text: `${parenthesize(element, PREC_ATOM)}[]`, prec: PREC_ATOM, hasRef: element.hasRef };
    }
    const rest = Array.isArray(schema.prefixItems) ? schema.items : schema.additionalItems;
    const minItems = typeof schema.minItems === "number" ? schema.minItems : 0;
    const maxItems = typeof schema.maxItems === "number" ? schema.maxItems : Infinity;
    const closed = rest === false || maxItems <= prefix.length;
    const count = Math.min(prefix.length, maxItems);
    let hasRef = false;
    const elements: string[] = [];
    for (let i = 0; i < count; i++) {
      const r = this.#materialize(
        this.#renderNode(prefix[i], this.#child(ctx, `${ctx.path}[${i}]`, { deferred: true })),
        ctx,
      );
      hasRef ||= r.hasRef;
      elements.push(i < minItems ? r.text : `${parenthesize(r, PREC_ATOM)}?`);
    }
    if (!closed) {
      const r = rest === undefined || rest === true ? UNKNOWN : this.#materialize(
        this.#renderNode(rest, this.#child(ctx, `${ctx.path}[]`, { deferred: true })),
        ctx,
      );
      hasRef ||= r.hasRef;
      elements.push(`...${parenthesize(r, PREC_ATOM)}[]`);
    }
    return { text: `[${elements.join(", ")}]`, prec: PREC_ATOM, hasRef };
  }

  #renderObject(schema: Record<string, unknown>, ctx: Ctx): Rendered {
    const properties = isPlainObject(schema.properties) ? schema.properties : {};
    const required = new Set(
      Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [],
    );
    const names = [...Object.keys(properties)];
    for (const name of required) if (!Object.hasOwn(properties, name)) names.push(name);
    const indexParts: Rendered[] = [];
    const patterns = isPlainObject(schema.patternProperties) ? Object.entries(schema.patternProperties) : [];
    for (const [pattern, sub] of patterns) {
      const path = `${ctx.path}.patternProperties[${JSON.stringify(pattern)}]`;
      indexParts.push(
        this.#materialize(this.#renderNode(sub, this.#child(ctx, path, { deferred: true })), ctx),
      );
    }
    const additional = schema.additionalProperties;
    if (isPlainObject(additional)) {
      const path = `${ctx.path}.additionalProperties`;
      indexParts.push(
        this.#materialize(this.#renderNode(additional, this.#child(ctx, path, { deferred: true })), ctx),
      );
    }
    if (names.length === 0) {
      if (indexParts.length > 0) return mapOf(unionOf(indexParts));
      return atom(additional === false ? "Record<string, never>" : "Record<string, unknown>");
    }
    const pad = "  ".repeat(ctx.indent + 1);
    const lines: string[] = [];
    const propertyTypes: Rendered[] = [];
    let hasRef = false;
    for (const name of names) {
      const sub = Object.hasOwn(properties, name) ? properties[name] : true;
      const child = this.#child(ctx, `${ctx.path}.${name}`, { indent: ctx.indent + 1, deferred: true });
      const r = this.#materialize(this.#renderNode(sub, child), child);
      propertyTypes.push(r);
      hasRef ||= r.hasRef;
      const description = isPlainObject(sub) && typeof sub.description === "string" ? sub.description : "";
      // `{ __proto__: x }` in an object literal sets the prototype: the argument would never be sent.
      const note = name === "__proto__"
        ? 'Write it as `["__proto__"]: \u2026` in an object literal: a plain `__proto__: \u2026` sets the prototype and is not sent.'
        : "";
      const docText = [this.#withDocs ? description : "", note].filter((t) => t !== "").join("\n");
      const doc = docText === "" ? "" : renderJsDoc(docText, ctx.indent + 1);
      lines.push(`${doc}${pad}${renderKey(name)}${required.has(name) ? "" : "?"}: ${r.text};\n`);
    }
    const index = unionOf(indexParts);
    if (indexParts.length > 0 && index.text !== "unknown") {
      // An index signature must admit every property's type as well.
      const value = unionOf([index, ...propertyTypes]);
      hasRef ||= value.hasRef;
      lines.push(`${pad}[key: string]: ${value.text};\n`);
    }
    return { text: `{\n${lines.join("")}${"  ".repeat(ctx.indent)}}`, prec: PREC_ATOM, hasRef };
  }

  /** A named type for the ref target; renders its body on first use. */
  #renderRef(ref: string, ctx: Ctx): Rendered {
    const scope = ctx.scope;
    const target = scope.doc.resolve(ref);
    if (!target.ok) {
      const shown = JSON.stringify(ref.length > 80 ? `${ref.slice(0, 77)}...` : ref);
      this.warn(ctx.path, `${target.reason} $ref ${shown} replaced by unknown`);
      return UNKNOWN;
    }
    let name = scope.names.get(target.pointer);
    if (name === undefined) {
      const fingerprint = scope.doc.fingerprint(target.pointer);
      const isRoot = target.pointer === "";
      const base = isRoot ? scope.rootName : sanitizeTypeName(lastPointerSegment(target.pointer));
      for (let attempt = 0;; attempt++) {
        const candidate = isRoot
          ? (attempt === 0 ? base : `${base}_${attempt + 1}`)
          : attempt === 0
          ? base
          : attempt === 1
          ? `${scope.toolPrefix}_${base}`
          : `${scope.toolPrefix}_${base}_${attempt}`;
        const existing = this.#named.get(candidate);
        if (existing !== undefined && existing.fingerprint !== fingerprint) continue;
        name = candidate;
        scope.names.set(target.pointer, name);
        if (existing === undefined) {
          this.#renderNamedBody(name, fingerprint, target.schema, target.pointer, ctx);
        }
        break;
      }
    }
    if (this.#named.get(name)!.body === undefined && ctx.eager.has(name)) return CYCLE;
    return { text: name, prec: PREC_ATOM, hasRef: true };
  }

  #renderNamedBody(name: string, fingerprint: string, schema: unknown, pointer: string, ctx: Ctx): void {
    const description = isPlainObject(schema) && typeof schema.description === "string"
      ? schema.description
      : undefined;
    const entry: NamedType = { fingerprint, body: undefined, description };
    this.#named.set(name, entry);
    const path = `${ctx.scope.pathBase}${pointer === "" ? "" : "."}${pointer.slice(1).split("/").join(".")}`;
    const bodyCtx: Ctx = {
      scope: ctx.scope,
      path,
      depth: ctx.depth + 1,
      indent: 0,
      eager: new Set([...ctx.eager, name]),
    };
    entry.body = this.#materialize(this.#renderNode(schema, bodyCtx), bodyCtx).text;
  }
}
