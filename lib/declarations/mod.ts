/**
 * Area `declarations/`: pure text from JSON Schemas - no I/O, no servers, no sandbox; it imports only
 * `plugins/server_spec.ts` and the top level.
 *
 * `list_tools`' engine: a server's `tools/list` answer -> an index, or
 * TypeScript declarations (`declare const <server>: { ... }`) with a list of
 * what degraded to `unknown`. Keys come from the binding table, so what is
 * declared is exactly what dispatch resolves.
 *
 * Other faces, each loaded on its own (the catalog needs them while a start resolves it; the rest
 * loads with `execute` and `list_tools`, after the named servers started):
 * - `tool_binding.ts`: the binding table of tool names to script keys;
 * - `observed_shape.ts`: the shapes observed in tool results.
 *
 * @module
 */

import { namespaceKey } from "../plugins/mod.ts";
import { type BindingTable, buildBindingTable, entriesOf } from "./tool_binding.ts";
import { TypeRenderer } from "./_schema_to_ts.ts";
import { inputArity } from "./_schema_shape.ts";
import { isReservedWord, pascalCase, renderJsDoc, renderKey } from "./_ts_text.ts";
import { firstSentence } from "./summary.ts";
import { type ObservedLookup, renderObservedReturn } from "./observed_shape.ts";

export {
  type ObservedLookup,
  type ObservedResult,
  renderObservedType,
  renderShape,
  type Shape,
  type ShapeProperty,
} from "./observed_shape.ts";
import { runInSlices } from "../time_slices.ts";
export { cutAtWord, firstSentence } from "./summary.ts";

/** One tool as `tools/list` describes it (the fields the declarations use). */
export interface ToolInfo {
  /** Wire name, e.g. `"get-sum"`. */
  name: string;
  /** Human-facing title (not rendered). */
  title?: string | undefined;
  /** Prose; its first sentence is the index entry, the whole is the method's JSDoc at `full`. */
  description?: string | undefined;
  /** JSON Schema of the argument object. */
  inputSchema?: unknown;
  /** JSON Schema of `structuredContent`; gives the method's return type. */
  outputSchema?: unknown;
  /** MCP tool annotations (not rendered). */
  annotations?: {
    readOnlyHint?: boolean | undefined;
    destructiveHint?: boolean | undefined;
    [k: string]: unknown;
  } | undefined;
}

/** How much `list_tools` shows: index lines, types only, or types with prose. */
export type Detail = "names" | "signatures" | "full";

/**
 * The index of one server: a header line, then `  <wire name> - <first
 * sentence of the description, cut at 120 characters>` per tool (see
 * `firstSentence`; just the name when there is no description). The header is `server:`, or `server (as key):` when scripts
 * reach the server under a different global name (see `namespaceKey`).
 * Repeated wire names are listed once; a server without tools shows
 * `  (no tools)`. No trailing newline.
 *
 * @param server Raw server name from the manifest, e.g. `"my-server"`.
 * @param tools The server's (visible) tools, in `tools/list` order.
 * @example
 * ```ts
 * import { renderIndex } from "./declarations.ts";
 * renderIndex("everything", [{ name: "echo", description: "Echoes back the input string" }]);
 * // "everything:\n  echo - Echoes back the input string"
 * ```
 */
