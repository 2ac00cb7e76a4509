// `cargo agents doctor` in throw-away worlds, run as a user runs it: a real fixture server, one that
// exits at once, an agent config without our entry then synced, an untrusted workspace manifest, an
// expired sign-in; the text lines, the `--json` shape and the exit codes.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runMain } from "../_fakes_foundation.ts";
import { fixtureServerToml, makeDirs, type TestDirs, writePlugin } from "../_fakes_meta.ts";
import type { DoctorReport } from "../../lib/commands/doctor.ts";

/** What no printed line may hold raw: C0 controls but newline, DEL, C1. */
// deno-lint-ignore no-control-regex -- control characters are what this test looks for
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

let denoDir: string | undefined;
/** The Deno cache of this run (the temp HOME would otherwise start an empty one). */
async function cacheDir(): Promise<string> {
  if (denoDir) return denoDir;
  const fromEnv = Deno.env.get("DENO_DIR");
  if (fromEnv) return denoDir = fromEnv;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  })
    .output();
  return denoDir = JSON.parse(new TextDecoder().decode(out.stdout)).denoDir as string;
}

/** A world: HOME (with Gemini's settings file, no entry), config dir, workspace, the fixture server. */
async function world(): Promise<TestDirs & { env: Record<string, string> }> {
  const dirs = await makeDirs();
  const userHome = join(dirs.root, "user");
  await Deno.mkdir(join(userHome, ".gemini"), { recursive: true });
  await Deno.writeTextFile(join(userHome, ".gemini", "settings.json"), "{}\n");
  await writePlugin(dirs.home, "good", fixtureServerToml("good"));
  const env = {
    HOME: userHome,
    SYMPOSIUM_HOME: dirs.home,
    SYMPOSIUM_RECOMMENDATIONS_URL: join(dirs.root, "no-such-registry"),
    PATH: "/usr/bin:/bin",
    DENO_DIR: await cacheDir(),
  };
  return { ...dirs, env };
}

const run = (w: { ws: string; env: Record<string, string> }, args: string[]) =>
  runMain(args, { cwd: w.ws, env: w.env });

