import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type Dependency,
  loadWorkspace,
  MAX_CARGO_LOCK_BYTES,
  MAX_CARGO_TOML_BYTES,
  MAX_MEMBER_GLOB_FOLDERS,
  MAX_WORKSPACE_MEMBERS,
} from "../../lib/workspace/mod.ts";
import { memoryFileSystem } from "../_fakes_foundation.ts";

const FIXTURES = fileURLToPath(new URL("../../testdata/workspace/", import.meta.url));
const fixture = (...parts: string[]) => join(FIXTURES, ...parts);

type Row = [name: string, version: string | null, requirement: string | null, kind: string, member: string];
const rows = (deps: Dependency[]): Row[] =>
  deps.map((d) => [d.name, d.version, d.requirement, d.kind, d.member]);

Deno.test("loadWorkspace() reads a single crate with normal, dev and build dependencies", async () => {
  const ws = await loadWorkspace(fixture("single_crate"));
  assert.equal(ws.root, fixture("single_crate"));
  assert.equal(ws.lockfile, fixture("single_crate", "Cargo.lock"));
  assert.deepEqual(ws.manifests, [fixture("single_crate", "Cargo.toml")]);
  assert.deepEqual(ws.problems, []);
  assert.deepEqual(rows(ws.dependencies), [
    ["anyhow", "1.0.86", "1.0.86", "normal", "single-crate"],
    ["cc", "1.1.6", "1.0", "build", "single-crate"],
    ["serde", "1.0.204", "1.0", "normal", "single-crate"],
    ["serde_json", "1.0.120", "1", "normal", "single-crate"],
    ["tempfile", "3.10.1", "3.10", "dev", "single-crate"],
  ]);
});

Deno.test("loadWorkspace() finds the crate from a subdirectory", async () => {
  const ws = await loadWorkspace(fixture("single_crate", "src"));
  assert.equal(ws.root, fixture("single_crate"));
  assert.equal(ws.dependencies.length, 5);
});

Deno.test("loadWorkspace() reads a virtual workspace with globbed members, exclude and inherited deps", async () => {
  const ws = await loadWorkspace(fixture("virtual"));
  assert.equal(ws.root, fixture("virtual"));
  assert.deepEqual(ws.problems, []);
  assert.deepEqual(ws.manifests, [
    fixture("virtual", "Cargo.toml"),
    fixture("virtual", "crates", "core", "Cargo.toml"),
    fixture("virtual", "crates", "legacy", "Cargo.toml"),
    fixture("virtual", "tools", "helpers", "Cargo.toml"),
    fixture("virtual", "tools", "xtask", "Cargo.toml"),
  ]);
  assert.deepEqual(rows(ws.dependencies), [
    ["clap", "4.5.9", "4.5", "normal", "xtask"],
    ["log", "0.4.22", "0.4", "normal", "app-legacy"],
    ["once_cell", "1.19.0", "1.19", "normal", "xtask-helpers"],
    ["rand", "0.8.5", "0.8", "normal", "app-core"],
    ["rand", "0.7.3", "0.7", "normal", "app-legacy"],
    ["serde", "1.0.204", "1.0.200", "normal", "app-core"],
    ["serde_json", "1.0.120", "1.0", "normal", "app-core"],
    ["tokio", "1.38.1", "1.38", "dev", "app-core"],
    ["tokio", "1.38.1", "1.38", "normal", "app-core"],
  ]);
});

Deno.test("loadWorkspace() leaves out path dependencies on members and the excluded crate's dependencies", async () => {
  const names = (await loadWorkspace(fixture("virtual"))).dependencies.map((d) => d.name);
  assert.ok(!names.includes("app-core"));
  assert.ok(!names.includes("xtask-helpers"));
  assert.ok(!names.includes("regex"));
});

Deno.test("loadWorkspace() finds the workspace root from an implicit (path) member", async () => {
  const ws = await loadWorkspace(fixture("virtual", "tools", "helpers", "src"));
  assert.equal(ws.root, fixture("virtual"));
});

