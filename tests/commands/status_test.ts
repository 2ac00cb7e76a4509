import assert from "node:assert/strict";
import { Catalog } from "../../lib/catalog/mod.ts";
import { buildStatusReport, renderStatusText } from "../../lib/commands/status.ts";
import { denoFileSystem } from "../../lib/file_system.ts";
import { loadResolution } from "../../lib/catalog/resolve.ts";
import { ManualClock } from "../_fakes_backends.ts";
import { fixtureServerToml, makeDirs, type TestDirs, writePlugin } from "../_fakes_meta.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

async function load(dirs: TestDirs) {
  return await loadResolution({ cwd: dirs.ws, env: { SYMPOSIUM_HOME: dirs.home }, homeDir: dirs.root });
}

Deno.test("buildStatusReport() shows each server's tool cache: fresh with its age, stale, or none", async () => {
  const dirs = await makeDirs();
  await writePlugin(
    dirs.home,
    "fx",
    fixtureServerToml("cold") + fixtureServerToml("old") + fixtureServerToml("recent"),
  );
  const clock = new ManualClock();
  const catalog = await Catalog.open({
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: dirs.home },
    homeDir: dirs.root,
    clock,
  });
  const [, old, recent] = catalog.servers;
  await catalog.listServerTools(old!);
  clock.nowMs += 2 * DAY_MS;
  const { tools } = await catalog.listServerTools(recent!);
  await catalog.close();
  const loaded = await load(dirs);
  const nowMs = clock.nowMs + 5 * 60_000 + 1_000;
  const report = await buildStatusReport(loaded, denoFileSystem, { nowMs });
  assert.deepEqual(report.servers.map((s) => [s.name, s.toolCache]), [
    ["cold", { state: "none" }],
    ["old", {
      state: "stale",
      ageMs: 2 * DAY_MS + 301_000,
      toolCount: tools.length,
      learnableCount: tools.filter((tool) => tool.outputSchema === undefined).length,
      shapeCount: 0,
      era: "legacy",
    }],
    ["recent", {
      state: "fresh",
      ageMs: 301_000,
      toolCount: tools.length,
      learnableCount: tools.filter((tool) => tool.outputSchema === undefined).length,
      shapeCount: 0,
      era: "legacy",
    }],
  ]);
  // Each server's era, as it spoke when listed (the era is not known before a first start).
  assert.deepEqual(report.servers.map((s) => s.era), ["unknown", "legacy", "legacy"]);
  const text = renderStatusText(report, { nowMs });
  assert.match(text, /\n {6}protocol: legacy \(initialize, MCP 2025-11-25 or earlier\)\n/);
  assert.match(
    text,
    /\n {6}tool cache: none \(the server starts for list_tools\)\n {6}protocol: not known yet [^\n]*\n {4}old: /,
  );
  assert.match(text, /\n {6}tool cache: stale \(listed 2 d ago; the server starts for list_tools\)\n/);
  assert.match(
    text,
    new RegExp(
      `\\n {6}tool cache: fresh \\(${tools.length} tools, listed 5 min ago; list_tools answers without starting the server\\)\\n`,
    ),
  );
  await dirs.remove();
});

