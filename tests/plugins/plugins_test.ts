import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadPlugins, MAX_PLUGIN_DEPTH } from "../../lib/plugins/mod.ts";
import { memoryFileSystem } from "../_fakes_foundation.ts";

const HOME = fileURLToPath(new URL("../../testdata/home/", import.meta.url)).replace(/\/$/, "");
const MIXED = fileURLToPath(new URL("../../testdata/status/mixed_home/", import.meta.url)).replace(/\/$/, "");

const manifest = (name: string, server = "s") =>
  `name = "${name}"\ndepends-on = "*"\n[[mcp_servers]]\nname = "${server}"\ncommand = "run-${server}"\n`;

Deno.test("loadPlugins() finds plugins recursively and sorts them by name", async () => {
  const { plugins, refused } = await loadPlugins(HOME);
  assert.deepEqual(refused, []);
  assert.deepEqual(plugins.map((p) => [p.name, p.file]), [
    ["fs-tools", join(HOME, "plugins/fs-tools/SYMPOSIUM.toml")],
    ["local-docs", join(HOME, "plugins/local-docs/SYMPOSIUM.toml")],
    ["tokio-tools", join(HOME, "plugins/rust-async/tokio-tools/SYMPOSIUM.toml")],
  ]);
  assert.equal(plugins[2]!.dir, join(HOME, "plugins/rust-async/tokio-tools"));
});

Deno.test("loadPlugins() reports a broken plugin and still loads the others", async () => {
  const { plugins, refused } = await loadPlugins(MIXED);
  assert.deepEqual(plugins.map((p) => p.name), ["fs-tools", "more-fs-tools", "remote-tools"]);
  assert.deepEqual(refused, [{
    server: "broken",
    plugin: "broken",
    code: "PLUGIN_INVALID",
    reason: 'Cannot load plugin "broken": unknown key "comand" in mcp server "typo"',
    hint: 'did you mean "command"?',
    location: { file: join(MIXED, "plugins/broken/SYMPOSIUM.toml"), line: 6, column: 1 },
  }]);
});

Deno.test("loadPlugins() returns nothing when the plugins folder does not exist", async () => {
  assert.deepEqual(await loadPlugins("/cfg", memoryFileSystem({ "/cfg/config.toml": "" })), {
    plugins: [],
    refused: [],
  });
});

Deno.test("loadPlugins() does not search inside a plugin, nor in hidden folders", async () => {
  const fs = memoryFileSystem({
    "/cfg/plugins/a/SYMPOSIUM.toml": manifest("a"),
    "/cfg/plugins/a/vendor/b/SYMPOSIUM.toml": manifest("b"),
    "/cfg/plugins/.git/c/SYMPOSIUM.toml": manifest("c"),
  });
  const { plugins } = await loadPlugins("/cfg", fs);
  assert.deepEqual(plugins.map((p) => p.name), ["a"]);
});

Deno.test("loadPlugins() searches MAX_PLUGIN_DEPTH folder levels and no deeper", async () => {
  const path = (levels: number, leaf: string) =>
    [...Array.from({ length: levels - 1 }, (_, i) => `d${i}`), leaf].join("/");
  const fs = memoryFileSystem({
    [`/cfg/plugins/${path(MAX_PLUGIN_DEPTH, "deepest")}/SYMPOSIUM.toml`]: manifest("deepest"),
    [`/cfg/plugins/${path(MAX_PLUGIN_DEPTH + 1, "too-deep")}/SYMPOSIUM.toml`]: manifest("too-deep"),
  });
  assert.deepEqual((await loadPlugins("/cfg", fs)).plugins.map((p) => p.name), ["deepest"]);
});

Deno.test("loadPlugins() refuses a second plugin with the same name, naming both files", async () => {
  const fs = memoryFileSystem({
    "/cfg/plugins/one/SYMPOSIUM.toml": manifest("same", "x"),
    "/cfg/plugins/two/SYMPOSIUM.toml": manifest("same", "y"),
  });
  const { plugins, refused } = await loadPlugins("/cfg", fs);
  assert.deepEqual(plugins.map((p) => p.file), ["/cfg/plugins/one/SYMPOSIUM.toml"]);
  assert.equal(refused.length, 1);
  assert.equal(refused[0]!.code, "PLUGIN_DUPLICATE");
  assert.match(refused[0]!.reason, /plugins\/two\/SYMPOSIUM\.toml.*plugins\/one\/SYMPOSIUM\.toml/);
});

Deno.test("loadPlugins() refuses a SYMPOSIUM.toml directly in the plugins folder and loads the rest", async () => {
  const fs = memoryFileSystem({
    "/cfg/plugins/SYMPOSIUM.toml": manifest("root"),
    "/cfg/plugins/a/SYMPOSIUM.toml": manifest("a"),
  });
  const { plugins, refused } = await loadPlugins("/cfg", fs);
  assert.deepEqual(plugins.map((p) => p.name), ["a"]);
  assert.deepEqual(refused.map((r) => r.code), ["PLUGINS_DIR_INVALID"]);
});