Deno.test("loadWorkspace() treats an excluded crate as its own root, with unlocked versions", async () => {
  const ws = await loadWorkspace(fixture("virtual", "crates", "experimental", "src"));
  assert.equal(ws.root, fixture("virtual", "crates", "experimental"));
  assert.equal(ws.lockfile, null);
  assert.deepEqual(rows(ws.dependencies), [["regex", null, "1", "normal", "experimental"]]);
});

Deno.test("loadWorkspace() reads a root package with renamed and target-specific dependencies", async () => {
  const ws = await loadWorkspace(fixture("root_package", "plugins", "metrics"));
  assert.equal(ws.root, fixture("root_package"));
  assert.deepEqual(ws.manifests, [
    fixture("root_package", "Cargo.toml"),
    fixture("root_package", "plugins", "metrics", "Cargo.toml"),
  ]);
  assert.deepEqual(rows(ws.dependencies), [
    ["futures", "0.3.30", "0.3", "normal", "rooted"],
    ["http-body", "1.0.1", "1.0", "normal", "rooted"],
    ["nix", "0.29.0", "0.29", "normal", "rooted"],
    ["procfs", "0.16.0", "0.16", "dev", "rooted"],
    ["prometheus-client", "0.22.2", "=0.22.2", "normal", "rooted-metrics"],
    ["tracing", "0.1.40", "0.1.40", "normal", "rooted"],
    ["version_check", "0.9.4", "0.9", "build", "rooted"],
    ["windows-sys", "0.52.0", "0.52", "normal", "rooted"],
    ["winres", "0.1.12", "0.1", "build", "rooted"],
  ]);
});

Deno.test("loadWorkspace() returns no root outside any Cargo project", async () => {
  const ws = await loadWorkspace("/home/me/notes", memoryFileSystem({ "/home/me/notes/todo.md": "" }));
  assert.deepEqual(ws, { root: null, lockfile: null, manifests: [], dependencies: [], problems: [] });
});

Deno.test("loadWorkspace() picks the locked version that meets the requirement when the member has no lock entry", async () => {
  const fs = memoryFileSystem({
    "/p/Cargo.toml": '[package]\nname = "p"\nversion = "0.1.0"\n[dependencies]\nrand = "0.7"\n',
    "/p/Cargo.lock":
      'version = 4\n[[package]]\nname = "rand"\nversion = "0.8.5"\n[[package]]\nname = "rand"\nversion = "0.7.3"\n[[package]]\nname = "rand"\nversion = "0.7.1"\n',
  });
  assert.deepEqual(rows((await loadWorkspace("/p", fs)).dependencies), [[
    "rand",
    "0.7.3",
    "0.7",
    "normal",
    "p",
  ]]);
});

Deno.test("loadWorkspace() gives no version when no locked version meets the requirement", async () => {
  const fs = memoryFileSystem({
    "/p/Cargo.toml": '[package]\nname = "p"\nversion = "0.1.0"\n[dependencies]\nserde = "2"\n',
    "/p/Cargo.lock": 'version = 4\n[[package]]\nname = "serde"\nversion = "1.0.204"\n',
  });
  assert.equal((await loadWorkspace("/p", fs)).dependencies[0]?.version, null);
});

Deno.test("loadWorkspace() follows package.workspace to the root", async () => {
  const fs = memoryFileSystem({
    "/repo/ws/Cargo.toml": '[workspace]\nmembers = ["../crates/a"]\n',
    "/repo/crates/a/Cargo.toml":
      '[package]\nname = "a"\nworkspace = "../../ws"\n[dependencies]\nlog = "0.4"\n',
  });
  const ws = await loadWorkspace("/repo/crates/a", fs);
  assert.equal(ws.root, "/repo/ws");
  assert.deepEqual(rows(ws.dependencies), [["log", null, "0.4", "normal", "a"]]);
});

Deno.test("loadWorkspace() treats a package as standalone when the workspace above does not list it", async () => {
  const fs = memoryFileSystem({
    "/repo/Cargo.toml": '[workspace]\nmembers = ["a", "gone"]\n',
    "/repo/a/Cargo.toml": '[package]\nname = "a"\n',
    "/repo/b/Cargo.toml": '[package]\nname = "b"\n[dependencies]\nlog = "0.4"\n',
  });
  const ws = await loadWorkspace("/repo/b", fs);
  assert.equal(ws.root, "/repo/b");
  assert.deepEqual(ws.dependencies.map((d) => d.member), ["b"]);
  assert.deepEqual(ws.problems, [], "the other workspace's missing member is not this crate's problem");
});

