/**
 * The nesting budget every agent-config parser runs under. The parsers (jsonc-parser, smol-toml,
 * yaml) and the edit checks recurse once per level, so a hostile or broken file (100,000 `[` in a
 * row) would overflow the stack and take every other agent down with it. A linear scan counts the
 * depth first and refuses the file by name and position; a stack overflow that still happens
 * inside a parser is turned into the same error. Private to `lib/sync/formats/`.
 *
 * @module
 */
import { UserError } from "../../diagnostics.ts";
import { offsetToLineColumn } from "./_text.ts";

/**
 * Deepest nesting of arrays/objects/tables (and, for YAML, indentation columns) a config file may
 * have: 512 levels. Real agent configs stay below 20.
 */
export const MAX_CONFIG_NESTING_DEPTH = 512;

/** The syntax family a scan follows: which quotes open strings and which comments exist. */
export type ScanSyntax = "json" | "toml" | "yaml";

/**
 * A config file nested deeper than {@link MAX_CONFIG_NESTING_DEPTH}. `code: "SYNC_CONFIG_TOO_DEEP"`,
 * located at the first character past the budget.
 */
export class ConfigTooDeepError extends UserError {
  override name = "ConfigTooDeepError";
  constructor(file: string, format: string, location?: { line: number; column: number }) {
    super(
      "SYNC_CONFIG_TOO_DEEP",
      `Cannot read "${file}": invalid ${format}: nested deeper than ${MAX_CONFIG_NESTING_DEPTH} levels`,
      {
        location: location === undefined ? undefined : { file, ...location },
        hint: "fix the file by hand (it was left untouched), then run `cargo-agents sync` again",
      },
    );
  }
}

/**
 * Throws when `text` nests brackets (or, for YAML, indentation) deeper than the budget. Strings
 * and comments are skipped as the syntax says; the scan is linear and allocates nothing per level.
 *
 * @param text The document (without byte-order mark).
 * @param file Named in the error.
 * @param format Label for the message, e.g. `"JSONC"`.
 * @throws {ConfigTooDeepError} past {@link MAX_CONFIG_NESTING_DEPTH}.
 */
export function assertNestingBudget(text: string, file: string, format: string, syntax: ScanSyntax): void {
  const at = deepestOffset(text, syntax);
  if (at >= 0) throw new ConfigTooDeepError(file, format, offsetToLineColumn(text, at));
}

/**
 * Runs a parser and turns a stack overflow inside it into {@link ConfigTooDeepError}, so one
 * pathological file is an error for its agent only.
 */
export function withStackGuard<T>(file: string, format: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof RangeError && /call stack/i.test(error.message)) {
      throw new ConfigTooDeepError(file, format);
    }
    throw error;
  }
}

/** Offset of the first character past the depth budget, or -1 when the text stays within it. */
function deepestOffset(text: string, syntax: ScanSyntax): number {
  let depth = 0;
  let lineStart = true;
  let indent = 0;
  let prev = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\n" || c === "\r") {
      lineStart = true;
      indent = 0;
      prev = "";
      continue;
    }
    if (lineStart) {
      if (c === " " || c === "\t") {
        indent++;
        if (syntax === "yaml" && indent > MAX_CONFIG_NESTING_DEPTH) return i;
        continue;
      }
      lineStart = false;
    }
    const opensScalar = syntax !== "yaml" || prev === "" || /[:\-\[{,]/.test(prev);
    if ((c === '"' || (c === "'" && syntax !== "json")) && opensScalar) {
      i = skipQuoted(text, i, syntax);
      prev = c;
      continue;
    }
    if (syntax === "json" && c === "/" && text[i + 1] === "/") {
      i = endOfLine(text, i) - 1;
      continue;
    }
    if (syntax === "json" && c === "/" && text[i + 1] === "*") {
      const close = text.indexOf("*/", i + 2);
      i = close < 0 ? text.length : close + 1;
      continue;
    }
    if (syntax !== "json" && c === "#" && (syntax === "toml" || prev === "" || /\s/.test(text[i - 1]!))) {
      i = endOfLine(text, i) - 1;
      continue;
    }
    if (c === "[" || c === "{") {
      depth++;
      if (depth > MAX_CONFIG_NESTING_DEPTH) return i;
    } else if ((c === "]" || c === "}") && depth > 0) depth--;
    if (c !== " " && c !== "\t") prev = c;
  }
  return -1;
}

function endOfLine(text: string, i: number): number {
  let k = i;
  while (k < text.length && text[k] !== "\n" && text[k] !== "\r") k++;
  return k;
}

/** Index of the closing quote of the string opening at `i` (TOML triple quotes included). */
function skipQuoted(text: string, i: number, syntax: ScanSyntax): number {
  const quote = text[i]!;
  const escapes = quote === '"';
  if (syntax === "toml" && text.startsWith(quote.repeat(3), i)) {
    const close = text.indexOf(quote.repeat(3), i + 3);
    return close < 0 ? text.length : close + 2;
  }
  let k = i + 1;
  while (k < text.length) {
    const c = text[k]!;
    if (escapes && c === "\\") k += 2;
    else if (c === quote) {
      if (syntax === "yaml" && quote === "'" && text[k + 1] === "'") k += 2; // '' escapes ' in YAML
      else return k;
    } else if ((c === "\n" || c === "\r") && syntax !== "yaml") return k; // unterminated: the parser reports it
    else k++;
  }
  return text.length;
}
