import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  loadMcpConfig,
  loadMcpConfigReport,
  MCP_CONFIG_KEYS,
  parseMcpConfig,
  readMcpConfig,
  resolveConfigDir,
} from "../../lib/plugins/config.ts";
import { DEFAULT_MCP_CONFIG } from "../../lib/plugins/config_types.ts";
import { renderDiagnostic, UserError } from "../../lib/diagnostics.ts";
import { memoryFileSystem } from "../_fakes_foundation.ts";
import { loadPlugins } from "../../lib/plugins/mod.ts";

function fixture(name: string): { text: string; file: string } {
  const file = fileURLToPath(new URL(`../../testdata/config/${name}.toml`, import.meta.url));
  return { text: Deno.readTextFileSync(file), file: `config/${name}.toml` };
}

function configError(name: string): UserError {
  const { text, file } = fixture(name);
  try {
    parseMcpConfig(text, file);
  } catch (error) {
    assert.ok(error instanceof UserError, `expected a UserError, got ${error}`);
    return error;
  }
  throw new Error(`config/${name}.toml was accepted`);
}

Deno.test("resolveConfigDir() prefers $SYMPOSIUM_HOME", () => {
  assert.equal(resolveConfigDir({ SYMPOSIUM_HOME: "/s", XDG_CONFIG_HOME: "/x" }, "/home/me"), "/s");
});

Deno.test("resolveConfigDir() uses $XDG_CONFIG_HOME/symposium when $SYMPOSIUM_HOME is unset or empty", () => {
  assert.equal(resolveConfigDir({ XDG_CONFIG_HOME: "/x" }, "/home/me"), "/x/symposium");
  assert.equal(resolveConfigDir({ SYMPOSIUM_HOME: "", XDG_CONFIG_HOME: "/x" }, "/home/me"), "/x/symposium");
});

Deno.test("resolveConfigDir() prefers the --config-dir flag over the environment", () => {
  assert.equal(
    resolveConfigDir({ SYMPOSIUM_HOME: "/s", XDG_CONFIG_HOME: "/x" }, "/home/me", "/flag"),
    "/flag",
  );
  assert.equal(resolveConfigDir({ SYMPOSIUM_HOME: "/s" }, "/home/me", ""), "/s");
});

Deno.test("resolveConfigDir() falls back to ~/.symposium", () => {
  assert.equal(resolveConfigDir({}, "/home/me"), "/home/me/.symposium");
});

Deno.test("parseMcpConfig() reads every [mcp] key", () => {
  const { text, file } = fixture("full");
  assert.deepEqual(parseMcpConfig(text, file), {
    scriptTimeoutSecs: 300,
    scriptMemoryLimitMb: 256,
    scriptStackLimitKb: 2048,
    maxToolCalls: 500,
    maxResultBytes: 65536,
    maxConsoleBytes: 0,
    serverStartupTimeoutSecs: 90,
    toolCallTimeoutSecs: 240,
    maxServerRestarts: 2,
    restartStableResetSecs: 600,
    shutdownGraceSecs: 10,
    maxCallsInFlightPerServer: 4,
    maxConcurrentScripts: 3,
    readOnly: true,
    confirmTools: "writes",
    maxMessageMb: 16,
    maxInFlightMb: 128,
    observeResults: false,
    directTools: ["memory.read_graph", "github.*"],
    sessionStoreMb: 32,
  });
});

Deno.test("parseMcpConfig() refuses an unknown confirm-tools value with the choices and a guess", () => {
  assert.throws(
    () => parseMcpConfig('[mcp]\nconfirm-tools = "write"\n', "c.toml"),
    (e: unknown) =>
      e instanceof UserError && e.code === "CONFIG_BAD_VALUE" &&
      /confirm-tools: it must be one of "never", "destructive", "writes", not "write"/.test(e.message) &&
      e.hint === 'did you mean "writes"?' && e.location?.line === 2,
  );
});

Deno.test("parseMcpConfig() documents a rule for every McpConfig field", () => {
  const fields = Object.keys(DEFAULT_MCP_CONFIG);
  assert.equal(MCP_CONFIG_KEYS.filter((k) => k !== "enabled").length, fields.length);
});

Deno.test("parseMcpConfig() refuses session-store-mb out of range, naming the key and its range", () => {
  assert.throws(
    () => parseMcpConfig("[mcp]\nsession-store-mb = 0\n", "c.toml"),
    (e: unknown) =>
      e instanceof UserError && e.code === "CONFIG_BAD_VALUE" && /session-store-mb/.test(e.message) &&
      /1/.test(e.message) && /1024/.test(e.message) && e.location?.line === 2,
  );
});

