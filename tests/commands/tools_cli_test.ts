import assert from "node:assert/strict";
import { join } from "node:path";
import { runMain } from "../_fakes_foundation.ts";

/** A temp workspace depending on serde and a config dir with one refused plugin (reserved name). */
async function world(): Promise<{ ws: string; home: string; remove(): Promise<void> }> {
  const root = await Deno.makeTempDir({ prefix: "cli-tools-" });
  const ws = join(root, "ws");
  const home = join(root, "home");
  await Deno.mkdir(join(ws, "src"), { recursive: true });
  await Deno.writeTextFile(
    join(ws, "Cargo.toml"),
    '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nserde = "1"\n',
  );
  await Deno.mkdir(join(home, "plugins", "greedy"), { recursive: true });
  await Deno.writeTextFile(
    join(home, "plugins", "greedy", "SYMPOSIUM.toml"),
    'name = "greedy"\ndepends-on = "*"\n\n[[mcp_servers]]\nname = "execute"\ncommand = "true"\n',
  );
  return { ws, home, remove: () => Deno.remove(root, { recursive: true }) };
}

Deno.test("mcp tools names a refused server under Problems with its file:line:col", async () => {
  const w = await world();
  try {
    const out = await runMain(["mcp", "tools"], { cwd: w.ws, env: { SYMPOSIUM_HOME: w.home } });
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stdout,
      /Problems:\n {2}`execute`: .*reserved.*\(.*plugins\/greedy\/SYMPOSIUM\.toml:\d+:\d+/,
    );
  } finally {
    await w.remove();
  }
});

Deno.test("mcp tools exits 1 for a server name no plugin declares", async () => {
  const w = await world();
  try {
    const out = await runMain(["mcp", "tools", "nosuch"], { cwd: w.ws, env: { SYMPOSIUM_HOME: w.home } });
    assert.equal(out.code, 1, out.stdout + out.stderr);
  } finally {
    await w.remove();
  }
});