Deno.test("loadWorkspace() expands ? and [...] in members and reads legacy underscore tables", async () => {
  const fs = memoryFileSystem({
    "/w/Cargo.toml": '[workspace]\nmembers = ["c?", "x[0-9]"]\n',
    "/w/c1/Cargo.toml": '[package]\nname = "c1"\n[dev_dependencies]\nproptest = "1"\n',
    "/w/x7/Cargo.toml": '[package]\nname = "x7"\n[target."cfg(unix)".build_dependencies]\ncc = "1"\n',
    "/w/xa/Cargo.toml": '[package]\nname = "xa"\n[dependencies]\nnope = "1"\n',
  });
  assert.deepEqual(rows((await loadWorkspace("/w", fs)).dependencies), [
    ["cc", null, "1", "build", "x7"],
    ["proptest", null, "1", "dev", "c1"],
  ]);
});

Deno.test("loadWorkspace() expands ** in members", async () => {
  const fs = memoryFileSystem({
    "/w/Cargo.toml": '[workspace]\nmembers = ["crates/**"]\n',
    "/w/crates/a/Cargo.toml": '[package]\nname = "a"\n[dependencies]\nx = "1"\n',
    "/w/crates/group/b/Cargo.toml": '[package]\nname = "b"\n[dependencies]\ny = "1"\n',
    "/w/crates/group/README.md": "",
  });
  const ws = await loadWorkspace("/w", fs);
  assert.deepEqual(ws.dependencies.map((d) => d.name), ["x", "y"]);
  // crates/ and crates/group/ match too but hold no Cargo.toml: Cargo would refuse them.
  assert.deepEqual(ws.problems.map((p) => p.code), ["CARGO_MEMBER_MISSING", "CARGO_MEMBER_MISSING"]);
});

Deno.test("loadWorkspace() reports a broken member and still reads the others", async () => {
  const fs = memoryFileSystem({
    "/w/Cargo.toml": '[workspace]\nmembers = ["a", "b"]\n',
    "/w/a/Cargo.toml": '[package]\nname = "a"\n[dependencies]\nserde = "1"\n',
    "/w/b/Cargo.toml": '[package]\nname = "b"\n[dependencies\nlog = "0.4"\n',
  });
  const ws = await loadWorkspace("/w", fs);
  assert.deepEqual(ws.dependencies.map((d) => d.name), ["serde"]);
  assert.equal(ws.problems.length, 1);
  assert.equal(ws.problems[0]!.code, "CARGO_TOML_INVALID");
  assert.equal(ws.problems[0]!.location?.file, "/w/b/Cargo.toml");
  assert.equal(ws.problems[0]!.location?.line, 3);
});

Deno.test("loadWorkspace() reports a listed member that does not exist, with the position of members", async () => {
  const fs = memoryFileSystem({ "/w/Cargo.toml": '[workspace]\nresolver = "2"\nmembers = ["gone"]\n' });
  const ws = await loadWorkspace("/w", fs);
  assert.equal(ws.problems[0]?.code, "CARGO_MEMBER_MISSING");
  assert.deepEqual(ws.problems[0]?.location, { file: "/w/Cargo.toml", line: 3, column: 1 });
});

Deno.test("loadWorkspace() keeps the root and manifests when the root Cargo.toml is broken", async () => {
  const fs = memoryFileSystem({ "/w/Cargo.toml": "[workspace\n", "/w/Cargo.lock": "version = 4\n" });
  const ws = await loadWorkspace("/w/src", fs);
  assert.equal(ws.root, "/w");
  assert.equal(ws.lockfile, "/w/Cargo.lock");
  assert.deepEqual(ws.manifests, ["/w/Cargo.toml"]);
  assert.deepEqual(ws.dependencies, []);
  assert.equal(ws.problems[0]?.code, "CARGO_TOML_INVALID");
});

