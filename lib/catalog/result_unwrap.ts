/**
 * What a script gets back from a tool call: the `CallToolResult` envelope unwrapped into a plain
 * value (`docs/writing-scripts.md`, "What tools return (observed result shapes)"), and the check of that value against the tool's `outputSchema`,
 * which never refuses a result but tags it off-shape.
 *
 * @module
 */
import type { Ajv, ValidateFunction } from "ajv";

/** The envelope fields the ladder reads (a subset of the SDK's `CallToolResult`). */
export interface ToolResultLike {
  content?: unknown[] | undefined;
  structuredContent?: unknown;
  isError?: boolean | undefined;
}

/** Outcome of {@link unwrapToolResult}: a value for the script, or the tool's own error text. */
export type Unwrapped = { ok: true; value: unknown } | { ok: false; message: string };

interface TextBlock {
  type: "text";
  text: string;
}

function isTextBlock(block: unknown): block is TextBlock {
  return typeof block === "object" && block !== null && (block as { type?: unknown }).type === "text" &&
    typeof (block as { text?: unknown }).text === "string";
}

/**
 * Unwraps a `tools/call` result, in this order:
 * 1. `isError: true` -> failure whose message is the text blocks joined by `\n`
 *    (`"the tool reported an error"` when there is no text);
 * 2. `structuredContent` -> that value; an object whose only key is `result` (the FastMCP
 *    envelope) becomes its inner value;
 * 3. only text blocks (at least one) -> joined by `\n`, then `JSON.parse`d when that succeeds;
 * 4. anything else (images, audio, resources, mixed, empty) -> the content blocks as they are.
 *
 * @example
 * ```ts
 * import { unwrapToolResult } from "./result_unwrap.ts";
 * unwrapToolResult({ content: [{ type: "text", text: "[1,2]" }] }); // { ok: true, value: [1, 2] }
 * ```
 */
export function unwrapToolResult(result: ToolResultLike): Unwrapped {
  const content = Array.isArray(result.content) ? result.content : [];
  if (result.isError === true) {
    const text = content.filter(isTextBlock).map((b) => b.text).join("\n").trim();
    return { ok: false, message: text || "the tool reported an error" };
  }
  if (result.structuredContent !== undefined && result.structuredContent !== null) {
    return { ok: true, value: unwrapResultEnvelope(result.structuredContent) };
  }
  if (content.length > 0 && content.every(isTextBlock)) {
    const joined = content.map((b) => b.text).join("\n");
    if (!MAY_BE_JSON.test(joined)) return { ok: true, value: joined }; // Prose: no parse and throw.
    try {
      return { ok: true, value: JSON.parse(joined) };
    } catch {
      return { ok: true, value: joined }; // Not JSON: the script gets the text itself.
    }
  }
  return { ok: true, value: content };
}

/** How every JSON text starts (after JSON whitespace): a text that does not is no JSON. */
const MAY_BE_JSON = /^[ \t\n\r]*[{["0-9tfn-]/;

function unwrapResultEnvelope(value: unknown): unknown {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === "result") return (value as { result: unknown }).result;
  }
  return value;
}

/** The notice appended to `execute` output for a result that does not match its `outputSchema`. */
export function offShapeNotice(server: string, tool: string): string {
  return `${server}.${tool}: result off-shape, treat as unknown`;
}

/** Outcome of {@link OutputShapeChecker.check}. */
export type ShapeVerdict = "conforms" | "off-shape" | "unchecked";

/**
 * Checks results against declared `outputSchema`s with ajv. Compiled validators are cached per
 * schema text. A schema that cannot be compiled (a remote `$ref`, a pattern RE2 cannot compile) is
 * not checked. One checker lives for the session. ajv and RE2 (about 3 MiB of a session's memory) are
 * imported on the first result that has a schema to check, so a session whose tools declare none never
 * loads them.
 *
 * The schema comes from the server, so nothing in it may run unbounded on the host thread:
 * `pattern`/`patternProperties` use RE2 (linear time, see `_linear_regexp.ts`), and
 * `uniqueItems`, whose check is quadratic in the array's length for objects, is not checked.
 */
export class OutputShapeChecker {
  #ajv: Ajv | Promise<Ajv> | undefined;
  readonly #cache = new Map<string, ValidateFunction | null>();
  readonly #bySchema = new WeakMap<object, ValidateFunction | null>();

  /**
   * @param outputSchema The tool's declared `outputSchema`; `undefined` = not checked.
   * @param result The raw result; `structuredContent` is checked when present (the schema
   *   describes it, FastMCP envelope included), else the unwrapped value.
   * @param unwrapped What {@link unwrapToolResult} produced for the script.
   * @returns The verdict; the first check with a schema waits for ajv to load (tens of milliseconds).
   */
  async check(outputSchema: unknown, result: ToolResultLike, unwrapped: unknown): Promise<ShapeVerdict> {
    if (typeof outputSchema !== "object" || outputSchema === null) return "unchecked";
    const ajv = this.#ajv ??= linearAjv().then((loaded) => this.#ajv = loaded);
    const validate = this.#compile(outputSchema as Record<string, unknown>, await ajv);
    if (!validate) return "unchecked";
    const subject = result.structuredContent !== undefined && result.structuredContent !== null
      ? result.structuredContent
      : unwrapped;
    try {
      return validate(subject) ? "conforms" : "off-shape";
    } catch {
      return "unchecked"; // A validator that throws (pathological regex) says nothing about the value.
    }
  }

  #compile(schema: Record<string, unknown>, ajv: Ajv): ValidateFunction | null {
    // The same listing's schema object comes back on every call: found without serializing it.
    const held = this.#bySchema.get(schema);
    if (held !== undefined) return held;
    const compiled = this.#compileText(schema, ajv);
    this.#bySchema.set(schema, compiled);
    return compiled;
  }

  #compileText(schema: Record<string, unknown>, ajv: Ajv): ValidateFunction | null {
    const key = JSON.stringify(schema);
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    let compiled: ValidateFunction | null;
    try {
      const { $schema: _dialect, $id: _id, ...rest } = schema;
      compiled = ajv.compile(rest);
    } catch {
      compiled = null; // Uncompilable (remote $ref, bad pattern): not checked, by design.
    }
    this.#cache.set(key, compiled);
    return compiled;
  }
}

/** ajv with RE2 for patterns and `uniqueItems` reduced to a no-op (see {@link OutputShapeChecker}). */
async function linearAjv(): Promise<Ajv> {
  const [{ Ajv }, { linearRegExp }] = await Promise.all([import("ajv"), import("./_linear_regexp.ts")]);
  const ajv = new Ajv({
    strict: false,
    validateSchema: false,
    addUsedSchema: false,
    allowUnionTypes: true,
    logger: false,
    code: { regExp: linearRegExp },
  });
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword({ keyword: "uniqueItems", schemaType: "boolean" });
  return ajv;
}
