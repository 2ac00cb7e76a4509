/**
 * How tool text becomes search terms, the same way for the catalog and for a query: identifiers
 * split at camelCase, snake_case and kebab-case boundaries, lower-cased, common English words
 * dropped, a few developer abbreviations spelled out (`pr` → `pull request`, `repo` →
 * `repository`, `folder` → `directory`), and every word reduced to its Porter stem (`issues` and
 * `issue` → `issu`), so singular, plural and verb forms meet.
 *
 * @module
 */
import { stemmer } from "stemmer";

/**
 * Words that carry no meaning for finding a tool; dropped from tools and queries alike. Kept short on
 * purpose: "not", "all", "new" and the like can tell tools apart.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  ("a an the of in on for to with by from and or is are be as at it its this that my me i what which how " +
    "do does any some into out up use using via can will should you your we our so if then than am was " +
    "were has have had there their them they these those one").split(" "),
);

/**
 * Abbreviations and synonyms common in developer requests, each mapped to one spelling used on both
 * sides (tool text and query), so either form finds the other. Values may be several words.
 * A generic table, not tuned to any server: words that are themselves tool vocabulary (`add`,
 * `show`, `change`, `log`) are deliberately absent.
 */
export const SEARCH_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  pr: "pull request",
  prs: "pull requests",
  mr: "merge request",
  mrs: "merge requests",
  repo: "repository",
  repos: "repositories",
  dir: "directory",
  dirs: "directories",
  folder: "directory",
  folders: "directories",
  js: "javascript",
  ts: "typescript",
  env: "environment",
  envs: "environments",
  tz: "timezone",
  db: "database",
  dbs: "databases",
  doc: "documentation",
  docs: "documentation",
  img: "image",
  pic: "image",
  picture: "image",
  remove: "delete",
  erase: "delete",
  rm: "delete",
  find: "search",
  lookup: "search",
  modify: "update",
  ticket: "issue",
  tickets: "issues",
  msg: "message",
  msgs: "messages",
  info: "information",
  config: "configuration",
  cfg: "configuration",
  auth: "authentication",
  urls: "url",
  kv: "key value",
});

/** Longest word kept, in UTF-16 units; longer runs (base64, hashes) are not words anyone searches for. */
const MAX_WORD_LENGTH = 40;

/**
 * Splits text into lower-case words at non-alphanumerics and at camelCase boundaries
 * (`getHTTPResponse` → `get`, `http`, `response`; `list_issues` → `list`, `issues`).
 *
 * @example
 * ```ts
 * import { splitWords } from "./_search_text.ts";
 * splitWords("API-post-search getUserID"); // ["api", "post", "search", "get", "user", "id"]
 * ```
 */
export function splitWords(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "" && word.length <= MAX_WORD_LENGTH);
}

/** Most words {@link wordTerms} remembers; past it the memo starts over (queries add words too). */
const MAX_MEMO_WORDS = 100_000;

/**
 * The search terms one word stands for: none for a stop word, else its alias (if any) split into
 * words, each Porter-stemmed. Memoised in `memo` (a catalog's vocabulary is a few thousand words;
 * the memo is cleared past {@link MAX_MEMO_WORDS}).
 *
 * @param word A lower-case word from {@link splitWords}.
 * @param memo Word → terms, shared by one index.
 */
export function wordTerms(word: string, memo: Map<string, string[]>): string[] {
  let terms = memo.get(word);
  if (terms !== undefined) return terms;
  if (memo.size >= MAX_MEMO_WORDS) memo.clear();
  if (STOP_WORDS.has(word)) terms = [];
  else {
    const alias = SEARCH_ALIASES[word];
    terms = (alias === undefined ? [word] : alias.split(" ")).map((w) => stemmer(w));
  }
  memo.set(word, terms);
  return terms;
}
