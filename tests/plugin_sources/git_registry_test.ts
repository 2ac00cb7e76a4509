// Git registries with the real `git`, against bare repositories on disk and `git daemon` on
// 127.0.0.1 only: clone, fetch, a force-pushed history, a repository that disappears, one that hangs.
import assert from "node:assert/strict";
import type { CommandContext } from "../../lib/commands/context.ts";
import { runPluginSync } from "../../lib/commands/plugin.ts";
import { loadResolution } from "../../lib/catalog/resolve.ts";
import { gitCopyDir, readFetchRecord } from "../../lib/plugin_sources/mod.ts";
import { makeDirs, openCatalog, type TestDirs } from "../_fakes_meta.ts";
import { runMain } from "../_fakes_foundation.ts";
import { requireProgram } from "../_prerequisites.ts";

const GIT_ENV = {
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
};

async function git(cwd: string, ...args: string[]): Promise<string> {
  requireProgram("git");
  const out = await new Deno.Command("git", { args, cwd, env: GIT_ENV, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout).trim();
}

const plugin = (name: string, server: string) =>
  `name = "${name}"\ndepends-on = "*"\n\n[[mcp_servers]]\nname = "${server}"\ncommand = "run-${server}"\n`;

/** A work tree at `<root>/src` pushed to the bare `<root>/remote.git`, holding `plugins/<name>/SYMPOSIUM.toml`. */
async function makeRemote(dirs: TestDirs, server: string): Promise<{ src: string; bare: string }> {
  const src = `${dirs.root}/src`;
  const bare = `${dirs.root}/remote.git`;
  await Deno.mkdir(`${src}/one`, { recursive: true });
  await Deno.writeTextFile(`${src}/one/SYMPOSIUM.toml`, plugin("one", server));
  await git(src, "init", "-q", "-b", "main");
  await git(src, "add", ".");
  await git(src, "commit", "-q", "-m", "first");
  await git(dirs.root, "clone", "-q", "--bare", src, bare);
  await git(src, "remote", "add", "origin", bare);
  return { src, bare };
}

function context(dirs: TestDirs, out: string[]): CommandContext {
  return {
    env: { SYMPOSIUM_HOME: dirs.home },
    cwd: dirs.ws,
    homeDir: dirs.root,
    execPath: Deno.execPath(),
    selfCommand: { command: "/bin/false", args: [] },
    verbose: false,
    writeOut: (t) => out.push(t),
    writeErr: (t) => out.push(t),
    signal: new AbortController().signal,
  };
}

async function registryConfig(dirs: TestDirs, url: string): Promise<void> {
  await Deno.writeTextFile(
    `${dirs.home}/config.toml`,
    `[defaults]\nsymposium-recommendations = false\n\n[[registry]]\nname = "team"\ngit = ${
      JSON.stringify(url)
    }\n`,
  );
}

async function servers(dirs: TestDirs): Promise<string[]> {
  const loaded = await loadResolution({
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: dirs.home },
    homeDir: dirs.root,
  });
  return loaded.resolution.servers.map((s) =>
    `${s.name}@${loaded.plugins.find((p) => p.name === s.plugin)?.source}`
  );
}

Deno.test("plugin sync clones a git registry, fetches a force-pushed history, keeps the copy when the repository disappears", async () => {
  const dirs = await makeDirs();
  const { src, bare } = await makeRemote(dirs, "first-server");
  await registryConfig(dirs, `file://${bare}`);
  const out: string[] = [];
  try {
    assert.deepEqual(await servers(dirs), [], "nothing before the first sync");
    assert.equal(await runPluginSync({ names: ["team"] }, context(dirs, out)), 0, out.join(""));
    assert.match(out.join(""), /team: fetched/);
    assert.deepEqual(await servers(dirs), ["first-server@team"]);
    // A rewritten history: the old commit is gone from the remote.
    await Deno.writeTextFile(`${src}/one/SYMPOSIUM.toml`, plugin("one", "second-server"));
    await git(src, "add", ".");
    await git(src, "commit", "-q", "--amend", "-m", "rewritten");
    await git(src, "push", "-q", "--force", "origin", "main");
    assert.equal(await runPluginSync({ names: [] }, context(dirs, out)), 0, out.join(""));
    assert.deepEqual(await servers(dirs), ["second-server@team"]);
    assert.equal(await runPluginSync({ names: ["team"] }, context(dirs, out)), 0);
    assert.match(out.join(""), /team: up to date/);
    // The repository disappears: the fetch fails, the copy stays, and the failure is recorded.
    await Deno.remove(bare, { recursive: true });
    out.length = 0;
    assert.equal(await runPluginSync({ names: ["team"] }, context(dirs, out)), 1);
    assert.match(out.join(""), /team: cannot fetch .*keeping the copy at/);
    assert.deepEqual(await servers(dirs), ["second-server@team"]);
    const record = await readFetchRecord(dirs.home, "team");
    assert.ok(record?.error !== undefined && record.fetchedAtMs !== undefined);
    const loaded = await loadResolution({
      cwd: dirs.ws,
      env: { SYMPOSIUM_HOME: dirs.home },
      homeDir: dirs.root,
    });
    assert.match(
      loaded.sources!.sources.find((s) => s.name === "team")!.note!,
      /the last fetch .* failed: .*; using the copy fetched/,
    );
    assert.equal((await Deno.stat(`${dirs.home}/cache/plugin-sources/team.fetch.json`)).mode! & 0o777, 0o600);
    const tools = await runMain(["mcp", "tools", "--query", "x"], {
      cwd: dirs.ws,
      env: { SYMPOSIUM_HOME: dirs.home },
    });
    assert.match(
      tools.stdout,
      /Problems:[\s\S]*registry "team": the last fetch .* failed: .*; using the copy fetched/,
    );
  } finally {
    await dirs.remove();
  }
});

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