Deno.test("parseMcpConfig() returns the defaults when [mcp] is absent", () => {
  assert.deepEqual(parseMcpConfig("[defaults]\nuser-plugins = true\n", "c.toml"), DEFAULT_MCP_CONFIG);
});

Deno.test("parseMcpConfig() fills missing keys with their defaults", () => {
  assert.deepEqual(parseMcpConfig("[mcp]\nread-only = true\n", "c.toml"), {
    ...DEFAULT_MCP_CONFIG,
    readOnly: true,
  });
});

Deno.test("parseMcpConfig() reports an unknown key with its position and the closest key", () => {
  const error = configError("unknown_key");
  assert.equal(
    renderDiagnostic(error),
    `error[CONFIG_UNKNOWN_KEY]: Cannot apply "max-tool-call" in [mcp]: it is not a known key (ignored; every other key applies)
  --> config/unknown_key.toml:3:1
  hint: did you mean "max-tool-calls"?
  see: cargo agents help CONFIG_UNKNOWN_KEY (docs/troubleshooting.md#config_unknown_key)`,
  );
});

Deno.test("parseMcpConfig() suggests the full key for a key missing its unit", () => {
  assert.throws(() => parseMcpConfig("[mcp]\nscript-timeout = 30\n", "c.toml"), {
    code: "CONFIG_UNKNOWN_KEY",
    hint: 'did you mean "script-timeout-secs"?',
  });
});

Deno.test("parseMcpConfig() locates keys written with dotted and quoted names", () => {
  const error = configError("dotted");
  assert.equal(error.code, "CONFIG_UNKNOWN_KEY");
  assert.equal(error.hint, 'did you mean "shutdown-grace-secs"?');
  assert.deepEqual(error.location, { file: "config/dotted.toml", line: 3, column: 5 });
});

Deno.test("parseMcpConfig() refuses a value of the wrong type with its position", () => {
  const error = configError("bad_type");
  assert.equal(
    renderDiagnostic(error),
    `error[CONFIG_BAD_VALUE]: Cannot apply [mcp] max-result-bytes: it must be an integer (bytes), not a string; until it is fixed, its default (32768) applies
  --> config/bad_type.toml:2:1
  hint: write a whole number from 256 to 67108864, without quotes
  see: cargo agents help CONFIG_BAD_VALUE (docs/troubleshooting.md#config_bad_value)`,
  );
});

Deno.test("parseMcpConfig() refuses a fractional number where an integer is required", () => {
  assert.equal(configError("float").code, "CONFIG_BAD_VALUE");
  assert.match(configError("float").message, /max-tool-calls: it must be an integer, not a float/);
});

Deno.test("parseMcpConfig() refuses a string where a boolean is required", () => {
  const error = configError("bad_bool");
  assert.equal(error.code, "CONFIG_BAD_VALUE");
  assert.match(error.message, /read-only: it must be true or false, not a string/);
});

Deno.test("parseMcpConfig() refuses a value out of range", () => {
  const error = configError("out_of_range");
  assert.equal(error.code, "CONFIG_BAD_VALUE");
  assert.equal(
    error.message,
    "Cannot apply [mcp] script-memory-limit-mb = 0: it is outside 1..4096 (MiB); until it is fixed, its default (64) applies",
  );
  assert.deepEqual(error.location, { file: "config/out_of_range.toml", line: 2, column: 1 });
});

Deno.test("readMcpConfig() lowers the tool-call timeout below a lowered script timeout, with a warning", () => {
  const { text, file } = fixture("call_not_below_script");
  const report = readMcpConfig(text, file);
  assert.deepEqual(report.problems, []);
  assert.equal(report.config.scriptTimeoutSecs, 60);
  assert.equal(report.config.toolCallTimeoutSecs, 59);
  assert.deepEqual(report.warnings, [
    "config/call_not_below_script.toml:2:1: [mcp] tool-call-timeout-secs is 59 s (not 60 s) to stay below " +
    "script-timeout-secs (60 s); set tool-call-timeout-secs to choose another value",
  ]);
  assert.equal(parseMcpConfig("[mcp]\nscript-timeout-secs = 5\n", "c.toml").toolCallTimeoutSecs, 4);
});

