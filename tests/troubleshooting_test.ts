/**
 * docs/troubleshooting.md has an entry (`### CODE`) for every error code a user can see: every code string
 * of lib/, every JSON-RPC error code mcp-serve answers with, every exit code of main.ts and every kind of
 * `execute` failure. And a printed error names its entry, which `cargo agents help CODE` prints.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { runMainInProcess } from "./_fakes_foundation.ts";
import { renderDiagnostic, troubleshootingAnchor, UsageError, UserError } from "../lib/diagnostics.ts";
import { findTroubleshootingEntry } from "../lib/commands/_troubleshooting.ts";
import { REPO_ROOT } from "./_doc_examples.ts";

const DOC = join(REPO_ROOT, "docs", "troubleshooting.md");

/**
 * CONSTANT_CASE strings of lib/ that are not error codes: environment variables' names (those of
 * lib/backends/child_env.ts are left out whole: that file is a list of them), Node's parseArgs codes that
 * lib/commands/mod.ts translates into USAGE, a network error's code that lib/net/ reads, and a prefix
 * matched with startsWith. A new string of this shape
 * in lib/ fails the test until it has an entry in docs/troubleshooting.md or is listed here.
 */
const NOT_CODES = new Set([
  "CLAUDE_CODE_ENTRYPOINT",
  "CLAUDE_CONFIG_DIR",
  "CLINE_DIR",
  "CODEX_HOME",
  "CODEX_SANDBOX",
  "CODEX_SANDBOX_NETWORK_DISABLED",
  "COPILOT_HOME",
  "CURSOR_AGENT",
  "FLATPAK_XDG_CONFIG_HOME",
  "GEMINI_CLI",
  "KIMI_CODE_HOME",
  "OPENCODE_CONFIG",
  "PI_CODING_AGENT_DIR",
  "QWEN_CODE",
  "SYMPOSIUM_BROWSER",
  "SYMPOSIUM_LOGIN_TIMEOUT_MS",
  "SYMPOSIUM_RECOMMENDATIONS_URL",
  "VSCODE_APPDATA",
  "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
  "ERR_PARSE_ARGS_UNKNOWN_OPTION",
  "TRUST_FILE",
  "ENOTFOUND",
]);

