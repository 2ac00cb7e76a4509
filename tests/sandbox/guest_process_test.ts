// The sandbox process as the host sees it: a guest that writes garbage or a 1 GB line is killed and reported
// (nothing of it buffered), and the real guest's first step leaves it no permission at all, whether it was
// started with none (from source) or with the host's (a compiled binary carries them).
import assert from "node:assert/strict";
import { guestLaunch } from "../../lib/sandbox/mod.ts";
import { standInGuest, testLimits, withPool } from "../_fakes_sandbox.ts";

const echoHost = () => Promise.resolve(null);

Deno.test("a guest that answers with a frame that is not JSON is killed and reported", async () => {
  await withPool({ size: 1, launch: standInGuest("garbage_guest.ts") }, async (pool) => {
    const result = await pool.run({ script: "1", namespaces: [], limits: testLimits(), hostCall: echoHost });
    assert.equal(result.ok, false);
    assert.match(
      !result.ok && result.failure.error === "internal" ? result.failure.message : "",
      /^Cannot start a sandbox process: it sent a frame that is not UTF-8 JSON/,
    );
    assert.equal(pool.processCount, 0, "the guest was not killed");
  });
});

Deno.test("a guest that writes a 1 GB line is refused from the frame header, killed and reported", async () => {
  await withPool({ size: 1, launch: standInGuest("huge_line_guest.ts") }, async (pool) => {
    const rssBefore = Deno.memoryUsage().rss;
    const result = await pool.run({ script: "1", namespaces: [], limits: testLimits(), hostCall: echoHost });
    assert.deepEqual(result.ok ? "ok" : result.failure, {
      error: "internal",
      message:
        "The sandbox process failed: it sent a frame of 1073741824 bytes, more than the 134217728 bytes allowed",
    });
    const grownMiB = (Deno.memoryUsage().rss - rssBefore) / (1024 * 1024);
    assert.ok(grownMiB < 64, `the host grew by ${grownMiB.toFixed(0)} MiB reading it`);
  });
});

Deno.test("the guest starts with an environment of the runtime's needs only", () => {
  const launch = guestLaunch({
    heapLimitBytes: 64 * 1024 * 1024,
    env: { HOME: "/home/u", GITHUB_TOKEN: "ghp_secret", AWS_SECRET_ACCESS_KEY: "x", PATH: "/usr/bin" },
    execPath: "/usr/bin/deno",
  });
  assert.deepEqual(Object.keys(launch.env).sort(), ["DENO_DIR", "DENO_NO_UPDATE_CHECK", "NO_COLOR"]);
  assert.equal(launch.env.DENO_DIR, "/home/u/.cache/deno");
  assert.ok(
    !launch.args.some((arg) => /^(-A|-P|--allow-|--unstable-worker)/.test(arg)),
    launch.args.join(" "),
  );
  const binary = guestLaunch({ heapLimitBytes: 1, env: { HOME: "/h" }, execPath: "/opt/bin/cargo-agents" });
  assert.equal(binary.args.at(-1), "__sandbox-guest");
  assert.deepEqual(Object.keys(binary.env).sort(), ["DENO_NO_UPDATE_CHECK", "NO_COLOR"]);
});

for (const granted of [false, true]) {
  Deno.test(`the guest holds no permission after its first step (started with ${granted ? "all of the host's" : "none"})`, async () => {
    const launch = standInGuest("permission_probe_guest.ts")(64 * 1024 * 1024);
    const args = [...launch.args];
    // A compiled binary carries the host's permission set: the same as `deno run -P` here.
    if (granted) args.splice(args.indexOf("run") + 1, 0, "-P");
    const { code, stdout, stderr } = await new Deno.Command(launch.command, {
      args,
      env: launch.env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    const results = JSON.parse(new TextDecoder().decode(stdout)) as Record<string, string>;
    assert.deepEqual(
      Object.entries(results).filter(([, met]) => met !== "NotCapable"),
      [],
      JSON.stringify(results),
    );
    assert.equal(Object.keys(results).length, 7);
  });
}

Deno.test("main.ts and the compile task start the guest under the subcommand the host launches", async () => {
  const { GUEST_SUBCOMMAND } = await import("../../lib/sandbox/mod.ts");
  const main = await Deno.readTextFile(new URL("../../main.ts", import.meta.url));
  assert.ok(main.includes(`Deno.args[0] === "${GUEST_SUBCOMMAND}"`), "main.ts does not dispatch the guest");
  const denoJson = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  assert.match(denoJson.tasks.compile, /--include lib\/sandbox\/guest\/main\.ts/);
});

Deno.test("a guest past its own budgets gets no more than the run's limits on the host", async () => {
  await withPool({ size: 1, launch: standInGuest("flooding_guest.ts") }, async (pool) => {
    let calls = 0;
    const result = await pool.run({
      script: "1",
      namespaces: ["srv"],
      limits: testLimits({ maxConsoleBytes: 8192, maxToolCalls: 100 }),
      hostCall: () => {
        calls++;
        return Promise.resolve(null);
      },
    });
    assert.equal(result.ok, true);
    const consoleChars = result.console.reduce((n, line) => n + line.length + 1, 0);
    assert.ok(consoleChars <= 8193, `${consoleChars} characters of console kept`);
    assert.equal(result.consoleDropped, true);
    assert.equal(calls, 100);
  });
});

Deno.test("a guest past its arguments-in-flight budget gets only what the budget allows started", async () => {
  await withPool({ size: 1, launch: standInGuest("inflight_guest.ts") }, async (pool) => {
    let started = 0;
    const result = await pool.run({
      script: "1",
      namespaces: ["srv"],
      limits: testLimits({ maxInFlightChars: 3.5 * 1024 * 1024 }),
      hostCall: () => {
        started++;
        return new Promise(() => {}); // never answered: every call stays in flight
      },
    });
    assert.equal(result.ok, true);
    assert.equal(started, 3);
  });
});
