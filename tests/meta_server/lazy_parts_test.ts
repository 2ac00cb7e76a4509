// The parts of the meta-server a session of plain `execute`s does not need (list_tools with the declarations,
// the saved scripts) are loaded at their first use: they stay out of the static import graph of what such a
// session loads, and each works at its first call, errors included.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { NULL_LOGGER } from "../../lib/log.ts";
import { createMetaServer } from "../../lib/meta_server/mod.ts";
import { createSandboxRunner } from "../../lib/meta_server/script_runner.ts";
import { fixtureServerToml, makeDirs, openCatalog, writePlugin } from "../_fakes_meta.ts";
import { textOf } from "./_harness.ts";

const LIB = new URL("../../lib/", import.meta.url);

/** The modules `entry` loads before it runs: its static imports, transitively (type-only ones erased). */
async function staticClosure(entry: URL): Promise<Set<string>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", fileURLToPath(entry)],
    stdout: "piped",
    stderr: "null",
  }).output();
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string; dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[] }[];
  };
  const edges = new Map(info.modules.map((m) => [
    m.specifier,
    (m.dependencies ?? []).filter((d) => d.code && !d.isDynamic).map((d) => d.code!.specifier),
  ]));
  const seen = new Set([entry.href]);
  const stack = [entry.href];
  while (stack.length > 0) {
    for (const next of edges.get(stack.pop()!) ?? []) {
      if (!seen.has(next)) seen.add(next), stack.push(next);
    }
  }
  return seen;
}

Deno.test("a session of plain executes loads neither list_tools, the declarations nor the saved scripts", async () => {
  const loaded = new Set<string>();
  for (const entry of ["meta_server/mod.ts", "meta_server/execute.ts", "meta_server/script_runner.ts"]) {
    for (const m of await staticClosure(new URL(entry, LIB))) loaded.add(m);
  }
  const lazy = [
    "meta_server/list_tools.ts",
    "meta_server/_saved_script_exec.ts",
    "meta_server/saved_scripts.ts",
    "declarations/mod.ts",
  ].map((p) => new URL(p, LIB).href);
  assert.deepEqual(lazy.filter((m) => loaded.has(m)), []);
});

Deno.test("each lazily loaded part answers its first call, errors included", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  const catalog = await openCatalog(dirs);
  const runner = createSandboxRunner(() => catalog.config, NULL_LOGGER);
  const server = createMetaServer({ catalog, runner });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: "test-agent", version: "1" });
  await client.connect(a);
  const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
  try {
    // The first request of the session names a saved script that does not exist.
    const missing = await call("execute", { run: "nope", args: {} });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /scripts\.nope/);
    await assert.rejects(
      call("execute", { script: "return 1", args: {} }),
      /`args` is the input of a saved script: give it with `run` or `save_as`/,
    );
    const search = await call("execute", { script: `return await symposium.search("echo", { limit: 1 })` });
    assert.equal(search.isError, undefined, textOf(search));
    const viaScripts = await call("execute", {
      script: "try { await scripts.nope({}) } catch (e) { return e.message }",
    });
    assert.match(textOf(viaScripts), /Cannot run scripts\.nope/);
    assert.match(textOf(await call("list_tools", {})), /fx/);
    assert.match(textOf(await call("list_tools", { detail: "everything" })), /Problems:\n.*`detail`/);
  } finally {
    await client.close();
    await server.close();
    await catalog.close();
    await runner.close?.();
    await dirs.remove();
  }
});
