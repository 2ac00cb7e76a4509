import assert from "node:assert/strict";
import { Catalog } from "../lib/catalog.ts";
import { buildStatusReport, renderStatusText } from "../lib/commands/status.ts";
import { denoFileSystem } from "../lib/file_system.ts";
import { loadResolution } from "../lib/resolve.ts";
import { ManualClock } from "./_fakes_backends.ts";
import { fixtureServerToml, makeDirs, type TestDirs, writePlugin } from "./_fakes_meta.ts";

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
    ["old", { state: "stale", ageMs: 2 * DAY_MS + 301_000, toolCount: tools.length }],
    ["recent", { state: "fresh", ageMs: 301_000, toolCount: tools.length }],
  ]);
  const text = renderStatusText(report, loaded, { nowMs });
  assert.match(text, /\n {6}tool cache: none \(the server starts for list_tools\)\n {4}old: /);
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
    ["plain", "applies", "ENDPOINT_INSECURE_HTTP"],
    ["private", "applies", "ENDPOINT_PRIVATE_ADDRESS"],
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
  const text = renderStatusText(report, loaded);
  assert.match(
    text,
    /\n {6}http: https:\/\/192\.168\.1\.7\/mcp\n {6}endpoint policy refuses it: 192\.168\.1\.7 is a private address \(192\.168\.0\.0\/16\), not a public address \(see Problems\)\n {6}tool cache: none/,
  );
  assert.match(text, /\nerror\[ENDPOINT_PRIVATE_ADDRESS\]: Cannot connect to server "private"/);
  await dirs.remove();
});
