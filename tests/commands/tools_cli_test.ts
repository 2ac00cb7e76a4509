import assert from "node:assert/strict";
import { join } from "node:path";
import { runMain } from "../_fakes_foundation.ts";
import { fixtureServerToml, writePlugin } from "../_fakes_meta.ts";

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

Deno.test("mcp tools --query searches the cached tools without starting a server", async () => {
  const w = await world();
  const starts = join(w.home, "..", "starts");
  const corpus = new URL("../../testdata/declarations/corpus/time.json", import.meta.url).pathname;
  try {
    await writePlugin(
      w.home,
      "time",
      fixtureServerToml("time", [`--tools-file=${corpus}`, `--starts-file=${starts}`]),
    );
    const env = { SYMPOSIUM_HOME: w.home };
    const listed = await runMain(["mcp", "tools", "time"], { cwd: w.ws, env }); // caches its tools
    assert.equal(listed.code, 0, listed.stderr);
    const out = await runMain(["mcp", "tools", "--query", "convert between timezones", "--limit", "1"], {
      cwd: w.ws,
      env,
    });
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stdout,
      /^Best 1 of 2 tools of 1 server for "convert between timezones", best first:\n\n1\. time\.convert_time - /,
    );
    assert.equal(Deno.readTextFileSync(starts).trim().split("\n").length, 1, "started once, by the listing");
    const bad = await runMain(["mcp", "tools", "--query", "x", "--limit", "0"], { cwd: w.ws, env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--limit "0": expected a whole number from 1 to 50/);
  } finally {
    await w.remove();
  }
});

Deno.test("mcp tools declares the result shape a mcp exec run learned, from the tool cache", async () => {
  const w = await world();
  const answers = new URL("../../testdata/catalog/results/github.json", import.meta.url).pathname;
  try {
    await writePlugin(w.home, "gh", fixtureServerToml("gh", [`--answers-file=${answers}`]));
    const env = { SYMPOSIUM_HOME: w.home };
    const script = join(w.home, "..", "script.js");
    await Deno.writeTextFile(script, "await gh.issue_write({ method: 'create' }); return 'ok'");
    const run = await runMain(["mcp", "exec", script], { cwd: w.ws, env });
    assert.equal(run.code, 0, run.stderr);
    const out = await runMain(["mcp", "tools", "gh", "--pattern", "issue_write", "--detail", "signatures"], {
      cwd: w.ws,
      env,
    });
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stdout,
      /\): \/\*\* Returns \(observed in 1 call\): \*\/ Promise<\{ id: string \| null; url: string \| null \}>;/,
    );
  } finally {
    await w.remove();
  }
});

Deno.test("mcp tools SERVER --detail names prints the index: an explicit --detail wins over naming a server", async () => {
  const w = await world();
  const corpus = new URL("../../testdata/declarations/corpus/time.json", import.meta.url).pathname;
  try {
    await writePlugin(w.home, "time", fixtureServerToml("time", [`--tools-file=${corpus}`]));
    const env = { SYMPOSIUM_HOME: w.home };
    const names = await runMain(["mcp", "tools", "time", "--detail", "names"], { cwd: w.ws, env });
    assert.equal(names.code, 0, names.stderr);
    assert.doesNotMatch(names.stdout, /declare const time/);
    assert.match(names.stdout, /convert_time/);
    const full = await runMain(["mcp", "tools", "time"], { cwd: w.ws, env });
    assert.match(full.stdout, /declare const time/);
  } finally {
    await w.remove();
  }
});
