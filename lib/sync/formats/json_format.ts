/**
 * JSON and JSONC agent configs. Parsing is jsonc-parser's `parseTree`; the edits are computed
 * here from its node offsets and applied as minimal text splices, because jsonc-parser's own
 * `modify` re-formats whole lines around an edit (it would rewrite a neighbouring server written
 * on one line). Comments, trailing commas, key order, indentation and line endings outside the
 * entry are kept byte for byte; nothing is ever added but the entry itself.
 *
 * @module
 */
import { getNodeValue, type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import {
  type ConfigFormat,
  ConfigShapeError,
  ConfigSyntaxError,
  describePath,
  type EntryAddress,
  positionAt,
  uneditableLayoutError,
} from "./config_format.ts";
import { applyTextEdits, detectEol, lineIndentOf, splitBom } from "./_text.ts";
import {
  detectIndentUnit,
  hasTrailingComma,
  insertProperty,
  isOneLine,
  isSpaced,
  nest,
  removePropertyEdits,
  renderBlock,
  renderInline,
} from "./_json_edits.ts";
import { deepEqual, expectedDocument, isPlainObject, pruneEmptyContainers } from "./values.ts";
import { assertNestingBudget, withStackGuard } from "./_budget.ts";

/** Options of {@link jsonFormat}. */
export interface JsonFormatOptions {
  /**
   * Strict JSON: comments and trailing commas are syntax errors, because the agent reads the file
   * with `JSON.parse` (Claude Code resets such a file). `false` reads JSONC.
   */
  strict: boolean;
}

interface Parsed {
  bom: string;
  body: string;
  /** `undefined` for an empty document (blank, or comments only). */
  root: Node | undefined;
}

/**
 * Creates the JSON (`strict: true`) or JSONC (`strict: false`) {@link ConfigFormat}.
 *
 * @example
 * ```ts
 * import { jsonFormat } from "./json_format.ts";
 * const text = jsonFormat({ strict: false }).setEntry(
 *   '{\n  // mine\n  "servers": {}\n}\n',
 *   { containerPath: ["servers"], name: "symposium" },
 *   { command: "/bin/cargo-agents", args: ["mcp-serve"] },
 *   "mcp.json",
 * );
 * ```
 */
export function jsonFormat(options: JsonFormatOptions): ConfigFormat {
  const { strict } = options;
  const label = strict ? "JSON" : "JSONC";
  const parse = (text: string, file: string): Parsed => parseJson(text, file, strict, label);
  return {
    label,
    read: (text: string, file: string): unknown => readValue(text, file),
    setEntry(text: string, address: EntryAddress, value: unknown, file: string): string {
      const next = setEntryText(text, address, value, file);
      return next === text ? text : verified(next, text, address, value, file);
    },
    removeEntry(text: string, address: EntryAddress, file: string): string {
      const next = removeEntryText(text, address, file);
      return next === text ? text : verified(next, text, address, undefined, file);
    },
  };

  /** Parses `next` back and checks it is `before` with exactly the intended change. */
  function verified(
    next: string,
    before: string,
    address: EntryAddress,
    value: unknown,
    file: string,
  ): string {
    const path = [...address.containerPath, address.name];
    const expected = expectedDocument(readValue(before, file), path, value);
    let actual: unknown;
    try {
      actual = pruneEmptyContainers(readValue(next, file), path);
    } catch {
      actual = undefined; // Reported below: the edit would break the file.
    }
    if (!deepEqual(actual, expected)) {
      throw uneditableLayoutError(file, address.containerPath, path);
    }
    return next;
  }

  function readValue(text: string, file: string): unknown {
    const fast = parseValid(text, file, label);
    if (fast !== undefined) return fast;
    const { root } = parse(text, file);
    return root === undefined ? {} : withStackGuard(file, label, () => getNodeValue(root));
  }

  function setEntryText(text: string, address: EntryAddress, value: unknown, file: string): string {
    const { bom, body, root } = parse(text, file);
    const path = [...address.containerPath, address.name];
    const eol = detectEol(body);
    const unit = detectIndentUnit(body);
    if (root === undefined) {
      const rendered = renderBlock(nest(path, value), "", unit, eol);
      if (body.trim() === "") return bom + rendered + eol;
      return bom + body + (/[\r\n]$/.test(body) ? "" : eol) + rendered + eol;
    }
    let obj = root;
    for (let i = 0; i < path.length; i++) {
      const prop = findProperty(body, obj, path[i]!, file);
      if (prop === undefined) {
        const edits = insertProperty(body, obj, path[i]!, nest(path.slice(i + 1), value), unit, eol);
        return bom + applyTextEdits(body, edits);
      }
      const valueNode = prop.children![1]!;
      if (i === path.length - 1) {
        if (deepEqual(getNodeValue(valueNode), value)) return text;
        const inline = isOneLine(body, obj);
        const rendered = inline
          ? renderInline(value, isSpaced(body, obj))
          : renderBlock(value, lineIndentOf(body, prop.offset), unit, eol, hasTrailingComma(body, obj));
        const end = valueNode.offset + valueNode.length;
        return bom + applyTextEdits(body, [{ start: valueNode.offset, end, text: rendered }]);
      }
      if (valueNode.type !== "object") {
        throw new ConfigShapeError(
          file,
          `"${describePath(path.slice(0, i + 1))}" is ${describeNode(valueNode)}, expected an object`,
          positionAt(body, valueNode.offset),
        );
      }
      obj = valueNode;
    }
    throw new Error("unreachable: the entry path is never empty");
  }

  function removeEntryText(text: string, address: EntryAddress, file: string): string {
    const { bom, body, root } = parse(text, file);
    const path = [...address.containerPath, address.name];
    if (root === undefined) return text;
    const found = findPath(body, root, path, file);
    if (found === undefined) return text;
    let next = applyTextEdits(body, removePropertyEdits(body, found.parent, found.prop));
    // Drop containers the removal left empty (innermost first), unless they hold a comment.
    for (let depth = path.length - 1; depth >= 1; depth--) {
      const again = parseJson(next, file, strict, label).root!;
      const container = findPath(next, again, path.slice(0, depth), file);
      if (container === undefined) break;
      const node = container.prop.children![1]!;
      if (node.type !== "object" || (node.children?.length ?? 0) > 0) break;
      if (next.slice(node.offset + 1, node.offset + node.length - 1).trim() !== "") break;
      next = applyTextEdits(next, removePropertyEdits(next, container.parent, container.prop));
    }
    return bom + next;
  }
}

/** The strict-JSON editor (Claude Code, Claude Desktop). */
export const STRICT_JSON: ConfigFormat = jsonFormat({ strict: true });
/** The JSONC editor (comments and trailing commas allowed). */
export const JSONC: ConfigFormat = jsonFormat({ strict: false });

/**
 * The value of a document that is plain valid JSON with an object at the top, by the engine's
 * `JSON.parse` (ten times faster than a syntax tree: a 5 MB `~/.claude.json` is read three times
 * per edit); `undefined` for anything else (comments, errors, another top level), which the tree
 * parser then reads and reports on.
 */
function parseValid(text: string, file: string, label: string): unknown {
  const { body } = splitBom(text);
  assertNestingBudget(body, file, label, "json");
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  return isPlainObject(value) ? value : undefined;
}

function parseJson(text: string, file: string, strict: boolean, label: string): Parsed {
  const { bom, body } = splitBom(text);
  assertNestingBudget(body, file, label, "json");
  const errors: ParseError[] = [];
  const root = withStackGuard(file, label, () =>
    parseTree(body, errors, {
      disallowComments: strict,
      allowTrailingComma: !strict,
      allowEmptyContent: true,
    }));
  const first = errors[0];
  if (first !== undefined) {
    const { detail, offset } = describeParseError(body, first, strict);
    throw new ConfigSyntaxError(file, detail, positionAt(body, offset), label);
  }
  if (root !== undefined && root.type !== "object") {
    throw new ConfigShapeError(
      file,
      `the top level is ${describeNode(root)}, expected an object`,
      positionAt(body, root.offset),
    );
  }
  return { bom, body, root };
}

const PARSE_ERROR_TEXT: Record<string, string> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "invalid number",
  PropertyNameExpected: "expected a property name in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected a colon",
  CommaExpected: "expected a comma",
  CloseBraceExpected: "expected a closing brace",
  CloseBracketExpected: "expected a closing bracket",
  EndOfFileExpected: "expected the end of the file",
  InvalidCommentToken: "comments are not allowed: the agent reads this file as strict JSON",
  UnexpectedEndOfComment: "a comment is not closed",
  UnexpectedEndOfString: "a string is not closed",
  UnexpectedEndOfNumber: "a number is cut short",
  InvalidUnicode: "invalid unicode escape",
  InvalidEscapeCharacter: "invalid escape character",
  InvalidCharacter: "invalid character in a string",
};

