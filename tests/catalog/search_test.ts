import assert from "node:assert/strict";
import {
  clampLimit,
  MAX_QUERY_CHARS,
  SEARCH_DEFAULT_LIMIT,
  SEARCH_MAX_LIMIT,
  SearchQueryError,
  ToolSearchIndex,
} from "../../lib/catalog/search.ts";
import { splitWords, Vocabulary, wordTerms } from "../../lib/catalog/_search_text.ts";
import { distractorServers, realServers, scaleCorpus } from "../../testdata/catalog/scale_corpus.ts";

const QUERIES = JSON.parse(
  Deno.readTextFileSync(new URL("../../testdata/catalog/queries.json", import.meta.url)),
) as { queries: { query: string; server: string; tool: string }[] };

function realIndex(): ToolSearchIndex {
  const index = new ToolSearchIndex();
  index.sync(realServers().map((s) => ({ server: s.server, tools: s.tools })));
  return index;
}

const names = (matches: { server: string; tool: { name: string } }[]) =>
  matches.map((m) => `${m.server}.${m.tool.name}`);

Deno.test("splitWords() splits camelCase, snake_case and kebab-case and lower-cases", () => {
  assert.deepEqual(splitWords("API-post-search getHTTPResponse list_issues"), [
    "api",
    "post",
    "search",
    "get",
    "http",
    "response",
    "list",
    "issues",
  ]);
});

Deno.test("wordTerms() stems, spells out abbreviations and drops stop words", () => {
  const memo = new Map<string, string[]>();
  assert.deepEqual(wordTerms("issues", memo), wordTerms("issue", memo));
  assert.deepEqual(wordTerms("pr", memo), [...wordTerms("pull", memo), ...wordTerms("request", memo)]);
  assert.deepEqual(wordTerms("folders", memo), wordTerms("directories", memo));
  assert.deepEqual(wordTerms("the", memo), []);
});

Deno.test("ToolSearchIndex.search() ranks the tool a paraphrase means first", () => {
  const index = realIndex();
  assert.equal(
    names(index.search("capture a screenshot of the page"))[0],
    "playwright.browser_take_screenshot",
  );
  assert.equal(names(index.search("working tree status of my git checkout"))[0], "git.git_status");
  assert.equal(names(index.search("read a redis key"))[0], "redis.get");
});

Deno.test("ToolSearchIndex.search() lets issue/issues and pr/pull request meet", () => {
  const index = realIndex();
  assert.deepEqual(names(index.search("issues")), names(index.search("issue")));
  // projects_write is the one real tool with a `pull_request_number` parameter.
  assert.equal(names(index.search("pr number"))[0], "github.projects_write");
  assert.deepEqual(names(index.search("pr number")), names(index.search("pull request number")));
});

Deno.test("ToolSearchIndex.search() matches split parameter names", () => {
  // memory.delete_entities takes `entityNames`.
  assert.equal(names(realIndex().search("entity names"))[0], "memory.delete_entities");
});

Deno.test("ToolSearchIndex.search() returns the default limit, at most the maximum, at least one", () => {
  const index = new ToolSearchIndex();
  index.sync(distractorServers().slice(0, 3).map((s) => ({ server: s.server, tools: s.tools })));
  assert.equal(index.search("list").length, SEARCH_DEFAULT_LIMIT);
  assert.equal(index.search("list", { limit: 500 }).length, SEARCH_MAX_LIMIT);
  assert.equal(index.search("list", { limit: 0 }).length, 1);
  assert.equal(clampLimit(Number.NaN), SEARCH_DEFAULT_LIMIT);
  assert.equal(clampLimit(7.9), 7);
});

Deno.test("ToolSearchIndex.search() keeps to the servers and tools asked for", () => {
  const index = realIndex();
  const onlyLinear = index.search("create an issue", { servers: new Set(["linear"]) });
  assert.ok(onlyLinear.length > 0);
  assert.ok(onlyLinear.every((m) => m.server === "linear"));
  const onlyWrite = index.search("issue", { accept: (_server, tool) => tool.name.endsWith("_write") });
  assert.deepEqual(names(onlyWrite), ["github.issue_write", "github.projects_write"]);
});

Deno.test("ToolSearchIndex.search() matches nothing for a query of stop words", () => {
  assert.deepEqual(realIndex().search("what is the"), []);
});