Deno.test("plugin sync fetches over git daemon on 127.0.0.1", async () => {
  const dirs = await makeDirs();
  await makeRemote(dirs, "daemon-server");
  const port = freePort();
  const daemon = new Deno.Command("git", {
    args: [
      "daemon",
      "--reuseaddr",
      "--export-all",
      `--base-path=${dirs.root}`,
      "--listen=127.0.0.1",
      `--port=${port}`,
      dirs.root,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    await registryConfig(dirs, `git://127.0.0.1:${port}/remote.git`);
    let code = 1;
    const out: string[] = [];
    // The daemon takes a moment to listen: a refused connection is a failed fetch, so try a few times.
    for (let i = 0; i < 20 && code !== 0; i++) {
      out.length = 0;
      code = await runPluginSync({ names: ["team"], timeoutMs: 10_000 }, context(dirs, out));
      if (code !== 0) await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(code, 0, out.join(""));
    assert.deepEqual(await servers(dirs), ["daemon-server@team"]);
  } finally {
    daemon.kill("SIGTERM");
    await daemon.status;
    await dirs.remove();
  }
});

Deno.test("plugin sync gives up on a registry that hangs, within its timeout, and keeps no partial copy", async () => {
  const dirs = await makeDirs();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn); // accepts and never answers
  })().catch(() => {});
  try {
    await registryConfig(dirs, `git://127.0.0.1:${port}/remote.git`);
    const out: string[] = [];
    const started = Date.now();
    assert.equal(await runPluginSync({ names: ["team"], timeoutMs: 1500 }, context(dirs, out)), 1);
    assert.ok(Date.now() - started < 10_000, "the timeout was not honoured");
    assert.match(out.join(""), /did not finish within 1500 ms/);
    assert.equal(await Deno.stat(gitCopyDir(dirs.home, "team")).then(() => true, () => false), false);
    const leftovers = [...Deno.readDirSync(`${dirs.home}/cache/plugin-sources`)].map((e) => e.name);
    assert.deepEqual(leftovers, ["team.fetch.json"]);
  } finally {
    listener.close();
    for (const conn of held) conn.close();
    await accepting;
    await dirs.remove();
  }
});

/** Command lines of the processes alive now that contain `needle` (from `ps`). */
async function processesWith(needle: string): Promise<string[]> {
  requireProgram("ps");
  const out = await new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) =>
    l.includes(needle) && !l.includes(" ps ")
  );
}

Deno.test("plugin sync over http to a server that accepts and never answers: the git process group is killed whole, the failure recorded, the lock released", async () => {
  const dirs = await makeDirs();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn); // accepts and never answers
  })().catch(() => {});
  const url = `http://127.0.0.1:${port}/remote.git`;
  let guard: ReturnType<typeof setTimeout> | undefined;
  try {
    await registryConfig(dirs, url);
    const out: string[] = [];
    // git's remote-http helper, a grandchild, holds git's pipes: killing git alone left the run waiting.
    // (Under 1 s, the timeout comes before git's own low-speed limit, whose least is 1 s.)
    const sync = runPluginSync({ names: ["team"], timeoutMs: 800 }, context(dirs, out));
    const stuck = new Promise<"stuck">((resolve) => (guard = setTimeout(() => resolve("stuck"), 60_000)));
    assert.equal(await Promise.race([sync, stuck]), 1, "plugin sync was still running after 60 s");
    assert.match(out.join(""), /did not finish within 800 ms/);
    const record = await readFetchRecord(dirs.home, "team");
    assert.equal(record?.url, url);
    assert.match(record?.error ?? "", /did not finish within 800 ms/);
    const leftovers = [...Deno.readDirSync(`${dirs.home}/cache/plugin-sources`)].map((e) => e.name);
    assert.deepEqual(leftovers, ["team.fetch.json"]); // no lock, no partial copy
    assert.deepEqual(await processesWith(`127.0.0.1:${port}`), []);
  } finally {
    clearTimeout(guard);
    listener.close();
    for (const conn of held) conn.close();
    await accepting;
    await dirs.remove();
  }
});