Deno.test("loadWorkspace() reports a broken Cargo.lock and lists the dependencies without versions", async () => {
  const fs = memoryFileSystem({
    "/p/Cargo.toml": '[package]\nname = "p"\n[dependencies]\nserde = "1"\n',
    "/p/Cargo.lock": "version = 4\n[[package]\nname = 1\n",
  });
  const ws = await loadWorkspace("/p", fs);
  assert.deepEqual(rows(ws.dependencies), [["serde", null, "1", "normal", "p"]]);
  assert.equal(ws.problems[0]?.code, "CARGO_LOCK_INVALID");
});

/** A Cargo.lock in Cargo's layout with `count` registry packages (about 240 bytes each). */
function bigLock(count: number): string {
  const parts = [
    'version = 4\n\n[[package]]\nname = "p"\nversion = "0.1.0"\ndependencies = [\n "serde",\n]\n',
  ];
  for (let i = 0; i < count; i++) {
    parts.push(
      `\n[[package]]\nname = "crate-${i}"\nversion = "1.0.${i}"\n` +
        `source = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "${
          "ab".repeat(32)
        }"\n` +
        `dependencies = [\n "serde",\n]\n`,
    );
  }
  parts.push(
    '\n[[package]]\nname = "serde"\nversion = "1.0.219"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n',
  );
  return parts.join("");
}

