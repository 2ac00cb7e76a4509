import assert from "node:assert/strict";
import {
  DIRECT_TOOL_NAME,
  DIRECT_TOOL_NAME_MAX_CHARS,
  directToolName,
  listDirectTools,
  listedDirectTool,
  nameDirectTools,
} from "../../lib/meta_server/direct_tools.ts";
import { Catalog } from "../../lib/catalog/mod.ts";
import { fixtureServerToml, makeDirs, writePlugin } from "../_fakes_meta.ts";
import { boundDirectResult, DIRECT_MEDIA_MAX_BYTES } from "../../lib/meta_server/_direct_result.ts";
import { MAX_RESULT_TRANSFER_BYTES } from "../../lib/meta_server/script_runner.ts";
import { AGENT_IDS, toolNameProblem } from "../../lib/sync/agents/mod.ts";
import type { Tool } from "../../lib/backends/mod.ts";

const tool = (name: string): Tool => ({ name, inputSchema: { type: "object" } });

/** Tool names of the real `tools/list` answers in `shared/cases/tools/*.json`, by server (copied). */
const CASE_NAMES = JSON.parse(
  await Deno.readTextFile(new URL("../../testdata/meta_server/case_tool_names.json", import.meta.url)),
) as Record<string, string[]>;

/** Names no real server above has, but a server may: dots, spaces, non-ASCII, very long, a digit first. */
const TRICKY = [
  "files.read",
  "get issue",
  "résumé_lesen",
  "9lives",
  "x".repeat(200),
  "add_pull_request_review_comment_to_pending_review",
  "a-b_c.d:e/f",
];

Deno.test("directToolName() joins server and tool with __, keeping only A-Z a-z 0-9 _ -", () => {
  assert.equal(directToolName("memory", "read_graph"), "memory__read_graph");
  assert.equal(directToolName("fs", "files.read"), "fs__files_read");
  assert.equal(directToolName("gh", "get issue"), "gh__get_issue");
  assert.equal(directToolName("my-server", "a-b"), "my-server__a-b");
});

Deno.test("directToolName() cuts a long name to 48 characters ending in a stable hash", () => {
  const long = directToolName("github", "add_pull_request_review_comment_to_pending_review");
  assert.equal(long.length, DIRECT_TOOL_NAME_MAX_CHARS);
  assert.match(long, /^github__add_pull_request_review_comment_[0-9a-f]{8}$/);
  assert.equal(directToolName("github", "add_pull_request_review_comment_to_pending_review"), long);
  const other = directToolName("github", "add_pull_request_review_comment_to_pending_reviewX");
  assert.notEqual(other, long);
});

Deno.test("nameDirectTools() gives a clashing second tool a hashed name and reports the clash", () => {
  const { tools, clashes } = nameDirectTools([
    { server: "fs", definition: tool("a.b") },
    { server: "fs", definition: tool("a_b") },
  ]);
  assert.equal(tools[0]!.name, "fs__a_b");
  assert.match(tools[1]!.name, /^fs__a_b_[0-9a-f]{8}$/);
  assert.equal(clashes.length, 1);
  assert.match(
    clashes[0]!,
    /"fs\.a_b" and "fs\.a\.b" would both be named fs__a_b; "fs\.a_b" is fs__a_b_[0-9a-f]{8}/,
  );
});

Deno.test("nameDirectTools(): a server's new tool never takes over a name another server's tool is called by", () => {
  const legit = { server: "my__srv", definition: tool("read") };
  assert.deepEqual(nameDirectTools([legit]).tools.map((t) => t.name), ["my__srv__read"]);
  // Server `my` (first by name) lists `srv__read`: both would be my__srv__read; neither keeps it.
  const { tools, clashes } = nameDirectTools([{ server: "my", definition: tool("srv__read") }, legit]);
  const names = tools.map((t) => t.name);
  assert.equal(names.length, 2);
  assert.ok(!names.includes("my__srv__read"), names.join(", "));
  assert.ok(names.every((n) => /^my__srv__read_[0-9a-f]{8}$/.test(n)), names.join(", "));
  assert.notEqual(names[0], names[1]);
  assert.match(clashes[0]!, /tools of `my`, `my__srv` would all be named my__srv__read/);
});

