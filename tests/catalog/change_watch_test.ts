import assert from "node:assert/strict";
import { ChangeWatch } from "../../lib/catalog/_change_watch.ts";
import { filesFingerprintSync, MissingFiles, SYNC_CHECKED_MAX } from "../../lib/catalog/_fingerprint.ts";
import type { LoadedResolution } from "../../lib/catalog/resolve.ts";
import { waitFor } from "../_fakes_backends.ts";
import { cargoLock, fixtureServerToml, makeDirs, openCatalog, writePlugin } from "../_fakes_meta.ts";

Deno.test("ChangeWatch reports an event after settle(), and starts out changed", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/deep/a`, { recursive: true });
  const watch = new ChangeWatch({ flat: [dir], deep: [`${dir}/deep`] });
  try {
    assert.equal(watch.mayHaveChanged, true);
    watch.settle();
    assert.equal(watch.mayHaveChanged, false);
    await Deno.writeTextFile(`${dir}/deep/a/SYMPOSIUM.toml`, "name = 'a'");
    assert.ok(await waitFor(() => Promise.resolve(watch.mayHaveChanged), 5_000), "no event for a deep file");
    watch.settle();
    await Deno.writeTextFile(`${dir}/config.toml`, "[mcp]\n");
    assert.ok(await waitFor(() => Promise.resolve(watch.mayHaveChanged), 5_000), "no event for a flat file");
  } finally {
    watch.close();
    await Deno.remove(dir, { recursive: true });
  }
  assert.equal(watch.mayHaveChanged, true, "a closed watch must not vouch for anything");
});

Deno.test("ChangeWatch on a folder that does not exist keeps every look exact", () => {
  const watch = new ChangeWatch({ flat: ["/nonexistent-cargo-agents-folder"], deep: [] });
  watch.settle();
  assert.equal(watch.mayHaveChanged, true);
  watch.close();
});

Deno.test("refreshIfChanged({ trustWatch }) sees an edited plugin and Cargo.lock through the watch", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  const catalog = await openCatalog(dirs);
  try {
    assert.equal(await catalog.refreshIfChanged({ trustWatch: true }), false); // sets the watch up
    assert.equal(await catalog.refreshIfChanged({ trustWatch: true }), false);
    await writePlugin(dirs.home, "other", fixtureServerToml("other"));
    assert.ok(
      await waitFor(async () => await catalog.refreshIfChanged({ trustWatch: true }), 5_000),
      "a new plugin was not seen",
    );
    assert.deepEqual(catalog.servers.map((s) => s.name), ["fx", "other"]);
    await Deno.writeTextFile(`${dirs.ws}/Cargo.lock`, cargoLock({ serde: "1.0.1" }) + "\n# edited\n");
    const seen = await waitFor(async () => {
      await catalog.refreshIfChanged({ trustWatch: true });
      return catalog.workspace.dependencies.some((d) => d.version === "1.0.1");
    }, 5_000);
    assert.ok(seen, "the edited Cargo.lock was not seen");
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("refreshIfChanged({ trustWatch }) sees a config.toml written just before, without waiting for the watch", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  const catalog = await openCatalog(dirs);
  try {
    assert.equal(await catalog.refreshIfChanged({ trustWatch: true }), false);
    await Deno.writeTextFile(`${dirs.home}/config.toml`, "[mcp]\nread-only = true\n");
    assert.equal(await catalog.refreshIfChanged({ trustWatch: true }), true);
    assert.equal(catalog.config.readOnly, true);
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("the periodic look (no trustWatch) stats nothing while a request's watch saw no event, and still sees an edit", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  const catalog = await openCatalog(dirs);
  const { stat, statSync } = Deno;
  let stats = 0;
  try {
    assert.equal(await catalog.refreshIfChanged({ trustWatch: true }), false); // a request sets the watch up
    assert.equal(await catalog.refreshIfChanged(), false); // exact: the watch's first look
    Object.assign(Deno, {
      stat: (path: string | URL) => (stats++, stat(path)),
      statSync: (path: string | URL) => (stats++, statSync(path)),
    });
    for (let i = 0; i < 5; i++) assert.equal(await catalog.refreshIfChanged(), false);
    assert.equal(stats, 0, "an idle periodic look stat'ed the watched files");
    await writePlugin(dirs.home, "other", fixtureServerToml("other"));
    assert.ok(
      await waitFor(async () => await catalog.refreshIfChanged(), 5_000),
      "a new plugin was not seen",
    );
    assert.deepEqual(catalog.servers.map((s) => s.name), ["fx", "other"]);
  } finally {
    Object.assign(Deno, { stat, statSync });
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("a request's own look stats at most SYNC_CHECKED_MAX files however many members; an edited member is seen through the watch", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  await Deno.writeTextFile(
    `${dirs.ws}/Cargo.toml`,
    '[package]\nname = "demo"\nversion = "0.1.0"\n\n[workspace]\nmembers = ["crates/*"]\n',
  );
  for (let i = 0; i < 150; i++) {
    await Deno.mkdir(`${dirs.ws}/crates/m${i}`, { recursive: true });
    await Deno.writeTextFile(
      `${dirs.ws}/crates/m${i}/Cargo.toml`,
      `[package]\nname = "m${i}"\nversion = "0.1.0"\n`,
    );
  }
  const catalog = await openCatalog(dirs);
  const { statSync } = Deno;
  let stats = 0;
  try {
    assert.equal(await catalog.refreshIfChanged({ trustWatch: true }), false);
    assert.equal(await catalog.refreshIfChanged({ trustWatch: true }), false);
    Object.assign(Deno, { statSync: (path: string | URL) => (stats++, statSync(path)) });
    assert.equal(await catalog.refreshIfChanged({ trustWatch: true }), false);
    assert.ok(stats > 0 && stats <= SYNC_CHECKED_MAX, `a request stat'ed ${stats} files`);
    Object.assign(Deno, { statSync });
    await Deno.writeTextFile(
      `${dirs.ws}/crates/m140/SYMPOSIUM.toml`,
      '[[mcp_servers]]\nname = "m"\ncommand = "true"\n',
    );
    assert.ok(
      await waitFor(async () => await catalog.refreshIfChanged({ trustWatch: true }), 5_000),
      "a member's new manifest was not seen",
    );
  } finally {
    Object.assign(Deno, { statSync });
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("a request's look stats a settled folder instead of its missing files, and sees a file created there", async () => {
  const { root, ws, home, loaded } = await settledWorld([`trusted.toml`, `SYMPOSIUM.toml`]);
  await Deno.writeTextFile(`${home}/config.toml`, "");
  const hourAgo = new Date(Date.now() - 3_600_000);
  Deno.utimeSync(ws, hourAgo, hourAgo);
  Deno.utimeSync(home, hourAgo, hourAgo);
  // Setting the times is a status change now (which `touch -d` cannot set back): looks as if 3 s on.
  const later = Date.now() + 3_000;
  const { statSync } = Deno;
  const stated: string[] = [];
  try {
    const missing = new MissingFiles();
    const first = filesFingerprintSync(loaded, ws, missing, later);
    assert.equal(first, filesFingerprintSync(loaded, ws), "the text differs from an exact look's");
    assert.match(first, /trusted\.toml:missing/);
    Object.assign(Deno, { statSync: (path: string | URL) => (stated.push(String(path)), statSync(path)) });
    assert.equal(filesFingerprintSync(loaded, ws, missing, later), first);
    assert.ok(!stated.includes(`${home}/trusted.toml`), `stat'ed ${stated.join(", ")}`);
    assert.ok(!stated.includes(`${ws}/SYMPOSIUM.toml`), `stat'ed ${stated.join(", ")}`);
    assert.ok(stated.includes(home) && stated.includes(ws), `stat'ed ${stated.join(", ")}`);
    // Created just before a request: its folder's time changed, so the file is stat'ed and seen.
    await Deno.writeTextFile(`${home}/trusted.toml`, "");
    const next = filesFingerprintSync(loaded, ws, missing, later);
    assert.notEqual(next, first);
    assert.equal(next, filesFingerprintSync(loaded, ws));
    // A folder that changed just now is not settled: its missing files are stat'ed at every look.
    stated.length = 0;
    filesFingerprintSync(loaded, ws, missing, later);
    filesFingerprintSync(loaded, ws, missing, later);
    assert.equal(
      stated.filter((p) => p === `${ws}/SYMPOSIUM.toml`).length,
      0,
      "a settled folder's file stat'ed",
    );
    Deno.utimeSync(ws, new Date(), new Date());
    stated.length = 0;
    filesFingerprintSync(loaded, ws, missing);
    filesFingerprintSync(loaded, ws, missing);
    assert.equal(
      stated.filter((p) => p === `${ws}/SYMPOSIUM.toml`).length,
      2,
      "a folder just changed was trusted",
    );
  } finally {
    Object.assign(Deno, { statSync });
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a request's look sees the target of a dangling link at a top folder's file appear (config.toml → dotfiles)", async () => {
  const dirs = await makeDirs();
  await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
  // A dotfiles manager links config.toml to a file that is not there yet (another branch, a later sync).
  await Deno.mkdir(`${dirs.root}/dotfiles`);
  await Deno.symlink(`${dirs.root}/dotfiles/config.toml`, `${dirs.home}/config.toml`);
  const hourAgo = new Date(Date.now() - 3_600_000);
  Deno.utimeSync(dirs.home, hourAgo, hourAgo); // settled: its missing files are remembered
  const catalog = await openCatalog(dirs);
  try {
    assert.equal(await catalog.refreshIfChanged({ trustWatch: true }), false);
    assert.equal(await catalog.refreshIfChanged({ trustWatch: true }), false);
    // The link's target appears outside every watched folder: the config folder's time does not change.
    await Deno.writeTextFile(`${dirs.root}/dotfiles/config.toml`, "[mcp]\nread-only = true\n");
    assert.equal(
      await catalog.refreshIfChanged({ trustWatch: true }),
      true,
      "the new config.toml went unseen",
    );
    assert.equal(catalog.config.readOnly, true);
  } finally {
    await catalog.close();
    await dirs.remove();
  }
});

Deno.test("a request's look sees a file created in a settled folder whose modification time was then set back (touch -d)", async () => {
  const { root, ws, home, loaded } = await settledWorld([`trusted.toml`]);
  const hourAgo = new Date(Date.now() - 3_600_000);
  Deno.utimeSync(home, hourAgo, hourAgo);
  // The folder's status change time (read in whole seconds) cannot be set back: looks as if 3 s on find the
  // folder settled, and the file is made in a later second than its last status change.
  const changedMs = Deno.statSync(home).ctime!.getTime();
  const later = Date.now() + 3_000;
  try {
    const missing = new MissingFiles();
    const first = filesFingerprintSync(loaded, ws, missing, later);
    assert.match(first, /trusted\.toml:missing/);
    assert.equal(filesFingerprintSync(loaded, ws, missing, later), first);
    while (Date.now() < changedMs + 1_000) await new Promise((resolve) => setTimeout(resolve, 50));
    await Deno.writeTextFile(`${home}/config.toml`, ""); // any file, then the folder's time set back
    await Deno.writeTextFile(`${home}/trusted.toml`, "");
    Deno.utimeSync(home, hourAgo, hourAgo);
    const next = filesFingerprintSync(loaded, ws, missing, later);
    assert.equal(next, filesFingerprintSync(loaded, ws), "the new trusted.toml went unseen");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

/**
 * A workspace `ws` (with its `Cargo.toml`) and a config folder `home` under a new temp folder `root`, and a
 * resolution that watches the top files `names` (`trusted.toml` in `home`, any other in `ws`).
 */
async function settledWorld(names: string[]) {
  const root = await Deno.makeTempDir();
  const ws = `${root}/ws`, home = `${root}/home`;
  await Deno.mkdir(ws);
  await Deno.mkdir(home);
  await Deno.writeTextFile(`${ws}/Cargo.toml`, '[package]\nname = "demo"\n');
  const files = names.map((name) => name === "trusted.toml" ? `${home}/${name}` : `${ws}/${name}`);
  const loaded = {
    workspace: { root: ws, manifests: [`${ws}/Cargo.toml`] },
    configDir: home,
    sources: { watch: { files, flat: [], deep: [] } },
  } as unknown as LoadedResolution;
  return { root, ws, home, loaded };
}
