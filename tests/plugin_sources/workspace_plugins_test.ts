import assert from "node:assert/strict";
import { loadResolution } from "../../lib/catalog/resolve.ts";
import { readTrustStore, renderTrustFile, sha256Hex, trustKeyOf } from "../../lib/plugin_sources/mod.ts";
import { cargoLock, makeDirs, openCatalog, type TestDirs } from "../_fakes_meta.ts";
import { requireProgram } from "../_prerequisites.ts";

const NO_RECS = "[defaults]\nsymposium-recommendations = false\n";

async function world(): Promise<TestDirs> {
  const dirs = await makeDirs();
  await Deno.writeTextFile(`${dirs.home}/config.toml`, NO_RECS);
  return dirs;
}

/** A workspace with members `a` and `b` (virtual root). */
async function virtualWorkspace(dirs: TestDirs): Promise<void> {
  await Deno.writeTextFile(`${dirs.ws}/Cargo.toml`, '[workspace]\nmembers = ["crates/*"]\n');
  for (const m of ["a", "b"]) {
    await Deno.mkdir(`${dirs.ws}/crates/${m}/src`, { recursive: true });
    await Deno.writeTextFile(
      `${dirs.ws}/crates/${m}/Cargo.toml`,
      `[package]\nname = "${m}"\nversion = "0.1.0"\n`,
    );
  }
  await Deno.writeTextFile(`${dirs.ws}/Cargo.lock`, cargoLock({}));
}

const server = (name: string) => `[[mcp_servers]]\nname = "${name}"\ncommand = "run-${name}"\n`;

async function load(dirs: TestDirs) {
  return await loadResolution({ cwd: dirs.ws, env: { SYMPOSIUM_HOME: dirs.home }, homeDir: dirs.root });
}

async function trust(dirs: TestDirs, files: string[]): Promise<void> {
  const entries = await Promise.all(files.map(async (f) => ({
    path: await trustKeyOf(f),
    sha256: await sha256Hex(await Deno.readTextFile(f)),
  })));
  await Deno.writeTextFile(`${dirs.home}/trusted.toml`, renderTrustFile(entries), { mode: 0o600 });
}

Deno.test("loadResolution() loads root and member manifests as workspace plugins, untrusted until trusted", async () => {
  const dirs = await world();
  await virtualWorkspace(dirs);
  await Deno.writeTextFile(`${dirs.ws}/SYMPOSIUM.toml`, server("root-srv"));
  await Deno.writeTextFile(`${dirs.ws}/crates/b/SYMPOSIUM.toml`, server("b-srv"));
  const before = await load(dirs);
  assert.deepEqual(before.plugins.map((p) => [p.name, p.source, p.trust]), [
    ["b", "workspace", "untrusted"],
    ["ws", "workspace", "untrusted"],
  ]);
  assert.deepEqual(before.resolution.servers, []);
  assert.deepEqual(before.resolution.refused.map((r) => [r.server, r.code, r.source]), [
    ["b-srv", "SERVER_UNTRUSTED", "workspace"],
    ["root-srv", "SERVER_UNTRUSTED", "workspace"],
  ]);
  assert.match(before.resolution.refused[0]!.hint!, /cargo agents trust .*crates\/b\/SYMPOSIUM\.toml/);
  await trust(dirs, [`${dirs.ws}/crates/b/SYMPOSIUM.toml`]);
  const after = await load(dirs);
  assert.deepEqual(after.resolution.servers.map((s) => s.name), ["b-srv"]);
  assert.deepEqual(after.resolution.refused.map((r) => r.server), ["root-srv"]);
  await dirs.remove();
});

Deno.test("a trusted workspace manifest that changes is untrusted again (state changed)", async () => {
  const dirs = await world();
  await Deno.writeTextFile(`${dirs.ws}/SYMPOSIUM.toml`, server("s"));
  await trust(dirs, [`${dirs.ws}/SYMPOSIUM.toml`]);
  assert.equal((await load(dirs)).resolution.servers.length, 1);
  await Deno.writeTextFile(`${dirs.ws}/SYMPOSIUM.toml`, server("s") + 'args = ["--evil"]\n');
  const loaded = await load(dirs);
  assert.equal(loaded.plugins[0]!.trust, "changed");
  assert.match(loaded.resolution.refused[0]!.reason, /changed since you trusted it/);
  await dirs.remove();
});