function describeParseError(
  body: string,
  error: ParseError,
  strict: boolean,
): { detail: string; offset: number } {
  const name = printParseErrorCode(error.error);
  if (strict && (name === "PropertyNameExpected" || name === "ValueExpected")) {
    let back = error.offset - 1;
    while (back >= 0 && /\s/.test(body[back]!)) back--;
    if (body[back] === "," && (body[error.offset] === "}" || body[error.offset] === "]")) {
      return {
        detail: "trailing commas are not allowed: the agent reads this file as strict JSON",
        offset: back,
      };
    }
  }
  return { detail: PARSE_ERROR_TEXT[name] ?? name, offset: error.offset };
}

function describeNode(node: Node): string {
  switch (node.type) {
    case "array":
      return "an array";
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "boolean":
      return "a boolean";
    case "null":
      return "null";
    default:
      return "an object";
  }
}

/** The property `key` of `obj`; a second property of the same name is a shape error. */
function findProperty(body: string, obj: Node, key: string, file: string): Node | undefined {
  let found: Node | undefined;
  for (const prop of obj.children ?? []) {
    if (prop.children?.[0]?.value !== key) continue;
    if (found !== undefined) {
      throw new ConfigShapeError(
        file,
        `the key "${key}" appears twice in the same object`,
        positionAt(body, prop.offset),
        "remove one of them by hand, then run `cargo-agents sync` again",
      );
    }
    found = prop;
  }
  return found;
}

function findPath(
  body: string,
  root: Node,
  path: readonly string[],
  file: string,
): { parent: Node; prop: Node } | undefined {
  let obj = root;
  for (let i = 0; i < path.length; i++) {
    const prop = findProperty(body, obj, path[i]!, file);
    if (prop === undefined) return undefined;
    if (i === path.length - 1) return { parent: obj, prop };
    const value = prop.children![1]!;
    if (value.type !== "object") return undefined;
    obj = value;
  }
  return undefined;
}