export function renderIndex(server: string, tools: readonly ToolInfo[]): string {
  const steps = indexSteps(server, tools);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * As {@link renderIndex}, letting the event loop turn (a macrotask) whenever `sliceMs` has passed: the
 * index of a 50,000-tool server (1.6 MB, measured before it is summarized) held the thread 100 ms and more.
 *
 * @param options.sliceMs Longest run between two turns, in ms. @default 20
 */
export async function renderIndexInSlices(
  server: string,
  tools: readonly ToolInfo[],
  options: { sliceMs?: number } = {},
): Promise<string> {
  return await runInSlices(indexSteps(server, tools), options.sliceMs);
}

/** The work of {@link renderIndex}, pausing (a `yield`) after every 512 tools. */
function* indexSteps(server: string, tools: readonly ToolInfo[]): Generator<void, string, void> {
  const key = namespaceKey(server);
  const lines = [key === server ? `${server}:` : `${server} (as ${key}):`];
  const seen = new Set<string>();
  let looked = 0;
  for (const tool of tools) {
    if (++looked % 512 === 0) yield;
    if (seen.has(tool.name)) continue;
    seen.add(tool.name);
    // A name with control characters or line breaks is shown JSON-quoted so it stays on its line.
    // deno-lint-ignore no-control-regex
    const name = /[\u0000-\u001f\u007f\u2028\u2029]/.test(tool.name) ? JSON.stringify(tool.name) : tool.name;
    const first = firstSentence(tool.description);
    lines.push(first === "" ? `  ${name}` : `  ${name} - ${first}`);
  }
  if (seen.size === 0) lines.push("  (no tools)");
  return lines.join("\n");
}

/** The `$resources` member of a server that declares `resources` (signatures detail). */
export const RESOURCES_MEMBER = `  $resources: {
    list(): Promise<{ uri: string; name: string; title?: string; description?: string; mimeType?: string; size?: number }[]>;
    read(params: { uri: string }): Promise<({ uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string })[]>;
  };`;

/** The `$resources` member with its documentation (full detail). */
export const RESOURCES_MEMBER_DOCS =
  `  /** The server's resources (MCP \`resources/list\`, \`resources/read\`). */
  $resources: {
    /** Every resource the server lists (all pages). */
    list(): Promise<{ uri: string; name: string; title?: string; description?: string; mimeType?: string; size?: number }[]>;
    /** The contents of one resource: \`text\`, or \`blob\` (base64) with its \`mimeType\`. */
    read(params: { uri: string }): Promise<({ uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string })[]>;
  };`;

/**
 * The declarations of one server: hoisted named types (sorted, each followed
 * by a blank line), then one `declare const <namespaceKey(server)>: { ... };`
 * with a method per binding-table key, e.g.
 * `  "get-sum"(params: { a: number; b: number; }): Promise<unknown>;` and its
 * alias `  get_sum: (typeof everything)["get-sum"];`.
 *
 * - `params` is omitted when the input schema declares no properties, and is
 *   optional (`params?`) when nothing is required.
 * - The return type comes from `outputSchema` (a FastMCP `{ result: T }`
 *   envelope declares `T`, since results are unwrapped), else from the shape
 *   observed in the tool's answers, marked as learned
 *   (`/** Returns (observed in 12 calls): *\/ Promise<{ id: number }>`), else
 *   `unknown`. A declared `outputSchema` always wins.
 * - `full` adds JSDoc from tool, property and named-type descriptions, made
 *   comment-safe; `signatures` has the same types and no comments.
 *
 * Never throws: constructs that cannot be typed become `unknown`, each adding
 * a warning such as `tools.search.input.filter: external $ref "https://..."
 * replaced by unknown`.
 *
 * @param server Raw server name; the declared constant is `namespaceKey(server)`.
 * @param tools The server's (visible) tools, in `tools/list` order; repeats are declared once.
 * @param options.detail `"full"` (default) or `"signatures"`.
 * @param options.table The server's binding table over ALL its visible tools, when `tools` is a
 *   filtered subset (`list_tools` with `tools`/`pattern`): keys then match what dispatch resolves
 *   (an alias may be `get_sum_2` because of a tool not shown). Default: built from `tools`.
 * @param options.resources The server declares `resources`: a last member `$resources` (`list()`,
 *   `read({ uri })`) is declared. @default false
 * @param options.observed The observed result of a tool, for tools without `outputSchema`. @default none
 * @param options.maxDepth Schema levels rendered before a deeper one becomes `unknown` (with a
 *   warning). @default 64
 * @returns The text (no trailing newline) and the warnings in order of appearance.
 */
export function renderDeclarations(
  server: string,
  tools: readonly ToolInfo[],
  options: {
    detail?: "signatures" | "full";
    table?: BindingTable | undefined;
    resources?: boolean;
    observed?: ObservedLookup | undefined;
    maxDepth?: number | undefined;
  } = {},
): { text: string; warnings: string[] } {
  const withDocs = (options.detail ?? "full") === "full";
  const renderer = new TypeRenderer({
    withDocs,
    ...(options.maxDepth !== undefined ? { maxDepth: options.maxDepth } : {}),
  });
  const namespace = namespaceKey(server);
  if (isReservedWord(namespace)) {
    renderer.warn(
      `server ${JSON.stringify(server)}`,
      `global name \`${namespace}\` is a reserved word; scripts cannot use it`,
    );
  }
  const byWire = new Map<string, ToolInfo>();
  for (const tool of tools) {
    if (byWire.has(tool.name)) renderer.warn(`tools.${tool.name}`, "listed more than once; declared once");
    else byWire.set(tool.name, tool);
  }
  const table = options.table ?? buildBindingTable([...byWire.keys()]);
  for (const wire of byWire.keys()) {
    if (!table.indexByWire.has(wire)) {
      renderer.warn(`tools.${wire}`, "not in the binding table; not declared");
    }
  }
  const methods: string[] = [];
  // Only the entries of the tools given: a few tools of a 50,000-tool table must not walk all of it.
  for (const entry of entriesOf(table, byWire.keys())) {
    if (entry.isAlias) {
      const doc = withDocs ? renderJsDoc(`Alias for ${entry.wire}.`, 1) : "";
      methods.push(`${doc}  ${renderKey(entry.key)}: (typeof ${namespace})[${JSON.stringify(entry.wire)}];`);
      continue;
    }
    const tool = byWire.get(entry.wire)!;
    methods.push(renderMethod(renderer, entry.key, tool, withDocs, options.observed));
  }
  if (options.resources) methods.push(withDocs ? RESOURCES_MEMBER_DOCS : RESOURCES_MEMBER);
  const body = methods.length === 0 ? "{}" : `{\n${methods.join("\n")}\n}`;
  const text = `${renderer.renderNamedTypes()}declare const ${namespace}: ${body};`;
  return { text, warnings: renderer.warnings };
}

/** UTF-8 bytes of `text`. */
function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** Parameter depths tried, deepest first, before the parameters become `Record<string, unknown>`. */
const SIMPLIFIED_DEPTHS = [4, 2, 1];

/**
 * One tool's declarations within `maxBytes` UTF-8 bytes, always valid TypeScript: as
 * {@link renderDeclarations} when they fit, else simplified step by step until they do: the result
 * type as `unknown`, then without descriptions, then parameter types deeper than 4, 2, 1 levels as
 * `unknown`, then the parameters as `Record<string, unknown>`.
 *
 * @param options As {@link renderDeclarations}.
 * @returns The text and warnings of the step that fits (or of the last step when none does: only a
 *   name longer than `maxBytes` does that), `simplified` (what each step taken did, in order; empty
 *   when the tool fits whole) and `wholeBytes` (the size of the declaration unsimplified).
 */
export function renderToolWithin(
  server: string,
  tool: ToolInfo,
  maxBytes: number,
  options: {
    detail?: "signatures" | "full";
    table?: BindingTable | undefined;
    resources?: boolean;
    observed?: ObservedLookup | undefined;
  } = {},
): { text: string; warnings: string[]; simplified: string[]; wholeBytes: number } {
  const whole = renderDeclarations(server, [tool], options);
  const wholeBytes = utf8Bytes(whole.text);
  if (wholeBytes <= maxBytes) return { ...whole, simplified: [], wholeBytes };
  const steps: { what: string; tool: ToolInfo; options: Parameters<typeof renderDeclarations>[2] }[] = [];
  let current: { tool: ToolInfo; options: NonNullable<Parameters<typeof renderDeclarations>[2]> } = {
    tool,
    options: { ...options },
  };
  const step = (what: string, next: typeof current) => {
    steps.push({ what, ...next });
    current = next;
  };
  if (tool.outputSchema !== undefined || options.observed !== undefined) {
    step("result type shown as unknown", {
      tool: { ...tool, outputSchema: undefined },
      options: { ...current.options, observed: undefined },
    });
  }
  if ((options.detail ?? "full") === "full") {
    step("descriptions left out", { ...current, options: { ...current.options, detail: "signatures" } });
  }
  for (const depth of SIMPLIFIED_DEPTHS) {
    step(`parameter types deeper than ${depth} level${depth === 1 ? "" : "s"} shown as unknown`, {
      ...current,
      options: { ...current.options, maxDepth: depth },
    });
  }
  step("parameters shown as Record<string, unknown>", {
    tool: { ...current.tool, inputSchema: { type: "object", patternProperties: { ".*": {} } } },
    options: current.options,
  });
  let last = whole;
  const simplified: string[] = [];
  for (const s of steps) {
    last = renderDeclarations(server, [s.tool], s.options);
    // A depth that changes nothing is not named (the schema was shallower); a shallower one replaces the
    // deeper one said before.
    const isDepth = s.what.startsWith("parameter types deeper");
    if (!isDepth || last.warnings.some((w) => w.includes("nested deeper"))) {
      if (isDepth && simplified.at(-1)?.startsWith("parameter types deeper")) simplified.pop();
      simplified.push(s.what);
    }
    if (utf8Bytes(last.text) <= maxBytes) break;
  }
  // The depth steps warn once per cut schema: the `simplified` note says it once instead.
  const warnings = last.warnings.filter((w) => !w.includes("nested deeper than"));
  return { text: last.text, warnings, simplified, wholeBytes };
}

/** Longest signature {@link renderToolSignature} returns whole by default, in UTF-16 units. */
export const SIGNATURE_MAX_CHARS = 1_500;

/**
 * One tool's call signature as a script writes it, e.g.
 * `github.list_issues(params: {\n  owner: string;\n  ...\n}): Promise<unknown>` (types only, no
 * JSDoc), preceded by the named types it uses (each followed by a blank line). The key is the
 * identifier spelling from the binding table (`notion.API_patch_block_children(...)`), else the
 * quoted wire name (`s["x.y"](...)`).
 *
 * Past `maxChars` the types are left out: `github.projects_write(params: { method: ...; owner?: ... }):
 * Promise<unknown>` with `cut: true`, so a search answer of many tools stays small; the whole
 * declaration is one `list_tools` call away.
 *
 * @param server Raw server name; the call goes through `namespaceKey(server)`.
 * @param tool The tool.
 * @param options.table The server's binding table over all its visible tools. Default: built from `[tool]`.
 * @param options.maxChars Longest whole signature, in UTF-16 units. @default SIGNATURE_MAX_CHARS
 * @param options.observed The observed result of a tool without `outputSchema` (see
 *   {@link renderDeclarations}). @default none
 * @returns The text, whether it was cut, and the renderer's warnings.
 */
export function renderToolSignature(
  server: string,
  tool: ToolInfo,
  options: {
    table?: BindingTable | undefined;
    maxChars?: number | undefined;
    observed?: ObservedLookup | undefined;
  } = {},
): { text: string; cut: boolean; warnings: string[] } {
  const namespace = namespaceKey(server);
  const table = options.table ?? buildBindingTable([tool.name]);
  const entries = entriesOf(table, [tool.name]);
  const key = entries.find((e) => e.isAlias)?.key ?? entries[0]?.key ?? tool.name;
  const access = renderKey(key) === key ? `${namespace}.${key}` : `${namespace}[${JSON.stringify(key)}]`;
  const renderer = new TypeRenderer({ withDocs: false });
  const method = renderMethod(renderer, key, tool, false, options.observed);
  // renderMethod indents by one level and starts with the key: re-indent and call through the namespace.
  const body = method.split("\n").map((line) => line.slice(2)).join("\n").replace(/;$/, "");
  const text = `${renderer.renderNamedTypes()}${access}${body.slice(renderKey(key).length)}`;
  const maxChars = options.maxChars ?? SIGNATURE_MAX_CHARS;
  if (text.length <= maxChars) return { text, cut: false, warnings: renderer.warnings };
  const schema = tool.inputSchema as { properties?: unknown; required?: unknown } | undefined;
  const properties = schema?.properties;
  const names = typeof properties === "object" && properties !== null ? Object.keys(properties) : [];
  const required = Array.isArray(schema?.required) ? schema.required : [];
  const params = names.map((n) => `${renderKey(n)}${required.includes(n) ? "" : "?"}: \u2026`).join("; ");
  const [, marker = "", returns = "unknown"] = /\): (\/\*\* [^*]*\*\/ )?Promise<([\s\S]*)>$/.exec(body) ?? [];
  const brief = `${access}(params: { ${params} }): ${marker}Promise<${
    returns.length > 60 ? "\u2026" : returns
  }>`;
  return { text: brief, cut: true, warnings: renderer.warnings };
}

