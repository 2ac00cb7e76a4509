import assert from "node:assert/strict";
import { Catalog } from "../../lib/catalog/mod.ts";
import { createSandboxRunner } from "../../lib/meta_server/script_runner.ts";
import { NULL_LOGGER } from "../../lib/log.ts";
import { EXECUTE_DESCRIPTION_MAX_BYTES, executeDescription, runExecute } from "../../lib/meta_server/mod.ts";
import {
  DECLARATIONS_MAX_BYTES,
  LIST_TOOLS_MAX_BYTES,
  renderListTools,
} from "../../lib/meta_server/list_tools.ts";

import { distractorServers } from "../../testdata/catalog/scale_corpus.ts";
import { fixtureServerToml, makeDirs, type TestDirs, writePlugin } from "../_fakes_meta.ts";
import { REPO } from "../_fakes_backends.ts";
import { harness, textOf } from "./_harness.ts";

const CORPUS = `${REPO}testdata/declarations/corpus`;
const bytes = (text: string) => new TextEncoder().encode(text).length;

/** A plugin running the fixture server with the tools of `toolsFile`, logging its starts. */
function corpusServer(dirs: TestDirs, name: string, toolsFile: string): Promise<void> {
  return writePlugin(
    dirs.home,
    name,
    fixtureServerToml(name, [`--tools-file=${toolsFile}`, `--starts-file=${dirs.root}/starts`]),
  );
}

function starts(dirs: TestDirs): string[] {
  try {
    return Deno.readTextFileSync(`${dirs.root}/starts`).trim().split("\n").filter((l) => l !== "");
  } catch {
    return [];
  }
}

function openCatalog(dirs: TestDirs): Promise<Catalog> {
  return Catalog.open({ cwd: dirs.ws, env: { SYMPOSIUM_HOME: dirs.home }, homeDir: dirs.root });
}

/** Lists `servers` once in a first session, so their tool lists are cached; that session ends. */
async function warmCache(dirs: TestDirs, servers: string[]): Promise<void> {
  const first = await openCatalog(dirs);
  try {
    await renderListTools(first, { servers });
  } finally {
    await first.close();
  }
}