Deno.test("nameDirectTools() names every case server's tools validly for every agent sync knows", () => {
  const pairs = [
    ...Object.entries(CASE_NAMES).flatMap(([server, names]) =>
      names.map((n) => ({ server, definition: tool(n) }))
    ),
    ...TRICKY.map((n) => ({ server: "tricky-server_with_a_rather_long_name", definition: tool(n) })),
  ];
  const { tools } = nameDirectTools(pairs);
  assert.equal(new Set(tools.map((t) => t.name)).size, pairs.length);
  const problems = tools.flatMap((t) => [
    ...(DIRECT_TOOL_NAME.test(t.name) ? [] : [`${t.name}: not ${DIRECT_TOOL_NAME}`]),
    ...AGENT_IDS.map((id) => toolNameProblem(id, t.name)).filter((p) => p !== undefined),
  ]);
  assert.deepEqual(problems, []);
});

const BOUND = { maxResultBytes: 1_000, maxMediaBytes: 2_000, hasOutputSchema: false, label: "srv.tool" };

Deno.test("boundDirectResult() returns a result within its bounds as the server sent it", () => {
  const result = { content: [{ type: "text" as const, text: "hello" }], structuredContent: { a: 1 } };
  assert.equal(boundDirectResult(result, BOUND), result);
});

Deno.test("boundDirectResult() cuts a long text within max-result-bytes and says how to get less", () => {
  const big = "é".repeat(5_000);
  const result = { content: [{ type: "text" as const, text: big }, { type: "text" as const, text: "tail" }] };
  const bounded = boundDirectResult(result, BOUND);
  assert.ok(
    new TextEncoder().encode(JSON.stringify(bounded)).length <= 1_000,
    JSON.stringify(bounded).length.toString(),
  );
  const texts = bounded.content.map((b) => (b as { text: string }).text);
  assert.equal(texts.length, 2);
  assert.ok(big.startsWith(texts[0]!) && texts[0]!.length > 100);
  assert.match(
    texts[1]!,
    /^\[cut: this result is 10\d{3} bytes, over \[mcp\] max-result-bytes \(1000\); 1 content block left out\. Call srv\.tool\(…\) from execute/,
  );
  assert.equal(bounded.isError, undefined);
});

Deno.test("boundDirectResult() drops structuredContent of a cut result and marks a schema'd tool's an error", () => {
  const result = {
    content: [{ type: "text" as const, text: "x".repeat(3_000) }],
    structuredContent: { x: "x".repeat(3_000) },
  };
  const bounded = boundDirectResult(result, { ...BOUND, hasOutputSchema: true });
  assert.equal(bounded.structuredContent, undefined);
  assert.equal(bounded.isError, true);
  assert.match(
    (bounded.content.at(-1) as { text: string }).text,
    /structuredContent left out; marked an error/,
  );
});

Deno.test("boundDirectResult() keeps images within the media budget and leaves out the rest", () => {
  const image = (n: number) => ({ type: "image" as const, data: "A".repeat(n), mimeType: "image/png" });
  const bounded = boundDirectResult({ content: [image(1_500), image(1_500)] }, BOUND);
  assert.equal(bounded.content.length, 2);
  assert.equal(bounded.content[0]!.type, "image");
  assert.match(
    (bounded.content[1] as { text: string }).text,
    /and 3000 bytes of media.*1 content block left out/,
  );
});

Deno.test("DIRECT_MEDIA_MAX_BYTES is what an execute result may carry", () => {
  assert.equal(DIRECT_MEDIA_MAX_BYTES, MAX_RESULT_TRANSFER_BYTES);
});

Deno.test("listDirectTools() lists a cached server's matching tools without starting it", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  await Deno.writeTextFile(
    `${dirs.home}/config.toml`,
    '[mcp]\ndirect-tools = ["fx.echo", "fx.nope*", "gh.*"]\n',
  );
  const open = () => Catalog.open({ cwd: dirs.ws, env: { SYMPOSIUM_HOME: dirs.home }, homeDir: dirs.root });
  const first = await open();
  const unlisted = await listDirectTools(first);
  assert.deepEqual(unlisted.tools, []);
  assert.match(unlisted.problems[0]!, /`fx` has not been listed yet/);
  assert.deepEqual(first.runningServers(), []);
  const live = await first.listServerTools(first.servers[0]!);
  await first.close();
  const second = await open();
  const listing = await listDirectTools(second);
  assert.deepEqual(second.runningServers(), []);
  assert.deepEqual(listing.tools.map(listedDirectTool), [{
    ...live.tools.find((t) => t.name === "echo")!,
    name: "fx__echo",
  }]);
  assert.deepEqual(listing.problems, [
    `direct-tools: "fx.nope*" matches none of the ${live.tools.length} visible tools of \`fx\`; check the tool names with list_tools`,
    'direct-tools: "gh.*" names no server in scope (servers: fx); fix the pattern in config.toml',
  ]);
  await second.close();
  await dirs.remove();
});
