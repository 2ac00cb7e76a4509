/**
 * How tool text becomes search terms, the same way for the catalog and for a query: identifiers
 * split at camelCase, snake_case and kebab-case boundaries, lower-cased, common English words
 * dropped, a few developer abbreviations spelled out (`pr` -> `pull request`, `repo` ->
 * `repository`, `folder` -> `directory`), and every word reduced to its Porter stem (`issues` and
 * `issue` -> `issu`), so singular, plural and verb forms meet.
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
 * Calls `onWord(start, end)` for each word of `text` (UTF-16 offsets, end exclusive): runs of ASCII
 * letters and digits, split again at camelCase boundaries (`getUser` -> get|User, `HTTPResponse` ->
 * HTTP|Response). Words longer than {@link MAX_WORD_LENGTH} are skipped. One pass, no allocation.
 *
 * @param maxChars Look at the first `maxChars` UTF-16 units only. @default all
 */
export function scanWords(
  text: string,
  onWord: (start: number, end: number) => void,
  maxChars = Infinity,
): void {
  const n = Math.min(text.length, maxChars);
  let start = -1;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    const isUpper = c >= 65 && c <= 90;
    if (!(isUpper || (c >= 97 && c <= 122) || (c >= 48 && c <= 57))) {
      if (start >= 0 && i - start <= MAX_WORD_LENGTH) onWord(start, i);
      start = -1;
      continue;
    }
    if (start < 0) {
      start = i;
      continue;
    }
    if (!isUpper) continue;
    const prev = text.charCodeAt(i - 1);
    const next = i + 1 < n ? text.charCodeAt(i + 1) : 0;
    if (
      (prev >= 97 && prev <= 122) || (prev >= 48 && prev <= 57) || (next >= 97 && next <= 122 && prev <= 90)
    ) {
      if (i - start <= MAX_WORD_LENGTH) onWord(start, i);
      start = i;
    }
  }
  if (start >= 0 && n - start <= MAX_WORD_LENGTH) onWord(start, n);
}

/**
 * Splits text into lower-case words at non-alphanumerics and at camelCase boundaries
 * (`getHTTPResponse` -> `get`, `http`, `response`; `list_issues` -> `list`, `issues`).
 *
 * @example
 * ```ts
 * import { splitWords } from "./_search_text.ts";
 * splitWords("API-post-search getUserID"); // ["api", "post", "search", "get", "user", "id"]
 * ```
 */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  scanWords(text, (start, end) => words.push(text.slice(start, end).toLowerCase()));
  return words;
}

/** Most words {@link wordTerms} remembers; past it the memo starts over (queries add words too). */
const MAX_MEMO_WORDS = 100_000;

/**
 * The search terms one word stands for: none for a stop word, else its alias (if any) split into
 * words, each Porter-stemmed. Memoised in `memo` (a catalog's vocabulary is a few thousand words;
 * the memo is cleared past {@link MAX_MEMO_WORDS}).
 *
 * @param word A lower-case word from {@link splitWords}.
 * @param memo Word -> terms, shared by one index.
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

/** A known word (lower case) and its term ids; `next` chains words whose hashes collide. */
interface WordEntry {
  word: string;
  ids: Int32Array;
  next: WordEntry | undefined;
}

/** One step of the word hash: every value stays below 2^24, a small integer even in unoptimised code. */
function hashStep(h: number, lowerCode: number): number {
  return (((h & 0x7ffff) << 5) + (h >>> 19) + lowerCode) & 0xffffff;
}

function sameWord(word: string, text: string, start: number, end: number): boolean {
  if (word.length !== end - start) return false;
  for (let i = 0; i < word.length; i++) {
    const c = text.charCodeAt(start + i);
    if (word.charCodeAt(i) !== (c >= 65 && c <= 90 ? c + 32 : c)) return false;
  }
  return true;
}

/**
 * The index's terms as numbers: each analysed term gets an id the first time a tool uses it, and
 * each word remembers its term ids. Indexing a known word costs a hash of its characters and one
 * map lookup, and allocates nothing (a catalog of 10,000 tools has half a million words, and
 * building strings for each made the heap grow by tens of megabytes). Query words are looked up
 * with {@link Vocabulary.queryIds} and never add ids.
 */
export class Vocabulary {
  readonly #ids = new Map<string, number>();
  readonly #words = new Map<number, WordEntry>();
  #wordCount = 0;
  readonly #queryMemo = new Map<string, string[]>();

  /** Term ids handed out so far (every id is below this). */
  get size(): number {
    return this.#ids.size;
  }

  /**
   * Calls `onTerm(id)` for each term of each word of `text`, in order, interning new terms. Words are
   * those of {@link scanWords} (the same loop, hashing each word's lower-cased characters as it goes,
   * so a known word is found without building its string).
   *
   * @param maxChars Look at the first `maxChars` UTF-16 units only. @default all
   */
  forEachTermId(text: string, onTerm: (id: number) => void, maxChars = Infinity): void {
    const n = Math.min(text.length, maxChars);
    let start = -1;
    let h = 0;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      const isUpper = c >= 65 && c <= 90;
      if (!(isUpper || (c >= 97 && c <= 122) || (c >= 48 && c <= 57))) {
        if (start >= 0) this.#emit(text, start, i, h, onTerm);
        start = -1;
        continue;
      }
      if (start >= 0 && isUpper) {
        const prev = text.charCodeAt(i - 1);
        const next = i + 1 < n ? text.charCodeAt(i + 1) : 0;
        if (
          (prev >= 97 && prev <= 122) || (prev >= 48 && prev <= 57) ||
          (next >= 97 && next <= 122 && prev <= 90)
        ) {
          this.#emit(text, start, i, h, onTerm);
          start = -1;
        }
      }
      if (start < 0) {
        start = i;
        h = 0;
      }
      h = hashStep(h, isUpper ? c + 32 : c);
    }
    if (start >= 0) this.#emit(text, start, n, h, onTerm);
  }

  #emit(text: string, start: number, end: number, hash: number, onTerm: (id: number) => void): void {
    if (end - start > MAX_WORD_LENGTH) return;
    let ids: Int32Array | undefined;
    for (let entry = this.#words.get(hash); entry !== undefined; entry = entry.next) {
      if (sameWord(entry.word, text, start, end)) {
        ids = entry.ids;
        break;
      }
    }
    ids ??= this.#learn(text.slice(start, end).toLowerCase(), hash);
    for (let i = 0; i < ids.length; i++) onTerm(ids[i]!);
  }

  #learn(word: string, hash: number): Int32Array {
    if (this.#wordCount >= MAX_MEMO_WORDS) {
      this.#words.clear();
      this.#wordCount = 0;
    }
    const terms = wordTerms(word, this.#queryMemo);
    const ids = new Int32Array(terms.length);
    terms.forEach((term, i) => {
      let id = this.#ids.get(term);
      if (id === undefined) this.#ids.set(term, id = this.#ids.size);
      ids[i] = id;
    });
    this.#words.set(hash, { word, ids, next: this.#words.get(hash) });
    this.#wordCount++;
    return ids;
  }

  /** The distinct term ids of a query that some tool uses (terms no tool uses are left out). */
  queryIds(query: string): number[] {
    const ids = new Set<number>();
    for (const word of splitWords(query)) {
      for (const term of wordTerms(word, this.#queryMemo)) {
        const id = this.#ids.get(term);
        if (id !== undefined) ids.add(id);
      }
    }
    return [...ids];
  }
}
