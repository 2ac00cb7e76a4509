/**
 * The text edits behind the JSON/JSONC editor: where a property goes in an object and how it is
 * rendered to match the file (indentation, line endings, trailing commas, one-line objects), and
 * which bytes go when one is removed. Offsets come from jsonc-parser nodes. Private to
 * `json_format.ts`.
 *
 * @module
 */
import type { Node } from "jsonc-parser";
import {
  lineEndOf,
  lineIndentOf,
  lineStartOf,
  skipBlanks,
  skipLineBreak,
  startsItsLine,
  type TextEdit,
} from "./_text.ts";

/** Indentation used when a file shows none (a new file, or a one-line file): two spaces. */
export const DEFAULT_JSON_INDENT = "  ";

/** `{a: {b: value}}` for the path `["a", "b"]`. */
export function nest(path: readonly string[], value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

/** The first indentation in front of a key or a closing bracket: a tab, or a run of spaces. */
export function detectIndentUnit(body: string): string {
  const match = /^([ \t]+)["}\]]/m.exec(body);
  if (match === null) return DEFAULT_JSON_INDENT;
  return match[1]!.startsWith("\t") ? "\t" : match[1]!.replace(/\t/g, "");
}

/** Whether the node is written on a single line. */
export function isOneLine(body: string, node: Node): boolean {
  return !/[\r\n]/.test(body.slice(node.offset, node.offset + node.length));
}

/** Whether the node writes a space after its colons. */
export function isSpaced(body: string, node: Node): boolean {
  return /":\s/.test(body.slice(node.offset, node.offset + node.length));
}

/** Renders a value for a multi-line file: objects one key a line, arrays of scalars on one line. */
export function renderBlock(
  value: unknown,
  indent: string,
  unit: string,
  eol: string,
  trailing = false,
): string {
  const last = trailing ? "," : "";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    if (value.every((v) => typeof v !== "object" || v === null)) {
      return "[" + value.map((v) => JSON.stringify(v)).join(", ") + "]";
    }
    const inner = indent + unit;
    const items = value.map((v) => inner + renderBlock(v, inner, unit, eol, trailing));
    return "[" + eol + items.join("," + eol) + last + eol + indent + "]";
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    const inner = indent + unit;
    const props = entries.map(([k, v]) =>
      `${inner}${JSON.stringify(k)}: ${renderBlock(v, inner, unit, eol, trailing)}`
    );
    return "{" + eol + props.join("," + eol) + last + eol + indent + "}";
  }
  return JSON.stringify(value);
}

/** Whether the last property of `obj` is followed by a comma (the file's trailing-comma style). */
export function hasTrailingComma(body: string, obj: Node): boolean {
  const last = obj.children?.[obj.children.length - 1];
  return last !== undefined && commaAfter(body, last) >= 0;
}

/** Renders a value on one line, with or without a space after `:` and `,`. */
export function renderInline(value: unknown, spaced: boolean): string {
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
export function insertProperty(
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
  const rendered = renderBlock(value, indent, unit, eol, hasComma);
  const line = `${eol}${indent}${JSON.stringify(key)}: ${rendered}${hasComma ? "," : ""}`;
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
export function removePropertyEdits(body: string, obj: Node, prop: Node): TextEdit[] {
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
