// With the default config (the recommendations registry on, its URL a remote one), nothing but an
// explicit `plugin sync` runs git: status, mcp tools, mcp exec, sync and mcp-serve never do. A `git` on
// PATH that records each call proves it.
import assert from "node:assert/strict";
import { RawServe } from "../../bench/_raw_serve.ts";
import { runMain } from "../_fakes_foundation.ts";
import { makeDirs } from "../_fakes_meta.ts";

Deno.test("with the default config only an explicit plugin sync runs git (status, mcp tools, mcp exec, sync, mcp-serve never)", async () => {
  const dirs = await makeDirs();
  const bin = `${dirs.root}/bin`;
  const calls = `${dirs.root}/git-calls`;
  await Deno.mkdir(bin);
  await Deno.writeTextFile(`${bin}/git`, `#!/bin/sh\necho "$@" >> '${calls}'\nexit 1\n`, { mode: 0o755 });
  const env = { SYMPOSIUM_HOME: dirs.home, PATH: `${bin}:${Deno.env.get("PATH") ?? ""}`, HOME: dirs.root };
  const script = `${dirs.root}/s.js`;
  await Deno.writeTextFile(script, "return 1");
  try {
    for (
      const args of [["status"], ["status", "--json"], ["mcp", "tools"], ["mcp", "exec", script], [
        "plugin",
        "list",
      ], [
        "sync",
        "--dry-run",
      ], ["sync"]]
    ) {
      await runMain(args, { cwd: dirs.ws, env });
    }
    const serve = RawServe.start({ home: dirs.home, cwd: dirs.ws, env: { PATH: env.PATH, HOME: dirs.root } });
    try {
      await serve.initialize();
      await serve.request("tools/call", { name: "list_tools", arguments: {} });
    } finally {
      await serve.close();
    }
    assert.equal(
      await Deno.stat(calls).then(() => true, () => false),
      false,
      "git was run without plugin sync",
    );
    // The explicit command does run it (and fails here: the fake git refuses), keeping nothing.
    const sync = await runMain(["plugin", "sync"], { cwd: dirs.ws, env });
    assert.equal(sync.code, 1);
    assert.match(
      await Deno.readTextFile(calls),
      /clone .* -- https:\/\/github\.com\/symposium-dev\/recommendations /,
    );
  } finally {
    await dirs.remove();
  }
});
