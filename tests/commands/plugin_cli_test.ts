import assert from "node:assert/strict";
import { runMain } from "../_fakes_foundation.ts";
import { makeDirs } from "../_fakes_meta.ts";

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, text);
}

Deno.test("plugin validate prints every problem with file:line:col, notes upstream keys once, and exits 1", async () => {
  const dirs = await makeDirs();
  const reg = `${dirs.root}/registry`;
  await write(
    `${reg}/good/SYMPOSIUM.toml`,
    'name = "good"\ndepends-on = "*"\n[[skills]]\nsource = "a"\n[[skills]]\nsource = "b"\n',
  );
  await write(
    `${reg}/bad/SYMPOSIUM.toml`,
    'name = "bad"\n[[mcp_servers]]\nname = "s"\ncomand = "x"\npredicates = ["env(A"]\n',
  );
  const out = await runMain(["plugin", "validate", reg], {
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: dirs.home },
  });
  assert.equal(out.code, 1, out.stderr);
  assert.match(
    out.stdout,
    /error\[MANIFEST_UNKNOWN_KEY\]: Cannot load plugin "bad": unknown key "comand" in mcp server "s"\n {2}--> .*bad\/SYMPOSIUM\.toml:4:1\n {2}hint: did you mean "command"\?/,
  );
  assert.match(
    out.stdout,
    /invalid predicate "env\(A": a parenthesis is not closed\n {2}--> .*bad\/SYMPOSIUM\.toml:5:15/,
  );
  assert.equal(out.stdout.match(/note: `skills`/g)?.length, 1);
  assert.match(out.stdout, /2 problems in /);
  const json = await runMain(["plugin", "validate", `${reg}/good`, "--json"], { cwd: dirs.ws, env: {} });
  assert.equal(json.code, 0);
  const doc = JSON.parse(json.stdout);
  assert.deepEqual([doc.plugins, doc.problems, doc.notes.length], [["good"], [], 1]);
  await dirs.remove();
});

Deno.test("plugin list and show attribute each plugin to its source; trust --revoke takes trust away", async () => {
  const dirs = await makeDirs();
  const env = { SYMPOSIUM_HOME: dirs.home };
  await write(
    `${dirs.home}/config.toml`,
    `[defaults]\nsymposium-recommendations = false\n\n[[registry]]\nname = "team"\npath = "${dirs.root}/team"\n`,
  );
  await write(
    `${dirs.root}/team/t/SYMPOSIUM.toml`,
    'name = "t"\ndepends-on = "serde"\n[[mcp_servers]]\nname = "team-srv"\ncommand = "x"\n',
  );
  await write(
    `${dirs.home}/plugins/sh/SYMPOSIUM.toml`,
    'name = "sh"\npredicates = ["shell(touch /tmp/x)"]\n[[mcp_servers]]\nname = "shell-gated"\ncommand = "y"\n',
  );
  await write(
    `${dirs.ws}/SYMPOSIUM.toml`,
    '[[mcp_servers]]\nname = "ws-srv"\ncommand = "z"\n[[hooks]]\nevent = "x"\n',
  );
  const list = JSON.parse((await runMain(["plugin", "list", "--json"], { cwd: dirs.ws, env })).stdout);
  assert.deepEqual(list.sources.map((s: { name: string }) => s.name), ["user-plugins", "team", "workspace"]);
  assert.deepEqual(
    list.plugins.map((
      p: { name: string; source: string; servers: { state: string }[] },
    ) => [p.name, p.source, p.servers[0]?.state]),
    [["demo", "workspace", "untrusted"], ["sh", "user-plugins", "dormant"], ["t", "team", "applies"]],
  );
  const status = await runMain(["status"], { cwd: dirs.ws, env });
  assert.match(
    status.stdout,
    /shell-gated: dormant - plugin stays dormant: shell\(touch \/tmp\/x\) is not evaluated: cargo-agents never runs a shell to decide/,
  );
  assert.match(status.stdout, /t \[registry team\] {2}.*team\/t\/SYMPOSIUM\.toml/);
  const show = await runMain(["plugin", "show", "demo"], { cwd: dirs.ws, env });
  assert.match(
    show.stdout,
    /demo \(source: workspace\)\n {2}file: .*ws\/SYMPOSIUM\.toml\n {2}trust: untrusted \(run `cargo agents trust /,
  );
  assert.match(show.stdout, /note: `hooks` .* is accepted and not acted on here/);
  assert.match(show.stdout, /\[\[mcp_servers\]\]\nname = "ws-srv"/);
  assert.equal((await runMain(["trust", dirs.ws, "--yes"], { cwd: dirs.ws, env })).code, 0);
  const trusted = JSON.parse(
    (await runMain(["plugin", "show", "demo", "--json"], { cwd: dirs.ws, env })).stdout,
  );
  assert.equal(trusted.trust, "trusted");
  const revoke = await runMain(["trust", "--revoke"], { cwd: dirs.ws, env });
  assert.match(revoke.stdout, /revoked .*ws\/SYMPOSIUM\.toml/);
  const after = JSON.parse(
    (await runMain(["plugin", "show", "demo", "--json"], { cwd: dirs.ws, env })).stdout,
  );
  assert.equal(after.trust, "untrusted");
  const unknown = await runMain(["plugin", "show", "nope"], { cwd: dirs.ws, env });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no plugin has that name/);
  await dirs.remove();
});

Deno.test("a bare trust also trusts the path crate a just-trusted workspace manifest chains to, after showing it", async () => {
  const dirs = await makeDirs();
  const env = { SYMPOSIUM_HOME: dirs.home };
  await write(`${dirs.home}/config.toml`, "[defaults]\nsymposium-recommendations = false\n");
  await write(
    `${dirs.ws}/Cargo.toml`,
    '[package]\nname = "demo"\nversion = "0.1.0"\n\n[dependencies]\nlocal-tool = { path = "../local-tool" }\n',
  );
  await write(`${dirs.root}/local-tool/Cargo.toml`, '[package]\nname = "local-tool"\nversion = "0.1.0"\n');
  await write(
    `${dirs.root}/local-tool/SYMPOSIUM.toml`,
    '[[mcp_servers]]\nname = "local-srv"\ncommand = "local-server"\n',
  );
  await write(`${dirs.ws}/SYMPOSIUM.toml`, '[[plugins]]\nsource.cargo = "local-tool"\n');
  const trust = await runMain(["trust", "--yes"], { cwd: dirs.ws, env });
  assert.equal(trust.code, 0, trust.stderr);
  assert.match(trust.stdout, /trusted .*ws\/SYMPOSIUM\.toml\n/);
  assert.match(
    trust.stdout,
    /local-tool\/SYMPOSIUM\.toml \(crate local-tool plugin "local-tool"\) would start:\n {2}server "local-srv" runs a command:\n {4}command: "local-server"\n[^]*?trusted /,
  );
  const status = JSON.parse((await runMain(["status", "--json"], { cwd: dirs.ws, env })).stdout);
  assert.deepEqual(status.servers.map((s: { name: string; state: string }) => [s.name, s.state]), [[
    "local-srv",
    "applies",
  ]]);
  await dirs.remove();
});
