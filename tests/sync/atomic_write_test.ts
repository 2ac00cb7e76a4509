import assert from "node:assert/strict";
import { UserError } from "../../lib/diagnostics.ts";
import { writeFileAtomic } from "../../lib/sync/atomic_write.ts";
import { denoWritableFileSystem } from "../../lib/sync/writable_file_system.ts";
import { REPO_ROOT } from "../_fakes_sync.ts";

function listDir(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

Deno.test("writeFileAtomic() creates missing folders and the file", async () => {
  const root = await Deno.makeTempDir();
  try {
    const path = `${root}/a/b/settings.json`;
    const result = await writeFileAtomic(path, "{}\n", { expected: null });
    assert.equal(Deno.readTextFileSync(path), "{}\n");
    assert.deepEqual(result, { path, backupPath: undefined, created: true });
    assert.deepEqual(listDir(`${root}/a/b`), ["settings.json"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("writeFileAtomic() keeps the permission bits and one .bak of the previous content", async () => {
  const root = await Deno.makeTempDir();
  try {
    const path = `${root}/.claude.json`;
    Deno.writeTextFileSync(path, "one");
    Deno.chmodSync(path, 0o600);
    await writeFileAtomic(path, "two", { expected: "one" });
    const result = await writeFileAtomic(path, "three", { expected: "two" });
    assert.equal(Deno.readTextFileSync(path), "three");
    assert.equal(Deno.readTextFileSync(`${path}.bak`), "two");
    assert.equal(result.backupPath, `${path}.bak`);
    assert.equal(Deno.statSync(path).mode! & 0o777, 0o600);
    assert.equal(Deno.statSync(`${path}.bak`).mode! & 0o777, 0o600);
    assert.deepEqual(listDir(root), [".claude.json", ".claude.json.bak"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("writeFileAtomic() replaces a symlink's target and leaves the link in place", async () => {
  const root = await Deno.makeTempDir();
  try {
    Deno.mkdirSync(`${root}/dotfiles`);
    Deno.writeTextFileSync(`${root}/dotfiles/mcp.json`, "old");
    Deno.symlinkSync(`${root}/dotfiles/mcp.json`, `${root}/mcp.json`);
    const result = await writeFileAtomic(`${root}/mcp.json`, "new");
    assert.ok(Deno.lstatSync(`${root}/mcp.json`).isSymlink);
    assert.equal(Deno.readTextFileSync(`${root}/dotfiles/mcp.json`), "new");
    assert.equal(result.path, await Deno.realPath(`${root}/dotfiles/mcp.json`));
    assert.equal(Deno.readTextFileSync(`${root}/dotfiles/mcp.json.bak`), "old");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("writeFileAtomic() writes nothing when another program changed the file since it was read", async () => {
  const root = await Deno.makeTempDir();
  try {
    const path = `${root}/mcp.json`;
    Deno.writeTextFileSync(path, "changed by the agent");
    const error = await writeFileAtomic(path, "ours", { expected: "what we read", backup: false }).catch((
      e,
    ) => e);
    assert.ok(error instanceof UserError);
    assert.equal(error.code, "SYNC_CONFIG_CHANGED");
    assert.equal(Deno.readTextFileSync(path), "changed by the agent");
    assert.deepEqual(listDir(root), ["mcp.json"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("writeFileAtomic() removes its temp file and keeps the original when the rename fails", async () => {
  const root = await Deno.makeTempDir();
  try {
    const path = `${root}/mcp.json`;
    Deno.writeTextFileSync(path, "original");
    const fs = {
      ...denoWritableFileSystem,
      rename: (from: string, to: string) =>
        to === path
          ? Promise.reject(new Deno.errors.PermissionDenied("rename refused"))
          : Deno.rename(from, to),
    };
    const error = await writeFileAtomic(path, "new", { fs }).catch((e) => e);
    assert.ok(error instanceof UserError);
    assert.equal(error.code, "SYNC_WRITE_FAILED");
    assert.match(error.message, /rename refused/);
    assert.ok(error.cause instanceof Deno.errors.PermissionDenied);
    assert.equal(Deno.readTextFileSync(path), "original");
    assert.deepEqual(listDir(root), ["mcp.json", "mcp.json.bak"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("writeFileAtomic() leaves the original intact when the process is killed between write and rename", async () => {
  const root = await Deno.makeTempDir();
  const path = `${root}/settings.json`;
  const original = '{\n  // mine\n  "theme": "dark"\n}\n';
  Deno.writeTextFileSync(path, original);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-P",
      "--config",
      `${REPO_ROOT}/deno.json`,
      `${REPO_ROOT}/testdata/sync/crash_child.ts`,
      path,
      "NEW",
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
    }
    await reader.cancel();
    const temp = /^PAUSED (.+)$/m.exec(out)?.[1];
    assert.ok(temp !== undefined, `child did not pause: ${out}`);
    assert.equal(Deno.readTextFileSync(temp), "NEW");
    assert.equal(Deno.readTextFileSync(path), original);
    child.kill("SIGKILL");
    const status = await child.status;
    assert.equal(status.signal, "SIGKILL");
    assert.equal(Deno.readTextFileSync(path), original);
    // A later run still works; the dead run's temp file is left beside it, never in its place.
    await writeFileAtomic(path, "later", { expected: original });
    assert.equal(Deno.readTextFileSync(path), "later");
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already dead: the normal path killed it.
    }
    await child.status;
    await Deno.remove(root, { recursive: true });
  }
});