Deno.test("a workspace manifest linked to a file outside the workspace is refused; one linked inside is followed", async () => {
  const dirs = await world();
  await virtualWorkspace(dirs);
  await Deno.writeTextFile(`${dirs.root}/outside.toml`, server("outside"));
  await Deno.symlink(`${dirs.root}/outside.toml`, `${dirs.ws}/SYMPOSIUM.toml`);
  await Deno.writeTextFile(`${dirs.ws}/shared.toml`, server("shared"));
  await Deno.symlink(`../../shared.toml`, `${dirs.ws}/crates/a/SYMPOSIUM.toml`);
  const loaded = await load(dirs);
  assert.deepEqual(loaded.plugins.map((p) => p.name), ["a"]);
  const outside = loaded.resolution.refused.find((r) => r.code === "PLUGIN_LINK_OUTSIDE");
  assert.ok(outside, JSON.stringify(loaded.resolution.refused));
  assert.equal(outside.source, "workspace");
  await dirs.remove();
});

Deno.test("a git-ignored workspace manifest is marked so (bare trust skips it) and still needs trust", async () => {
  const dirs = await world();
  await virtualWorkspace(dirs);
  await Deno.writeTextFile(`${dirs.ws}/.gitignore`, "/target\ncrates/b/SYMPOSIUM.toml\n");
  await Deno.writeTextFile(`${dirs.ws}/crates/a/SYMPOSIUM.toml`, server("a-srv"));
  await Deno.writeTextFile(`${dirs.ws}/crates/b/SYMPOSIUM.toml`, server("b-srv"));
  const loaded = await load(dirs);
  assert.deepEqual(loaded.plugins.map((p) => [p.name, p.isGitIgnored ?? false, p.trust]), [
    ["a", false, "untrusted"],
    ["b", true, "untrusted"],
  ]);
  await dirs.remove();
});

Deno.test("readTrustStore() trusts nothing from a trust file others may write", async () => {
  const dirs = await world();
  await Deno.writeTextFile(`${dirs.ws}/SYMPOSIUM.toml`, server("s"));
  await trust(dirs, [`${dirs.ws}/SYMPOSIUM.toml`]);
  await Deno.chmod(`${dirs.home}/trusted.toml`, 0o666);
  const store = await readTrustStore(dirs.home);
  assert.equal(store.entries.size, 0);
  assert.equal(store.problems[0]?.code, "TRUST_FILE_UNSAFE");
  const loaded = await load(dirs);
  assert.deepEqual(loaded.resolution.servers, []);
  assert.ok(loaded.resolution.refused.some((r) => r.code === "TRUST_FILE_UNSAFE"));
  await dirs.remove();
});

Deno.test("Catalog.refreshIfChanged() brings a newly trusted workspace server into scope and tells listeners", async () => {
  const dirs = await world();
  await Deno.writeTextFile(`${dirs.ws}/SYMPOSIUM.toml`, server("s"));
  const catalog = await openCatalog(dirs);
  let changes = 0;
  catalog.onChange(() => changes++);
  assert.equal(catalog.servers.length, 0);
  await trust(dirs, [`${dirs.ws}/SYMPOSIUM.toml`]);
  assert.equal(await catalog.refreshIfChanged(), true);
  assert.deepEqual(catalog.servers.map((s) => s.name), ["s"]);
  assert.equal(changes, 1);
  await Deno.remove(`${dirs.home}/trusted.toml`);
  assert.equal(await catalog.refreshIfChanged(), true);
  assert.equal(catalog.servers.length, 0);
  await catalog.close();
  await dirs.remove();
});