Deno.test("list_tools { query } answers from the tool cache, starts nothing and names the servers not searched", async () => {
  const h = await harness(async (d) => {
    await corpusServer(d, "github", `${CORPUS}/github.json`);
    await corpusServer(d, "time", `${CORPUS}/time.json`);
    await corpusServer(d, "linear", `${CORPUS}/linear.json`);
    await warmCache(d, ["github", "time"]);
  });
  assert.equal(starts(h.dirs).length, 2);
  const text = textOf(
    await h.client.callTool({
      name: "list_tools",
      arguments: { query: "show open issues of a github repo" },
    }),
  );
  assert.match(
    text,
    /^Best \d+ of 9 tools of 2 servers for "show open issues of a github repo", best first:\n\n/,
  );
  assert.match(
    text,
    /\n\n1\. github\.list_issues - List issues in a GitHub repository\.\n {3}github\.list_issues\(params: \{\n/,
  );
  assert.match(text, /\n\nNot searched: linear \(not running and no fresh tool cache/);
  assert.match(text, /list_tools \{ servers: \["linear"\] \}/);
  assert.equal(starts(h.dirs).length, 2, "no server started by the search");
  assert.deepEqual(h.catalog.runningServers(), []);
  await h.close();
});

Deno.test("list_tools { query } includes a server once it was listed in the session", async () => {
  const h = await harness((d) => corpusServer(d, "time", `${CORPUS}/time.json`));
  const before = textOf(await h.client.callTool({ name: "list_tools", arguments: { query: "timezone" } }));
  assert.match(before, /^Nothing to search yet: no server in scope is running or has a fresh tool cache\./);
  await h.client.callTool({ name: "list_tools", arguments: { servers: ["time"] } });
  const after = textOf(await h.client.callTool({ name: "list_tools", arguments: { query: "timezone" } }));
  assert.match(after, /^Best 2 of 2 tools of 1 server for "timezone"/);
  assert.doesNotMatch(after, /Not searched/);
  await h.close();
});

Deno.test("list_tools { query, limit } returns at most 50 results, numbered best first, within 16 KB", async () => {
  const dirs = await makeDirs();
  const jira = distractorServers()[0]!;
  await Deno.writeTextFile(`${dirs.root}/jira.json`, JSON.stringify({ tools: jira.tools }));
  await corpusServer(dirs, "jira", `${dirs.root}/jira.json`);
  await warmCache(dirs, ["jira"]);
  const catalog = await openCatalog(dirs);
  try {
    const ten = await renderListTools(catalog, { query: "issue" });
    assert.match(ten, /^Best 10 of 280 tools of 1 server for "issue"/);
    assert.match(ten, /\n\n10\. jira\./);
    const many = await renderListTools(catalog, { query: "jira", limit: 500 });
    assert.match(many, /^Best 50 of 280 tools/);
    assert.match(many, /\n\n50\. jira\./);
    assert.doesNotMatch(many, /\n\n51\. /);
    assert.ok(bytes(many) <= LIST_TOOLS_MAX_BYTES, `${bytes(many)} bytes`);
    const narrowed = await renderListTools(catalog, { query: "issue", pattern: "*delete*" });
    assert.match(narrowed, /^Best \d+ of 280 tools/);
    assert.ok([...narrowed.matchAll(/\n\n\d+\. jira\.(\S+)/g)].every((m) => m[1]!.includes("delete")));
    assert.deepEqual(catalog.runningServers(), []);
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("list_tools without filters summarises past 16 KB and caps declarations with a marker", async () => {
  const dirs = await makeDirs();
  for (const server of distractorServers().slice(0, 3)) {
    await Deno.writeTextFile(`${dirs.root}/${server.server}.json`, JSON.stringify({ tools: server.tools }));
    await corpusServer(dirs, server.server, `${dirs.root}/${server.server}.json`);
  }
  await warmCache(dirs, ["jira", "confluence", "slack"]);
  const catalog = await openCatalog(dirs);
  try {
    const index = await renderListTools(catalog, {});
    assert.ok(bytes(index) <= LIST_TOOLS_MAX_BYTES, `${bytes(index)} bytes`);
    assert.match(index, /^840 tools on 3 servers: the index \(\d+\.\d KB\) is over the 16\.0 KB answer cap/);
    assert.match(index, /query: ranked search/);
    assert.match(index, /\nconfluence \(280 tools\): confluence_list_pages, confluence_get_page, .*, …\n/);
    const declarations = await renderListTools(catalog, { servers: ["jira", "slack"] });
    assert.ok(bytes(declarations) <= DECLARATIONS_MAX_BYTES, `${bytes(declarations)} bytes`);
    assert.match(declarations, /^declare const jira: \{/);
    assert.match(declarations, /\/\/ … \d+ more tools of jira left out \(answer cap 32\.0 KB\): jira_/);
    assert.match(declarations, /\/\/ … servers left out \(answer cap 32\.0 KB\): slack \(280 tools\)/);
    const signatures = await renderListTools(catalog, { detail: "signatures" });
    assert.ok(bytes(signatures) <= LIST_TOOLS_MAX_BYTES, `${bytes(signatures)} bytes`);
    assert.deepEqual(catalog.runningServers(), []);
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("executeDescription() mentions query and symposium.search and stays within 2,000 bytes for 50 servers", async () => {
  const dirs = await makeDirs();
  for (let i = 0; i < 50; i++) {
    await writePlugin(dirs.home, `p${i}`, fixtureServerToml(`server-number-${String(i).padStart(2, "0")}`));
  }
  const catalog = await openCatalog(dirs);
  try {
    assert.equal(catalog.servers.length, 50);
    const description = executeDescription(catalog);
    assert.ok(bytes(description) <= EXECUTE_DESCRIPTION_MAX_BYTES, `${bytes(description)} bytes`);
    assert.match(description, /`list_tools` and `query`/);
    assert.match(description, /symposium\.search\("create issue", \{ limit: 5 \}\)/);
    assert.match(
      description,
      /Servers in scope \(50\): server-number-00 \(as server_number_00\), .*, and \d+ more\./,
    );
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("symposium.search() in a script finds a tool the script then calls through globalThis", async () => {
  const dirs = await makeDirs();
  await corpusServer(dirs, "time", `${CORPUS}/time.json`);
  await corpusServer(dirs, "redis", `${CORPUS}/redis.json`);
  await corpusServer(dirs, "git", `${CORPUS}/git.json`);
  await warmCache(dirs, ["time", "redis"]);
  const catalog = await openCatalog(dirs);
  const runner = createSandboxRunner(() => catalog.config, NULL_LOGGER);
  try {
    const result = await runExecute(
      catalog,
      runner,
      `const hits = await symposium.search("current time somewhere", { limit: 2 });
       const best = hits[0];
       const answer = await globalThis[best.server][best.tool]({ timezone: "UTC" });
       return { hits, answer };`,
    );
    const text = (result.content[0] as { text: string }).text;
    assert.equal(result.isError, undefined, text);
    const structured = result.structuredContent as {
      result: { hits: { server: string; tool: string }[]; answer: unknown };
      notices: string[];
    };
    assert.equal(text, JSON.stringify(structured));
    const { result: value, notices } = structured;
    assert.equal(value.hits.length, 2);
    assert.deepEqual(value.hits[0], {
      server: "time",
      tool: "get_current_time",
      description: "Get current time in a specific timezone",
      signature: "time.get_current_time(params: {\n  timezone: string;\n}): Promise<unknown>",
    });
    assert.deepEqual(value.answer, { tool: "get_current_time", arguments: { timezone: "UTC" } });
    assert.match(
      notices.join("\n"),
      /symposium\.search did not search git \(not running and no fresh tool cache/,
    );
    const refused = await runExecute(catalog, runner, "return await symposium.search(42)");
    assert.match(
      (refused.content[0] as { text: string }).text,
      /symposium\.search\(query, \{ limit \}\) needs a query string/,
    );
  } finally {
    await runner.close();
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("CatalogSearch.prepare() indexes the cached servers ahead of a search, starting none", async () => {
  const dirs = await makeDirs();
  await corpusServer(dirs, "time", `${CORPUS}/time.json`);
  await corpusServer(dirs, "git", `${CORPUS}/git.json`);
  await warmCache(dirs, ["time"]);
  const catalog = await openCatalog(dirs);
  try {
    const aborted = new AbortController();
    aborted.abort();
    await catalog.toolSearch.prepare(aborted.signal); // stops at once
    await catalog.toolSearch.prepare();
    assert.equal(starts(dirs).length, 1, "only the warm-up start");
    const answer = await catalog.toolSearch.search("convert between timezones");
    assert.equal(answer.matches[0]?.tool.name, "convert_time");
    assert.deepEqual(answer.notSearched.map((n) => [n.spec.name, n.isUnlisted]), [["git", true]]);
    assert.deepEqual(catalog.runningServers(), []);
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});