Deno.test("parseMcpConfig() refuses a tool-call timeout written not below the script timeout", () => {
  const text = "[mcp]\nscript-timeout-secs = 30\ntool-call-timeout-secs = 30\n";
  assert.throws(() => parseMcpConfig(text, "c.toml"), (error: unknown) => {
    assert.ok(error instanceof UserError);
    assert.equal(error.code, "CONFIG_BAD_VALUE");
    assert.equal(
      error.message,
      "Cannot apply [mcp] tool-call-timeout-secs = 30: it must be less than script-timeout-secs (30), so 29 s " +
        "applies until it is fixed",
    );
    assert.equal(error.hint, "set tool-call-timeout-secs below 30, or script-timeout-secs above 30");
    assert.deepEqual(error.location, { file: "c.toml", line: 3, column: 1 });
    return true;
  });
  // Leniently, that key costs only itself, and the one problem says what applies: no second notice.
  const report = readMcpConfig(text, "c.toml");
  assert.equal(report.problems.length, 1);
  assert.equal(report.config.toolCallTimeoutSecs, 29);
  assert.deepEqual(report.warnings, []);
  // Where its default is below the script timeout, the default applies, and the problem says so.
  const high = readMcpConfig("[mcp]\nscript-timeout-secs = 100\ntool-call-timeout-secs = 150\n", "c.toml");
  assert.match(
    high.problems[0]!.message,
    /= 150: it must be less than script-timeout-secs \(100\), so 60 s applies/,
  );
  assert.equal(high.config.toolCallTimeoutSecs, 60);
  assert.deepEqual(high.warnings, []);
});

Deno.test("readMcpConfig() lets a bad key cost only that key: the others apply", () => {
  const text = '[mcp]\nscript-timeout-secs = 30\nmax-tool-calls = "many"\nscript-timeout = 9\n' +
    "read-only = true\nmax-result-bytes = 1\n";
  const report = readMcpConfig(text, "c.toml");
  assert.deepEqual(report.problems.map((p) => [p.code, p.location?.line]), [
    ["CONFIG_BAD_VALUE", 3],
    ["CONFIG_UNKNOWN_KEY", 4],
    ["CONFIG_BAD_VALUE", 6],
  ]);
  assert.deepEqual(report.config, {
    ...DEFAULT_MCP_CONFIG,
    scriptTimeoutSecs: 30,
    toolCallTimeoutSecs: 29,
    readOnly: true,
  });
});

Deno.test("readMcpConfig() reports a syntax error as the one problem, with every default", () => {
  const report = readMcpConfig("[mcp]\nread-only = yes\n", "c.toml");
  assert.equal(report.problems.length, 1);
  assert.equal(report.problems[0]!.code, "CONFIG_SYNTAX");
  assert.deepEqual(report.config, DEFAULT_MCP_CONFIG);
});

Deno.test("parseMcpConfig() reports a TOML syntax error with smol-toml's 1-based position", () => {
  const error = configError("syntax");
  assert.equal(error.code, "CONFIG_SYNTAX");
  // "read-only = yes": the value starts at column 13 of line 2.
  assert.deepEqual(error.location, { file: "config/syntax.toml", line: 2, column: 13 });
});

Deno.test("parseMcpConfig() reports a near-miss of the [mcp] table name", () => {
  const error = configError("mcp_typo_table");
  assert.equal(error.code, "CONFIG_UNKNOWN_KEY");
  assert.equal(error.hint, 'did you mean "mcp"?');
  assert.deepEqual(error.location, { file: "config/mcp_typo_table.toml", line: 1, column: 2 });
});

Deno.test("parseMcpConfig() refuses an [mcp] that is not a table", () => {
  assert.throws(() => parseMcpConfig("mcp = 3\n", "c.toml"), { code: "CONFIG_BAD_VALUE" });
});

Deno.test("loadMcpConfig() returns the defaults when config.toml does not exist", async () => {
  const fs = memoryFileSystem({ "/cfg/plugins/p/SYMPOSIUM.toml": "" });
  assert.deepEqual(await loadMcpConfig("/cfg", fs), DEFAULT_MCP_CONFIG);
  assert.deepEqual(await loadMcpConfig("/nowhere", fs), DEFAULT_MCP_CONFIG);
  assert.deepEqual(fs.reads, []);
});

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("loadMcpConfig() refuses a configuration directory that is a file, naming it", async () => {
  await withTempDir(async (dir) => {
    Deno.writeTextFileSync(`${dir}/home-file`, "");
    for (const configDir of [`${dir}/home-file`, `${dir}/home-file/sub`]) {
      await assert.rejects(() => loadMcpConfig(configDir), (e: unknown) => {
        assert.ok(e instanceof UserError);
        assert.equal(e.code, "CONFIG_DIR_NOT_A_FOLDER");
        assert.match(e.message, new RegExp(`"${configDir}".*not a folder`));
        assert.match(e.hint ?? "", /SYMPOSIUM_HOME/);
        return true;
      });
    }
  });
});