Deno.test("ToolSearchIndex.search() refuses a query past MAX_QUERY_CHARS", () => {
  assert.throws(
    () => realIndex().search("x".repeat(MAX_QUERY_CHARS + 1)),
    (error: unknown) =>
      error instanceof SearchQueryError && error.code === "QUERY_TOO_LONG" &&
      /more than 500/.test(error.message),
  );
});

Deno.test("ToolSearchIndex.sync() re-indexes only servers whose tool list changed, and drops the others", () => {
  const servers = realServers().map((s) => ({ server: s.server, tools: s.tools }));
  const index = new ToolSearchIndex();
  assert.equal(index.sync(servers), servers.length);
  assert.equal(index.sync(servers), 0, "the same arrays: nothing to do");
  const time = servers.find((s) => s.server === "time")!;
  const renamed = [{ ...time.tools[0]!, name: "now_in_zone" }, ...time.tools.slice(1)];
  const changed = servers.map((s) => (s.server === "time" ? { server: "time", tools: renamed } : s));
  assert.equal(index.sync(changed), 1, "time indexed again");
  assert.ok(names(index.search("current time zone")).includes("time.now_in_zone"));
  assert.ok(!names(index.search("current time zone")).includes("time.get_current_time"));
  assert.equal(index.sync(changed.filter((s) => s.server !== "time")), 1);
  assert.ok(names(index.search("current time zone", { limit: 50 })).every((n) => !n.startsWith("time.")));
  assert.equal(index.serverCount, servers.length - 1);
});

Deno.test("ToolSearchIndex.search() finds the labelled tools among 10,000 (recall@5 >= 0.9, recall@1 >= 0.6)", () => {
  const corpus = scaleCorpus();
  const index = new ToolSearchIndex();
  index.sync(corpus.map((s) => ({ server: s.server, tools: s.tools })));
  assert.ok(index.toolCount > 9_800, `${index.toolCount} tools indexed`);
  assert.ok(QUERIES.queries.length >= 50);
  let first = 0;
  let top5 = 0;
  for (const q of QUERIES.queries) {
    const rank = index.search(q.query, { limit: 5 }).findIndex((m) =>
      m.server === q.server && m.tool.name === q.tool
    );
    if (rank === 0) first++;
    if (rank >= 0) top5++;
  }
  assert.ok(top5 / QUERIES.queries.length >= 0.9, `recall@5 ${top5}/${QUERIES.queries.length}`);
  assert.ok(first / QUERIES.queries.length >= 0.6, `recall@1 ${first}/${QUERIES.queries.length}`);
});

Deno.test("Vocabulary.forEachTermId() finds the words splitWords() finds, within maxChars", () => {
  const vocabulary = new Vocabulary();
  const memo = new Map<string, string[]>();
  const texts = [
    "API-post-search getHTTPResponse list_issues ABC aB1C x2Y IDs getIDs HTTPServer2Go é_ü",
    `${"a".repeat(41)} short ${"B".repeat(40)}End`,
    ...realServers().flatMap((s) => s.tools.map((t) => `${t.name} ${t.description ?? ""}`)),
  ];
  for (const text of texts) {
    for (const maxChars of [Infinity, 17]) {
      const ids: number[] = [];
      vocabulary.forEachTermId(text, (id) => ids.push(id), maxChars);
      const words = splitWords(text.slice(0, maxChars));
      const expected = vocabulary.queryIds(words.join(" "));
      assert.deepEqual([...new Set(ids)].sort(), [...expected].sort(), text.slice(0, 60));
      assert.equal(ids.length, words.flatMap((w) => wordTerms(w, memo)).length, text.slice(0, 60));
    }
  }
});

Deno.test("ToolSearchIndex.syncServer() indexes one server and keeps the others", () => {
  const index = realIndex();
  const before = index.toolCount;
  const extra = distractorServers()[0]!;
  assert.equal(index.syncServer(extra.server, extra.tools), 1);
  assert.equal(index.syncServer(extra.server, extra.tools), 0, "the same array again");
  assert.equal(index.toolCount, before + extra.tools.length);
  assert.equal(names(index.search("jira sprint", { limit: 1 }))[0]!.split(".")[0], "jira");
  assert.equal(index.syncServer(extra.server, undefined), 1);
  assert.equal(index.toolCount, before);
});
