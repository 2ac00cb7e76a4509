// Crate plugins located in a fake CARGO_HOME (registry-shaped crate folders, a git checkout) and a
// path dependency, without cargo and without network.
import assert from "node:assert/strict";
import { loadResolution } from "../../lib/catalog/resolve.ts";
import { makeDirs, type TestDirs } from "../_fakes_meta.ts";

const COMMIT = "0123456789abcdef0123456789abcdef01234567";

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, text);
}

async function world(): Promise<TestDirs & { cargoHome: string }> {
  const dirs = await makeDirs();
  const cargoHome = `${dirs.root}/cargo-home`;
  await write(`${dirs.home}/config.toml`, "[defaults]\nsymposium-recommendations = false\n");
  await write(
    `${dirs.home}/plugins/chain/SYMPOSIUM.toml`,
    [
      'name = "chain"',
      'depends-on = "*"',
      "[[plugins]]",
      'source.cargo = "serde-mcp"',
      "[[plugins]]",
      'source.cargo = "local-tool"',
      "[[plugins]]",
      'source.cargo = "gitdep"',
      "[[plugins]]",
      'source.cargo = "absent"',
      "[[plugins]]",
      'source.cargo = "not-a-dep"',
      "",
    ].join("\n"),
  );
  await write(
    `${dirs.ws}/Cargo.toml`,
    '[package]\nname = "demo"\nversion = "0.1.0"\n\n[dependencies]\nserde-mcp = "1"\n' +
      'local-tool = { path = "../local-tool" }\ngitdep = { git = "https://example.com/gitdep" }\nabsent = "2"\n',
  );
  await write(
    `${dirs.ws}/Cargo.lock`,
    [
      "version = 3",
      '[[package]]\nname = "demo"\nversion = "0.1.0"',
      '[[package]]\nname = "serde-mcp"\nversion = "1.2.3"\nsource = "registry+https://github.com/rust-lang/crates.io-index"',
      '[[package]]\nname = "serde-mcp"\nversion = "0.9.0"\nsource = "registry+https://github.com/rust-lang/crates.io-index"',
      '[[package]]\nname = "local-tool"\nversion = "0.1.0"',
      `[[package]]\nname = "gitdep"\nversion = "0.1.0"\nsource = "git+https://example.com/gitdep#${COMMIT}"`,
      '[[package]]\nname = "absent"\nversion = "2.0.0"\nsource = "registry+https://github.com/rust-lang/crates.io-index"',
      "",
    ].join("\n\n"),
  );
  // crates.io crate: metadata in Cargo.toml, merged under its SYMPOSIUM.toml (whose keys win).
  const reg = `${cargoHome}/registry/src/index.crates.io-1949cf8c6b5b557f/serde-mcp-1.2.3`;
  await write(
    `${reg}/Cargo.toml`,
    '[package]\nname = "serde-mcp"\nversion = "1.2.3"\n\n[package.metadata.symposium]\nname = "from-metadata"\n\n' +
      '[[package.metadata.symposium.mcp_servers]]\nname = "serde-srv"\ncommand = "serde-mcp-server"\n',
  );
  await write(`${reg}/SYMPOSIUM.toml`, 'name = "serde-plugin"\n');
  await write(
    `${cargoHome}/registry/src/index.crates.io-1949cf8c6b5b557f/serde-mcp-0.9.0/Cargo.toml`,
    "[package]\n",
  );
  await write(`${dirs.root}/local-tool/Cargo.toml`, '[package]\nname = "local-tool"\nversion = "0.1.0"\n');
  await write(
    `${dirs.root}/local-tool/SYMPOSIUM.toml`,
    '[[mcp_servers]]\nname = "local-srv"\ncommand = "local-server"\n',
  );
  const checkout = `${cargoHome}/git/checkouts/gitdep-5b3c1d2e/${COMMIT.slice(0, 7)}`;
  await write(`${checkout}/Cargo.toml`, '[workspace]\nmembers = ["crates/gitdep"]\n');
  await write(`${checkout}/crates/gitdep/Cargo.toml`, '[package]\nname = "gitdep"\nversion = "0.1.0"\n');
  await write(
    `${checkout}/crates/gitdep/SYMPOSIUM.toml`,
    '[[mcp_servers]]\nname = "git-srv"\ncommand = "git-server"\n',
  );
  return { ...dirs, cargoHome };
}

Deno.test("crate plugins: a crates.io crate's merged manifest applies; path and git crates need trust; an absent one says cargo fetch", async () => {
  const dirs = await world();
  const loaded = await loadResolution({
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: dirs.home, CARGO_HOME: dirs.cargoHome },
    homeDir: dirs.root,
  });
  const crates = loaded.plugins.filter((p) => p.source?.startsWith("crate "));
  assert.deepEqual(crates.map((p) => [p.name, p.source, p.trust ?? null, p.reachedFrom?.origin]), [
    ["gitdep", "crate gitdep", "untrusted", "git"],
    ["local-tool", "crate local-tool", "untrusted", "path"],
    ["serde-plugin", "crate serde-mcp", null, "registry"],
  ]);
  assert.equal(crates[2]!.reachedFrom?.version, "1.2.3");
  assert.deepEqual(loaded.resolution.servers.map((s) => s.name), ["serde-srv"]);
  const refused = Object.fromEntries(loaded.resolution.refused.map((r) => [r.server, r.code]));
  assert.equal(refused["git-srv"], "SERVER_UNTRUSTED");
  assert.equal(refused["local-srv"], "SERVER_UNTRUSTED");
  assert.equal(refused["crate absent"], "CRATE_NOT_PRESENT");
  assert.match(loaded.resolution.refused.find((r) => r.code === "CRATE_NOT_PRESENT")!.hint!, /cargo fetch/);
  assert.ok(
    loaded.sources!.notes.some((n) => /crate not-a-dep .*not loaded/.test(n)),
    loaded.sources!.notes.join("\n"),
  );
  assert.ok(loaded.sources!.watch.files.some((f) => f.endsWith("serde-mcp-1.2.3/SYMPOSIUM.toml")));
  await dirs.remove();
});

Deno.test("crate plugins are not followed from an untrusted workspace plugin", async () => {
  const dirs = await world();
  await write(`${dirs.ws}/SYMPOSIUM.toml`, '[[plugins]]\nsource.cargo = "serde-mcp"\n');
  await Deno.remove(`${dirs.home}/plugins/chain`, { recursive: true });
  const loaded = await loadResolution({
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: dirs.home, CARGO_HOME: dirs.cargoHome },
    homeDir: dirs.root,
  });
  assert.deepEqual(loaded.plugins.map((p) => p.name), ["demo"]);
  assert.ok(loaded.sources!.notes.some((n) => /not followed: that plugin is not trusted/.test(n)));
  await dirs.remove();
});