Deno.test("git-ignore detection honours core.excludesFile, core.ignorecase and the repository's top folder, as git does", async () => {
  requireProgram("git");
  const dirs = await world();
  await virtualWorkspace(dirs);
  for (const m of ["a", "b"]) await Deno.writeTextFile(`${dirs.ws}/crates/${m}/SYMPOSIUM.toml`, server(m));
  await Deno.writeTextFile(`${dirs.ws}/SYMPOSIUM.toml`, server("root"));
  // The repository is the folder above the workspace: its .gitignore and .git/info/exclude count.
  const git = (args: string[], cwd = dirs.root) =>
    new Deno.Command("git", {
      args,
      cwd,
      env: { HOME: dirs.root, XDG_CONFIG_HOME: `${dirs.root}/.config` },
      clearEnv: true,
    })
      .output();
  const hasGit = (await git(["init", "-q"]).catch(() => null))?.success === true;
  if (!hasGit) await Deno.mkdir(`${dirs.root}/.git/info`, { recursive: true });
  await Deno.writeTextFile(
    `${dirs.root}/.gitconfig`,
    '[user]\n\tname = x\n[core]\n\texcludesFile = "~/my ignores" # mine\n',
  );
  await Deno.writeTextFile(`${dirs.root}/my ignores`, "/ws/crates/b/\n");
  await Deno.writeTextFile(`${dirs.root}/.git/config`, "[core]\n\tignorecase = true\n", { append: true });
  await Deno.writeTextFile(`${dirs.root}/.gitignore`, "WS/CRATES/A/symposium.TOML\n");
  const loaded = await loadResolution({
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: dirs.home },
    homeDir: dirs.root,
  });
  const ours: Record<string, boolean> = Object.fromEntries(
    loaded.plugins.map((p) => [p.name, p.isGitIgnored ?? false]),
  );
  assert.deepEqual({ ...ours }, { a: true, b: true, ws: false });
  if (hasGit) {
    // Real git agrees on every manifest (check-ignore exits 0 for an ignored path, 1 for one that is not).
    const files: [string, string][] = [
      ["a", "ws/crates/a/SYMPOSIUM.toml"],
      ["b", "ws/crates/b/SYMPOSIUM.toml"],
      ["ws", "ws/SYMPOSIUM.toml"],
    ];
    for (const [name, file] of files) {
      const out = await git(["check-ignore", "-q", "--no-index", file]);
      assert.equal(out.code === 0, ours[name] === true, `git and we disagree on ${file}`);
    }
  }
  await dirs.remove();
});

Deno.test("a member folder outside the workspace root is refused as what it is, not as a link", async (t) => {
  for (const how of ["listed outside", "linked outside"]) {
    await t.step(how, async () => {
      const dirs = await world();
      const outside = `${dirs.root}/elsewhere`;
      await Deno.mkdir(outside);
      await Deno.writeTextFile(`${outside}/Cargo.toml`, '[package]\nname = "far"\nversion = "0.1.0"\n');
      await Deno.writeTextFile(`${outside}/SYMPOSIUM.toml`, server("far-srv"));
      if (how === "listed outside") {
        await Deno.writeTextFile(`${dirs.ws}/Cargo.toml`, '[workspace]\nmembers = ["../elsewhere"]\n');
      } else {
        await Deno.writeTextFile(`${dirs.ws}/Cargo.toml`, '[workspace]\nmembers = ["far"]\n');
        await Deno.symlink(outside, `${dirs.ws}/far`);
      }
      const loaded = await load(dirs);
      const refusal = loaded.resolution.refused.find((r) => r.plugin === "far");
      assert.equal(refusal?.code, "PLUGIN_MEMBER_OUTSIDE", JSON.stringify(loaded.resolution.refused));
      assert.doesNotMatch(refusal.reason, /symbolic link that leads outside/);
      assert.match(
        refusal.reason,
        how === "listed outside"
          ? /member folder .*elsewhere is outside the workspace root .*\(workspace\.members lists a folder outside it\)/
          : /member folder .*\/far is a symbolic link to .*elsewhere, outside the workspace root/,
      );
      assert.deepEqual(loaded.resolution.servers, []);
      await dirs.remove();
    });
  }
});
