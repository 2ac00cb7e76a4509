import assert from "node:assert/strict";
import { UserError } from "../../lib/diagnostics.ts";
import { writeFileAtomic } from "../../lib/sync/atomic_write.ts";
import { cleanUpKilledWrites } from "../../lib/sync/stale_files.ts";
import { denoWritableFileSystem, type PathStatus } from "../../lib/sync/writable_file_system.ts";
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

Deno.test("writeFileAtomic() creates the missing target of a dangling symlink, and the link stays a link", async () => {
  const root = await Deno.makeTempDir();
  try {
    Deno.symlinkSync(`${root}/dotfiles/zed/settings.json`, `${root}/settings.json`);
    const result = await writeFileAtomic(`${root}/settings.json`, "{}\n", { expected: null });
    assert.ok(Deno.lstatSync(`${root}/settings.json`).isSymlink);
    assert.equal(Deno.readTextFileSync(`${root}/dotfiles/zed/settings.json`), "{}\n");
    assert.deepEqual(result, {
      path: `${root}/dotfiles/zed/settings.json`,
      backupPath: undefined,
      created: true,
    });
    assert.deepEqual(listDir(`${root}/dotfiles/zed`), ["settings.json"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("writeFileAtomic() refuses a read-only file unless forced, and keeps it read-only", async () => {
  const root = await Deno.makeTempDir();
  try {
    const path = `${root}/mcp.json`;
    Deno.writeTextFileSync(path, "mine");
    Deno.chmodSync(path, 0o444);
    const error = await writeFileAtomic(path, "ours", { expected: "mine" }).catch((e) => e);
    assert.ok(error instanceof UserError);
    assert.equal(error.code, "SYNC_READ_ONLY");
    assert.match(error.message, /the file is read-only/);
    assert.match(error.hint ?? "", /--force/);
    assert.equal(Deno.readTextFileSync(path), "mine");
    assert.deepEqual(listDir(root), ["mcp.json"]);
    await writeFileAtomic(path, "ours", { expected: "mine", force: true });
    assert.equal(Deno.readTextFileSync(path), "ours");
    assert.equal(Deno.statSync(path).mode! & 0o777, 0o444);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

/** Busy-waits up to `maxMs` (random): timers are too coarse for sub-millisecond pauses. */
function jitter(maxMs: number): void {
  const until = performance.now() + Math.random() * maxMs;
  while (performance.now() < until) {
    // Waiting on purpose.
  }
}

/**
 * The real file system, with each rename and link a little late (0-0.5 ms), as on a busy disk:
 * it widens every window between a check and the step that relies on it.
 */
const slowFs = {
  ...denoWritableFileSystem,
  rename: (from: string, to: string) => (jitter(0.5), Deno.rename(from, to)),
  link: (from: string, to: string) => (jitter(0.5), Deno.link(from, to)),
};

/*
 * The other program replaces the file 20 times in a burst while ours swaps. Ours never takes the
 * file away (an agent reading it then would start from an empty config), and a write of the other
 * program that lands before ours checks the name one last time is kept (its rename and ours are
 * a few microseconds apart; only a write landing in between is replaced, as with any rename).
 */
Deno.test("writeFileAtomic() never leaves the file missing while another process rewrites it, in 100 races", async () => {
  const root = await Deno.makeTempDir();
  const path = `${root}/settings.json`;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "-P",
      "--config",
      `${REPO_ROOT}/deno.json`,
      `${REPO_ROOT}/testdata/sync/race_writer.ts`,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  const nextLine = async (): Promise<string> => {
    while (!pending.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) throw new Error("the race writer ended early");
      pending += value;
    }
    const line = pending.slice(0, pending.indexOf("\n"));
    pending = pending.slice(line.length + 1);
    return line;
  };
  try {
    let lost = 0;
    let absent = 0;
    let oursLanded = 0;
    let theirsKept = 0;
    for (let i = 0; i < 100; i++) {
      Deno.writeTextFileSync(path, `base-${i}`);
      const before = Deno.readTextFileSync(path);
      // The other program starts writing just as ours is ready to replace the file, at a random
      // offset (0-0.6 ms) from the final check, so its writes land before, inside and after it.
      const go = async () => {
        await writer.write(new TextEncoder().encode(`go ${i} ${path}\n`));
        jitter(0.6);
      };
      try {
        await writeFileAtomic(path, `ours-${i}`, {
          expected: before,
          backup: false,
          beforeRename: go,
          fs: slowFs,
        });
        oursLanded++;
      } catch (error) {
        assert.ok(error instanceof UserError && error.code === "SYNC_CONFIG_CHANGED", String(error));
        theirsKept++;
      }
      const [word, n, childSawOurs, childFoundNone] = (await nextLine()).split(" ");
      if (childFoundNone === "1") absent++;
      assert.deepEqual([word, n], ["done", String(i)]);
      // Lost: we replaced a write of the other program that we never read (it found ours on top of
      // its own), or ours is what stays although it wrote after our read.
      if (childSawOurs === "1" || Deno.readTextFileSync(path) === `ours-${i}`) lost++;
    }
    assert.equal(
      absent,
      0,
      `missing in ${absent} of 100 (lost ${lost}, ours landed first ${oursLanded}, theirs kept ${theirsKept})`,
    );
    assert.deepEqual(listDir(root).filter((n) => !n.startsWith("settings.json.other-")), ["settings.json"]);
  } finally {
    await writer.close();
    await lines.cancel();
    await child.status;
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("cleanUpKilledWrites() puts back a file a killed swap had moved aside, and removes only dead runs' files", async () => {
  const root = await Deno.makeTempDir();
  try {
    const dead = 2 ** 22 + 7; // above Linux's largest pid_max: no process has it
    const path = `${root}/config.toml`;
    Deno.writeTextFileSync(`${root}/.config.toml.${dead}-0123456789abcdef.aside`, "model = 'o3'\n");
    Deno.writeTextFileSync(`${root}/.config.toml.${dead}-fedcba9876543210.tmp`, "half");
    Deno.writeTextFileSync(`${root}/.config.toml.${Deno.pid}-aaaaaaaaaaaaaaaa.tmp`, "a live write");
    Deno.writeTextFileSync(`${root}/.other.toml.${dead}-bbbbbbbbbbbbbbbb.tmp`, "not this file's");
    Deno.writeTextFileSync(`${root}/.config.toml.tmp`, "not our pattern");
    const cleanup = await cleanUpKilledWrites(path, { fs: denoWritableFileSystem });
    assert.equal(cleanup.restored, path);
    assert.deepEqual(cleanup.removed.sort(), [
      `${root}/.config.toml.${dead}-0123456789abcdef.aside`,
      `${root}/.config.toml.${dead}-fedcba9876543210.tmp`,
    ]);
    assert.equal(Deno.readTextFileSync(path), "model = 'o3'\n");
    assert.deepEqual(
      listDir(root),
      [
        ".config.toml.tmp",
        `.config.toml.${Deno.pid}-aaaaaaaaaaaaaaaa.tmp`,
        `.other.toml.${dead}-bbbbbbbbbbbbbbbb.tmp`,
        "config.toml",
      ].sort(),
    );
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
    // The next run removes the dead run's temp file (its process is gone) and still works.
    const cleanup = await cleanUpKilledWrites(path, { fs: denoWritableFileSystem });
    assert.deepEqual(cleanup, { removed: [temp], restored: undefined });
    assert.deepEqual(listDir(root), ["settings.json"]);
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

Deno.test("writeFileAtomic() keeps a version another program puts in place right before the final rename", async () => {
  for (const how of ["replaced", "rewritten in place"] as const) {
    const root = await Deno.makeTempDir();
    try {
      const path = `${root}/mcp.json`;
      Deno.writeTextFileSync(path, "what we read");
      const fs = {
        ...denoWritableFileSystem,
        renameIfUnchanged: (from: string, to: string, expected: PathStatus) => {
          // The other program writes after our content check, just before our rename.
          if (how === "replaced") {
            Deno.writeTextFileSync(`${root}/theirs`, "theirs, longer");
            Deno.renameSync(`${root}/theirs`, path);
          } else {
            Deno.writeTextFileSync(path, "theirs, longer");
          }
          return denoWritableFileSystem.renameIfUnchanged(from, to, expected);
        },
      };
      const error = await writeFileAtomic(path, "ours", { expected: "what we read", fs }).catch((e) => e);
      assert.ok(error instanceof UserError, `${how}: ${error}`);
      assert.equal(error.code, "SYNC_CONFIG_CHANGED");
      assert.equal(Deno.readTextFileSync(path), "theirs, longer", how);
      assert.deepEqual(listDir(root), ["mcp.json", "mcp.json.bak"], how);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  }
});

Deno.test("writeFileAtomic() keeps the file in place throughout, and the replaced content as the .bak", async () => {
  const root = await Deno.makeTempDir();
  try {
    const path = `${root}/.claude.json`;
    Deno.writeTextFileSync(path, "one");
    const seen: string[] = [];
    const look = () => seen.push(Deno.readTextFileSync(path)); // throws when the file is missing
    const fs = {
      ...denoWritableFileSystem,
      link: async (a: string, b: string) => {
        look();
        await Deno.link(a, b);
        look();
      },
      rename: async (a: string, b: string) => {
        look();
        await Deno.rename(a, b);
        look();
      },
      readBytes: async (p: string) => (look(), await Deno.readFile(p)),
      renameIfUnchanged: async (a: string, b: string, s: PathStatus) => {
        look();
        const done = await denoWritableFileSystem.renameIfUnchanged(a, b, s);
        look();
        return done;
      },
    };
    const result = await writeFileAtomic(path, "two", { expected: "one", fs });
    assert.equal(result.backupPath, `${path}.bak`);
    assert.equal(Deno.readTextFileSync(`${path}.bak`), "one");
    assert.equal(Deno.readTextFileSync(path), "two");
    assert.deepEqual([...new Set(seen)], ["one", "two"]);
    assert.deepEqual(listDir(root), [".claude.json", ".claude.json.bak"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
