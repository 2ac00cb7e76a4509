// `mcp exec` ends within `shutdown-grace-secs` of its script's end even when the script left large calls
// queued for a stdio server too busy to read them (a real `mcp exec`, a real fixture server).
import assert from "node:assert/strict";
import { sourceRunArgs } from "../../lib/self_command.ts";
import { REPO_ROOT } from "../_fakes_foundation.ts";
import { fixtureServerToml, makeDirs, writePlugin } from "../_fakes_meta.ts";
import { isAlive } from "../_fakes_backends.ts";

Deno.test("mcp exec kills a server that does not read 20 queued 2 MiB calls after the grace, not after it reads them", async () => {
  const dirs = await makeDirs();
  const starts = `${dirs.root}/starts`;
  await writePlugin(
    dirs.home,
    "fx",
    fixtureServerToml("fx", ["--stall-on-call-ms=90000", `--starts-file=${starts}`]),
  );
  await Deno.writeTextFile(
    `${dirs.home}/config.toml`,
    "[mcp]\nscript-timeout-secs = 4\nshutdown-grace-secs = 1\n",
  );
  await Deno.writeTextFile(
    `${dirs.root}/script.js`,
    `const big = "x".repeat(2 * 1024 * 1024);
     await Promise.all(Array.from({ length: 20 }, () => fx.echo({ message: big }).catch(() => {})));
     return "unreachable";`,
  );
  const env: Record<string, string> = { NO_COLOR: "1", SYMPOSIUM_HOME: dirs.home };
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  const t0 = Date.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...sourceRunArgs(REPO_ROOT).slice(1), "mcp", "exec", `${dirs.root}/script.js`],
    cwd: dirs.ws,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const killer = setTimeout(() => child.kill("SIGKILL"), 45_000);
  const output = await child.output();
  clearTimeout(killer);
  const took = Date.now() - t0;
  const pid = Number((await Deno.readTextFile(starts)).trim().split(" ")[1]);
  const serverAlive = await isAlive(pid);
  if (serverAlive) Deno.kill(pid, "SIGKILL");
  await dirs.remove();
  const stdout = new TextDecoder().decode(output.stdout);
  // The 4 s deadline ends the script, or (tool-call-timeout-secs is lowered to 3 s) every queued call has
  // timed out by then and the script returns: either way the run ended while the calls were unread.
  assert.match(stdout + new TextDecoder().decode(output.stderr), /script_timeout|"unreachable"/);
  // 4 s script + 1 s grace (+ Deno start-up on a loaded machine); the server stalls 90 s.
  assert.ok(took < 30_000, `mcp exec took ${took} ms`);
  assert.equal(serverAlive, false, "the stalled server outlived mcp exec");
});
