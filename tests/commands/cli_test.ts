import assert from "node:assert/strict";
import { VERSION } from "../../main.ts";
import { runMain, runMainInProcess } from "../_fakes_foundation.ts";

Deno.test("main() prints the version from deno.json", async () => {
  assert.deepEqual(await runMainInProcess(["--version"]), {
    code: 0,
    stdout: `cargo-agents ${VERSION}\n`,
    stderr: "",
  });
  assert.equal((await runMainInProcess(["-V"])).stdout, `cargo-agents ${VERSION}\n`);
});

Deno.test("main() drops a leading `agents`, as cargo passes it", async () => {
  assert.deepEqual(await runMainInProcess(["agents", "--version"]), {
    code: 0,
    stdout: `cargo-agents ${VERSION}\n`,
    stderr: "",
  });
});

Deno.test("main() lists every command in --help", async () => {
  const { code, stdout } = await runMainInProcess(["--help"]);
  assert.equal(code, 0);
  for (const command of ["mcp-serve", "status", "sync", "mcp login", "mcp logout", "mcp exec", "mcp tools"]) {
    assert.ok(stdout.includes(`  ${command} `), `--help does not list ${command}`);
  }
});

Deno.test("main() --help says what --verbose does to mcp-serve's stderr (debug lines, as docs/configuration.md says)", async () => {
  const { code, stdout } = await runMainInProcess(["--help"]);
  assert.equal(code, 0);
  assert.match(
    stdout,
    /-v, --verbose +Show causes and stacks with errors; mcp-serve also logs\n {18}debug lines to stderr\n/,
  );
});

Deno.test("main() prints the help of a command with its flags", async () => {
  const { code, stdout } = await runMainInProcess(["status", "--help"]);
  assert.equal(code, 0);
  assert.match(stdout, /^Usage: cargo-agents status \[--json\]/);
  assert.match(stdout, /--json +Print one JSON document/);
});

Deno.test("main() exits 2 with usage when no command is given", async () => {
  const { code, stdout } = await runMainInProcess([]);
  assert.equal(code, 2);
  assert.match(stdout, /^cargo-agents .*\n\nUsage:/);
});

Deno.test("main() exits 2 for an unknown command and says how to list them", async () => {
  const { code, stdout, stderr } = await runMainInProcess(["frobnicate"]);
  assert.equal(code, 2);
  assert.equal(stdout, "");
  assert.equal(
    stderr,
    'error[USAGE]: Cannot run "frobnicate": no such command\n  hint: run `cargo-agents --help` for the list\n',
  );
});

Deno.test("main() exits 2 for an unknown flag", async () => {
  const { code, stderr } = await runMainInProcess(["status", "--jsn"]);
  assert.equal(code, 2);
  assert.match(stderr, /^error\[USAGE\]: Cannot parse the arguments of "status": .*--jsn/);
  assert.match(stderr, /hint: run `cargo-agents status --help`/);
});

Deno.test("main() exits 2 for an unknown mcp subcommand", async () => {
  const { code, stderr } = await runMainInProcess(["mcp", "frobnicate"]);
  assert.equal(code, 2);
  assert.match(stderr, /Cannot run "mcp frobnicate": no such command/);
});

Deno.test("main.ts as a process: `agents --version` exits 0 and an unknown flag exits 2", async () => {
  const cwd = Deno.cwd();
  const version = await runMain(["agents", "--version"], { cwd });
  assert.deepEqual([version.code, version.stdout], [0, `cargo-agents ${VERSION}\n`]);
  const bad = await runMain(["--bogus"], { cwd });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /error\[USAGE\]: Cannot run cargo-agents: unknown option "--bogus"/);
});

Deno.test("main() exits 2 for an argument a command does not take", async () => {
  const { code, stderr } = await runMainInProcess(["status", "extra"]);
  assert.equal(code, 2);
  assert.match(stderr, /unexpected argument "extra"/);
  assert.equal((await runMainInProcess(["mcp-serve", "extra"])).code, 2);
});

Deno.test("main() names an unknown option in our own words, without the parser's quoting advice", async () => {
  const { code, stderr } = await runMainInProcess(["status", "--bogus"]);
  assert.equal(code, 2);
  assert.match(stderr, /^error\[USAGE\]: Cannot parse the arguments of "status": unknown option "--bogus"\n/);
  assert.doesNotMatch(stderr, /positional argument/);
  const top = await runMainInProcess(["--bogus"]);
  assert.equal(top.code, 2);
  assert.match(top.stderr, /unknown option "--bogus"/);
});

Deno.test("main() suggests the closest command for a typo", async () => {
  const { code, stderr } = await runMainInProcess(["stauts"]);
  assert.equal(code, 2);
  assert.match(stderr, /did you mean `status`\?/);
});

Deno.test("main() says an option needs a value when it has none", async () => {
  const { code, stderr } = await runMainInProcess(["mcp", "tools", "--detail"]);
  assert.equal(code, 2);
  assert.match(stderr, /option "--detail" needs a value/);
});
