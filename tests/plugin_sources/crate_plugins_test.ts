// Crate plugins located in a fake CARGO_HOME (registry-shaped crate folders, a git checkout) and a
// path dependency, without cargo and without network.
import assert from "node:assert/strict";
import { loadResolution } from "../../lib/catalog/resolve.ts";
import { renderTrustFile, sha256Hex, trustKeyOf } from "../../lib/plugin_sources/mod.ts";
import { makeDirs, type TestDirs } from "../_fakes_meta.ts";
import { requireProgram } from "../_prerequisites.ts";

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

/** Runs a real `cargo` with `CARGO_HOME` set, offline; throws with its stderr when it fails. */
async function cargo(cwd: string, cargoHome: string, args: string[]): Promise<void> {
  requireProgram("cargo");
  const out = await new Deno.Command("cargo", {
    args: [...args, "--offline"],
    cwd,
    env: { CARGO_HOME: cargoHome },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`cargo ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
}

/** A user plugin that chains `source.cargo = "<crate>"`. */
async function chainTo(home: string, crate: string): Promise<void> {
  await write(`${home}/config.toml`, "[defaults]\nsymposium-recommendations = false\n");
  await write(
    `${home}/plugins/chain/SYMPOSIUM.toml`,
    `name = "chain"\ndepends-on = "*"\n[[plugins]]\nsource.cargo = "${crate}"\n`,
  );
}

Deno.test("crate plugins: a crate a cloned repository's .cargo/config.toml swapped in for crates.io needs trust (real cargo fetch)", async () => {
  const dirs = await makeDirs();
  const cargoHome = `${dirs.root}/cargo-home`;
  // The attacker's crate: serde 1.0.999 with a SYMPOSIUM.toml, packaged by cargo into a local registry.
  const evil = `${dirs.root}/evil-serde`;
  await write(
    `${evil}/Cargo.toml`,
    '[package]\nname = "serde"\nversion = "1.0.999"\nedition = "2021"\ndescription = "x"\nlicense = "MIT"\n',
  );
  await write(`${evil}/src/lib.rs`, "");
  await write(`${evil}/SYMPOSIUM.toml`, '[[mcp_servers]]\nname = "planted"\ncommand = "planted-command"\n');
  await cargo(evil, cargoHome, ["package", "--no-verify", "--allow-dirty"]);
  const crate = await Deno.readFile(`${evil}/target/package/serde-1.0.999.crate`);
  const registry = `${dirs.ws}/vendor/registry`;
  await Deno.mkdir(`${registry}/index/se/rd`, { recursive: true });
  await Deno.writeFile(`${registry}/serde-1.0.999.crate`, crate);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", crate));
  const cksum = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  await write(
    `${registry}/index/se/rd/serde`,
    JSON.stringify({ name: "serde", vers: "1.0.999", deps: [], cksum, features: {}, yanked: false }) + "\n",
  );
  // The cloned repository: its .cargo/config.toml replaces crates.io with the registry it holds.
  await write(
    `${dirs.ws}/.cargo/config.toml`,
    '[source.crates-io]\nreplace-with = "vendored"\n\n[source.vendored]\nlocal-registry = "vendor/registry"\n',
  );
  await Deno.remove(`${dirs.ws}/Cargo.lock`);
  await cargo(dirs.ws, cargoHome, ["fetch"]);
  const lock = await Deno.readTextFile(`${dirs.ws}/Cargo.lock`);
  assert.match(
    lock,
    /name = "serde"\nversion = "1.0.999"\nsource = "registry\+https:\/\/github.com\/rust-lang\/crates.io-index"/,
  );
  await chainTo(dirs.home, "serde");
  const loaded = await loadResolution({
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: dirs.home, CARGO_HOME: cargoHome },
    homeDir: dirs.root,
  });
  const plugin = loaded.plugins.find((p) => p.source === "crate serde");
  assert.ok(plugin, loaded.sources!.notes.join("\n"));
  assert.equal(plugin.trust, "untrusted");
  assert.equal(plugin.reachedFrom?.origin, "replaced");
  assert.deepEqual(loaded.resolution.servers.map((s) => s.name), []);
  assert.equal(loaded.resolution.refused.find((r) => r.server === "planted")?.code, "SERVER_UNTRUSTED");
  assert.ok(loaded.sources!.notes.some((n) => /crates\.io is replaced in .*\.cargo\/config\.toml/.test(n)));
  assert.ok(loaded.sources!.watch.files.includes(`${dirs.ws}/.cargo/config.toml`));
  await dirs.remove();
});

Deno.test("crate plugins: a crates.io-locked crate is crates.io's only in crates.io's own folder with crates.io not replaced", async (t) => {
  const planted = '[[mcp_servers]]\nname = "planted"\ncommand = "planted-command"\n';
  const cases: { name: string; index: string; configs: [string, string][]; env?: Record<string, string> }[] =
    [
      {
        name: "another key of [source.crates-io] (replace_with)",
        index: "index.crates.io-1949cf8c6b5b557f",
        configs: [["WS/.cargo/config.toml", '[source.crates-io]\nreplace_with = "mine"\n']],
      },
      {
        name: "replace-with in a file the workspace's .cargo/config.toml includes",
        index: "index.crates.io-1949cf8c6b5b557f",
        configs: [
          ["WS/.cargo/config.toml", 'include = ["more.toml"]\n'],
          ["WS/.cargo/more.toml", '[source.crates-io]\nreplace-with = "mine"\n'],
        ],
      },
      {
        name: "crates.io's index moved by [registries.crates-io] index",
        index: "index.crates.io-1949cf8c6b5b557f",
        configs: [[
          "WS/.cargo/config.toml",
          '[registries.crates-io]\nindex = "sparse+http://127.0.0.1:9/"\n',
        ]],
      },
      {
        name: "replace-with from the environment (CARGO_SOURCE_CRATES_IO_REPLACE_WITH)",
        index: "index.crates.io-1949cf8c6b5b557f",
        configs: [],
        env: { CARGO_SOURCE_CRATES_IO_REPLACE_WITH: "mine" },
      },
      { name: "a look-alike index folder", index: "index.crates.io-0123456789abcdef", configs: [] },
      { name: "another index's folder", index: "127.0.0.1-0c48cac49e2d9568", configs: [] },
      {
        name: "replace-with in a parent's .cargo/config (no extension)",
        index: "index.crates.io-1949cf8c6b5b557f",
        configs: [["ROOT/.cargo/config", '[source.crates-io]\nreplace-with = "mine"\n']],
      },
      {
        name: "replace-with in $CARGO_HOME/config.toml, as a dotted key",
        index: "index.crates.io-1949cf8c6b5b557f",
        configs: [["CARGO/config.toml", 'source.crates-io.replace-with = "mine"\n']],
      },
      {
        name: "a .cargo/config.toml that is not TOML",
        index: "github.com-25cdd57fae9f0462",
        configs: [["WS/.cargo/config.toml", "[source.crates-io\n"]],
      },
    ];
  for (
    const c of [
      ...cases,
      {
        name: "crates.io itself",
        index: "github.com-1ecc6299db9ec823",
        configs: [["WS/.cargo/config.toml", "[source.other]\nregistry = 'x'\n[build]\njobs = 2\n"]],
        env: { CARGO_REGISTRIES_CRATES_IO_PROTOCOL: "sparse" },
      },
    ]
  ) {
    await t.step(c.name, async () => {
      const dirs = await makeDirs();
      const cargoHome = `${dirs.root}/cargo-home`;
      await chainTo(dirs.home, "serde");
      const crate = `${cargoHome}/registry/src/${c.index}/serde-1.0.219`;
      await write(`${crate}/Cargo.toml`, '[package]\nname = "serde"\nversion = "1.0.219"\n');
      await write(`${crate}/SYMPOSIUM.toml`, planted);
      await Deno.writeTextFile(
        `${dirs.ws}/Cargo.lock`,
        'version = 3\n\n[[package]]\nname = "demo"\nversion = "0.1.0"\n\n[[package]]\nname = "serde"\n' +
          'version = "1.0.219"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n',
      );
      for (const [at, text] of c.configs) {
        await write(at.replace("ROOT", dirs.root).replace("CARGO", cargoHome).replace("WS", dirs.ws), text);
      }
      const loaded = await loadResolution({
        cwd: dirs.ws,
        env: { SYMPOSIUM_HOME: dirs.home, CARGO_HOME: cargoHome, ...c.env },
        homeDir: dirs.root,
      });
      const plugin = loaded.plugins.find((p) => p.source === "crate serde");
      assert.ok(plugin, loaded.sources!.notes.join("\n"));
      if (c.name === "crates.io itself") {
        assert.equal(plugin.trust, undefined);
        assert.deepEqual(loaded.resolution.servers.map((s) => s.name), ["planted"]);
      } else {
        assert.equal(plugin.trust, "untrusted");
        assert.equal(plugin.reachedFrom?.origin, "replaced");
        assert.deepEqual(loaded.resolution.servers.map((s) => s.name), []);
      }
      await dirs.remove();
    });
  }
});

Deno.test("crate plugins: [package.metadata.symposium] and SYMPOSIUM.toml layer additively (lists append, metadata first; the file's name wins)", async () => {
  const dirs = await makeDirs();
  const cargoHome = `${dirs.root}/cargo-home`;
  await chainTo(dirs.home, "serde");
  const crate = `${cargoHome}/registry/src/index.crates.io-1949cf8c6b5b557f/serde-1.0.219`;
  await write(
    `${crate}/Cargo.toml`,
    '[package]\nname = "serde"\nversion = "1.0.219"\n\n[package.metadata.symposium]\nname = "from-metadata"\n' +
      'depends-on = "serde"\n\n[[package.metadata.symposium.mcp_servers]]\nname = "meta-srv"\ncommand = "meta-server"\n',
  );
  await write(
    `${crate}/SYMPOSIUM.toml`,
    'name = "serde-plugin"\ndepends-on = ["*"]\n\n[[mcp_servers]]\nname = "file-srv"\ncommand = "file-server"\n',
  );
  await Deno.writeTextFile(
    `${dirs.ws}/Cargo.lock`,
    'version = 3\n\n[[package]]\nname = "demo"\nversion = "0.1.0"\n\n[[package]]\nname = "serde"\n' +
      'version = "1.0.219"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n',
  );
  const loaded = await loadResolution({
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: dirs.home, CARGO_HOME: cargoHome },
    homeDir: dirs.root,
  });
  const plugin = loaded.plugins.find((p) => p.source === "crate serde");
  assert.equal(plugin?.name, "serde-plugin");
  assert.deepEqual(plugin!.manifest.mcpServers.map((s) => s.name), ["meta-srv", "file-srv"]);
  assert.deepEqual(loaded.resolution.servers.map((s) => s.name), ["file-srv", "meta-srv"]);
  await dirs.remove();
});

Deno.test("crate plugins: a trusted path crate's manifest that changed says what changed", async () => {
  const dirs = await world();
  const manifest = `${dirs.root}/local-tool/SYMPOSIUM.toml`;
  const entries = [{
    path: await trustKeyOf(manifest),
    sha256: await sha256Hex(await Deno.readTextFile(manifest)),
  }];
  await Deno.writeTextFile(`${dirs.home}/trusted.toml`, renderTrustFile(entries), { mode: 0o600 });
  const env = { SYMPOSIUM_HOME: dirs.home, CARGO_HOME: dirs.cargoHome };
  const before = await loadResolution({ cwd: dirs.ws, env, homeDir: dirs.root });
  assert.equal(before.plugins.find((p) => p.source === "crate local-tool")?.trust, "trusted");
  await Deno.writeTextFile(manifest, '[[mcp_servers]]\nname = "local-srv"\ncommand = "curl"\n');
  const after = await loadResolution({ cwd: dirs.ws, env, homeDir: dirs.root });
  const plugin = after.plugins.find((p) => p.source === "crate local-tool")!;
  assert.equal(plugin.trust, "changed");
  assert.deepEqual(plugin.trustChanges, [`${await trustKeyOf(manifest)} changed`]);
  const refusal = after.resolution.refused.find((r) => r.server === "local-srv")!;
  assert.match(refusal.reason, /local-tool\/SYMPOSIUM\.toml changed/);
  await dirs.remove();
});
