/**
 * Saved scripts in `list_tools`, listed like a server's tools: an index entry each under `scripts:`, their
 * declarations (`scripts.name(input: <its Input type>)`) at `signatures`/`full`, the ones matching a `query`
 * ranked before the servers' tools, and under Problems each saved script that no longer compiles, names a
 * server not in scope, or waits for trust.
 *
 * @module
 */
import { stemmer } from "stemmer";
import type { Catalog } from "../catalog/mod.ts";
import { firstSentence } from "../declarations/mod.ts";
import { namespaceKey } from "../plugins/mod.ts";
import { SCRIPTS_GLOBAL } from "../sandbox/mod.ts";
import type { SavedScriptCompiler } from "./_saved_script_forms.ts";
import {
  readSavedScripts,
  type SavedScript,
  type SavedScriptPlaces,
  type SavedScriptSet,
} from "./saved_scripts.ts";

/** Where the saved scripts are and how to check one compiles (a session's `SavedScriptsHost`). */
export interface SavedScriptsSource {
  readonly places: SavedScriptPlaces;
  readonly compiler: Pick<SavedScriptCompiler, "compileProblem">;
}

/** What the saved scripts add to one `list_tools` answer. */
export interface SavedScriptsListing {
  /** The scripts runnable in this session. */
  set: SavedScriptSet;
  /** Problem lines (broken, servers not in scope, untrusted, unreadable files). */
  problems: string[];
}

/** Untrusted workspace scripts given a Problems line each; the rest share one line (a repository's 200 took 44 KB). */
const UNTRUSTED_LINES_MAX = 3;
/** Names that shared line shows at most. */
const UNTRUSTED_NAMES_MAX = 10;

/**
 * Reads the saved scripts and checks each runnable one: does it compile (`SavedScriptCompiler`), and is
 * every server its `@servers` line or its text names in scope. Untrusted workspace scripts are named under
 * Problems, the first {@link UNTRUSTED_LINES_MAX} a line each and the rest counted in one line.
 */
export async function listSavedScripts(
  host: SavedScriptsSource,
  catalog: Catalog,
): Promise<SavedScriptsListing> {
  const set = await readSavedScripts(host.places);
  const problems = [...set.problems];
  const inScope = new Set(catalog.servers.map((s) => namespaceKey(s.name)));
  const unavailable = catalog.unavailableNamespaces();
  for (const script of set.usable) {
    const broken = await host.compiler.compileProblem(script.text);
    if (broken !== undefined) {
      problems.push(
        `saved script \`${script.name}\` (${script.file}) no longer compiles: ${broken}; fix the file or remove ` +
          `it (\`cargo agents scripts rm ${script.name}\`)`,
      );
    }
    const missing = new Set(script.servers.filter((s) => !inScope.has(s)));
    for (const ns of unavailable) {
      if (new RegExp(`(^|[^\\w$.])${ns.replace(/\$/g, "\\$")}\\s*(\\?\\.|\\.|\\[)`).test(script.text)) {
        missing.add(ns);
      }
    }
    if (missing.size > 0) {
      problems.push(
        `saved script \`${script.name}\` names ${[...missing].map((s) => `\`${s}\``).join(", ")}, not in ` +
          "scope here; it fails when it calls one (`cargo agents status` says why a server is not in scope)",
      );
    }
  }
  for (const script of set.untrusted.slice(0, UNTRUSTED_LINES_MAX)) {
    problems.push(
      `workspace script \`${script.name}\` (${script.file}) is ${
        script.trust === "changed" ? "changed since it was trusted" : "not trusted"
      }, so it is not listed: a person runs \`cargo agents scripts trust ${script.name}\` after reading it`,
    );
  }
  const more = set.untrusted.slice(UNTRUSTED_LINES_MAX);
  if (more.length > 0) {
    const named = more.slice(0, UNTRUSTED_NAMES_MAX).map((s) => `\`${s.name}\``).join(", ");
    problems.push(
      `${more.length} more workspace scripts are not trusted (or changed since), so they are not listed: ${named}${
        more.length > UNTRUSTED_NAMES_MAX ? ", \u2026" : ""
      }; a person runs \`cargo agents scripts trust\` after reading them`,
    );
  }
  return { set, problems };
}

/** `scripts.name(input: { dir: string }): Promise<unknown>` (`input?: object` when no type is declared). */
export function savedScriptSignature(script: SavedScript): string {
  const input = script.inputType === undefined
    ? "input?: Record<string, unknown>"
    : `input: ${script.inputType}`;
  return `${SCRIPTS_GLOBAL}.${script.name}(${input}): Promise<unknown>`;
}

/** The index of saved scripts: `scripts (saved; ...):` then `  name - first sentence` per script. */
export function renderSavedScriptsIndex(scripts: readonly SavedScript[]): string {
  if (scripts.length === 0) return "";
  const head =
    `${SCRIPTS_GLOBAL} (saved scripts: execute { run: "name", args } or await ${SCRIPTS_GLOBAL}.name(input)):`;
  const lines = scripts.map((s) => {
    const summary = firstSentence(s.description);
    return `  ${s.name}${summary === "" ? "" : ` - ${summary}`}${
      s.source === "workspace" ? " (workspace)" : ""
    }`;
  });
  return [head, ...lines].join("\n");
}

/** The declarations of saved scripts: a JSDoc (at `full`, the whole description) and the signature each. */
export function renderSavedScriptsDeclarations(scripts: readonly SavedScript[], full: boolean): string {
  if (scripts.length === 0) return "";
  const blocks = scripts.map((s) => {
    const text = full ? s.description : firstSentence(s.description);
    const doc = text === "" ? "" : `/** ${text.replaceAll("*/", "*\\/").split("\n").join("\n * ")} */\n`;
    return `${doc}${savedScriptSignature(s)};`;
  });
  return `// Saved scripts (execute { run: "name", args }, or await ${SCRIPTS_GLOBAL}.name(input) in a script)\n${
    blocks.join("\n")
  }`;
}

/** Words of `text` as search terms: lower case, split at non-letters and `_`, stemmed. */
function terms(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 1).map((w) => stemmer(w));
}

/**
 * The saved scripts that match `query`, best first: a term in the name counts 2, in the description 1;
 * scripts matching no term are left out.
 *
 * @param limit Most scripts returned.
 */
export function searchSavedScripts(
  scripts: readonly SavedScript[],
  query: string,
  limit: number,
): SavedScript[] {
  const wanted = [...new Set(terms(query))];
  if (wanted.length === 0) return [];
  const scored = scripts.map((script) => {
    const name = new Set(terms(script.name.replaceAll("_", " ")));
    const described = new Set(terms(script.description));
    const score = wanted.reduce((n, t) => n + (name.has(t) ? 2 : 0) + (described.has(t) ? 1 : 0), 0);
    return { script, score };
  }).filter((s) => s.score > 0);
  scored.sort((a, b) => b.score - a.score || a.script.name.localeCompare(b.script.name));
  return scored.slice(0, limit).map((s) => s.script);
}

/** The block a `query` answer starts with when saved scripts match it. */
export function renderSavedScriptHits(hits: readonly SavedScript[], query: string): string {
  if (hits.length === 0) return "";
  return [
    `Saved scripts for ${JSON.stringify(query)}:`,
    ...hits.map((s) => {
      const summary = firstSentence(s.description);
      return `- ${SCRIPTS_GLOBAL}.${s.name}${summary === "" ? "" : ` - ${summary}`}\n   ${
        savedScriptSignature(s)
      }`;
    }),
  ].join("\n");
}
