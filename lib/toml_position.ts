/**
 * TOML documents with positions. smol-toml returns plain values without positions, so the
 * validators of `config.toml`, `SYMPOSIUM.toml` and `Cargo.toml` parse through
 * {@link parseTomlDocument} and rescan the (already parsed, hence valid) text here to say where a
 * key is. Private to the TOML-reading modules.
 *
 * @module
 */
import { parse, TomlError } from "smol-toml";
import { closestMatch, UserError } from "./diagnostics.ts";

/** A parsed TOML table: plain objects, arrays, strings, numbers, booleans and dates. */
export type TomlTable = Record<string, unknown>;

/** A parsed document plus a lazy index of where its keys are. */
export interface TomlDocument {
  value: TomlTable;
  /** Positions, built on first use. */
  index: TomlIndex;
}

/**
 * Parses TOML text.
 *
 * @param file Path shown in diagnostics.
 * @param options.code The error code for a syntax error, e.g. `"CONFIG_SYNTAX"`.
 * @param options.what What the file is, for the message, e.g. `"config file"`.
 * @throws {UserError} `options.code` when the text is not valid TOML, with smol-toml's 1-based
 *   line and column (pinned by a test) as the location.
 */
export function parseTomlDocument(
  text: string,
  file: string,
  options: { code: string; what: string },
): TomlDocument {
  let value: TomlTable;
  try {
    value = parse(text, { unsafeKeyBehaviour: "throw" });
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const detail = error.message.replace(/^Invalid TOML document: /, "").split("\n")[0]!;
    throw new UserError(options.code, `Cannot parse ${options.what}: the TOML is invalid (${detail})`, {
      hint: "fix the TOML syntax at the position shown",
      location: { file, line: error.line, column: error.column },
      cause: error,
    });
  }
  let index: TomlIndex | undefined;
  return {
    value,
    get index(): TomlIndex {
      index ??= indexTomlPositions(text);
      return index;
    },
  };
}

/** True for a TOML table (a plain object, not an array or a date). */
export function isTable(value: unknown): value is TomlTable {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** The TOML type of a parsed value, for messages: `"string"`, `"integer"`, `"table"`, `"array"`... */
export function tomlTypeName(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (value instanceof Date) return "date";
  if (isTable(value)) return "table";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "float";
  return typeof value;
}

/** A key path as the parsed value is addressed: table keys and array indices, e.g. `["mcp_servers", 0, "env"]`. */
export type TomlPath = readonly (string | number)[];

/** A 1-based position in the text (column in UTF-16 code units). */
export interface TomlPosition {
  line: number;
  column: number;
}

/** Positions of every key, table header and array element of one document. */
export interface TomlIndex {
  /**
   * Where `path` is defined: the key's first character (for a dotted key, the segment that names
   * `path`), the `[[` of an array-of-tables entry, or the first character of an array element.
   * When `path` itself is not written in the text (e.g. an implicit table), the position of the
   * longest written prefix; `{ line: 1, column: 1 }` when nothing matches.
   */
  locate(path: TomlPath): TomlPosition;
  /**
   * Where the value of `path` starts (the first character after `=` and its spaces) when `path`
   * is written as `key = value`; otherwise as {@link TomlIndex.locate}.
   */
  locateValue(path: TomlPath): TomlPosition;
}

/**
 * Scans `text` (which must be valid TOML: parse it first) and indexes where each key is.
 *
 * @example
 * ```ts
 * import { indexTomlPositions } from "./_toml_position.ts";
 * const index = indexTomlPositions('[[mcp_servers]]\nname = "a"\n');
 * index.locate(["mcp_servers", 0, "name"]); // { line: 2, column: 1 }
 * ```
 */
export function indexTomlPositions(text: string): TomlIndex {
  const offsets = new Map<string, number>();
  new Scanner(text, offsets).scanDocument();
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1);
  const toPosition = (offset: number): TomlPosition => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - lineStarts[lo]! + 1 };
  };
  return {
    locate(path: TomlPath): TomlPosition {
      for (let n = path.length; n > 0; n--) {
        const offset = offsets.get(pathKey(path.slice(0, n)));
        if (offset !== undefined) return toPosition(offset);
      }
      return { line: 1, column: 1 };
    },
    locateValue(path: TomlPath): TomlPosition {
      const offset = offsets.get(VALUE_MARK + pathKey(path));
      return offset === undefined ? this.locate(path) : toPosition(offset);
    },
  };
}