Deno.test("loadWorkspace(): a Cargo.lock or Cargo.toml over its cap is a problem naming the file and the cap, and is not read", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ws-caps-" });
  try {
    await Deno.writeTextFile(
      `${dir}/Cargo.toml`,
      '[workspace]\nmembers = ["a", "huge"]\n\n[package]\nname = "p"\nversion = "0.1.0"\n[dependencies]\nserde = "1"\n',
    );
    await Deno.mkdir(`${dir}/a`);
    await Deno.writeTextFile(`${dir}/a/Cargo.toml`, '[package]\nname = "a"\n[dependencies]\nlog = "0.4"\n');
    await Deno.mkdir(`${dir}/huge`);
    await Deno.writeTextFile(
      `${dir}/huge/Cargo.toml`,
      '[package]\nname = "huge"\n[features]\n' + 'f = ["a", "b"]\n'.repeat(40_000) + "",
    );
    await Deno.writeTextFile(`${dir}/Cargo.lock`, bigLock(Math.ceil(MAX_CARGO_LOCK_BYTES / 200)));
    const ws = await loadWorkspace(dir);
    const byCode = Object.fromEntries(ws.problems.map((p) => [p.code, p]));
    assert.match(
      byCode.CARGO_LOCK_TOO_LARGE!.message,
      new RegExp(`${dir}/Cargo\\.lock: .*cap of ${MAX_CARGO_LOCK_BYTES} bytes`),
    );
    assert.equal(byCode.CARGO_LOCK_TOO_LARGE!.location?.file, `${dir}/Cargo.lock`);
    assert.match(
      byCode.CARGO_TOML_TOO_LARGE!.message,
      new RegExp(`${dir}/huge/Cargo\\.toml: .*cap of ${MAX_CARGO_TOML_BYTES} bytes`),
    );
    // What could be read is still used: the other member, the dependencies without versions.
    assert.deepEqual(ws.members?.map((m) => m.name), ["p", "a"]);
    assert.deepEqual(rows(ws.dependencies), [["log", null, "0.4", "normal", "a"], [
      "serde",
      null,
      "1",
      "normal",
      "p",
    ]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadWorkspace(): a large Cargo.lock under the cap is read in slices (timers run while it is read)", async () => {
  const lock = bigLock(50_000);
  assert.ok(lock.length > 10_000_000 && lock.length < MAX_CARGO_LOCK_BYTES);
  // In memory, reading the file itself never waits: every timer that runs meanwhile runs between slices.
  const fs = memoryFileSystem({
    "/p/Cargo.toml": '[package]\nname = "p"\nversion = "0.1.0"\n[dependencies]\nserde = "1"\n',
    "/p/Cargo.lock": lock,
  });
  let ticks = 0;
  let reading = true;
  const tick = () => {
    if (!reading) return;
    ticks++;
    setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  const ws = await loadWorkspace("/p", fs);
  reading = false;
  assert.deepEqual(ws.problems, []);
  assert.deepEqual(rows(ws.dependencies), [["serde", "1.0.219", "1", "normal", "p"]]);
  assert.equal(ws.packages?.length, 50_002);
  // One parse of the whole 10 MB lets no timer run until it ends; reading in slices lets them run.
  assert.ok(ticks >= 10, `timers ran ${ticks} times while a 10 MB Cargo.lock was read`);
});

/** A temporary folder holding a workspace whose root Cargo.toml has `members`, removed after `body`. */
async function withWorkspace(members: string[], body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "ws-globs-" }));
  try {
    await Deno.writeTextFile(`${dir}/Cargo.toml`, `[workspace]\nmembers = ${JSON.stringify(members)}\n`);
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Runs `make` for every item, 64 at a time. */
async function inBatches<T>(items: T[], make: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += 64) await Promise.all(items.slice(i, i + 64).map(make));
}

async function crate(dir: string, name: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/Cargo.toml`, `[package]\nname = "${name}"\nversion = "0.1.0"\n`);
}

Deno.test('loadWorkspace(): members = ["loop/**"] with links back up lists each real folder once and does not follow the links', async () => {
  await withWorkspace(["loop/**"], async (dir) => {
    await crate(`${dir}/loop`, "top");
    await crate(`${dir}/loop/inner`, "inner");
    // Three links back up: to the folder itself, to its parent, to the workspace root.
    await Deno.symlink(".", `${dir}/loop/self`);
    await Deno.symlink("..", `${dir}/loop/inner/up`);
    await Deno.symlink(dir, `${dir}/loop/inner/root`);
    const ws = await loadWorkspace(dir);
    assert.deepEqual(ws.members?.map((m) => [m.name, m.dir]), [["top", `${dir}/loop`], [
      "inner",
      `${dir}/loop/inner`,
    ]]);
    assert.deepEqual(ws.problems, []);
  });
});

Deno.test("loadWorkspace(): a folder reached by two globs (one through a link) is one member", async () => {
  await withWorkspace(["crates/*", "alias/*"], async (dir) => {
    await crate(`${dir}/crates/a`, "a");
    await Deno.symlink(`${dir}/crates`, `${dir}/alias`);
    const ws = await loadWorkspace(dir);
    assert.deepEqual(ws.members?.map((m) => m.name), ["a"]);
  });
});

Deno.test("loadWorkspace(): past the member cap the rest are left out with a problem", async () => {
  await withWorkspace(["crates/*"], async (dir) => {
    const names = Array.from({ length: MAX_WORKSPACE_MEMBERS + 1 }, (_, i) => `c${i}`);
    await inBatches(names, (name) => crate(`${dir}/crates/${name}`, name));
    const ws = await loadWorkspace(dir);
    assert.equal(ws.members?.length, MAX_WORKSPACE_MEMBERS);
    assert.deepEqual(ws.problems.map((p) => p.code), ["CARGO_MEMBERS_TOO_MANY"]);
    assert.match(ws.problems[0]!.message, new RegExp(`more than ${MAX_WORKSPACE_MEMBERS} members`));
    assert.equal(ws.problems[0]!.location?.file, `${dir}/Cargo.toml`);
  });
});

Deno.test("loadWorkspace(): a ** glob over more folders than the cap stops there with a problem", async () => {
  await withWorkspace(["tree/**/leaf"], async (dir) => {
    // More folders than the cap, none a member: only the walk costs.
    const tops = MAX_MEMBER_GLOB_FOLDERS / 100;
    const paths = Array.from(
      { length: (tops + 1) * 100 },
      (_, i) => `${dir}/tree/d${Math.floor(i / 100)}/e${i % 100}`,
    );
    await inBatches(paths, (path) => Deno.mkdir(path, { recursive: true }));
    const ws = await loadWorkspace(dir);
    assert.deepEqual(ws.members, []);
    const problem = ws.problems.find((p) => p.code === "CARGO_MEMBER_GLOB_TOO_WIDE");
    assert.ok(problem, ws.problems.map((p) => p.message).join("\n"));
    assert.match(problem.message, new RegExp(`listed ${MAX_MEMBER_GLOB_FOLDERS} folders, the cap`));
  });
});
