/**
 * Every command's `--help` says what the command does, lists every flag its parser accepts, and shows at
 * least one example that the parser itself accepts (so a renamed flag breaks this test, not the reader).
 *
 * @module
 */
import assert from "node:assert/strict";
import { listCommands, parseCommandLine } from "../../lib/commands/mod.ts";
import { runMainInProcess } from "../_fakes_foundation.ts";

/** The lines under the `Examples:` heading of a help text, without their indent. */
function examples(help: string): string[] {
  const at = help.split("\n").indexOf("Examples:");
  if (at < 0) return [];
  const out: string[] = [];
  for (const line of help.split("\n").slice(at + 1)) {
    if (!line.startsWith("  ")) break;
    out.push(line.trim());
  }
  return out;
}

/** The program's arguments in an example line, up to a pipe: `cargo agents status --json | jq …`. */
function exampleArgs(line: string): string[] {
  const command = line.slice(line.indexOf("cargo agents ") + "cargo agents ".length).split(" | ")[0]!;
  return (command.match(/"[^"]*"|'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^["']|["']$/g, ""));
}

for (const command of listCommands()) {
  Deno.test(`\`${command.name} --help\` says what it does, lists every flag, and shows an example that parses`, async () => {
    const out = await runMainInProcess([...command.name.split(" "), "--help"]);
    assert.equal(out.code, 0);
    assert.equal(out.stdout, command.help + "\n");
    const [usage, blank, description] = command.help.split("\n\n");
    assert.match(usage!, new RegExp(`^Usage: cargo-agents ${command.name}\\b`));
    assert.ok(blank !== undefined && !/^(Options|Examples):/.test(blank), "no line of what the command does");
    assert.ok(description !== undefined || blank !== undefined);
    for (const flag of command.flags) {
      assert.match(
        command.help,
        new RegExp(`\\n {2}${flag}\\b`),
        `${flag} is accepted but not listed under Options`,
      );
    }
    const lines = examples(command.help);
    assert.ok(lines.length >= 1, "no example under Examples:");
    for (const line of lines) {
      assert.ok(
        line.includes(`cargo agents ${command.name}`),
        `example "${line}" does not run ${command.name}`,
      );
      const parsed = parseCommandLine(exampleArgs(line));
      assert.equal(parsed.kind, "command", `example "${line}" does not parse as a command`);
      if (parsed.kind === "command") assert.equal(parsed.name, command.name);
    }
  });
}

Deno.test("the help test would catch a flag missing from a help text", () => {
  const flags = listCommands().find((c) => c.name === "plugin sync")!.flags;
  assert.ok(flags.includes("--due") && flags.includes("--timeout-secs"), flags.join(" "));
  assert.doesNotMatch("Options:\n  --timeout-secs N", new RegExp(`\\n {2}--due\\b`));
});

Deno.test("the top-level help lists every command and the group helps list theirs", async () => {
  const top = await runMainInProcess(["--help"]);
  for (const command of listCommands()) assert.ok(top.stdout.includes(`  ${command.name} `), command.name);
  for (const group of ["mcp", "plugin"]) {
    const out = await runMainInProcess([group, "--help"]);
    assert.equal(out.code, 0);
    for (const command of listCommands().filter((c) => c.name.startsWith(`${group} `))) {
      assert.ok(out.stdout.includes(`  ${command.name} `), command.name);
    }
  }
});
