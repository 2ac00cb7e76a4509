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
} from "./config_format.ts";
import {
  applyTextEdits,
  detectEol,
  lineEndOf,
  lineIndentOf,
  lineStartOf,
  skipBlanks,
  skipLineBreak,
  splitBom,
  startsItsLine,
  type TextEdit,
} from "./_text.ts";
import { deepEqual } from "./_values.ts";

/** Options of {@link jsonFormat}. */
export interface JsonFormatOptions {
  /**
   * Strict JSON: comments and trailing commas are syntax errors, because the agent reads the file
   * with `JSON.parse` (Claude Code resets such a file). `false` reads JSONC.
   */
  strict: boolean;
}

/** Indentation used when a file shows none (a new file, or a one-line file): two spaces. */
export const DEFAULT_JSON_INDENT = "  ";

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
    read(text: string, file: string): unknown {
      const { root } = parse(text, file);
      return root === undefined ? {} : getNodeValue(root);
    },
    setEntry(text: string, address: EntryAddress, value: unknown, file: string): string {
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
            : renderBlock(value, lineIndentOf(body, prop.offset), unit, eol);
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
    },
    removeEntry(text: string, address: EntryAddress, file: string): string {
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
    },
  };
}

/** The strict-JSON editor (Claude Code, Claude Desktop). */
export const STRICT_JSON: ConfigFormat = jsonFormat({ strict: true });
/** The JSONC editor (comments and trailing commas allowed). */
export const JSONC: ConfigFormat = jsonFormat({ strict: false });

