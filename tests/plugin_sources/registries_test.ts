import assert from "node:assert/strict";
import { loadResolution } from "../../lib/catalog/resolve.ts";
import {
  DEFAULT_RECOMMENDATIONS_URL,
  isAcceptableGitUrl,
  readSourcesConfig,
} from "../../lib/plugin_sources/mod.ts";
import { MAX_PLUGINS_PER_SOURCE } from "../../lib/plugins/mod.ts";
import { makeDirs, type TestDirs } from "../_fakes_meta.ts";

const plugin = (name: string, server: string) =>
  `name = "${name}"\ndepends-on = "*"\n\n[[mcp_servers]]\nname = "${server}"\ncommand = "run-${server}"\n`;

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, text);
}

async function load(dirs: TestDirs) {
  return await loadResolution({ cwd: dirs.ws, env: { SYMPOSIUM_HOME: dirs.home }, homeDir: dirs.root });
}

Deno.test("readSourcesConfig() defaults to the recommendations registry and the user's plugins", () => {
  const config = readSourcesConfig(null, "/cfg/config.toml", { configDir: "/cfg", env: {} });
  assert.equal(config.userPlugins, true);
  assert.deepEqual(config.registries, [
    { name: "symposium-recommendations", kind: "git", git: DEFAULT_RECOMMENDATIONS_URL, autoUpdate: true },
  ]);
});

Deno.test("SYMPOSIUM_RECOMMENDATIONS_URL gets the config file's URL checks: an option or a remote helper is refused", () => {
  const text = '[defaults]\nrecommendations-url = "https://example.com/recs"\n';
  for (const bad of ["--upload-pack=touch /tmp/x", "ext::sh -c touch% /tmp/x", "relative/dir", "a\nb"]) {
    const config = readSourcesConfig(text, "c.toml", {
      configDir: "/cfg",
      env: { SYMPOSIUM_RECOMMENDATIONS_URL: bad },
    });
    assert.equal(config.registries[0]!.git, "https://example.com/recs", bad);
    assert.equal(config.problems[0]?.code, "REGISTRY_BAD_URL");
    assert.match(
      config.problems[0]!.message,
      /Cannot use SYMPOSIUM_RECOMMENDATIONS_URL: it must be a git URL/,
    );
    assert.ok(!config.problems[0]!.message.includes(bad), "the value (it may hold a token) is not repeated");
  }
});

Deno.test("readSourcesConfig() takes the recommendations URL from the config, and the environment over it", () => {
  const text = '[defaults]\nrecommendations-url = "https://example.com/recs"\n';
  const opts = { configDir: "/cfg", env: {} };
  assert.equal(readSourcesConfig(text, "c.toml", opts).registries[0]!.git, "https://example.com/recs");
  const env = { SYMPOSIUM_RECOMMENDATIONS_URL: "/srv/recs.git" };
  assert.equal(readSourcesConfig(text, "c.toml", { ...opts, env }).registries[0]!.git, "/srv/recs.git");
  const off = readSourcesConfig(
    "[defaults]\nsymposium-recommendations = false\nuser-plugins = false\n",
    "c",
    opts,
  );
  assert.deepEqual([off.userPlugins, off.registries], [false, []]);
});

Deno.test("readSourcesConfig() reads [[registry]] and the retired [[plugin-source]], each bad entry costing itself", () => {
  const text = [
    "[defaults]",
    "symposium-recommendations = false",
    "user-plugin = false",
    "[[registry]]",
    'name = "team"',
    'git = "https://example.com/team.git"',
    "auto-update = false",
    "[[registry]]",
    'name = "both"',
    'git = "https://example.com/x"',
    'path = "x"',
    "[[registry]]",
    'name = "opt"',
    'git = "--upload-pack=touch /tmp/x"',
    "[[registry]]",
    'name = "team"',
    'path = "again"',
    "[[plugin-source]]",
    'name = "local"',
    'path = "local-plugins"',
    "[[registry]]",
    'name = "x"',
    'pth = "p"',
  ].join("\n");
  const config = readSourcesConfig(text, "/cfg/config.toml", { configDir: "/cfg", env: {} });
  assert.deepEqual(config.registries.map((r) => [r.name, r.kind, r.git ?? r.path, r.autoUpdate]), [
    ["team", "git", "https://example.com/team.git", false],
    ["local", "path", "/cfg/local-plugins", true],
  ]);
  assert.deepEqual(config.problems.map((p) => [p.code, p.location?.line]), [
    ["CONFIG_UNKNOWN_KEY", 3],
    ["CONFIG_BAD_VALUE", 8],
    ["REGISTRY_BAD_URL", 14],
    ["REGISTRY_DUPLICATE", 16],
    ["CONFIG_UNKNOWN_KEY", 23],
    ["CONFIG_BAD_VALUE", 21],
  ]);
  assert.equal(config.problems[0]!.hint, 'did you mean "user-plugins"?');
});

