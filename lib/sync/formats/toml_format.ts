/**
 * TOML agent configs (Codex CLI's `config.toml`). No well-kept npm library edits TOML while
 * keeping comments, so this is a targeted text edit: a small scanner finds the table headers and
 * the entry's `[<container>.<name>]` table is inserted, its body replaced, or its lines removed;
 * every other byte stays. Each result is parsed back with smol-toml and compared with the
 * document the edit must produce before it is returned.
 *
 * @module
 */
import { parse, TomlError } from "smol-toml";
import { decodeBasicString, indexTomlPositions } from "../../toml_position.ts";
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
  lineStartOf,
  skipBlanks,
  skipLineBreak,
  type TextEdit,
} from "./_text.ts";
import { deepEqual, expectedDocument, getAtPath, isPlainObject, pruneEmptyContainers } from "./values.ts";
import { assertNestingBudget, withStackGuard } from "./_budget.ts";

/** A `[table]` or `[[array.of.tables]]` header and the extent of its block. Offsets are 0-based. */
export interface TomlHeader {
  /** The header's key path, unquoted: `[a."b.c"]` is `["a", "b.c"]`. */
  keys: string[];
  /** `[[...]]`. */
  isArray: boolean;
  /** Start of the header's line. */
  lineStart: number;
  /** Start of the line after the header. */
  bodyStart: number;
  /**
   * End of the block without its trailing blank and comment-only lines (those belong to what
   * follows): just past the line break of the block's last statement line.
   */
  blockEnd: number;
}

/** The TOML {@link ConfigFormat}. */
export const TOML: ConfigFormat = {
  label: "TOML",
  read: readToml,
  setEntry(text: string, address: EntryAddress, value: unknown, file: string): string {
    const doc = readToml(text, file);
    const tableKeys = [...address.containerPath, address.name];
    const current = getAtPath(doc, tableKeys);
    if (current !== undefined && deepEqual(current, value)) return text;
    if (!isPlainObject(value)) throw new TypeError("A TOML entry must be a table");
    checkContainers(text, doc, address.containerPath, file);
    const eol = detectEol(text);
    const headers = scanTomlHeaders(text);
    const own = headers.filter((h) => startsWith(h.keys, tableKeys));
    const main = own.find((h) => h.keys.length === tableKeys.length && !h.isArray);
    const body = renderTableBody(value, eol);
    const edits: TextEdit[] = [];
    if (current !== undefined) {
      if (main === undefined) throw notATable(text, file, tableKeys);
      const lead = text[main.bodyStart - 1] === "\n" || main.bodyStart === 0 ? "" : eol;
      edits.push({ start: main.bodyStart, end: Math.max(main.bodyStart, main.blockEnd), text: lead + body });
      for (const sub of own) if (sub !== main) edits.push(removalEdit(text, sub));
    } else {
      const related = headers.filter((h) => startsWith(h.keys, address.containerPath));
      const at = related.length > 0 ? related[related.length - 1]!.blockEnd : text.length;
      let lead = at > 0 && text[at - 1] !== "\n" ? eol : "";
      if (at > 0) lead += eol;
      edits.push({ start: at, end: at, text: `${lead}[${renderKeyPath(tableKeys)}]${eol}${body}` });
    }
    return verified(applyTextEdits(text, edits), text, doc, tableKeys, value, file);
  },
  removeEntry(text: string, address: EntryAddress, file: string): string {
    const doc = readToml(text, file);
    const tableKeys = [...address.containerPath, address.name];
    if (getAtPath(doc, tableKeys) === undefined) return text;
    const own = scanTomlHeaders(text).filter((h) => startsWith(h.keys, tableKeys));
    if (!own.some((h) => h.keys.length === tableKeys.length && !h.isArray)) {
      throw notATable(text, file, tableKeys);
    }
    return verified(
      applyTextEdits(text, own.map((h) => removalEdit(text, h))),
      text,
      doc,
      tableKeys,
      undefined,
      file,
    );
  },
};