function parseJson(text: string, file: string, strict: boolean, label: string): Parsed {
  const { bom, body } = splitBom(text);
  const errors: ParseError[] = [];
  const root = parseTree(body, errors, {
    disallowComments: strict,
    allowTrailingComma: !strict,
    allowEmptyContent: true,
  });
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

function nest(path: readonly string[], value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

/** The first indentation in front of a key or a closing bracket: a tab, or a run of spaces. */
function detectIndentUnit(body: string): string {
  const match = /^([ \t]+)["}\]]/m.exec(body);
  if (match === null) return DEFAULT_JSON_INDENT;
  return match[1]!.startsWith("\t") ? "\t" : match[1]!.replace(/\t/g, "");
}

function isOneLine(body: string, node: Node): boolean {
  return !/[\r\n]/.test(body.slice(node.offset, node.offset + node.length));
}

function isSpaced(body: string, node: Node): boolean {
  return /":\s/.test(body.slice(node.offset, node.offset + node.length));
}

/** Renders a value for a multi-line file: objects one key a line, arrays of scalars on one line. */
function renderBlock(value: unknown, indent: string, unit: string, eol: string): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    if (value.every((v) => typeof v !== "object" || v === null)) {
      return "[" + value.map((v) => JSON.stringify(v)).join(", ") + "]";
    }
    const inner = indent + unit;
    return "[" + eol + value.map((v) => inner + renderBlock(v, inner, unit, eol)).join("," + eol) + eol +
      indent +
      "]";
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    const inner = indent + unit;
    return "{" + eol +
      entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${renderBlock(v, inner, unit, eol)}`).join(
        "," + eol,
      ) +
      eol + indent + "}";
  }
  return JSON.stringify(value);
}

/** Renders a value on one line, with or without a space after `:` and `,`. */
function renderInline(value: unknown, spaced: boolean): string {
  const sep = spaced ? ", " : ",";
  const colon = spaced ? ": " : ":";
  if (Array.isArray(value)) return "[" + value.map((v) => renderInline(v, spaced)).join(sep) + "]";
  if (typeof value === "object" && value !== null) {
    return "{" + Object.entries(value).map(([k, v]) => JSON.stringify(k) + colon + renderInline(v, spaced))
      .join(sep) +
      "}";
  }
  return JSON.stringify(value);
}

/** Offset of the comma that follows `node` (skipping blanks and comments), or -1. */
function commaAfter(body: string, node: Node): number {
  let i = node.offset + node.length;
  while (i < body.length) {
    if (/\s/.test(body[i]!)) i++;
    else if (body.startsWith("//", i)) i = lineEndOf(body, i);
    else if (body.startsWith("/*", i)) {
      const close = body.indexOf("*/", i + 2);
      i = close < 0 ? body.length : close + 2;
    } else return body[i] === "," ? i : -1;
  }
  return -1;
}

/**
 * Inserts `"key": value` as the last property of `obj`. In a multi-line object it goes on its own
 * line after the last property (after that property's comma and same-line comment), indented
 * like it, and takes a trailing comma when the last property had one; in a one-line object it is
 * appended inline.
 */
function insertProperty(
  body: string,
  obj: Node,
  key: string,
  value: unknown,
  unit: string,
  eol: string,
): TextEdit[] {
  const children = obj.children ?? [];
  const objEnd = obj.offset + obj.length;
  const last = children[children.length - 1];
  if (last === undefined) {
    const close = objEnd - 1;
    if (startsItsLine(body, close)) {
      const indent = lineIndentOf(body, close) + unit;
      const line = `${indent}${JSON.stringify(key)}: ${renderBlock(value, indent, unit, eol)}${eol}`;
      return [{ start: lineStartOf(body, close), end: lineStartOf(body, close), text: line }];
    }
    const base = lineIndentOf(body, obj.offset);
    const inner = body.slice(obj.offset + 1, close);
    const line = `${eol}${base + unit}${JSON.stringify(key)}: ${
      renderBlock(value, base + unit, unit, eol)
    }${eol}${base}`;
    if (inner.trim() === "") return [{ start: obj.offset + 1, end: close, text: line }];
    return [{ start: obj.offset + 1, end: obj.offset + 1, text: line }];
  }
  const lastEnd = last.offset + last.length;
  let j = skipBlanks(body, lastEnd);
  const hasComma = body[j] === ",";
  const commaAt = j;
  if (hasComma) j = skipBlanks(body, j + 1);
  if (body.startsWith("//", j)) j = lineEndOf(body, j);
  else if (body.startsWith("/*", j)) {
    const close = body.indexOf("*/", j + 2);
    if (close >= 0 && !/[\r\n]/.test(body.slice(j, close))) j = skipBlanks(body, close + 2);
  }
  if (j < body.length && body[j] !== "\n" && body[j] !== "\r") {
    // One-line object: append inline, after the comma when there is a trailing one.
    const property = JSON.stringify(key) + (isSpaced(body, obj) ? ": " : ":") +
      renderInline(value, isSpaced(body, obj));
    const sep = isSpaced(body, obj) ? ", " : ",";
    if (hasComma) {
      return [{ start: commaAt + 1, end: commaAt + 1, text: (sep === ", " ? " " : "") + property + "," }];
    }
    return [{ start: lastEnd, end: lastEnd, text: sep + property }];
  }
  const indent = startsItsLine(body, last.offset)
    ? lineIndentOf(body, last.offset)
    : lineIndentOf(body, obj.offset) + unit;
  const line = `${eol}${indent}${JSON.stringify(key)}: ${renderBlock(value, indent, unit, eol)}${
    hasComma ? "," : ""
  }`;
  // The comma goes first: both edits may sit at the same offset, and ties keep their order.
  const edits: TextEdit[] = hasComma ? [] : [{ start: lastEnd, end: lastEnd, text: "," }];
  edits.push({ start: j, end: j, text: line });
  return edits;
}

/**
 * Removes the property `prop` of `obj`. A property on lines of its own goes with those lines
 * (and its same-line comment); the comma it leaves dangling on the previous property is removed
 * unless the object uses trailing commas.
 */
function removePropertyEdits(body: string, obj: Node, prop: Node): TextEdit[] {
  const siblings = obj.children ?? [];
  const idx = siblings.indexOf(prop);
  const start = prop.offset;
  const end = prop.offset + prop.length;
  let j = skipBlanks(body, end);
  const hasComma = body[j] === ",";
  const commaAt = j;
  if (hasComma) j = skipBlanks(body, j + 1);
  if (body.startsWith("//", j)) j = lineEndOf(body, j);
  const endsLine = j >= body.length || body[j] === "\n" || body[j] === "\r";
  const prev = idx > 0 ? siblings[idx - 1] : undefined;
  if (startsItsLine(body, start) && endsLine) {
    const edits: TextEdit[] = [{ start: lineStartOf(body, start), end: skipLineBreak(body, j), text: "" }];
    if (!hasComma && prev !== undefined) {
      const comma = commaAfter(body, prev);
      if (comma >= 0) edits.push({ start: comma, end: comma + 1, text: "" });
    }
    return edits;
  }
  const next = siblings[idx + 1];
  if (next !== undefined) return [{ start, end: next.offset, text: "" }];
  if (prev !== undefined) return [{ start: prev.offset + prev.length, end, text: "" }];
  return [{ start, end: hasComma ? commaAt + 1 : end, text: "" }];
}