Deno.test("buildStatusReport() reports the endpoint policy's refusal of a remote URL without any lookup", async () => {
  const dirs = await makeDirs();
  await writePlugin(
    dirs.home,
    "remote",
    [
      '[[mcp_servers]]\nname = "plain"\nurl = "http://10.0.0.5/mcp"\n',
      '[[mcp_servers]]\nname = "private"\nurl = "https://192.168.1.7/mcp"\n',
      '[[mcp_servers]]\nname = "named"\nurl = "https://mcp.status-test.invalid/mcp"\n',
      '[[mcp_servers]]\nname = "local"\nurl = "http://127.0.0.1:9/mcp"\n',
    ].join("\n"),
  );
  const loaded = await load(dirs);
  const report = await buildStatusReport(loaded, denoFileSystem);
  assert.deepEqual(report.servers.map((s) => [s.name, s.state, s.endpointRefusal?.code ?? null]), [
    ["plain", "refused", "ENDPOINT_INSECURE_HTTP"],
    ["private", "refused", "ENDPOINT_PRIVATE_ADDRESS"],
    ["named", "applies", null], // a name is not looked up offline (.invalid would not resolve)
    ["local", "applies", null],
  ]);
  assert.deepEqual(report.problems.map((p) => p.code), [
    "ENDPOINT_INSECURE_HTTP",
    "ENDPOINT_PRIVATE_ADDRESS",
  ]);
  const privateProblem = report.problems[1]!;
  assert.equal(
    privateProblem.message,
    'Cannot connect to server "private" at https://192.168.1.7/mcp: 192.168.1.7 is a private address (192.168.0.0/16), not a public address',
  );
  assert.equal(privateProblem.location?.file, `${dirs.home}/plugins/remote/SYMPOSIUM.toml`);
  const text = renderStatusText(report);
  assert.match(
    text,
    /\n {4}private: refused - the endpoint policy refuses its URL: 192\.168\.1\.7 is a private address \(192\.168\.0\.0\/16\), not a public address\n {6}http: https:\/\/192\.168\.1\.7\/mcp\n {4}named: /,
  );
  assert.equal(report.servers[1]!.code, "ENDPOINT_PRIVATE_ADDRESS");
  assert.match(text, /\nServers: 2 apply, 0 dormant, 2 refused\n/);
  assert.match(text, /\nerror\[ENDPOINT_PRIVATE_ADDRESS\]: Cannot connect to server "private"/);
  await dirs.remove();
});

Deno.test("renderStatusText() says config.toml and the config folder are not present instead of ok", async () => {
  const dirs = await makeDirs();
  const absent = await loadResolution({
    cwd: dirs.ws,
    env: { SYMPOSIUM_HOME: `${dirs.root}/nowhere` },
    homeDir: dirs.root,
  });
  const none = renderStatusText(await buildStatusReport(absent, denoFileSystem));
  assert.match(
    none,
    /^Config: {4}\S+\/nowhere \(not present\)\n {11}config\.toml: not present \(defaults\)\n/,
  );
  await writePlugin(dirs.home, "p", fixtureServerToml("s"));
  const report = await buildStatusReport(await load(dirs), denoFileSystem);
  assert.deepEqual([report.configDirPresent, report.configFilePresent], [true, false]);
  assert.match(renderStatusText(report), /\n {11}config\.toml: not present \(defaults\)\n/);
  await Deno.writeTextFile(`${dirs.home}/config.toml`, "[mcp]\n");
  assert.match(
    renderStatusText(await buildStatusReport(await load(dirs), denoFileSystem)),
    /^Config: {4}\S+\n {11}config\.toml: ok\n/,
  );
  await dirs.remove();
});

Deno.test("buildStatusReport() lists the names (never the values) of each stdio server's environment", async () => {
  const dirs = await makeDirs();
  await writePlugin(
    dirs.home,
    "fx",
    fixtureServerToml("envy", [], 'env = { API_KEY = "${STATUS_KEY}", MODE = "fast" }'),
  );
  const loaded = await loadResolution({
    cwd: dirs.ws,
    env: {
      SYMPOSIUM_HOME: dirs.home,
      PATH: "/usr/bin",
      HOME: "/home/me",
      STATUS_KEY: "status-secret-1234",
      OTHER: "x",
    },
    homeDir: dirs.root,
  });
  const report = await buildStatusReport(loaded, denoFileSystem);
  const server = report.servers[0]!;
  assert.deepEqual(server.envNames, {
    base: ["HOME", "PATH"],
    passthrough: [],
    inherited: [],
    manifest: ["API_KEY", "MODE"],
  });
  const text = renderStatusText(report);
  assert.match(text, /\n {6}env: HOME, PATH \(base\); API_KEY, MODE \(manifest env\)\n/);
  assert.ok(!text.includes("status-secret-1234") && !JSON.stringify(report).includes("status-secret-1234"));
  await dirs.remove();
});

Deno.test("buildStatusReport() reports a logs/, cache/ or credentials/ that is a symbolic link", async () => {
  if (Deno.build.os === "windows") return;
  const dirs = await makeDirs();
  await Deno.mkdir(`${dirs.root}/elsewhere`);
  await Deno.symlink(`${dirs.root}/elsewhere`, `${dirs.home}/cache`);
  const report = await buildStatusReport(await load(dirs), denoFileSystem);
  const problem = report.problems.find((p) => p.code === "PRIVATE_DIR_SYMLINK");
  assert.equal(problem?.message.startsWith(`Cannot use "${dirs.home}/cache": it is a symbolic link`), true);
  await dirs.remove();
});
