/**
 * User-facing errors and their rendering. Every error a user can act on is a
 * {@link UserError} (or a subclass) carrying a stable `code`, an optional
 * `hint` and an optional 1-based `location`; only {@link renderDiagnostic}
 * turns one into text.
 *
 * @module
 */

/** A position in a file. `line` and `column` are 1-based. */
export interface Location {
  /** Path as it should be shown to the user (absolute or relative to the config dir). */
  file: string;
  /** 1-based line number. */
  line: number;
  /** 1-based column number, in UTF-16 code units. */
  column: number;
}

/** Options accepted by every {@link UserError} constructor. */
export interface UserErrorOptions {
  /** What the user can do about it, e.g. `did you mean "command"?`. */
  hint?: string | undefined;
  /** Where the problem is. */
  location?: Location | undefined;
  /** The error this one wraps. */
  cause?: unknown;
}

/**
 * An error caused by input the user controls (a manifest, a config file, a
 * command-line argument, a server the user configured).
 *
 * Message grammar: "Cannot <action> <target>: <current state>", sentence case,
 * no final period.
 *
 * @example
 * ```ts
 * const e = new UserError("MANIFEST_UNKNOWN_KEY", 'Cannot load plugin "github": unknown key "comand"', {
 *   hint: 'did you mean "command"?',
 * });
 * ```
 */
export class UserError extends Error {
  override name = "UserError";
  /** Stable machine-readable code, e.g. `"MANIFEST_UNKNOWN_KEY"`. */
  readonly code: string;
  /** How to fix it, if known. */
  readonly hint: string | undefined;
  /** Where it is, if it is in a file. */
  readonly location: Location | undefined;

  constructor(code: string, message: string, options: UserErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.hint = options.hint;
    this.location = options.location;
  }
}

/** A usage error on the command line (exit code 2). */
export class UsageError extends UserError {
  override name = "UsageError";
  constructor(message: string, options: UserErrorOptions = {}) {
    super("USAGE", message, options);
  }
}

/** `Result` for operations whose failure is a normal outcome the caller branches on. */
export type Result<T, E = UserError> = { ok: true; value: T } | { ok: false; error: E };

/** Options of {@link renderDiagnostic}. */
export interface RenderOptions {
  /** Add `cause` chains and stacks. @default false */
  verbose?: boolean;
}

/**
 * Formats any thrown value for a human: what, where and how to fix.
 *
 * ```
 * error[MANIFEST_UNKNOWN_KEY]: Cannot load plugin "github": unknown key "comand"
 *   --> plugins/github/SYMPOSIUM.toml:4:1
 *   hint: did you mean "command"?
 *   see: cargo agents help MANIFEST_UNKNOWN_KEY (docs/troubleshooting.md#manifest_unknown_key)
 * ```
 *
 * Every code but `USAGE` (whose hint names the command's `--help`) gets the `see:` line of
 * {@link troubleshootingPointer}.
 *
 * @param error Anything caught. Non-`UserError` values are rendered as internal errors.
 * @returns Text without a trailing newline.
 */
export function renderDiagnostic(error: unknown, options: RenderOptions = {}): string {
  const lines: string[] = [];
  if (error instanceof UserError) {
    lines.push(`error[${error.code}]: ${error.message}`);
    if (error.location) {
      const { file, line, column } = error.location;
      lines.push(`  --> ${file}:${line}:${column}`);
    }
    if (error.hint) lines.push(`  hint: ${error.hint}`);
    // A usage error's hint already names the command's --help, which is its fix.
    if (error.code !== "USAGE") lines.push(`  see: ${troubleshootingPointer(error.code)}`);
  } else if (error instanceof Error) {
    lines.push(`error[INTERNAL]: ${error.message}`);
    if (options.verbose && error.stack) lines.push(error.stack);
  } else {
    lines.push(`error[INTERNAL]: ${String(error)}`);
  }
  if (options.verbose && error instanceof Error && error.cause !== undefined) {
    lines.push(`  caused by: ${renderDiagnostic(error.cause, options).replace(/\n/g, "\n  ")}`);
  }
  return lines.join("\n");
}