/** Every `.ts` file under `dir`, recursively. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** Each code a user can see, with the first `file:line` that uses it. */
function collectCodes(): Map<string, string> {
  const codes = new Map<string, string>();
  const add = (code: string, file: string, text: string, index: number) => {
    if (NOT_CODES.has(code) || codes.has(code)) return;
    codes.set(code, `${relative(REPO_ROOT, file)}:${text.slice(0, index).split("\n").length}`);
  };
  for (const file of sourceFiles(join(REPO_ROOT, "lib"))) {
    const text = Deno.readTextFileSync(file);
    const patterns = [
      // A JSON-RPC error code, in code or in the docstring that says what is answered.
      /(?<![\w.])(-32\d{3})\b/g,
      // A single-word code where one is set: new XError("CANCELLED"), super("USAGE"), code: "X".
      /(?:Error|super)\(\s*"([A-Z]{3,})"|\bcode\s*[:=]\s*"([A-Z]{3,})"/g,
      // The kinds of an execute failure ({"error":"script_timeout",…}).
      ...(file.endsWith(join("sandbox", "protocol", "types.ts")) ? [/\berror: "([a-z_]+)"/g] : []),
    ];
    if (!file.endsWith("child_env.ts")) patterns.push(/"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"/g);
    for (const pattern of patterns) {
      for (const m of text.matchAll(pattern)) add((m[1] ?? m[2])!, file, text, m.index);
    }
  }
  // What renderDiagnostic prints for what is not a UserError (lib/diagnostics.ts).
  codes.set("INTERNAL", "lib/diagnostics.ts");
  // main.ts's exit codes, from its header ("Exit codes: 0 ok, 1 user error, …").
  const header = /Exit codes: ([^\n]*)/.exec(Deno.readTextFileSync(join(REPO_ROOT, "main.ts")))![1]!;
  for (const m of header.matchAll(/(\d+) /g)) codes.set(`exit ${m[1]}`, "main.ts:5");
  return codes;
}

Deno.test("docs/troubleshooting.md has an entry with a cause or a fix for every code a user can see", () => {
  const text = Deno.readTextFileSync(DOC);
  const codes = collectCodes();
  assert.ok(codes.size > 100, `only ${codes.size} codes found: the collector broke`);
  for (
    const probe of [
      "MANIFEST_UNKNOWN_KEY",
      "USAGE",
      "CANCELLED",
      "-32602",
      "-32022",
      "exit 70",
      "script_timeout",
    ]
  ) {
    assert.ok(codes.has(probe), `the collector misses ${probe}`);
  }
  const missing = [...codes].filter(([code]) => {
    const entry = findTroubleshootingEntry(text, code);
    // `cancelled` and `internal` (execute failures) share the entries of CANCELLED and INTERNAL.
    const heading = entry?.split("\n")[0]?.toLowerCase();
    return heading !== `### ${code}`.toLowerCase() || entry!.split("\n").length < 3;
  }).map(([code, where]) => `### ${code} (used at ${where})`);
  assert.deepEqual(
    missing,
    [],
    `docs/troubleshooting.md has no entry (a \`### CODE\` heading, then its cause and fix) for:\n${
      missing.join("\n")
    }\n(an environment variable's name is not a code: list it in NOT_CODES of tests/troubleshooting_test.ts)`,
  );
});

Deno.test("every entry heading's anchor is what the error's see: line names", () => {
  const text = Deno.readTextFileSync(DOC);
  const headings = text.split("\n").filter((l) => l.startsWith("### ")).map((l) => l.slice(4));
  const anchors = headings.map(troubleshootingAnchor);
  assert.equal(new Set(anchors).size, anchors.length, "two entries share an anchor");
  // GitHub's anchor of a heading: lower case; characters other than letters, digits, "_", "-" and spaces
  // dropped; spaces become "-".
  for (const h of headings) {
    assert.equal(troubleshootingAnchor(h), h.toLowerCase().replace(/[^a-z0-9_\- ]/g, "").replace(/ /g, "-"));
  }
});

Deno.test("an error printed by the CLI names its troubleshooting entry; a usage error names --help instead", () => {
  const rendered = renderDiagnostic(
    new UserError("CONFIG_SYNTAX", "Cannot load config file: bad", { hint: "fix it" }),
  );
  assert.equal(
    rendered,
    "error[CONFIG_SYNTAX]: Cannot load config file: bad\n  hint: fix it\n" +
      "  see: cargo agents help CONFIG_SYNTAX (docs/troubleshooting.md#config_syntax)",
  );
  assert.doesNotMatch(renderDiagnostic(new UsageError("Cannot run: x", { hint: "run --help" })), /see:/);
});

Deno.test("`help CODE` prints the entry; `help COMMAND` the command's help; an unknown word is a usage error", async () => {
  const entry = await runMainInProcess(["help", "CONFIG_UNSAFE"]);
  assert.equal(entry.code, 0);
  assert.match(entry.stdout, /^### CONFIG_UNSAFE\n\nCause: .*\n[^#]*Fix: /);
  assert.doesNotMatch(entry.stdout, /### CONFIG_DIR_NOT_A_FOLDER/, "the entry ends at the next heading");
  assert.match((await runMainInProcess(["help", "config_unsafe"])).stdout, /^### CONFIG_UNSAFE\n/);
  assert.match((await runMainInProcess(["help", "-32602"])).stdout, /^### -32602\n/);
  assert.match((await runMainInProcess(["help", "mcp", "tools"])).stdout, /^Usage: cargo-agents mcp tools/);
  const unknown = await runMainInProcess(["help", "CONFIG_UNSAF"]);
  assert.equal(unknown.code, 2);
  assert.match(
    unknown.stderr,
    /error\[USAGE\]: Cannot show help for "CONFIG_UNSAF".*\n.*cargo-agents help CONFIG_UNSAFE/,
  );
});
