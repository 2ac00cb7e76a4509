/**
 * A saved script's text -> the JavaScript the guest compiles when a script calls it
 * (`await scripts.name(input)`): the same reading as a script sent to `execute` (fences, `export default`,
 * expression first, then statement body; TypeScript stripped only when the JavaScript does not parse), each
 * form wrapped as `(function (scripts) { return async (input) => ...; })`, so the saved script reads its input
 * as `input` and its own calls of saved scripts are counted one level deeper. Also whether a saved script
 * still compiles at all, for `list_tools` Problems.
 *
 * @module
 */
import {
  createTypeStripper,
  normalizeScriptWithOrigin,
  startsWithStatement,
  type TypeStripper,
} from "../sandbox/mod.ts";

/** What the host answers a `scripts.name()` call with: sources to try in order, and whose error to show. */
export interface SavedScriptForms {
  /** Each evaluates to `(scripts) => async (input) => ...`; the guest calls the first that compiles. */
  forms: string[];
  /** Index of the form whose syntax error is shown when none compiles (the JavaScript statement body). */
  report: number;
}

/** Forms of the texts seen lately, by text (at most this many kept). */
const MAX_CACHED_FORMS = 256;

/** Builds {@link SavedScriptForms}, remembering the last {@link MAX_CACHED_FORMS} texts. */
export class SavedScriptCompiler {
  readonly #strip: TypeStripper;
  readonly #cache = new Map<string, Promise<SavedScriptForms>>();
  readonly #problems = new Map<string, Promise<string | undefined>>();

  /** @param strip TypeScript stripper. @default sucrase's, loaded on first use */
  constructor(strip: TypeStripper = createTypeStripper().strip) {
    this.#strip = strip;
  }

  /** The forms of `text` (a saved script file as read). Never throws. */
  forms(text: string): Promise<SavedScriptForms> {
    let made = this.#cache.get(text);
    if (made === undefined) {
      if (this.#cache.size >= MAX_CACHED_FORMS) this.#cache.clear();
      made = buildForms(text, this.#strip);
      this.#cache.set(text, made);
    }
    return made;
  }

  /**
   * Why `text` cannot compile (sucrase's syntax error, with the line and column in the file), or
   * `undefined` when one of its forms parses as TypeScript (which JavaScript is too). Remembered per text.
   */
  compileProblem(text: string): Promise<string | undefined> {
    let found = this.#problems.get(text);
    if (found === undefined) {
      if (this.#problems.size >= MAX_CACHED_FORMS) this.#problems.clear();
      found = this.#findProblem(text);
      this.#problems.set(text, found);
    }
    return found;
  }

  async #findProblem(text: string): Promise<string | undefined> {
    const code = normalizeScriptWithOrigin(text, { keepTrailingSemicolons: true }).code;
    if (code === "") return undefined;
    if ((await this.#strip(normalizeScriptWithOrigin(text).code, "expression")) !== undefined) {
      return undefined;
    }
    if ((await this.#strip(code, "statements")) !== undefined) return undefined;
    const { transform } = await import("sucrase");
    const head = "async function __saved(input) {\n";
    try {
      transform(`${head}${code}\n}`, { transforms: ["typescript"], disableESTransforms: true });
      return "it does not parse";
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // Sucrase says `(line:column)` in the wrapped text: one line of wrapper comes first.
      return message.replace(
        /\((\d+):(\d+)\)/,
        (_m, line, column) => `(line ${Number(line) - 1}, column ${column})`,
      );
    }
  }
}

async function buildForms(text: string, strip: TypeStripper): Promise<SavedScriptForms> {
  const expression = normalizeScriptWithOrigin(text).code;
  const statements = normalizeScriptWithOrigin(text, { keepTrailingSemicolons: true }).code;
  if (expression === "") return { forms: [wrap("null", "expression")], report: 0 };
  const onlyStatements = startsWithStatement(expression);
  const forms: string[] = [];
  if (!onlyStatements) forms.push(wrap(expression, "expression"));
  const report = forms.length;
  forms.push(wrap(statements, "statements"));
  if (!onlyStatements) {
    const stripped = await strip(expression, "expression");
    if (stripped !== undefined) forms.push(wrap(stripped, "expression"));
  }
  const stripped = await strip(statements, "statements");
  if (stripped !== undefined) forms.push(wrap(stripped, "statements"));
  return { forms, report };
}

/** One form: the script kept on the wrapper's first line, so its line numbers stay the file's. */
function wrap(code: string, form: "expression" | "statements"): string {
  const body = form === "expression" ? `(${code}\n)` : `{${code}\n}`;
  return `(function (scripts) { return async (input) => ${body}; })`;
}