function readToml(text: string, file: string): unknown {
  assertNestingBudget(text, file, "TOML", "toml");
  try {
    return withStackGuard(file, "TOML", () => parse(text));
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const detail = error.message.replace(/^Invalid TOML document: /, "").split("\n")[0]!;
    // smol-toml's line and column are 1-based (pinned by a test).
    throw new ConfigSyntaxError(file, detail, { line: error.line, column: error.column }, "TOML");
  }
}

/** Throws when a table on the container path is written as another type (`mcp_servers = "oops"`). */
function checkContainers(text: string, doc: unknown, containerPath: readonly string[], file: string): void {
  let node: unknown = doc;
  for (let i = 0; i < containerPath.length; i++) {
    if (!isPlainObject(node)) return;
    const key = containerPath[i]!;
    if (!Object.hasOwn(node, key)) return;
    node = node[key];
    if (isPlainObject(node)) continue;
    const path = containerPath.slice(0, i + 1);
    throw new ConfigShapeError(
      file,
      `"${describePath(path)}" is ${describeTomlValue(node)}, expected a table`,
      indexTomlPositions(text).locateValue(path),
      `replace it with a [${
        renderKeyPath(path)
      }] table (or delete the line), then run \`cargo-agents sync\` again`,
    );
  }
}

function describeTomlValue(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value instanceof Date) return "a date";
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a float";
  return `a ${typeof value}`;
}

function verified(
  next: string,
  text: string,
  before: unknown,
  path: string[],
  value: unknown,
  file: string,
): string {
  let after: unknown;
  try {
    after = parse(next);
  } catch {
    after = undefined; // Reported below: the edit would break the file.
  }
  if (
    after === undefined ||
    !deepEqual(pruneEmptyContainers(after, path), expectedDocument(before, path, value))
  ) {
    throw new ConfigShapeError(
      file,
      `the [${renderKeyPath(path.slice(0, -1))}] table is laid out in a way sync cannot extend safely ` +
        "(an inline table or dotted keys)",
      path.length > 1 ? indexTomlPositions(text).locate(path.slice(0, -1)) : undefined,
      `add or remove the [${renderKeyPath(path)}] table by hand; the file was left untouched`,
    );
  }
  return next;
}

function notATable(text: string, file: string, keys: string[]): ConfigShapeError {
  const name = keys[keys.length - 1]!;
  const at = text.indexOf(name);
  return new ConfigShapeError(
    file,
    `"${describePath(keys)}" is not written as a [${
      renderKeyPath(keys)
    }] table (an inline table, dotted keys ` +
      "or an array of tables)",
    at >= 0 ? positionAt(text, at) : undefined,
    `rewrite it as a [${renderKeyPath(keys)}] table (or delete it), then run \`cargo-agents sync\` again`,
  );
}

/** Removes a header's block, with the blank line in front of it when there is one. */
function removalEdit(text: string, header: TomlHeader): TextEdit {
  let start = header.lineStart;
  if (start > 0) {
    const prevStart = lineStartOf(text, start - (text[start - 2] === "\r" ? 2 : 1));
    if (text.slice(prevStart, start).trim() === "") start = prevStart;
  }
  return { start, end: Math.max(header.blockEnd, header.bodyStart), text: "" };
}

function startsWith(keys: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= keys.length && prefix.every((k, i) => keys[i] === k);
}

/** Renders a key path: bare keys where allowed, else basic strings. */
export function renderKeyPath(keys: readonly string[]): string {
  return keys.map((k) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : renderTomlString(k))).join(".");
}

function renderTomlString(s: string): string {
  // JSON string escapes are valid TOML basic-string escapes; TOML also forbids a raw DEL.
  return JSON.stringify(s).replace(/\x7f/g, "\\u007f");
}