Deno.test("isAcceptableGitUrl() refuses options and remote helpers that run commands", () => {
  for (
    const ok of [
      "https://h/x",
      "git://127.0.0.1:9/x",
      "file:///srv/x.git",
      "/srv/x.git",
      "git@github.com:o/r",
    ]
  ) {
    assert.equal(isAcceptableGitUrl(ok), true, ok);
  }
  for (const bad of ["-u touch", "ext::sh -c touch% /tmp/x", "fd::3", "relative/path", "https://h/x\n--x"]) {
    assert.equal(isAcceptableGitUrl(bad), false, bad);
  }
});

Deno.test("a hostile registry costs only itself: a duplicate server, a link out, a 50 MB manifest, 10,000 plugins", async () => {
  const dirs = await makeDirs();
  const reg = `${dirs.root}/hostile`;
  const many = `${dirs.root}/many`;
  await write(
    `${dirs.home}/config.toml`,
    `[defaults]\nsymposium-recommendations = false\n\n[[registry]]\nname = "hostile"\npath = "${reg}"\n\n` +
      `[[registry]]\nname = "many"\npath = "${many}"\n\n[[registry]]\nname = "good"\npath = "${dirs.root}/good"\n`,
  );
  await write(`${dirs.home}/plugins/mine/SYMPOSIUM.toml`, plugin("mine", "github"));
  await write(
    `${dirs.root}/good/g/SYMPOSIUM.toml`,
    plugin("g", "shared") + '[[mcp_servers]]\nname = "x"\ncommand = "run-x"\n',
  );
  await write(`${reg}/gh/SYMPOSIUM.toml`, plugin("gh", "github"));
  await write(`${reg}/twin/SYMPOSIUM.toml`, plugin("twin", "shared"));
  await write(`${dirs.root}/elsewhere/SYMPOSIUM.toml`, plugin("elsewhere", "escaped"));
  await Deno.symlink(`${dirs.root}/elsewhere`, `${reg}/link`);
  await Deno.mkdir(`${reg}/huge`, { recursive: true });
  const big = await Deno.open(`${reg}/huge/SYMPOSIUM.toml`, { create: true, write: true });
  await big.truncate(50 * 1024 * 1024);
  big.close();
  for (let i = 0; i < 10_000; i++) {
    await write(`${many}/p${String(i).padStart(5, "0")}/SYMPOSIUM.toml`, plugin(`p${i}`, `s${i}`));
  }
  const started = performance.now();
  const loaded = await load(dirs);
  const elapsedMs = performance.now() - started;
  const codes = (source: string) =>
    loaded.resolution.refused.filter((r) => r.source === source).map((r) => r.code);
  assert.deepEqual(codes("hostile").sort(), [
    "PLUGIN_LINK_OUTSIDE",
    "PLUGIN_TOO_LARGE",
    "SERVER_DUPLICATE",
    "SERVER_DUPLICATE",
  ]);
  assert.deepEqual(codes("many"), ["SOURCE_TOO_MANY_PLUGINS"]);
  const names = loaded.resolution.servers.map((s) => s.name);
  assert.ok(names.includes("x"), "the good registry's other server applies");
  assert.ok(!names.includes("shared"), "a server declared by two sources must not silently win");
  assert.ok(names.includes("github"), "the user's own plugin wins");
  assert.equal(loaded.resolution.servers.find((s) => s.name === "github")!.plugin, "mine");
  assert.ok(!names.includes("escaped"));
  assert.equal(names.filter((n) => /^s\d+$/.test(n)).length, MAX_PLUGINS_PER_SOURCE);
  const dup = loaded.resolution.refused.find((r) => r.server === "shared")!;
  assert.match(
    dup.reason,
    /from two sources: .*hostile\/twin\/SYMPOSIUM\.toml \(hostile\) and .*good\/g\/SYMPOSIUM\.toml \(good\); neither is used/,
  );
  const lost = loaded.resolution.refused.find((r) => r.server === "github")!;
  assert.match(lost.hint!, /the one in your own plugins .*mine\/SYMPOSIUM\.toml\) is used/);
  assert.ok(elapsedMs < 30_000, `loading took ${elapsedMs} ms`);
  await dirs.remove();
});
