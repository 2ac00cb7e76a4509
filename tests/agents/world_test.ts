// `runBounded()` leaves nothing running: the Cline CLI hub daemon (`cline --cline-hub-daemon … --port …`)
// outlived `deno task test:agents` by hours, because it leaves its parent's process group.
import assert from "node:assert/strict";
import { runBounded } from "./_world.ts";

function isAlive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

Deno.test("runBounded() ends what its command started, in its group and in a session of its own", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agents-world-" });
  try {
    // One child stays in the group, one leaves it with setsid (as a daemon does); both print their pid.
    const script = "sleep 60 >/dev/null 2>&1 & echo $!; " +
      "setsid sh -c 'sleep 61 >/dev/null 2>&1 & echo $!'; sleep 0.3; exit 0";
    const out = await runBounded("sh", ["-c", script], {
      cwd: dir,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
      timeoutMs: 20_000,
    });
    assert.equal(out.code, 0, out.stderr);
    const pids = out.stdout.trim().split(/\s+/).map(Number);
    assert.equal(pids.length, 2, out.stdout);
    for (let i = 0; i < 50 && pids.some(isAlive); i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(pids.filter(isAlive), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
