/**
 * How long the functions of a TypeScript module are, for `tests/layout_test.ts`: a line that opens a
 * function (a `function` declaration, a method, `const f = (…) => {`) is measured to the brace that closes
 * its body. Strings, template text, regular expression literals and comments are blanked first, so their
 * braces do not count.
 *
 * @module
 */

/** One function: its name, the 1-based line it starts on, and its length in lines (both ends counted). */
export interface FunctionLength {
  name: string;
  line: number;
  lines: number;
}

const OPENERS: readonly RegExp[] = [
  /\bfunction\s*\*?\s*([\w$]+)\s*[<(]/,
  /^\s*(?:(?:public|private|protected|static|async|override|get|set)\s+)*(#?[\w$]+)\s*(?:<[^>]*>)?\s*\(.*\)\s*(?::\s*[^{;]+)?\{\s*$/,
  /\b(?:const|let)\s+([\w$]+)\s*=\s*(?:async\s*)?(?:\([^)]*\)|[\w$]+)\s*(?::\s*[^=]+)?=>\s*\{/,
];
const NOT_NAMES = new Set(["if", "for", "while", "switch", "catch", "return", "else", "do", "try", "with"]);

/** Skips template text from `i` (just past a backtick or a `}` closing `${`); returns where code resumes. */
function skipTemplateText(text: string, i: number, out: string[], stack: string[]): number {
  while (i < text.length) {
    if (text[i] === "\\") {
      i += 2;
      continue;
    }
    if (text[i] === "`") {
      stack.pop();
      return i + 1;
    }
    if (text[i] === "$" && text[i + 1] === "{") {
      out.push("{");
      stack.push("${");
      return i + 2;
    }
    out.push(text[i] === "\n" ? "\n" : " ");
    i++;
  }
  return i;
}

/** Where the regular expression literal starting at `i` (its opening `/`) ends, just past its flags. */
function regExpEnd(text: string, i: number): number {
  let j = i + 1, inClass = false;
  while (j < text.length && text[j] !== "\n") {
    const c = text[j]!;
    if (c === "\\") j++;
    else if (c === "[") inClass = true;
    else if (c === "]") inClass = false;
    else if (c === "/" && !inClass) break;
    j++;
  }
  j++;
  while (j < text.length && /[a-z]/.test(text[j]!)) j++;
  return j;
}

/** The last character of code before `out`'s end, white space skipped (`""` at the start). */
function lastCodeChar(out: string[]): string {
  for (let k = out.length - 1; k >= 0; k--) {
    const t = out[k]!.trimEnd();
    if (t !== "") return t.at(-1)!;
  }
  return "";
}

/** `text` with strings, template text, regular expression literals and comments blanked (line breaks kept). */
export function codeOnly(text: string): string {
  const out: string[] = [];
  const stack: string[] = []; // "`" for template text, "${" and "{" for code inside a template
  let i = 0;
  while (i < text.length) {
    const c = text[i]!, next = text[i + 1];
    if (c === "/" && next === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out.push(text.slice(i, stop).replace(/[^\n]/g, " "));
      i = stop;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
      out.push(" ".repeat(j + 1 - i));
      i = j + 1;
    } else if (
      c === "/" && (lastCodeChar(out) === "" || "(,=:[!&|?{};+-*%<>~^".includes(lastCodeChar(out)))
    ) {
      const end = regExpEnd(text, i);
      out.push(" ".repeat(end - i));
      i = end;
    } else if (c === "`") {
      stack.push("`");
      i = skipTemplateText(text, i + 1, out, stack);
    } else if (c === "}" && stack.at(-1) === "${") {
      stack.pop();
      out.push("}");
      i = skipTemplateText(text, i + 1, out, stack);
    } else {
      if (c === "{" && stack.at(-1) === "${") stack.push("{");
      if (c === "}" && stack.at(-1) === "{") stack.pop();
      out.push(c);
      i++;
    }
  }
  return out.join("");
}

/** Every function of the module `text`, in the order they start (a nested one is listed on its own too). */
export function functionLengths(text: string): FunctionLength[] {
  const lines = codeOnly(text).split("\n");
  const found: FunctionLength[] = [];
  lines.forEach((line, start) => {
    const name = OPENERS.map((re) => line.match(re)?.[1]).find((n) => n !== undefined && !NOT_NAMES.has(n));
    if (name === undefined) return;
    let depth = 0, isOpen = false;
    for (let i = start; i < lines.length; i++) {
      for (const ch of lines[i]!) {
        if (ch === "{") {
          depth++;
          isOpen = true;
        } else if (ch === "}") depth--;
      }
      if (isOpen && depth <= 0) {
        found.push({ name, line: start + 1, lines: i - start + 1 });
        return;
      }
    }
  });
  return found;
}