function renderMethod(
  renderer: TypeRenderer,
  key: string,
  tool: ToolInfo,
  withDocs: boolean,
  observed: ObservedLookup | undefined,
): string {
  const prefix = pascalCase(key);
  const input = tool.inputSchema;
  if (input !== undefined && typeof input !== "object" && typeof input !== "boolean") {
    renderer.warn(
      `tools.${tool.name}.input`,
      `invalid schema (${typeof input}) ignored; declared without parameters`,
    );
  }
  const arity = inputArity(input);
  let params = "";
  if (arity !== "none") {
    const target = { path: `tools.${tool.name}.input`, rootName: `${prefix}Input`, toolPrefix: prefix };
    const type = renderer.render(input, target, { indent: 1 });
    params = `params${arity === "optional" ? "?" : ""}: ${type}`;
  }
  let returns = "unknown";
  if (tool.outputSchema !== undefined) {
    const target = { path: `tools.${tool.name}.output`, rootName: `${prefix}Output`, toolPrefix: prefix };
    const envelope = resultEnvelope(tool.outputSchema);
    returns = envelope === undefined
      ? renderer.render(tool.outputSchema, { ...target }, { indent: 1 })
      : renderer.render(tool.outputSchema, { ...target, path: `${target.path}.result` }, {
        indent: 1,
        node: envelope,
      });
    if (returns === "never") {
      // No structured value can match, yet the call still returns its content blocks.
      renderer.warn(`tools.${tool.name}.output`, "schema admits no value; return type replaced by unknown");
      returns = "unknown";
    }
  }
  const doc = withDocs && typeof tool.description === "string" ? renderJsDoc(tool.description, 1) : "";
  const learned = tool.outputSchema === undefined ? observed?.(tool) : undefined;
  const promise = learned === undefined ? `Promise<${returns}>` : renderObservedReturn(learned, 1, tool);
  return `${doc}  ${renderKey(key)}(${params}): ${promise};`;
}

/**
 * The `result` subschema of a FastMCP-style `{ result: T }` output schema
 * (exactly one property, `result`, and it is required), whose values reach the
 * script unwrapped; otherwise `undefined`.
 */
function resultEnvelope(schema: unknown): unknown {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return undefined;
  const record = schema as Record<string, unknown>;
  const properties = record.properties;
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) return undefined;
  const keys = Object.keys(properties);
  const required = Array.isArray(record.required) ? record.required : [];
  if (keys.length !== 1 || keys[0] !== "result" || !required.includes("result")) return undefined;
  if (["$ref", "allOf", "anyOf", "oneOf"].some((k) => Object.hasOwn(record, k))) return undefined;
  return (properties as Record<string, unknown>).result;
}
