/**
 * TypeScript text primitives shared by the declarations renderer and the
 * binding table: identifier tests, reserved words, quoted keys, literal
 * types and comment-safe JSDoc. Private to the declarations concept.
 *
 * @module
 */

/** `[A-Za-z_$][A-Za-z0-9_$]*`: the names a script can write after a dot. */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** ECMAScript reserved words (strict mode included) plus literal keywords. */
const JS_RESERVED: ReadonlySet<string> = new Set([
  "await",
  "break",
  "case",
  "catch",
  "class",
  "const",
  "continue",
  "debugger",
  "default",
  "delete",
  "do",
  "else",
  "enum",
  "export",
  "extends",
  "false",
  "finally",
  "for",
  "function",
  "if",
  "implements",
  "import",
  "in",
  "instanceof",
  "interface",
  "let",
  "new",
  "null",
  "package",
  "private",
  "protected",
  "public",
  "return",
  "static",
  "super",
  "switch",
  "this",
  "throw",
  "true",
  "try",
  "typeof",
  "var",
  "void",
  "while",
  "with",
  "yield",
]);

/**
 * Names a hoisted `type` must not take: TS intrinsic type names, type-level
 * keywords, and the global types the generated text itself uses (a `$defs`
 * entry called `Promise` or `Record` would otherwise shadow them).
 */
const TYPE_RESERVED: ReadonlySet<string> = new Set([
  "any",
  "asserts",
  "bigint",
  "boolean",
  "infer",
  "intrinsic",
  "is",
  "keyof",
  "never",
  "number",
  "object",
  "readonly",
  "string",
  "symbol",
  "type",
  "undefined",
  "unique",
  "unknown",
  "Array",
  "Partial",
  "Promise",
  "Record",
  "ReadonlyArray",
]);

/** Whether `name` matches `[A-Za-z_$][A-Za-z0-9_$]*` (reserved words included). */
export function isIdentifierName(name: string): boolean {
  return IDENTIFIER.test(name);
}

/** Whether `name` is an ECMAScript reserved word such as `delete` or `function`. */
export function isReservedWord(name: string): boolean {
  return JS_RESERVED.has(name);
}

/**
 * A property or method key as written in a type literal: bare when it is an
 * identifier and not a reserved word, else a double-quoted string literal.
 */
export function renderKey(name: string): string {
  return isIdentifierName(name) && !isReservedWord(name) ? name : JSON.stringify(name);
}

/**
 * Replaces every character outside `[A-Za-z0-9_$]` with `_` and prefixes `_`
 * when the result is empty or starts with a digit. Used for binding aliases.
 */
export function sanitizeIdentifier(name: string): string {
  let out = name.replace(/[^A-Za-z0-9_$]/g, "_");
  if (out === "" || /^[0-9]/.test(out)) out = `_${out}`;
  return out;
}

/**
 * A type name derived from a JSON-pointer segment or tool key: characters
 * outside `[A-Za-z0-9_]` become `_`; a leading digit, an empty result, a JS
 * reserved word or a reserved type name gets a `_` prefix.
 */
export function sanitizeTypeName(raw: string): string {
  let out = raw.replace(/[^A-Za-z0-9_]/g, "_");
  if (out === "" || /^[0-9]/.test(out) || JS_RESERVED.has(out) || TYPE_RESERVED.has(out)) out = `_${out}`;
  return out;
}

/** `"get-sum"` -> `"GetSum"`, `"API-post-search"` -> `"APIPostSearch"`; used to prefix colliding type names. */
export function pascalCase(raw: string): string {
  const words = raw.split(/[^A-Za-z0-9]+/).filter((w) => w !== "");
  const joined = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  return sanitizeTypeName(joined === "" ? "Tool" : joined);
}

/**
 * A JSON value as a TypeScript literal type: strings are JSON-quoted (valid TS
 * string literals), objects become `{ "k": V }`, arrays become tuples.
 */
export function renderLiteral(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? String(Object.is(value, -0) ? 0 : value) : "number";
    case "boolean":
      return String(value);
    case "object": {
      if (Array.isArray(value)) return `[${value.map(renderLiteral).join(", ")}]`;
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length === 0) return "Record<string, never>";
      return `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${renderLiteral(v)};`).join(" ")} }`;
    }
    default:
      return "unknown";
  }
}

/**
 * Makes text safe inside a `/* ... *\/` comment: `*\/` is written `*\\/` so the
 * comment cannot close early. Backticks, fences and `${...}` are inert inside a
 * comment and are kept as written (each comment line starts with ` * `, so a
 * fence in a description can never open or close a Markdown code block that
 * wraps the declarations).
 */
export function escapeComment(text: string): string {
  return text.replace(/\*\//g, "*\\/");
}

/**
 * Renders a description as a JSDoc comment at `indent` levels of two spaces,
 * with a trailing newline. One line -> `/** text *\/`; several lines keep their
 * shape (trailing blanks trimmed, runs of blank lines collapsed, CR/LF/U+2028/
 * U+2029 all treated as line breaks). Empty or whitespace-only text -> `""`.
 */
export function renderJsDoc(text: string, indent: number): string {
  const pad = "  ".repeat(indent);
  const lines = escapeComment(text).split(/\r\n|[\r\n\u2028\u2029]/).map((l) => l.trimEnd());
  while (lines.length > 0 && lines[0] === "") lines.shift();
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const kept = lines.filter((line, i) => line !== "" || lines[i - 1] !== "");
  if (kept.length === 0) return "";
  if (kept.length === 1) return `${pad}/** ${kept[0]!.trim()} */\n`;
  return `${pad}/**\n${kept.map((l) => (l === "" ? `${pad} *\n` : `${pad} * ${l}\n`)).join("")}${pad} */\n`;
}