Deno.test("loadMcpConfig() refuses a config.toml that is a folder", async () => {
  await withTempDir(async (dir) => {
    Deno.mkdirSync(`${dir}/config.toml`);
    await assert.rejects(() => loadMcpConfig(dir), (e: unknown) => {
      assert.ok(e instanceof UserError);
      assert.equal(e.code, "CONFIG_UNREADABLE");
      assert.equal(e.message, `Cannot load config file "${dir}/config.toml": it is a folder, not a file`);
      assert.match(e.hint ?? "", /remove or rename the folder/);
      return true;
    });
  });
});

Deno.test("loadMcpConfig() names the absolute path of config.toml in errors", async () => {
  const fs = memoryFileSystem({ "/cfg/config.toml": "[mcp]\nbogus = 1\n" });
  await assert.rejects(() => loadMcpConfig("/cfg", fs), (e: unknown) => {
    assert.ok(e instanceof UserError);
    assert.deepEqual(e.location, { file: "/cfg/config.toml", line: 2, column: 1 });
    return true;
  });
});

Deno.test("loadMcpConfig() refuses a config.toml that is not valid UTF-8, with the position", async () => {
  await withTempDir(async (dir) => {
    Deno.writeFileSync(
      `${dir}/config.toml`,
      new Uint8Array([...new TextEncoder().encode("# caf"), 0xe9, 10]),
    );
    await assert.rejects(() => loadMcpConfig(dir), (e: unknown) => {
      assert.ok(e instanceof UserError);
      assert.equal(e.code, "FILE_NOT_UTF8");
      assert.deepEqual(e.location, { file: `${dir}/config.toml`, line: 1, column: 6 });
      return true;
    });
  });
});

Deno.test("readMcpConfig() falls back to the strictest confirm-tools mode on a bad value (fails closed)", () => {
  const report = readMcpConfig('[mcp]\nconfirm-tools = "write"\nmax-tool-calls = 7\n', "config.toml");
  assert.equal(report.config.confirmTools, "writes");
  assert.equal(report.config.maxToolCalls, 7);
  assert.equal(report.problems.length, 1);
  assert.match(report.problems[0]!.message, /confirm-tools.*until it is fixed, "writes" applies/);
  assert.equal(report.problems[0]!.location?.line, 2);
  assert.equal(readMcpConfig("[mcp]\nconfirm-tools = 3\n", "config.toml").config.confirmTools, "writes");
  assert.equal(readMcpConfig("[mcp]\n", "config.toml").config.confirmTools, "never");
});

Deno.test("readMcpConfig() fails closed on a near miss of confirm-tools: the strictest mode and a Problem", () => {
  const texts = [
    '[mcp]\nconfirm_tools = "never"\n',
    '[mcp]\nconfirmTools = "destructive"\n',
    '[mcp]\nConfirm-Tools = "never"\n',
    '[MCP]\nconfirm-tools = "never"\n',
    '[mcp]\nconfirm-tools = "never"\nconfirm_tools = "never"\n',
    'confirm-tools = "never"\n',
  ];
  for (const text of texts) {
    const report = readMcpConfig(text, "config.toml");
    assert.equal(report.config.confirmTools, "writes", text);
    const problem = report.problems.find((p) => /looks like it/.test(p.message));
    assert.ok(problem, text);
    assert.match(problem.message, /so confirm-tools = "writes" applies until it is fixed/);
    assert.equal(problem.code, "CONFIG_UNKNOWN_KEY");
    assert.ok(problem.location?.line !== undefined);
  }
  assert.equal(readMcpConfig('[mcp]\nconfirm-tools = "never"\n', "c.toml").config.confirmTools, "never");
});

