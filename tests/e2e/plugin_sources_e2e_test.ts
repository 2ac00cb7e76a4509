// The worked example of `docs/writing-plugins.md`, "Worked example: a registry, the workspace and a crate": from an empty
// config to a git registry (a bare repository on disk, synced by `plugin sync`), a trusted workspace
// plugin and a crate plugin (a crates.io-shaped folder in CARGO_HOME), each server reachable from
// `execute` (through `mcp exec`). Nothing leaves the machine.
import assert from "node:assert/strict";
import { runMain } from "../_fakes_foundation.ts";
import { fixtureServerToml, makeDirs } from "../_fakes_meta.ts";
import { requireProgram } from "../_prerequisites.ts";

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, text);
}

async function git(cwd: string, ...args: string[]): Promise<void> {
  const env = {
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@x.invalid",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@x.invalid",
  };
  requireProgram("git");
  const out = await new Deno.Command("git", { args, cwd, env, stdout: "null", stderr: "piped" }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
}

Deno.test("docs worked example: a git registry, a trusted workspace plugin and a crate plugin, each reachable from execute", async () => {
  const dirs = await makeDirs();
  const cargoHome = `${dirs.root}/cargo`;
  const env = { SYMPOSIUM_HOME: dirs.home, CARGO_HOME: cargoHome };
  try {
    // 1. A team registry: a git repository with one plugin folder.
    const team = `${dirs.root}/team-plugins`;
    await write(
      `${team}/docs/SYMPOSIUM.toml`,
      `name = "team-docs"\ndepends-on = "serde"\n\n${fixtureServerToml("team_docs")}`,
    );
    await git(team, "init", "-q", "-b", "main");
    await git(team, "add", ".");
    await git(team, "commit", "-q", "-m", "plugins");
    await git(dirs.root, "clone", "-q", "--bare", team, `${dirs.root}/team-plugins.git`);
    await write(
      `${dirs.home}/config.toml`,
      `[defaults]\nsymposium-recommendations = false\n\n[[registry]]\nname = "team"\ngit = "file://${dirs.root}/team-plugins.git"\n`,
    );
    const sync = await runMain(["plugin", "sync", "team"], { cwd: dirs.ws, env });
    assert.equal(sync.code, 0, sync.stderr);
    assert.match(sync.stdout, /team: fetched/);
    // 2. The workspace's own plugin, with a chained crate plugin.
    await write(
      `${dirs.ws}/SYMPOSIUM.toml`,
      `${fixtureServerToml("project_tools")}\n[[plugins]]\nsource.cargo = "serde"\n`,
    );
    // 3. The crate's own manifest, where cargo keeps crates.io sources (the version Cargo.lock names).
    const crate = `${cargoHome}/registry/src/index.crates.io-1949cf8c6b5b557f/serde-1.0.219`;
    await write(`${crate}/Cargo.toml`, '[package]\nname = "serde"\nversion = "1.0.219"\n');
    await write(`${crate}/SYMPOSIUM.toml`, fixtureServerToml("serde_helper"));
    await Deno.writeTextFile(
      `${dirs.ws}/Cargo.lock`,
      (await Deno.readTextFile(`${dirs.ws}/Cargo.lock`)).replace(
        'name = "serde"\nversion = "1.0.219"\n',
        'name = "serde"\nversion = "1.0.219"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n',
      ),
    );
    const states = async () =>
      JSON.parse((await runMain(["status", "--json"], { cwd: dirs.ws, env })).stdout).servers
        .map((s: { name: string; state: string; source: string }) => `${s.name} ${s.state} ${s.source}`)
        .sort();
    // Untrusted, the workspace plugin starts nothing and its [[plugins]] chain is not followed.
    assert.deepEqual(await states(), ["project_tools untrusted workspace", "team_docs applies team"]);
    const trust = await runMain(["trust", "--yes"], { cwd: dirs.ws, env });
    assert.equal(trust.code, 0, trust.stderr);
    assert.match(trust.stdout, /server "project_tools" runs a command:/);
    assert.deepEqual(await states(), [
      "project_tools applies workspace",
      "serde_helper applies crate serde",
      "team_docs applies team",
    ]);
    const script = `${dirs.root}/all.js`;
    await Deno.writeTextFile(
      script,
      "return [await team_docs.echo({ message: 'a' }), await project_tools.echo({ message: 'b' }), await serde_helper.echo({ message: 'c' })]",
    );
    const ran = await runMain(["mcp", "exec", script], { cwd: dirs.ws, env });
    assert.equal(ran.code, 0, ran.stdout + ran.stderr);
    const answer = JSON.parse(ran.stdout.trim().split("\n")[0]!);
    assert.equal(answer.result.length, 3);
    assert.deepEqual(answer.result, ["a", "b", "c"]);
  } finally {
    await dirs.remove();
  }
});