Deno.test("status updates a day-old copy in the background (auto-update) and answers without waiting", async () => {
  const dirs = await makeDirs();
  const { src } = await makeRemote(dirs, "old-server");
  await registryConfig(dirs, `file://${dirs.root}/remote.git`);
  try {
    assert.equal(await runPluginSync({ names: ["team"] }, context(dirs, [])), 0);
    await Deno.writeTextFile(`${src}/one/SYMPOSIUM.toml`, plugin("one", "new-server"));
    await git(src, "commit", "-q", "-am", "second");
    await git(src, "push", "-q", "origin", "main");
    // A status now starts nothing: the last fetch is fresh.
    const fresh = await runMain(["status", "--json"], { cwd: dirs.ws, env: { SYMPOSIUM_HOME: dirs.home } });
    assert.equal(
      JSON.parse(fresh.stdout).sources.find((s: { name: string }) => s.name === "team").note,
      undefined,
    );
    const recordFile = `${dirs.home}/cache/plugin-sources/team.fetch.json`;
    const record = JSON.parse(await Deno.readTextFile(recordFile));
    record.attemptedAtMs -= 2 * 24 * 3600 * 1000;
    await Deno.writeTextFile(recordFile, JSON.stringify(record));
    const due = await runMain(["status", "--json"], { cwd: dirs.ws, env: { SYMPOSIUM_HOME: dirs.home } });
    const team = JSON.parse(due.stdout).sources.find((s: { name: string }) => s.name === "team");
    assert.match(team.note, /updating in the background/);
    const deadline = Date.now() + 30_000;
    while ((await servers(dirs))[0] !== "new-server@team" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(await servers(dirs), ["new-server@team"]);
    // Wait for the background sync to finish writing before removing its folder.
    while (await Deno.stat(`${dirs.home}/cache/plugin-sources/team.lock`).then(() => true, () => false)) {
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await dirs.remove();
  }
});

Deno.test("Catalog.refreshIfChanged() sees a registry copy swapped in by plugin sync, and a path registry's new plugin", async () => {
  const dirs = await makeDirs();
  const { src } = await makeRemote(dirs, "v1-server");
  const local = `${dirs.root}/local-registry`;
  await Deno.mkdir(local, { recursive: true });
  await Deno.writeTextFile(
    `${dirs.home}/config.toml`,
    `[defaults]\nsymposium-recommendations = false\n\n[[registry]]\nname = "team"\ngit = "file://${dirs.root}/remote.git"\n\n` +
      `[[registry]]\nname = "local"\npath = "${local}"\n`,
  );
  assert.equal(await runPluginSync({ names: ["team"] }, context(dirs, [])), 0);
  const catalog = await openCatalog(dirs);
  try {
    assert.deepEqual(catalog.servers.map((s) => s.name), ["v1-server"]);
    await Deno.writeTextFile(`${src}/one/SYMPOSIUM.toml`, plugin("one", "v2-server"));
    await git(src, "commit", "-q", "-am", "v2");
    await git(src, "push", "-q", "origin", "main");
    assert.equal(await runPluginSync({ names: ["team"] }, context(dirs, [])), 0);
    assert.equal(await catalog.refreshIfChanged(), true);
    assert.deepEqual(catalog.servers.map((s) => s.name), ["v2-server"]);
    await Deno.mkdir(`${local}/extra`);
    await Deno.writeTextFile(`${local}/extra/SYMPOSIUM.toml`, plugin("extra", "extra-server"));
    assert.equal(await catalog.refreshIfChanged(), true);
    assert.deepEqual(catalog.servers.map((s) => s.name), ["extra-server", "v2-server"]);
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("plugin sync over http: git's own low-speed limit (a third of the timeout) ends a stalled fetch before the kill", async () => {
  const dirs = await makeDirs();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn); // accepts and never answers
  })().catch(() => {});
  try {
    await registryConfig(dirs, `http://127.0.0.1:${port}/remote.git`);
    const out: string[] = [];
    // A 20 s timeout: git gives up by itself after 6 s without 1000 bytes/s.
    assert.equal(await runPluginSync({ names: ["team"], timeoutMs: 20_000 }, context(dirs, out)), 1);
    assert.match(out.join(""), /Operation too slow/);
    assert.match((await readFetchRecord(dirs.home, "team"))?.error ?? "", /Operation too slow/);
  } finally {
    listener.close();
    for (const conn of held) conn.close();
    await accepting;
    await dirs.remove();
  }
});