function renderTomlValue(value: unknown): string {
  if (typeof value === "string") return renderTomlString(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return "[" + value.map(renderTomlValue).join(", ") + "]";
  if (isPlainObject(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    return "{ " + entries.map(([k, v]) => `${renderKeyPath([k])} = ${renderTomlValue(v)}`).join(", ") + " }";
  }
  throw new TypeError(`Cannot render ${String(value)} as TOML`);
}

function renderTableBody(value: Record<string, unknown>, eol: string): string {
  return Object.entries(value).map(([k, v]) => `${renderKeyPath([k])} = ${renderTomlValue(v)}${eol}`).join(
    "",
  );
}

/**
 * Finds every table header of a valid TOML document, skipping strings, comments and multi-line
 * arrays, and computes each block's extent.
 *
 * @param text A document smol-toml parsed without error.
 */
export function scanTomlHeaders(text: string): TomlHeader[] {
  const found: Omit<TomlHeader, "blockEnd">[] = [];
  let i = 0;
  let depth = 0;
  let atLineStart = true;
  while (i < text.length) {
    if (atLineStart && depth === 0) {
      const j = skipBlanks(text, i);
      atLineStart = false;
      if (text[j] === "[") {
        const header = parseHeader(text, j);
        const bodyStart = skipLineBreak(text, lineEndOf(text, header.end));
        found.push({ keys: header.keys, isArray: header.isArray, lineStart: i, bodyStart });
        i = bodyStart;
        atLineStart = true;
        continue;
      }
      i = j;
      continue;
    }
    const c = text[i]!;
    if (c === "#") i = lineEndOf(text, i);
    else if (c === '"' || c === "'") i = skipString(text, i);
    else {
      if (c === "[" || c === "{") depth++;
      else if (c === "]" || c === "}") depth--;
      else if (c === "\n") atLineStart = true;
      i++;
    }
  }
  return found.map((h, k) => {
    const rawEnd = found[k + 1]?.lineStart ?? text.length;
    return { ...h, blockEnd: trimTrailingTrivia(text, h.bodyStart, rawEnd) };
  });
}

/** Moves `end` back over whole blank or comment-only lines, never before `floor`. */
function trimTrailingTrivia(text: string, floor: number, end: number): number {
  let at = end;
  while (at > floor) {
    let p = at - 1;
    if (text[p] === "\n") p--;
    if (text[p] === "\r") p--;
    const start = p + 1 > floor ? lineStartOf(text, p + 1) : floor;
    const line = text.slice(Math.max(start, floor), at);
    if (!/^[ \t]*(#[^\r\n]*)?(\r?\n)?$/.test(line)) break;
    at = Math.max(start, floor);
  }
  return at;
}

function skipString(text: string, i: number): number {
  const quote = text[i]!;
  const triple = quote.repeat(3);
  if (text.startsWith(triple, i)) {
    let k = i + 3;
    while (k < text.length) {
      if (quote === '"' && text[k] === "\\") k += 2;
      else if (text.startsWith(triple, k)) {
        let close = k + 3;
        // Up to two more quotes may end the content: `"""a"""""` is `a""`.
        while (close < k + 5 && text[close] === quote) close++;
        return close;
      } else k++;
    }
    return text.length;
  }
  let k = i + 1;
  while (k < text.length && text[k] !== quote && text[k] !== "\n") {
    k += quote === '"' && text[k] === "\\" ? 2 : 1;
  }
  return k + 1;
}

function parseHeader(text: string, start: number): { keys: string[]; isArray: boolean; end: number } {
  let k = start + 1;
  const isArray = text[k] === "[";
  if (isArray) k++;
  const keys: string[] = [];
  for (;;) {
    k = skipBlanks(text, k);
    const c = text[k];
    if (c === '"' || c === "'") {
      const end = skipString(text, k);
      const raw = text.slice(k + 1, end - 1);
      keys.push(c === '"' ? decodeBasicString(raw) : raw);
      k = end;
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(text.slice(k));
      keys.push(m?.[0] ?? "");
      k += m?.[0].length ?? 0;
    }
    k = skipBlanks(text, k);
    if (text[k] === ".") k++;
    else break;
  }
  k += isArray ? 2 : 1;
  return { keys, isArray, end: k };
}