/** Prefix of the index keys that record where a value starts. */
const VALUE_MARK = "=";

function pathKey(path: TomlPath): string {
  return JSON.stringify(path);
}

const BARE_KEY = /[A-Za-z0-9_-]/;

class Scanner {
  #text: string;
  #i = 0;
  #offsets: Map<string, number>;
  /** Number of entries so far of each array of tables, by concrete path. */
  #arrayCounts = new Map<string, number>();

  constructor(text: string, offsets: Map<string, number>) {
    this.#text = text;
    this.#offsets = offsets;
  }

  scanDocument(): void {
    const t = this.#text;
    let table: (string | number)[] = [];
    while (true) {
      this.#skipBlank();
      if (this.#i >= t.length) return;
      if (t[this.#i] === "[") {
        const start = this.#i;
        const isArray = t[this.#i + 1] === "[";
        this.#i += isArray ? 2 : 1;
        const keys = this.#scanKeyPath();
        this.#i += isArray ? 2 : 1;
        table = this.#resolveHeader(keys, isArray, start);
      } else {
        this.#scanKeyValue(table);
      }
    }
  }

  #record(path: TomlPath, offset: number): void {
    const key = pathKey(path);
    if (!this.#offsets.has(key)) this.#offsets.set(key, offset);
  }

  #resolveHeader(
    keys: { key: string; start: number }[],
    isArray: boolean,
    headerStart: number,
  ): (string | number)[] {
    const path: (string | number)[] = [];
    keys.forEach(({ key, start }, j) => {
      path.push(key);
      this.#record(path, start);
      const concrete = pathKey(path);
      const isLast = j === keys.length - 1;
      if (isLast && isArray) {
        const index = this.#arrayCounts.get(concrete) ?? 0;
        this.#arrayCounts.set(concrete, index + 1);
        path.push(index);
        this.#record(path, headerStart);
      } else if (!isLast) {
        const count = this.#arrayCounts.get(concrete);
        if (count !== undefined) path.push(count - 1);
      }
    });
    return path;
  }

  #scanKeyValue(table: readonly (string | number)[]): void {
    const keys = this.#scanKeyPath();
    const path = [...table];
    for (const { key, start } of keys) {
      path.push(key);
      this.#record(path, start);
    }
    this.#skipSpaces();
    this.#i++; // "="
    this.#skipSpaces();
    this.#offsets.set(VALUE_MARK + pathKey(path), this.#i);
    this.#scanValue(path);
  }

  #scanValue(path: (string | number)[]): void {
    const t = this.#text;
    const c = t[this.#i];
    if (c === '"' || c === "'") {
      this.#skipString();
    } else if (c === "[") {
      this.#i++;
      let index = 0;
      while (true) {
        this.#skipBlank();
        if (this.#i >= t.length || t[this.#i] === "]") break;
        this.#record([...path, index], this.#i);
        this.#scanValue([...path, index]);
        index++;
        this.#skipBlank();
        if (t[this.#i] === ",") this.#i++;
      }
      this.#i++;
    } else if (c === "{") {
      this.#i++;
      while (true) {
        this.#skipBlank();
        if (this.#i >= t.length || t[this.#i] === "}") break;
        this.#scanKeyValue(path);
        this.#skipBlank();
        if (t[this.#i] === ",") this.#i++;
      }
      this.#i++;
    } else {
      while (this.#i < t.length && !",]}#\n\r".includes(t[this.#i]!)) this.#i++;
    }
  }

  #scanKeyPath(): { key: string; start: number }[] {
    const t = this.#text;
    const keys: { key: string; start: number }[] = [];
    while (true) {
      this.#skipSpaces();
      const start = this.#i;
      let key: string;
      if (t[this.#i] === '"') {
        const end = this.#findBasicStringEnd(this.#i + 1);
        key = decodeBasicString(t.slice(this.#i + 1, end));
        this.#i = end + 1;
      } else if (t[this.#i] === "'") {
        const end = t.indexOf("'", this.#i + 1);
        key = t.slice(this.#i + 1, end);
        this.#i = end + 1;
      } else {
        while (this.#i < t.length && BARE_KEY.test(t[this.#i]!)) this.#i++;
        key = t.slice(start, this.#i);
      }
      keys.push({ key, start });
      this.#skipSpaces();
      if (t[this.#i] !== ".") return keys;
      this.#i++;
    }
  }

  #skipString(): void {
    const t = this.#text;
    if (t.startsWith('"""', this.#i) || t.startsWith("'''", this.#i)) {
      const quote = t[this.#i]!;
      const fence = quote.repeat(3);
      this.#i += 3;
      while (this.#i < t.length) {
        if (quote === '"' && t[this.#i] === "\\") {
          this.#i += 2;
        } else if (t.startsWith(fence, this.#i)) {
          this.#i += 3;
          // Up to two quotes may sit right before the closing fence (`""""` ends with one quote of content).
          for (let extra = 0; extra < 2 && t[this.#i] === quote; extra++) this.#i++;
          return;
        } else {
          this.#i++;
        }
      }
      return;
    }
    if (t[this.#i] === '"') {
      this.#i = this.#findBasicStringEnd(this.#i + 1) + 1;
    } else {
      const end = t.indexOf("'", this.#i + 1);
      this.#i = end < 0 ? t.length : end + 1;
    }
  }

  /** Index of the closing `"` of a one-line basic string whose content starts at `from`. */
  #findBasicStringEnd(from: number): number {
    const t = this.#text;
    let i = from;
    while (i < t.length && t[i] !== '"') i += t[i] === "\\" ? 2 : 1;
    return i;
  }

  #skipSpaces(): void {
    while (this.#text[this.#i] === " " || this.#text[this.#i] === "\t") this.#i++;
  }

  /** Skips spaces, comments and line breaks. */
  #skipBlank(): void {
    const t = this.#text;
    while (this.#i < t.length) {
      const c = t[this.#i]!;
      if (c === " " || c === "\t" || c === "\n" || c === "\r") {
        this.#i++;
      } else if (c === "#") {
        while (this.#i < t.length && t[this.#i] !== "\n") this.#i++;
      } else {
        return;
      }
    }
  }
}

const ESCAPES: Record<string, string> = {
  b: "\b",
  t: "\t",
  n: "\n",
  f: "\f",
  r: "\r",
  e: "\x1b",
  '"': '"',
  "\\": "\\",
};

/**
 * Decodes the content of a TOML basic string (between the quotes): `\b \t \n \f \r \e \" \\`, `\xHH`,
 * `\uHHHH` and `\UHHHHHHHH` (TOML 1.1 escapes); an unknown escape keeps the character after the backslash.
 *
 * @param raw The text between the quotes, escapes as written.
 * @returns The string's value.
 */
export function decodeBasicString(raw: string): string {
  return raw.replace(/\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|x[0-9A-Fa-f]{2}|.)/g, (_, esc: string) => {
    if (esc.length > 1) return String.fromCodePoint(parseInt(esc.slice(1), 16));
    return ESCAPES[esc] ?? esc;
  });
}

/**
 * The known key a misspelled one most likely meant: the closest by edit distance, else one that
 * the key is a prefix of (`script-timeout` -> `script-timeout-secs`) or that is a prefix of it.
 */
export function suggestKey(key: string, known: readonly string[]): string | undefined {
  return closestMatch(key, known) ??
    known.find((k) => key.length >= 3 && (k.startsWith(key) || key.startsWith(k)));
}