Deno.test("loadPlugins() reports a plugin whose manifest has a syntax error with its position", async () => {
  const fs = memoryFileSystem({ "/cfg/plugins/bad/SYMPOSIUM.toml": 'name = "bad"\ndepends-on = [\n' });
  const { refused } = await loadPlugins("/cfg", fs);
  assert.equal(refused[0]?.code, "PLUGIN_INVALID");
  assert.match(refused[0]!.reason, /the TOML is invalid/);
  assert.equal(refused[0]?.location?.file, "/cfg/plugins/bad/SYMPOSIUM.toml");
});

Deno.test("loadPlugins() follows a symlinked plugin folder once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "plugins_test_" });
  try {
    await Deno.mkdir(join(dir, "src/p"), { recursive: true });
    await Deno.writeTextFile(join(dir, "src/p/SYMPOSIUM.toml"), manifest("linked"));
    await Deno.mkdir(join(dir, "cfg/plugins"), { recursive: true });
    await Deno.symlink(join(dir, "src/p"), join(dir, "cfg/plugins/p"));
    await Deno.symlink(join(dir, "src/p"), join(dir, "cfg/plugins/q"));
    const { plugins, refused } = await loadPlugins(join(dir, "cfg"));
    assert.deepEqual(plugins.map((p) => [p.name, p.dir]), [["linked", join(dir, "cfg/plugins/p")]]);
    assert.deepEqual(refused, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadPlugins() refuses a plugins path that is a file instead of throwing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    Deno.writeTextFileSync(join(dir, "plugins"), "");
    const { plugins, refused } = await loadPlugins(dir);
    assert.deepEqual(plugins, []);
    assert.deepEqual(refused, [{
      server: "plugins",
      plugin: "plugins",
      code: "PLUGINS_DIR_INVALID",
      reason: `Cannot load plugins from ${join(dir, "plugins")}: it is a file, not a folder`,
      hint: `move the file "${
        join(dir, "plugins")
      }" away and create a folder there with one subfolder per plugin`,
    }]);
    const under = await loadPlugins(join(dir, "plugins"));
    assert.deepEqual(under.refused.map((r) => r.code), ["PLUGINS_DIR_INVALID"]);
    assert.match(under.refused[0]!.hint!, /must be a folder/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadPlugins() reports every problem of a broken manifest, each with its position", async () => {
  const file = "/cfg/plugins/typos/SYMPOSIUM.toml";
  const fs = memoryFileSystem({
    [file]: 'name = "typos"\n[[mcp_servers]]\nname = "s"\ndepends_on = "serde"\ncomand = "x"\narg = ["a"]\n',
    "/cfg/plugins/good/SYMPOSIUM.toml": manifest("good"),
  });
  const { plugins, refused } = await loadPlugins("/cfg", fs);
  assert.deepEqual(plugins.map((p) => p.name), ["good"]);
  assert.deepEqual(refused.map((r) => [r.plugin, r.code, r.hint, r.location]), [
    ["typos", "PLUGIN_INVALID", 'did you mean "depends-on"?', { file, line: 4, column: 1 }],
    ["typos", "PLUGIN_INVALID", 'did you mean "command"?', { file, line: 5, column: 1 }],
    ["typos", "PLUGIN_INVALID", 'did you mean "args"?', { file, line: 6, column: 1 }],
  ]);
});

Deno.test("loadPlugins() refuses a manifest that is not valid UTF-8, at the invalid byte", async () => {
  const dir = await Deno.makeTempDir();
  try {
    Deno.mkdirSync(join(dir, "plugins", "latin1"), { recursive: true });
    const file = join(dir, "plugins", "latin1", "SYMPOSIUM.toml");
    const text = new TextEncoder().encode(
      'name = "p"\ndepends-on = "*"\n[[mcp_servers]]\nname = "b?"\ncommand = "x"\n',
    );
    text[text.indexOf("?".charCodeAt(0))] = 0xe9; // "é" in Latin-1
    Deno.writeFileSync(file, text);
    const { plugins, refused } = await loadPlugins(dir);
    assert.deepEqual(plugins, []);
    assert.deepEqual(refused, [{
      server: "latin1",
      plugin: "latin1",
      code: "PLUGIN_INVALID",
      reason: `Cannot read "${file}": it is not valid UTF-8 (byte 0xE9)`,
      hint: "save the file as UTF-8 (the invalid byte is at the position shown)",
      location: { file, line: 4, column: 10 },
    }]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadPlugins() does not search inside a skill folder (SKILL.md), as upstream", async () => {
  const fs = memoryFileSystem({
    "/cfg/plugins/skill/SKILL.md": "# a skill",
    "/cfg/plugins/skill/nested/SYMPOSIUM.toml": manifest("nested"),
    "/cfg/plugins/p/SYMPOSIUM.toml": manifest("p"),
  });
  assert.deepEqual((await loadPlugins("/cfg", fs)).plugins.map((p) => p.name), ["p"]);
});
