// Observed result shapes end to end: a fixture server replays recorded answers
// (`testdata/catalog/results/`), scripts call it through `execute`, and `list_tools`, the tool
// cache, `status` and `symposium.search` show what was learned; canaries planted in the answers
// never reach any of them.
import assert from "node:assert/strict";
import { join } from "node:path";
import { readToolCacheState } from "../../lib/catalog/mod.ts";
import { createSandboxRunner } from "../../lib/meta_server/script_runner.ts";
import { buildStatusReport, renderStatusText } from "../../lib/commands/status.ts";
import { loadResolution } from "../../lib/catalog/resolve.ts";
import { denoFileSystem } from "../../lib/file_system.ts";
import { createMemoryLogger, NULL_LOGGER } from "../../lib/log.ts";
import { renderListTools } from "../../lib/meta_server/list_tools.ts";
import { runExecute } from "../../lib/meta_server/execute.ts";
import { fixtureServerToml, makeDirs, openCatalog, type TestDirs, writePlugin } from "../_fakes_meta.ts";
import { REPO } from "../_fakes_backends.ts";
import { execute, harness, textOf } from "./_harness.ts";

const RESULTS = `${REPO}testdata/catalog/results`;

/** What `cargo-agents status` prints for the home of `dirs`. */
async function statusText(dirs: TestDirs): Promise<string> {
  const loaded = await loadResolution({
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: dirs.home },
    homeDir: dirs.root,
  });
  return renderStatusText(await buildStatusReport(loaded, denoFileSystem));
}

function replayServer(dirs: TestDirs, name: string, answersFile: string, extra = ""): Promise<void> {
  return writePlugin(dirs.home, name, fixtureServerToml(name, [`--answers-file=${answersFile}`], extra));
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...await filesUnder(path));
    else if (entry.isFile) out.push(path);
  }
  return out;
}

Deno.test("execute learns a result shape that list_tools declares and the tool cache keeps", async () => {
  const h = await harness((d) => replayServer(d, "gh", `${RESULTS}/github.json`));
  try {
    const before = await h.client.callTool({
      name: "list_tools",
      arguments: { servers: ["gh"], tools: ["get_me"], detail: "signatures" },
    });
    assert.match(textOf(before), /get_me\(\): Promise<unknown>;/);
    const run = await execute(h, "for (let i = 0; i < 3; i++) await gh.get_me(); return 'ok'");
    assert.equal(run.text, '"ok"');
    const after = textOf(
      await h.client.callTool({
        name: "list_tools",
        arguments: { servers: ["gh"], tools: ["get_me"], detail: "signatures" },
      }),
    );
    assert.match(
      after,
      /get_me\(\): \/\*\* Returns \(observed in 3 calls\): \*\/ Promise<\{\n {4}login: string;/,
    );
    assert.match(after, /location: string \| null;/);
    const spec = h.catalog.serverByName("gh")!;
    await h.catalog.close(); // writes what is unsaved
    const cache = await readToolCacheState(h.catalog.configDir, spec);
    assert.equal(cache.state === "fresh" && cache.shapeCount, 1);
  } finally {
    await h.close();
  }
});

Deno.test("a declared outputSchema wins over what was observed", async () => {
  const h = await harness((d) => replayServer(d, "ev", `${RESULTS}/everything.json`));
  try {
    await execute(
      h,
      "await ev['get-structured-content']({ location: 'x' }); await ev.echo({ message: 'm' })",
    );
    const text = textOf(
      await h.client.callTool({
        name: "list_tools",
        arguments: { servers: ["ev"], tools: ["get-structured-content", "echo"], detail: "signatures" },
      }),
    );
    assert.match(text, /"get-structured-content"\(params: \{[^}]*\}\): Promise<\{/);
    assert.doesNotMatch(text, /"get-structured-content"\(params: \{[^}]*\}\): \/\*\*/);
    assert.match(
      text,
      /echo\(params: \{\n {4}message: string;\n {2}\}\): \/\*\* Returns \(observed in 1 call\): \*\/ Promise<string>;/,
    );
  } finally {
    await h.close();
  }
});

