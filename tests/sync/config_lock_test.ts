import assert from "node:assert/strict";
import { UserError } from "../../lib/diagnostics.ts";
import { lockConfigFile, lockPathFor } from "../../lib/sync/config_lock.ts";
import { REPO_ROOT } from "../_fakes_sync.ts";

function listDir(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

Deno.test("lockConfigFile() waits for the holder, then gives up naming its process id", async () => {
  const root = await Deno.makeTempDir();
  try {
    const target = `${root}/.claude.json`;
    const held = await lockConfigFile(target);
    assert.equal(held.path, `${root}/..claude.json.cargo-agents.lock`);
    assert.equal(Deno.readTextFileSync(held.path), `${Deno.pid}\n`);
    const error = await lockConfigFile(target, { waitMs: 200 }).catch((e) => e);
    assert.ok(error instanceof UserError, String(error));
    assert.equal(error.code, "SYNC_LOCKED");
    assert.match(error.message, new RegExp(`another cargo-agents sync \\(process ${Deno.pid}\\)`));
    assert.match(error.message, /\.claude\.json/);
    assert.match(error.hint ?? "", /run `cargo-agents sync` again; the file was left untouched/);
    // A waiter gets it once the holder lets go.
    const waiting = lockConfigFile(target, { waitMs: 10_000 });
    setTimeout(() => held.release(), 100);
    const next = await waiting;
    assert.equal(Deno.readTextFileSync(next.path), `${Deno.pid}\n`);
    await next.release();
    assert.deepEqual(listDir(root), []);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("lockConfigFile() takes over the lock of a killed run at once (the kernel let it go)", async () => {
  const root = await Deno.makeTempDir();
  try {
    const target = `${root}/settings.json`;
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        "--config",
        `${REPO_ROOT}/deno.json`,
        `import { lockConfigFile } from "${REPO_ROOT}/lib/sync/config_lock.ts";
         await lockConfigFile(${JSON.stringify(target)});
         console.log("held");
         setInterval(() => {}, 1000);`,
      ],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let said = "";
    while (!said.includes("held")) {
      const { value, done } = await reader.read();
      if (done) break;
      said += value;
    }
    await reader.cancel();
    assert.equal(Deno.readTextFileSync(lockPathFor(target)), `${child.pid}\n`);
    const busy = await lockConfigFile(target, { waitMs: 100 }).catch((e) => e);
    assert.match(String(busy?.message), new RegExp(`process ${child.pid}`));
    child.kill("SIGKILL");
    await child.status;
    // Its lock file is still there, with its process id: stale, and taken over at once.
    assert.equal(Deno.readTextFileSync(lockPathFor(target)), `${child.pid}\n`);
    const held = await lockConfigFile(target, { waitMs: 0 });
    assert.equal(Deno.readTextFileSync(held.path), `${Deno.pid}\n`);
    await held.release();
    assert.deepEqual(listDir(root), []);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("lockConfigFile() never opens a planted lock file that is a link (it would truncate the file it leads to)", async () => {
  const root = await Deno.makeTempDir();
  try {
    Deno.mkdirSync(`${root}/repo`);
    Deno.writeTextFileSync(`${root}/bashrc`, "export PATH=mine\n");
    Deno.symlinkSync(`${root}/bashrc`, `${root}/repo/..mcp.json.cargo-agents.lock`);
    Deno.symlinkSync(`${root}/nothing-yet`, `${root}/repo/..other.json.cargo-agents.lock`);
    for (const name of [".mcp.json", ".other.json"]) {
      const error = await lockConfigFile(`${root}/repo/${name}`, { waitMs: 0 }).catch((e) => e);
      assert.ok(error instanceof UserError, String(error));
      assert.equal(error.code, "SYNC_NOT_A_FILE");
      assert.match(error.message, /is a symbolic link/);
    }
    assert.equal(Deno.readTextFileSync(`${root}/bashrc`), "export PATH=mine\n");
    assert.deepEqual(listDir(root), ["bashrc", "repo"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("lockConfigFile() stops waiting when its signal aborts (Ctrl-C)", async () => {
  const root = await Deno.makeTempDir();
  try {
    const target = `${root}/mcp.json`;
    const held = await lockConfigFile(target);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await lockConfigFile(target, { waitMs: 60_000, signal: controller.signal }).catch((e) => e);
    assert.ok(error instanceof UserError, String(error));
    assert.equal(error.code, "SYNC_INTERRUPTED");
    await held.release();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
