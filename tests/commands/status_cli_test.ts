import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runMain } from "../_fakes_foundation.ts";
import type { StatusReport } from "../../lib/commands/status.ts";

const TESTDATA = join(REPO_ROOT, "testdata");
const SINGLE_CRATE = join(TESTDATA, "workspace", "single_crate");
const VIRTUAL = join(TESTDATA, "workspace", "virtual");
const MIXED_HOME = join(TESTDATA, "status", "mixed_home");

/** Replaces the checkout's absolute testdata path so goldens do not depend on where the repo is. */
const portable = (text: string) =>
  text.replaceAll(TESTDATA, "<testdata>").replace(/^( {6}env: )[^;\n]*\(base\)/gm, "$1<base> (base)");

Deno.test("status prints plugins, servers and problems, and exits 1 beside a broken plugin", async () => {
  const out = await runMain(["status"], {
    cwd: SINGLE_CRATE,
    env: { SYMPOSIUM_HOME: MIXED_HOME, SENTRY_TOKEN: "sentry-secret-value" },
  });
  assert.equal(out.stderr, "");
  assert.equal(out.code, 1);
  const golden = await Deno.readTextFile(join(TESTDATA, "status", "mixed_home.txt"));
  assert.equal(portable(out.stdout), golden);
  assert.ok(!out.stdout.includes("sentry-secret-value"), "a header value was printed");
});

Deno.test("status --json prints one document with every server's state", async () => {
  const out = await runMain(["status", "--json"], { cwd: SINGLE_CRATE, env: { SYMPOSIUM_HOME: MIXED_HOME } });
  assert.equal(out.code, 1);
  const report = JSON.parse(out.stdout) as StatusReport;
  assert.equal(report.configDir, MIXED_HOME);
  assert.equal(report.workspace.root, SINGLE_CRATE);
  assert.equal(report.workspace.dependencyCount, 5);
  assert.deepEqual(report.plugins.map((p) => p.name), ["fs-tools", "more-fs-tools", "remote-tools"]);
  assert.deepEqual(report.servers.map((s) => [s.name, s.state, s.code ?? null, s.auth ?? null]), [
    ["filesystem", "applies", null, null],
    ["filesystem", "refused", "SERVER_DUPLICATE", null],
    ["fs_search", "applies", null, null],
    ["fs-search", "refused", "SERVER_NAME_CLASH", null],
    ["linear", "applies", null, "not-signed-in"],
    ["sentry", "refused", "ENV_VAR_UNSET", null],
    ["notion", "applies", null, "signed-in"],
    ["old-sse", "refused", "SSE_DEPRECATED", null],
    ["execute", "refused", "SERVER_RESERVED_NAME", null],
    ["tokio-metrics", "dormant", null, null],
  ]);
  assert.deepEqual(report.problems.map((p) => p.code), [
    "PLUGIN_INVALID",
    "SERVER_DUPLICATE",
    "SERVER_NAME_CLASH",
    "SERVER_RESERVED_NAME",
    "SSE_DEPRECATED",
    "ENV_VAR_UNSET",
  ]);
  const broken = report.problems[0]!;
  assert.deepEqual(broken.location, {
    file: join(MIXED_HOME, "plugins/broken/SYMPOSIUM.toml"),
    line: 6,
    column: 1,
  });
  assert.equal(broken.hint, 'did you mean "command"?');
});

Deno.test("status exits 0 and explains each server in a workspace where everything loads", async () => {
  const out = await runMain(["status"], {
    cwd: join(VIRTUAL, "crates", "core"),
    env: { SYMPOSIUM_HOME: join(TESTDATA, "home") },
  });
  assert.equal(out.code, 0);
  assert.match(out.stdout, /^Workspace: .*\/testdata\/workspace\/virtual$/m);
  assert.match(out.stdout, /5 manifest\(s\), 9 direct dependencies, Cargo\.lock/);
  assert.match(out.stdout, /tokio-console: applies - tokio 1\.38\.1 matches tokio>=1\.38/);
  assert.match(out.stdout, /filesystem: applies - serde 1\.0\.204 matches serde/);
  assert.match(out.stdout, /docs: applies - depends-on \* applies everywhere/);
  assert.match(out.stdout, /Servers: 3 apply, 0 dormant, 0 refused/);
  assert.doesNotMatch(out.stdout, /Problems:/);
});

Deno.test("status reports a broken config.toml with its position and exits 1", async () => {
  const home = join(TESTDATA, "status", "bad_config_home");
  const out = await runMain(["status"], { cwd: SINGLE_CRATE, env: { SYMPOSIUM_HOME: home } });
  assert.equal(out.code, 1);
  assert.match(out.stdout, /config\.toml: has problems \(see Problems\): a bad key keeps its default/);
  assert.ok(
    out.stdout.includes(
      `error[CONFIG_UNKNOWN_KEY]: Cannot apply "script-timeout" in [mcp]: it is not a known key (ignored; every other key applies)
  --> ${home}/config.toml:2:1
  hint: did you mean "script-timeout-secs"?`,
    ),
    out.stdout,
  );
  assert.match(out.stdout, /filesystem: applies/);
});

Deno.test("status outside a Cargo workspace applies only depends-on * servers", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "cli_status_" });
  try {
    const out = await runMain(["status", "--json"], { cwd, env: { SYMPOSIUM_HOME: join(TESTDATA, "home") } });
    assert.equal(out.code, 0);
    const report = JSON.parse(out.stdout) as StatusReport;
    assert.equal(report.workspace.root, null);
    assert.deepEqual(report.servers.map((s) => [s.name, s.state, s.reason]), [
      ["filesystem", "dormant", "plugin needs one of: serde (not in a Cargo workspace)"],
      ["docs", "applies", "depends-on * applies everywhere"],
      ["tokio-console", "dormant", "plugin needs one of: tokio>=1.38 (not in a Cargo workspace)"],
    ]);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});