/**
 * Where the entry of an error code is explained, as one line: the command that prints it (works from a
 * release binary) and the section of `docs/troubleshooting.md` (its GitHub anchor: the code in lower case).
 *
 * @example
 * ```ts
 * import { troubleshootingPointer } from "./diagnostics.ts";
 * troubleshootingPointer("CONFIG_SYNTAX");
 * // "cargo agents help CONFIG_SYNTAX (docs/troubleshooting.md#config_syntax)"
 * ```
 */
export function troubleshootingPointer(code: string): string {
  return `cargo agents help ${code} (docs/troubleshooting.md#${troubleshootingAnchor(code)})`;
}

/** The anchor GitHub gives the heading `### CODE`: lower case, without characters other than letters, digits, `_` and `-`. */
export function troubleshootingAnchor(code: string): string {
  return code.toLowerCase().replace(/[^a-z0-9_ -]/g, "").replaceAll(" ", "-");
}

/**
 * Returns the candidate closest to `word` by edit distance, if it is close
 * enough to be a plausible typo (distance <= max(2, a third of the length)).
 *
 * @param word What the user wrote, e.g. `"comand"`.
 * @param candidates Valid spellings.
 * @returns The closest candidate, or `undefined` when none is close.
 */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const allowed = Math.max(2, Math.floor(word.length / 3));
  const lower = word.toLowerCase();
  for (const candidate of candidates) {
    // The distance is at least the difference in length: such a candidate cannot be near, and skipping it
    // keeps a very long word (a script's 16 MiB "tool name") from costing its length times every name.
    if (Math.abs(candidate.length - word.length) > allowed) continue;
    const d = editDistance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return bestDistance <= allowed ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

/**
 * What a printed line must not hold raw: C0 controls but tab (line breaks, `ESC`, `CR`), DEL, C1
 * controls, line and paragraph separators, zero-width and bidirectional marks, embeddings,
 * overrides and isolates (U+061C, U+200B-U+200F, U+202A-U+202E, U+2066-U+2069), the BOM, and the
 * other characters that show as nothing: the soft hyphen, combining grapheme joiner, Hangul fillers,
 * Khmer and Mongolian invisible vowels and separators, the word joiner and invisible operators
 * (U+2060-U+206F), variation selectors, interlinear annotation marks and specials (U+FFF0-U+FFFB),
 * tag characters (U+E0000-U+E007F, which a model reads as text that a person never sees) and
 * variation selectors supplement (U+E0100-U+E01EF), and lone surrogates.
 */
const UNPRINTABLE =
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}\ud800-\udfff]/gu;

/**
 * `text` as one printable line: every character of {@link UNPRINTABLE} written as an escape (`\n`,
 * `\r`, else `\uXXXX`), so text from a file or a server can neither break a line, erase one
 * (`ESC[2K`, `CR`) nor reorder what a terminal shows. The one escaping function for every line we
 * print (Problems, `status`, `plugin show`, `trust`).
 *
 * @example
 * ```ts
 * import { printable } from "./diagnostics.ts";
 * printable("a\nb\u001b[2K"); // "a\\nb\\u001b[2K"
 * ```
 */
export function printable(text: string): string {
  return text.replace(
    UNPRINTABLE,
    (c) => {
      if (c === "\n") return "\\n";
      if (c === "\r") return "\\r";
      const code = c.codePointAt(0)!;
      return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
    },
  );
}

/** `text` quoted as a JSON string, with {@link printable}'s characters escaped too: one field shown as data. */
export function quotedText(text: string): string {
  return printable(JSON.stringify(text));
}

/** {@link printable} for each line of a multi-line text (a file shown whole): only `\n` breaks lines. */
export function printableLines(text: string): string {
  return text.split("\n").map(printable).join("\n");
}