Deno.test("config.toml and <config>/plugins entries that anyone may write, or another user owns, are not used", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/config.toml`;
    await Deno.writeTextFile(file, "[mcp]\nscript-timeout-secs = 7\n");
    assert.equal((await loadMcpConfigReport(dir)).config.scriptTimeoutSecs, 7);
    await Deno.chmod(file, 0o666);
    const report = await loadMcpConfigReport(dir);
    assert.equal(report.config.scriptTimeoutSecs, DEFAULT_MCP_CONFIG.scriptTimeoutSecs);
    assert.equal(report.problems[0]?.code, "CONFIG_UNSAFE");
    assert.match(report.problems[0]!.message, /anyone may write it \(mode 666\)/);

    const plugin = (name: string) =>
      Deno.mkdir(`${dir}/plugins/${name}`, { recursive: true }).then(() =>
        Deno.writeTextFile(
          `${dir}/plugins/${name}/SYMPOSIUM.toml`,
          `name = "${name}"\ndepends-on = "*"\n[[mcp_servers]]\nname = "${name}"\ncommand = "true"\n`,
        )
      );
    await plugin("mine");
    await plugin("open");
    await Deno.chmod(`${dir}/plugins/open`, 0o777);
    let loaded = await loadPlugins(dir);
    assert.deepEqual(loaded.plugins.map((p) => p.name), ["mine"]);
    assert.equal(loaded.refused[0]?.code, "PLUGIN_UNSAFE");
    assert.match(loaded.refused[0]!.reason, /plugins\/open: anyone may write it \(mode 777\)/);
    if (Deno.uid() === 0) {
      // Running as root (a container): a file of another user is refused too.
      await Deno.chmod(`${dir}/plugins/open`, 0o755);
      await Deno.chown(`${dir}/plugins/open/SYMPOSIUM.toml`, 65534, 65534);
      loaded = await loadPlugins(dir);
      assert.match(loaded.refused[0]!.reason, /SYMPOSIUM\.toml: it belongs to another user \(uid 65534\)/);
    }
    await Deno.chmod(`${dir}/plugins`, 0o777);
    loaded = await loadPlugins(dir);
    assert.deepEqual(loaded.plugins, []);
    assert.equal(loaded.refused[0]?.code, "PLUGINS_DIR_INVALID");
    assert.match(loaded.refused[0]!.reason, /anyone may write it/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readMcpConfig() reads direct-tools patterns in order, duplicates once", () => {
  const report = readMcpConfig(
    '[mcp]\ndirect-tools = ["memory.read_graph", "github.*", "memory.read_graph", "*.search_*"]\n',
    "c.toml",
  );
  assert.deepEqual(report.problems, []);
  assert.deepEqual(report.config.directTools, ["memory.read_graph", "github.*", "*.search_*"]);
});

Deno.test("readMcpConfig() reports each bad direct-tools pattern with its line and column, keeping the others", () => {
  const text =
    '[mcp]\ndirect-tools = [\n  "memory.read_graph",\n  "no_dot",\n  "bad server.x",\n  "srv.",\n  3,\n]\n';
  const report = readMcpConfig(text, "c.toml");
  assert.deepEqual(report.config.directTools, ["memory.read_graph"]);
  assert.equal(report.problems.length, 4);
  const [noDot, badServer, emptyTool, notString] = report.problems;
  assert.equal(noDot?.code, "CONFIG_BAD_VALUE");
  assert.match(
    noDot!.message,
    /direct-tools item 2 "no_dot": it has no `\.` between the server and the tool/,
  );
  assert.deepEqual(noDot?.location, { file: "c.toml", line: 4, column: 3 });
  assert.match(
    badServer!.message,
    /item 3 "bad server\.x": its server part "bad server" is not a server name/,
  );
  assert.deepEqual(badServer?.location, { file: "c.toml", line: 5, column: 3 });
  assert.match(emptyTool!.message, /item 4 "srv\.": its tool part "" is empty/);
  assert.match(notString!.message, /direct-tools item 5: it is an integer, not a string/);
  assert.deepEqual(notString?.location, { file: "c.toml", line: 7, column: 3 });
  assert.match(noDot!.hint ?? "", /"github\.\*"/);
});

Deno.test("readMcpConfig() refuses a direct-tools value that is not an array", () => {
  const report = readMcpConfig('[mcp]\ndirect-tools = "github.*"\n', "c.toml");
  assert.deepEqual(report.config.directTools, []);
  assert.match(
    report.problems[0]!.message,
    /direct-tools: it must be an array of "server\.tool" patterns, not a string/,
  );
  assert.equal(report.problems[0]?.location?.line, 2);
});