Deno.test("observe-results = false in the manifest or in [mcp] learns and shows nothing", async () => {
  for (const off of ["manifest", "config"]) {
    const h = await harness(async (d) => {
      await replayServer(
        d,
        "gh",
        `${RESULTS}/github.json`,
        off === "manifest" ? "observe-results = false" : "",
      );
      if (off === "config") {
        await Deno.writeTextFile(`${d.home}/config.toml`, "[mcp]\nobserve-results = false\n");
      }
    });
    try {
      await execute(h, "await gh.get_me(); await gh.get_me()");
      const text = textOf(
        await h.client.callTool({ name: "list_tools", arguments: { servers: ["gh"], detail: "signatures" } }),
      );
      assert.doesNotMatch(text, /observed in/, off);
      const spec = h.catalog.serverByName("gh")!;
      await h.catalog.close();
      const cache = await readToolCacheState(h.catalog.configDir, spec);
      assert.equal(cache.state === "fresh" && cache.shapeCount, 0, off);
      if (off === "manifest") {
        assert.match(await statusText(h.dirs), /result shapes: not observed \(observe-results = false\)/);
      }
    } finally {
      await h.close();
    }
  }
});

Deno.test("a later session declares the shapes of the tool cache; a changed tool starts again", async () => {
  const dirs = await makeDirs();
  const answers = `${dirs.root}/github.json`;
  await Deno.copyFile(`${RESULTS}/github.json`, answers);
  const first = await harness((d) => replayServer(d, "gh", answers), { dirs });
  await execute(first, "await gh.issue_write({ method: 'create', owner: 'o', repo: 'r' })");
  await first.end();
  const second = await harness(() => Promise.resolve(), { dirs });
  try {
    const text = textOf(
      await second.client.callTool({
        name: "list_tools",
        arguments: { servers: ["gh"], tools: ["issue_write"] },
      }),
    );
    assert.match(
      text,
      /\/\*\* Returns \(observed in 1 call\): \*\/ Promise<\{ id: string \| null; url: string \| null \}>;/,
    );
    assert.match(
      await statusText(dirs),
      /result shapes: 1 of \d+ tools without an outputSchema learned from their answers/,
    );
  } finally {
    await second.end();
  }
  // The same server now describes issue_write otherwise: what was learned of it is not shown.
  const corpus = JSON.parse(await Deno.readTextFile(answers));
  corpus.tools.find((t: { name: string }) => t.name === "issue_write").description = "Changed.";
  await Deno.writeTextFile(answers, JSON.stringify(corpus));
  const third = await harness(() => Promise.resolve(), { dirs });
  try {
    await execute(third, "await gh.get_me()"); // the server runs: its tools are listed live
    const text = textOf(
      await third.client.callTool({
        name: "list_tools",
        arguments: { servers: ["gh"], tools: ["issue_write"], detail: "signatures" },
      }),
    );
    assert.match(text, /issue_write\(params: \{[\s\S]*\}\): Promise<unknown>;/);
  } finally {
    await third.close();
  }
});