Deno.test("doctor names a server that does not start, an unsynced agent and an untrusted manifest, each with its fix", async () => {
  const w = await world();
  try {
    // Exits at once, after writing a terminal escape to stderr (shown escaped, never raw).
    await writePlugin(
      w.home,
      "broken",
      '[[mcp_servers]]\nname = "broken"\ncommand = "sh"\nargs = ["-c", "printf \'\\\\033[31mboom\' >&2; exit 3"]\n',
    );
    // Echoes the secret it was given (from the environment, through its manifest) and exits.
    await writePlugin(
      w.home,
      "leaky",
      '[[mcp_servers]]\nname = "leaky"\ncommand = "sh"\nargs = ["-c", "echo \\"token=$TOKEN\\" >&2; exit 4"]\n' +
        'env = { TOKEN = "${DOCTOR_TEST_SECRET}" }\n',
    );
    // A project-level entry (`sync --project`) that starts something else.
    await Deno.mkdir(join(w.ws, ".gemini"));
    await Deno.writeTextFile(
      join(w.ws, ".gemini", "settings.json"),
      '{ "mcpServers": { "symposium": { "command": "old-cargo-agents", "args": ["mcp-serve"] } } }\n',
    );
    await Deno.writeTextFile(
      join(w.ws, "SYMPOSIUM.toml"),
      'name = "team"\n\n[[mcp_servers]]\nname = "teamtool"\ncommand = "true"\n',
    );
    const out = await runMain(["doctor", "--timeout-secs", "60"], {
      cwd: w.ws,
      env: { ...w.env, DOCTOR_TEST_SECRET: "s3cr3t-doctor-value" },
    });
    assert.equal(out.code, 1, out.stdout + out.stderr);
    assert.doesNotMatch(out.stdout, RAW_CONTROL);
    assert.match(out.stdout, /^✗ server leaky: .*token=/m);
    assert.ok(!(out.stdout + out.stderr).includes("s3cr3t-doctor-value"), "a secret was printed");
    assert.equal(
      await Deno.readTextFile(join(w.env.HOME!, ".gemini", "settings.json")),
      "{}\n",
      "doctor wrote",
    );
    assert.match(out.stdout, /^✓ program: cargo-agents \d+\.\d+\.\d+/m);
    assert.match(
      out.stdout,
      /^✓ server good: stdio, (legacy|modern) era: started and listed \d+ tool\(s\) in \d+ ms$/m,
    );
    assert.match(
      out.stdout,
      /^✗ server broken: .*boom.*\n {4}fix: check its declaration at .*broken\/SYMPOSIUM\.toml:\d+:\d+/m,
    );
    assert.match(out.stdout, /\\u001b\[31mboom/, "the escape is shown escaped");
    assert.match(
      out.stdout,
      /^✗ plugin team: workspace manifest .*SYMPOSIUM\.toml is not trusted: its server\(s\) teamtool do not start\n {4}fix: run `cargo agents trust .*\/ws\/SYMPOSIUM\.toml` \(it shows what each server runs/m,
    );
    assert.match(
      out.stdout,
      /^✗ agent gemini: Gemini CLI: not synced, no symposium entry \(.*settings\.json\)\n {4}fix: run `cargo agents sync --agent gemini`$/m,
    );
    assert.match(
      out.stdout,
      /^✗ agent gemini: Gemini CLI: the project file's symposium entry starts something else \(.*\/ws\/\.gemini\/settings\.json\)\n {4}fix: run `cargo agents sync --project --agent gemini`/m,
    );
    assert.match(out.stdout, /^✓ sandbox: `return 1` ran in \d+ ms$/m);
    assert.match(out.stdout, /^5 problems(, \d+ warnings?)?: fix the ✗ lines above/m);
  } finally {
    await w.remove();
  }
});

Deno.test("doctor --json says all is well (exit 0) once the agent is synced, with its stable shape", async () => {
  const w = await world();
  try {
    const before = await run(w, ["doctor", "--json", "--timeout-secs", "60"]);
    assert.equal(before.code, 1, before.stderr);
    const unsynced = JSON.parse(before.stdout) as DoctorReport;
    assert.equal(unsynced.ok, false);
    assert.deepEqual(
      unsynced.checks.filter((c) => c.state === "fail").map((c) => [c.area, c.subject, c.fix]),
      [["agent", "gemini", "run `cargo agents sync --agent gemini`"]],
    );
    const synced = await run(w, ["sync", "--agent", "gemini"]);
    assert.equal(synced.code, 0, synced.stdout + synced.stderr);
    const project = await run(w, ["sync", "--project", "--via-cargo", "--agent", "gemini"]);
    assert.equal(project.code, 0, project.stdout + project.stderr);
    const out = await run(w, ["doctor", "--json", "--timeout-secs", "60"]);
    assert.equal(out.code, 0, out.stdout + out.stderr);
    const report = JSON.parse(out.stdout) as DoctorReport;
    assert.equal(report.schema, 1);
    assert.equal(report.ok, true);
    assert.match(report.version, /^\d+\.\d+\.\d+/);
    for (const check of report.checks) {
      assert.deepEqual(
        Object.keys(check).filter((k) =>
          !["area", "subject", "state", "message", "fix", "code", "elapsedMs", "toolCount", "era"].includes(k)
        ),
        [],
      );
      assert.ok(["ok", "warn"].includes(check.state), JSON.stringify(check));
    }
    const byArea = (area: string) => report.checks.filter((c) => c.area === area).map((c) => c.subject);
    assert.deepEqual(byArea("program"), [""]);
    assert.deepEqual(byArea("agent"), ["gemini", "gemini"]);
    assert.deepEqual(byArea("server"), ["good"]);
    assert.deepEqual(byArea("sandbox"), [""]);
    assert.match(
      report.checks.find((c) => c.area === "tool-cache")!.message,
      /^1 of 1 server\(s\) had a fresh listing/,
    );
    const good = report.checks.find((c) => c.area === "server")!;
    assert.ok(good.toolCount! > 0 && good.elapsedMs! >= 0);
    const text = await run(w, ["doctor", "--timeout-secs", "60"]);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /^✓ agent gemini: Gemini CLI: synced/m);
    assert.match(
      text.stdout,
      /^✓ agent gemini: Gemini CLI: project file synced \(.*\/ws\/\.gemini\/settings\.json\)$/m,
    );
    assert.match(text.stdout, /\nAll is well( \(\d+ warnings?\))?\.\n$/);
  } finally {
    await w.remove();
  }
});

Deno.test("doctor names an expired sign-in, a server past its deadline, a config.toml Problem and the last log's errors; refuses a bad --timeout-secs", async () => {
  const w = await world();
  try {
    await Deno.remove(join(w.home, "plugins", "good"), { recursive: true });
    const url = "http://127.0.0.1:9/mcp";
    await writePlugin(w.home, "remote", `[[mcp_servers]]\nname = "remote"\nurl = "${url}"\n`);
    await Deno.mkdir(join(w.home, "credentials"), { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(
      join(w.home, "credentials", "remote.json"),
      JSON.stringify({
        version: 1,
        server: "remote",
        serverUrl: url,
        expiresAtMs: 1_000,
        tokens: { access_token: "secret-access-token-value", token_type: "Bearer" },
      }),
      { mode: 0o600 },
    );
    // Starts and never answers: its line comes at the deadline, and the run ends (the server is stopped).
    await writePlugin(w.home, "slow", '[[mcp_servers]]\nname = "slow"\ncommand = "sleep"\nargs = ["600"]\n');
    await Deno.mkdir(join(w.home, "logs"), { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(
      join(w.home, "logs", "2026-01-31T12-00-00-000Z-4242.log"),
      "2026-01-31T12:00:00.000Z INFO started\n2026-01-31T12:00:01.000Z WARN w\n" +
        "2026-01-31T12:00:02.000Z ERROR [x] x failed to start: \u001b[31mno\n",
    );
    await Deno.writeTextFile(join(w.home, "config.toml"), "[mcp]\nscript-timeout = 30\n");
    const out = await run(w, ["doctor", "--timeout-secs", "1"]);
    assert.equal(out.code, 1, out.stdout + out.stderr);
    assert.doesNotMatch(out.stdout, RAW_CONTROL);
    assert.match(
      out.stdout,
      /^✗ server slow: did not start and answer tools\/list within 1000 ms\n {4}fix: .*`cargo agents mcp tools slow`/m,
    );
    assert.match(out.stdout, /^✗ server remote: /m);
    assert.match(
      out.stdout,
      /^✗ config .*config\.toml: Cannot apply "script-timeout" in \[mcp\].*config\.toml:2:1\)\n {4}fix: did you mean "script-timeout-secs"\?$/m,
    );
    assert.match(
      out.stdout,
      /^! log .*2026-01-31T12-00-00-000Z-4242\.log: last session: 1 error\(s\), 1 warning\(s\); the last: .*ERROR \[x\] x failed to start: \\u001b\[31mno$/m,
    );
    assert.match(
      out.stdout,
      /^✗ sign-in remote: expired \(token expiry 1970-01-01T00:00:01\.000Z\)\n {4}fix: run `cargo agents mcp login remote`$/m,
    );
    assert.ok(!out.stdout.includes("secret-access-token-value"), "a token was printed");
    const bad = await run(w, ["doctor", "--timeout-secs", "0"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--timeout-secs "0": expected a whole number from 1 to 300/);
  } finally {
    await w.remove();
  }
});
