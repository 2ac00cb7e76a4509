import assert from "node:assert/strict";
import {
  ensurePrivateDir,
  inspectPrivateDir,
  listOwnFiles,
  PrivateDirError,
  writePrivateFile,
} from "../../lib/secrets/private_dir.ts";

async function withTempDir(fn: (dir: string) => Promise<void> | void): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "private_dir_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const isWindows = Deno.build.os === "windows";

Deno.test("ensurePrivateDir() creates a missing folder (and its parents) with mode 0700", async () => {
  if (isWindows) return;
  await withTempDir((dir) => {
    const previous = Deno.umask(0o000);
    try {
      assert.deepEqual(ensurePrivateDir(`${dir}/cfg/cache/tools`), { created: true });
    } finally {
      Deno.umask(previous);
    }
    assert.equal(Deno.statSync(`${dir}/cfg/cache/tools`).mode! & 0o777, 0o700);
    assert.deepEqual(ensurePrivateDir(`${dir}/cfg/cache/tools`), { created: false });
  });
});

Deno.test("ensurePrivateDir() reports but never chmods an existing folder others can read", async () => {
  if (isWindows) return;
  await withTempDir((dir) => {
    Deno.mkdirSync(`${dir}/logs`);
    Deno.chmodSync(`${dir}/logs`, 0o755);
    assert.deepEqual(ensurePrivateDir(`${dir}/logs`), { created: false, looseMode: "755" });
    assert.equal(Deno.statSync(`${dir}/logs`).mode! & 0o777, 0o755);
  });
});

Deno.test("ensurePrivateDir() refuses a symbolic link, naming the path, without touching its target", async () => {
  if (isWindows) return;
  await withTempDir((dir) => {
    Deno.mkdirSync(`${dir}/target`);
    Deno.chmodSync(`${dir}/target`, 0o755);
    Deno.symlinkSync(`${dir}/target`, `${dir}/cache`);
    assert.throws(
      () => ensurePrivateDir(`${dir}/cache`),
      (e: unknown) =>
        e instanceof PrivateDirError && e.code === "PRIVATE_DIR_SYMLINK" && e.path === `${dir}/cache` &&
        e.message ===
          `Cannot use "${dir}/cache": it is a symbolic link; cargo-agents keeps secrets there and does not follow links out of its folder` &&
        e.hint!.includes(`rm ${dir}/cache`),
    );
    assert.equal(Deno.statSync(`${dir}/target`).mode! & 0o777, 0o755);
    Deno.symlinkSync(`${dir}/missing`, `${dir}/dangling`);
    assert.throws(
      () => ensurePrivateDir(`${dir}/dangling`),
      (e: unknown) => e instanceof PrivateDirError && e.code === "PRIVATE_DIR_SYMLINK",
    );
    assert.throws(
      () => Deno.statSync(`${dir}/missing`),
      Deno.errors.NotFound,
      "a dangling link is not followed",
    );
  });
});

Deno.test("ensurePrivateDir() refuses a folder that belongs to another user", async () => {
  if (isWindows) return;
  await withTempDir((dir) => {
    let foreign: string;
    if (Deno.uid() === 0) {
      foreign = `${dir}/credentials`;
      Deno.mkdirSync(foreign);
      Deno.chownSync(foreign, 65534, 65534);
    } else {
      foreign = "/"; // Owned by root, never by a test user.
    }
    assert.throws(
      () => ensurePrivateDir(foreign),
      (e: unknown) =>
        e instanceof PrivateDirError && e.code === "PRIVATE_DIR_NOT_OWNED" &&
        e.message.startsWith(`Cannot use "${foreign}": it belongs to another user (uid `),
    );
    assert.throws(() => inspectPrivateDir(foreign), PrivateDirError);
  });
});

Deno.test("ensurePrivateDir() refuses a file where the folder should be", async () => {
  await withTempDir((dir) => {
    Deno.writeTextFileSync(`${dir}/logs`, "");
    assert.throws(
      () => ensurePrivateDir(`${dir}/logs`),
      (e: unknown) => e instanceof PrivateDirError && e.code === "PRIVATE_DIR_NOT_A_FOLDER",
    );
  });
});

Deno.test("inspectPrivateDir() is null for a missing folder and creates nothing", async () => {
  await withTempDir((dir) => {
    assert.equal(inspectPrivateDir(`${dir}/logs`), null);
    assert.throws(() => Deno.statSync(`${dir}/logs`), Deno.errors.NotFound);
  });
});

Deno.test("writePrivateFile() writes 0600 and replaces a link at the target instead of following it", async () => {
  if (isWindows) return;
  await withTempDir(async (dir) => {
    Deno.writeTextFileSync(`${dir}/victim.txt`, "untouched");
    Deno.mkdirSync(`${dir}/private`);
    Deno.symlinkSync(`${dir}/victim.txt`, `${dir}/private/entry.json`);
    const previous = Deno.umask(0o000);
    try {
      await writePrivateFile(`${dir}/private`, "entry.json", new TextEncoder().encode("{}"));
    } finally {
      Deno.umask(previous);
    }
    assert.equal(Deno.readTextFileSync(`${dir}/victim.txt`), "untouched");
    const info = Deno.lstatSync(`${dir}/private/entry.json`);
    assert.ok(info.isFile && !info.isSymlink);
    assert.equal(info.mode! & 0o777, 0o600);
    assert.deepEqual([...Deno.readDirSync(`${dir}/private`)].map((e) => e.name), ["entry.json"]);
  });
});

Deno.test("listOwnFiles() lists only regular files matching the name pattern, never links or folders", async () => {
  if (isWindows) return;
  await withTempDir((dir) => {
    Deno.writeTextFileSync(`${dir}/a.json`, "");
    Deno.writeTextFileSync(`${dir}/b.txt`, "");
    Deno.mkdirSync(`${dir}/c.json`);
    Deno.symlinkSync(`${dir}/a.json`, `${dir}/d.json`);
    assert.deepEqual(listOwnFiles(dir, /\.json$/).map((f) => f.name), ["a.json"]);
    assert.deepEqual(listOwnFiles(`${dir}/missing`, /./), []);
  });
});