Deno.test("symposium.search() results carry the signature with the observed return type", async () => {
  const dirs = await makeDirs();
  await replayServer(dirs, "gh", `${RESULTS}/github.json`);
  const catalog = await openCatalog(dirs);
  const runner = createSandboxRunner(() => catalog.config, NULL_LOGGER);
  try {
    await runExecute(
      catalog,
      runner,
      "await gh.push_files({ owner: 'o', repo: 'r', branch: 'b', message: 'm', files: [] })",
    );
    const result = await runExecute(
      catalog,
      runner,
      `return await symposium.search("push files to a branch", { limit: 1 })`,
    );
    const hits = (result.structuredContent as { result: { tool: string; signature: string }[] }).result;
    assert.equal(hits[0]!.tool, "push_files");
    assert.match(
      hits[0]!.signature,
      /^gh\.push_files\(params: \{[\s\S]*\}\): \/\*\* Returns \(observed in 1 call\): \*\/ Promise<\{/,
    );
  } finally {
    await runner.close();
    await catalog.close();
    await dirs.remove();
  }
});

/** An answer corpus whose values, numbers and map keys are canaries; every tool answers JSON text. */
function canaryCorpus(): { corpus: unknown; canaries: string[] } {
  const canaries = [
    "CANARY-STRING-7f3a9b21",
    "918273645",
    "canary.user@example.org",
    "/srv/canary/path/4f9e.txt",
    "c0ffee11deadbeef42",
    "ghp_CanaryTokenCanaryToken0123456789ab",
    "5e1f0d3c-2b4a-4c6d-8e9f-a1b2c3d4e5f6",
    "canary_map_key_",
    "zqcanaryuser",
  ];
  // A collection keyed by login names: field-like keys, but every value alike, so a map.
  const byLogin = Object.fromEntries(
    [..."abcdefghij"].map((c) => [`zqcanaryuser${c}`, { id: 1, email: "e" }]),
  );
  const many = Object.fromEntries(
    Array.from({ length: 60 }, (_, i) => [`canary_map_key_${"abcdefghij"[i % 10]}${i}`, i]),
  );
  const answer = {
    title: canaries[0],
    count: 918273645,
    owners: { [canaries[2]!]: { role: "admin" } },
    files: { [canaries[3]!]: { size: 3 }, "/tmp/other": { size: 4 } },
    byHash: { [canaries[4]!]: true },
    byToken: { [canaries[5]!]: 1 },
    byId: { [canaries[6]!]: { ok: true }, "918273645": { ok: false } },
    wide: many,
    byLogin,
  };
  const tool = {
    name: "leaky",
    description: "Answers with planted canaries.",
    inputSchema: { type: "object", properties: {} },
  };
  return {
    corpus: {
      tools: [tool, { ...tool, name: "blocks" }],
      answers: [
        { tool: "leaky", result: { content: [{ type: "text", text: JSON.stringify(answer) }] } },
        {
          tool: "blocks",
          result: {
            content: [{ type: "text", text: canaries[0] }, {
              type: "image",
              data: "Q0FOQVJZ",
              mimeType: "image/png",
            }],
          },
        },
      ],
    },
    canaries,
  };
}

Deno.test("no string, number or map key of an answer reaches the cache, a declaration, the log or an output", async () => {
  const { corpus, canaries } = canaryCorpus();
  const lines: string[] = [];
  const dirs = await makeDirs();
  await Deno.writeTextFile(`${dirs.root}/canary.json`, JSON.stringify(corpus));
  const h = await harness((d) => replayServer(d, "cn", `${d.root}/canary.json`), {
    dirs,
    logger: createMemoryLogger(lines),
  });
  const outputs: string[] = [];
  try {
    outputs.push(
      (await execute(
        h,
        "const a = await cn.leaky(); const b = await cn.blocks(); await cn.leaky(); return typeof a + typeof b",
      )).text,
    );
    for (
      const args of [{}, { detail: "signatures" }, { detail: "full" }, { servers: ["cn"] }, {
        query: "canaries",
      }]
    ) {
      outputs.push(textOf(await h.client.callTool({ name: "list_tools", arguments: args })));
    }
    outputs.push(await renderListTools(h.catalog, { servers: ["cn"], detail: "full" }));
    const declared = outputs.join("\n");
    assert.match(
      declared,
      /leaky\(\): \/\*\* Returns \(observed in 2 calls\): \*\/ Promise<\{\n {4}title: string \| null;/,
    );
    assert.match(declared, /owners: Record<string, \{ role: string \| null \}>/);
    assert.match(declared, /wide: Record<string, number>/);
    assert.match(declared, /byLogin: Record<string, \{ id: number; email: string \| null \}>/);
    await h.end();
    outputs.push(await statusText(dirs));
    const cacheFiles = await filesUnder(`${dirs.home}/cache`);
    assert.ok(cacheFiles.length > 0);
    const cached = (await Promise.all(cacheFiles.map((f) => Deno.readTextFile(f)))).join("\n");
    assert.match(cached, /"shapes"/);
    const places = { cache: cached, log: lines.join("\n"), outputs: outputs.join("\n") };
    const found: string[] = [];
    for (const [where, text] of Object.entries(places)) {
      for (const canary of [...canaries, "Q0FOQVJZ"]) {
        if (text.includes(canary)) found.push(`${canary} in ${where}`);
      }
    }
    assert.deepEqual(found, []);
  } finally {
    await dirs.remove();
  }
});
