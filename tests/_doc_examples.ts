/**
 * The doc-example checker: every fenced block of README.md and docs/*.md is extracted and checked, so a
 * renamed command, flag or key breaks a test, not the reader. The rules (also in docs/troubleshooting.md,
 * "Examples in the docs"):
 *
 * - A block's language is its fence's info string. A fence without one fails: output is ```text.
 * - The line `<!-- doc-test: parse-only -->` right above a fence (blank lines between are allowed) marks a
 *   block that needs a network, a browser, a terminal or a machine-wide change: it is only parsed.
 * - ```sh, ```bash, ```shell: `bash -n` parses the block; every `cargo agents …`, `cargo-agents …` and
 *   `deno run … main.ts …` line is parsed by the program's own command-line parser (the command, every
 *   flag and the arity; a renamed flag fails); every `deno task NAME` names a task of deno.json. Then,
 *   unless parse-only, the block runs whole in bash (`set -e -o pipefail`, aliases on) in a throw-away
 *   world: HOME, a Cargo workspace as the working directory (package "app", no dependencies), the
 *   config folder `~/.symposium` inside that HOME, and on PATH:
 *   - `cargo-agents` and `cargo agents` run this checkout's `main.ts` (`deno run -q -P …`). Exit 0 and 1
 *     (a user-level problem of the empty world: "no such registry", "nothing to trust", a failed doctor
 *     check) pass; 2 (usage) or 70 (a bug) fail the block.
 *   - `deno run … main.ts` is the program too (`/path/to/cargo-agents` stands for this checkout);
 *     `deno task NAME` is not run (they are the test suite itself, the compile, the demo and the benches:
 *     minutes each): it prints what it would run; `deno --version` runs; any other `deno` fails.
 *   - `cargo install`, `fetch`, `update`, `search`, `publish`, `login` and `add` fail (the network); any other
 *     `cargo` (`new`, `init`, `build`, `metadata`…) runs the real cargo offline (`CARGO_NET_OFFLINE=true`).
 *   - `curl`, `wget`, `npm`, `npx`, `pnpm`, `yarn`, `brew`, `apt`, `apt-get`, `sudo`, `rustup` fail: they
 *     need the network or change the machine, so their block must be parse-only. `git` runs with
 *     `GIT_ALLOW_PROTOCOL=file` (no network). Everything else is the machine's own program.
 *   A block has 30 s.
 * - ```console: as ```sh, with only the lines that start with `$ ` (and their `\` continuations) as
 *   commands; the rest is output.
 * - ```toml: parse-only blocks are parsed as TOML. Otherwise a comment line naming `config.toml` or
 *   `SYMPOSIUM.toml` before the first key says what the block is; without one, a top-level `[[mcp_servers]]`,
 *   `[[plugins]]`, `name` or `depends-on` makes it a plugin manifest and `[mcp]`, `[defaults]`,
 *   `[[registry]]` or `[[plugin-source]]` a config file. A plugin manifest must pass `plugin validate` (one
 *   without `name` is validated as a workspace's `SYMPOSIUM.toml`, beside a Cargo.toml); a config file must
 *   load without a Problem (the `[mcp]` table and the plugin sources). Anything else fails: name it.
 * - ```json parses as JSON, ```jsonc as JSON with comments, ```yaml as YAML, each read as `sync` reads an
 *   agent's file; one with a `symposium` entry under `mcpServers`, `servers`, `context_servers`, `mcp` or
 *   `extensions` (an agent's config as `sync` writes it) must run `mcp-serve`.
 * - ```text (output), ```js, ```ts, ```rust and other languages are not checked.
 *
 * @module
 */
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseToml } from "smol-toml";
import { parseCommandLine } from "../lib/commands/mod.ts";
import { renderDiagnostic } from "../lib/diagnostics.ts";
import { readMcpConfig } from "../lib/plugins/config.ts";
import { readSourcesConfig } from "../lib/plugin_sources/mod.ts";
import { isPlainObject, JSONC, STRICT_JSON, YAML } from "../lib/sync/formats/mod.ts";
import { ENTRY_NAME } from "../lib/sync/agents/mod.ts";
import { main, type MainDeps } from "../main.ts";

/** The checkout's root folder. */
export const REPO_ROOT: string = dirname(dirname(fileURLToPath(import.meta.url)));

/** The marker line that makes the next block parse-only. */
export const PARSE_ONLY_MARKER = "<!-- doc-test: parse-only -->";

/** Longest a runnable shell block may take, in milliseconds. */
export const BLOCK_TIMEOUT_MS = 30_000;

/** One fenced block of a Markdown file. */
export interface DocBlock {
  /** The file as shown in messages, relative to the checkout. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word, lower case; `""` when there is none. */
  lang: string;
  /** The lines between the fences. */
  text: string;
  /** Whether {@link PARSE_ONLY_MARKER} stands above the fence. */
  isParseOnly: boolean;
  /** A `<!-- doc-test: … -->` line above the fence that is not a known marker. */
  badMarker?: string;
}

/** Extracts every fenced block (``` or ~~~, three or more) of a Markdown text, in order. */
export function extractBlocks(markdown: string, file: string): DocBlock[] {
  const lines = markdown.split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence)) end++;
    let above = i - 1;
    while (above >= 0 && lines[above]!.trim() === "") above--;
    const marker = above >= 0 ? lines[above]!.trim() : "";
    const block: DocBlock = {
      file,
      line: i + 1,
      lang: open[2]!.toLowerCase(),
      text: lines.slice(i + 1, end).join("\n"),
      isParseOnly: marker === PARSE_ONLY_MARKER,
    };
    if (marker.startsWith("<!-- doc-test") && marker !== PARSE_ONLY_MARKER) block.badMarker = marker;
    blocks.push(block);
    i = end;
  }
  return blocks;
}

/** The Markdown files whose blocks are checked: README.md and docs/*.md, as they are now. */
export function docFiles(root: string = REPO_ROOT): string[] {
  const files = [join(root, "README.md")];
  try {
    for (const entry of Deno.readDirSync(join(root, "docs"))) {
      if (entry.isFile && entry.name.endsWith(".md")) files.push(join(root, "docs", entry.name));
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return files.sort();
}

// ---------------------------------------------------------------------------------------------------------
// Shell: words of a line, the program's lines, and a run in a throw-away world.

/** One simple command of a shell block: its words (quotes removed) and the block line it starts on. */
export interface ShellCommand {
  words: string[];
  /** 1-based line within the block. */
  line: number;
  /** The source text of the logical line, for messages. */
  source: string;
}

const OPERATORS = ["&&", "||", ";;", "|", ";", "&", "(", ")"];

/**
 * Splits shell text into simple commands: quotes ('…', "…"), backslash escapes and line continuations,
 * `#` comments, operators (`| && || ; &`) and heredoc bodies (skipped). Enough for documentation, not a
 * shell: `$(…)` and `${…}` stay inside their word.
 */
export function splitShell(script: string): ShellCommand[] {
  const lines = script.split("\n");
  const commands: ShellCommand[] = [];
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let logical = lines[i]!;
    while (/(^|[^\\])(\\\\)*\\$/.test(logical) && i + 1 < lines.length) {
      logical = logical.slice(0, -1) + " " + lines[++i]!;
    }
    const heredoc = /<<-?\s*['"]?(\w+)['"]?/.exec(logical);
    for (const words of wordsOf(logical)) {
      if (words.length > 0) commands.push({ words, line: start + 1, source: logical.trim() });
    }
    if (heredoc) { while (i + 1 < lines.length && lines[i + 1]!.trim() !== heredoc[1]) i++; }
    if (heredoc) i++;
  }
  return commands;
}

/** The words of one logical line, grouped into simple commands. */
function wordsOf(line: string): string[][] {
  const groups: string[][] = [[]];
  let word: string | null = null;
  const push = () => {
    if (word !== null) groups[groups.length - 1]!.push(word);
    word = null;
  };
  for (let at = 0; at < line.length; at++) {
    const c = line[at]!;
    if (c === " " || c === "\t") {
      push();
      continue;
    }
    if (c === "#" && word === null) break;
    const op = OPERATORS.find((o) => line.startsWith(o, at));
    if (op && !(op === "&" && (line[at - 1] === ">" || line[at + 1] === ">"))) {
      push();
      groups.push([]);
      at += op.length - 1;
      continue;
    }
    if (c === "'") {
      const close = line.indexOf("'", at + 1);
      word = (word ?? "") + line.slice(at + 1, close < 0 ? line.length : close);
      at = close < 0 ? line.length : close;
    } else if (c === '"') {
      let text = "";
      for (at++; at < line.length && line[at] !== '"'; at++) {
        if (line[at] === "\\" && at + 1 < line.length) at++;
        text += line[at];
      }
      word = (word ?? "") + text;
    } else if (c === "\\" && at + 1 < line.length) {
      word = (word ?? "") + line[++at];
    } else word = (word ?? "") + c;
  }
  push();
  return groups;
}

/** Words that only redirect (`> f`, `2>&1`, `<f`), dropped before a command's arguments are read. */
function withoutRedirections(words: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (/^\d*(>>?|<)&?\d*$/.test(w)) i++;
    else if (/^\d*(>>?|<)/.test(w)) continue;
    else out.push(w);
  }
  return out;
}

/**
 * The program's arguments when `words` run it: `cargo agents …`, `cargo-agents …`, or `deno run … main.ts …`
 * (leading `VAR=value` words, `sudo`, `exec`, `time` and `command` skipped); else `undefined`.
 */
export function programArgs(words: string[]): string[] | undefined {
  let w = withoutRedirections(words);
  while (
    w.length > 0 && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0]!) || ["sudo", "exec", "time"].includes(w[0]!))
  ) {
    w = w.slice(1);
  }
  const head = w[0]?.split("/").pop();
  if (head === "cargo" && w[1] === "agents") return w.slice(2);
  if (head === "cargo-agents") return w.slice(1);
  if (head === "deno" && w[1] === "run") {
    const entry = w.findIndex((x) => x.endsWith("main.ts"));
    if (entry > 0) return w.slice(entry + 1);
  }
  return undefined;
}

/** The task a `deno task [flags] NAME` line names, else `undefined`. */
export function denoTaskName(words: string[]): string | undefined {
  const w = withoutRedirections(words);
  if (w[0]?.split("/").pop() !== "deno" || w[1] !== "task") return undefined;
  for (let i = 2; i < w.length; i++) {
    if (w[i] === "--config" || w[i] === "-c" || w[i] === "--cwd") i++;
    else if (!w[i]!.startsWith("-")) return w[i];
  }
  return "";
}

/** The shell text of a block: for ```console the `$ ` lines only (others blank, so line numbers hold). */
export function shellScript(block: DocBlock): string {
  if (block.lang !== "console") return block.text;
  let continued = false;
  return block.text.split("\n").map((l) => {
    const isCommand = continued || l.startsWith("$ ");
    const text = isCommand ? (continued ? l : l.slice(2)) : "";
    continued = isCommand && text.endsWith("\\");
    return text;
  }).join("\n");
}

/** The tasks of deno.json. */
function denoTasks(): Record<string, string> {
  return JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, "deno.json"))).tasks;
}

/** Parse-level problems of a shell block: bash syntax, the program's lines, `deno task` names. */
export async function checkShellStatically(block: DocBlock): Promise<string[]> {
  const script = shellScript(block);
  const problems: string[] = [];
  const syntax = await new Deno.Command("bash", {
    args: ["-n", "-O", "expand_aliases", "-c", script],
    stderr: "piped",
  })
    .output();
  if (!syntax.success) {
    problems.push(`bash cannot parse it: ${new TextDecoder().decode(syntax.stderr).trim()}`);
  }
  const tasks = denoTasks();
  for (const command of splitShell(script)) {
    const at = `line ${block.line + command.line} \`${command.source}\``;
    const task = denoTaskName(command.words);
    if (task !== undefined && !(task in tasks)) {
      problems.push(`${at}: deno.json has no task "${task}" (tasks: ${Object.keys(tasks).join(", ")})`);
    }
    const args = programArgs(command.words);
    if (args === undefined) continue;
    let rest = args.filter((a) => a !== "-v" && a !== "--verbose");
    if (rest[0] === "agents") rest = rest.slice(1);
    try {
      parseCommandLine(rest);
    } catch (error) {
      problems.push(`${at}: ${renderDiagnostic(error).replaceAll("\n", " ")}`);
    }
  }
  return problems;
}

/** Where the world's shims find the real programs. */
function realProgram(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (Deno.statSync(join(dir, name)).isFile) return join(dir, name);
    } catch {
      // Not in this PATH entry: try the next.
    }
  }
  return undefined;
}

const REFUSED = ["curl", "wget", "npm", "npx", "pnpm", "yarn", "brew", "apt", "apt-get", "sudo", "rustup"];

/** Writes the throw-away world of one block under `root`: home, workspace, shims. Returns its env. */
function buildWorld(root: string): Record<string, string> {
  const home = join(root, "home");
  const ws = join(root, "ws");
  const bin = join(root, "bin");
  for (const d of [home, join(ws, "src"), bin]) Deno.mkdirSync(d, { recursive: true });
  Deno.writeTextFileSync(
    join(ws, "Cargo.toml"),
    '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n',
  );
  Deno.writeTextFileSync(join(ws, "src", "lib.rs"), "");
  const deno = Deno.execPath();
  const realHome = Deno.env.get("HOME") ?? "";
  const shim = (name: string, body: string) =>
    Deno.writeTextFileSync(join(bin, name), `#!/usr/bin/env bash\n${body}\n`, { mode: 0o755 });
  shim(
    "cargo-agents",
    `"${deno}" run -q -P --v8-flags=--stack-size=1800 --config "${REPO_ROOT}/deno.json" "${REPO_ROOT}/main.ts" "$@"
rc=$?
printf '%s\\t%s\\n' "$rc" "cargo-agents $*" >>"$DOCTEST_LOG"
# Exit 1 is a user-level problem of the empty world (see the module doc): the block goes on.
if [ "$rc" = 1 ]; then exit 0; fi
exit "$rc"`,
  );
  const cargo = realProgram("cargo");
  shim(
    "cargo",
    `if [ "$1" = agents ]; then shift; exec cargo-agents "$@"; fi
case "$1" in install|fetch|update|search|publish|login|add)
  echo "doc-test: cargo $1 needs the network or changes the machine: mark the block ${PARSE_ONLY_MARKER}" >&2; exit 126;;
esac
${
      cargo
        ? `CARGO_NET_OFFLINE=true CARGO_HOME="${
          Deno.env.get("CARGO_HOME") ?? join(realHome, ".cargo")
        }" RUSTUP_HOME="${Deno.env.get("RUSTUP_HOME") ?? join(realHome, ".rustup")}" exec "${cargo}" "$@"`
        : `echo "doc-test: cargo is not installed here (install Rust: https://rustup.rs)" >&2; exit 127`
    }`,
  );
  shim(
    "deno",
    `args=("\${@//\\/path\\/to\\/cargo-agents/${REPO_ROOT.replaceAll("/", "\\/")}}")
if [ "$1" = task ]; then echo "doc-test: not run: deno $* (a task of deno.json; checked to exist)"; exit 0; fi
if [ "$1" = --version ] || [ "$1" = -V ]; then exec "${deno}" "$@"; fi
if [ "$1" = run ]; then
  for i in "\${!args[@]}"; do
    if [ "\${args[$i]}" = "${REPO_ROOT}/main.ts" ]; then exec cargo-agents "\${args[@]:$((i + 1))}"; fi
  done
fi
echo "doc-test: not run: deno $* (only deno task, deno run … main.ts and deno --version are)" >&2; exit 126`,
  );
  for (const name of REFUSED) {
    shim(
      name,
      `echo "doc-test: $(basename "$0") needs the network or changes the machine: mark the block ${PARSE_ONLY_MARKER}" >&2; exit 126`,
    );
  }
  return {
    HOME: home,
    PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    DENO_DIR: Deno.env.get("DENO_DIR") ?? join(realHome, ".cache", "deno"),
    DENO_NO_UPDATE_CHECK: "1",
    GIT_ALLOW_PROTOCOL: "file",
    NO_COLOR: "1",
    LANG: "C.UTF-8",
    DOCTEST_LOG: join(root, "program.log"),
  };
}

/** The outcome of running one shell block: problems (empty when it ran) and the program runs it made. */
export interface ShellRun {
  problems: string[];
  /** `exit-code<TAB>cargo-agents args` per program run, in order. */
  programRuns: string[];
}

/** Runs a shell block whole in a fresh throw-away world (see the module doc); the world is removed after. */
export async function runShellBlock(block: DocBlock): Promise<ShellRun> {
  const root = await Deno.makeTempDir({ prefix: "doc-example-" });
  try {
    const env = buildWorld(root);
    const failFile = join(root, "failed");
    // One line of preamble, so $LINENO - 1 is the block's own line.
    const preamble =
      `set -e -o pipefail; shopt -s expand_aliases; trap 'rc=$?; printf "%s\\t%s\\t%s" "$((LINENO - 1))" "$rc" "$BASH_COMMAND" >"${failFile}"' ERR`;
    await Deno.writeTextFile(join(root, "block.sh"), `${preamble}\n${shellScript(block)}\n`);
    const child = new Deno.Command("bash", {
      args: [join(root, "block.sh")],
      cwd: join(root, "ws"),
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    const timer = setTimeout(() => {
      try {
        Deno.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }, BLOCK_TIMEOUT_MS);
    const out = await child.output();
    clearTimeout(timer);
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    const programRuns = (await Deno.readTextFile(env.DOCTEST_LOG!).catch(() => "")).split("\n").filter((l) =>
      l
    );
    const problems: string[] = [];
    if (out.signal === "SIGKILL") {
      problems.push(
        `did not finish in ${
          BLOCK_TIMEOUT_MS / 1000
        } s (needs a network, a browser or a terminal? mark it ${PARSE_ONLY_MARKER})`,
      );
    } else if (!out.success) {
      const failed = await Deno.readTextFile(failFile).catch(() => "");
      const [line, rc, command] = failed.split("\t");
      problems.push(
        line
          ? `line ${block.line + Number(line)} \`${command}\` exited ${rc}: ${lastLines(text)}`
          : `bash exited ${out.code}: ${lastLines(text)}`,
      );
    }
    return { problems, programRuns };
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

function lastLines(text: string): string {
  return text.trim().split("\n").slice(-6).join(" | ");
}

// ---------------------------------------------------------------------------------------------------------
// TOML, JSON, YAML

const MANIFEST_TOP_KEYS = ["mcp_servers", "plugins", "name", "depends-on"];
const CONFIG_TOP_KEYS = ["mcp", "defaults", "registry", "plugin-source"];

/** What a TOML block is: by a comment naming the file before the first key, else by its top-level keys. */
export function tomlKind(text: string, value: Record<string, unknown>): "manifest" | "config" | undefined {
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (t === "") continue;
    if (!t.startsWith("#")) break;
    if (t.includes("config.toml")) return "config";
    if (t.includes("SYMPOSIUM.toml")) return "manifest";
  }
  const keys = Object.keys(value);
  if (keys.some((k) => MANIFEST_TOP_KEYS.includes(k))) return "manifest";
  if (keys.some((k) => CONFIG_TOP_KEYS.includes(k))) return "config";
  return undefined;
}

/** Runs `main()` in process in `cwd` with a throw-away HOME; returns the exit code and all output. */
async function runInProcess(
  argv: string[],
  cwd: string,
  home: string,
): Promise<{ code: number; output: string }> {
  let output = "";
  const deps: MainDeps = {
    env: { HOME: home },
    cwd,
    homeDir: home,
    execPath: Deno.execPath(),
    selfCommand: { command: Deno.execPath(), args: [] },
    writeOut: (t) => void (output += t),
    writeErr: (t) => void (output += t),
    signal: new AbortController().signal,
  };
  return { code: await main(argv, deps), output };
}

/** Problems of a TOML block (see the module doc). */
export async function checkToml(block: DocBlock): Promise<string[]> {
  let value: Record<string, unknown>;
  try {
    value = parseToml(block.text) as Record<string, unknown>;
  } catch (error) {
    return [`not valid TOML: ${(error as Error).message.split("\n")[0]}`];
  }
  if (block.isParseOnly) return [];
  const kind = tomlKind(block.text, value);
  if (kind === undefined) {
    return [
      `cannot tell a plugin manifest from a config file: start it with a comment naming SYMPOSIUM.toml or config.toml, or mark it ${PARSE_ONLY_MARKER}`,
    ];
  }
  const root = await Deno.makeTempDir({ prefix: "doc-toml-" });
  try {
    if (kind === "config") {
      const file = join(root, "config.toml");
      const problems = [
        ...readMcpConfig(block.text, file).problems,
        ...readSourcesConfig(block.text, file, { configDir: root, env: {} }).problems,
      ];
      return problems.map((p) => `config.toml does not load: ${renderDiagnostic(p).replaceAll("\n", " ")}`);
    }
    const name = typeof value.name === "string" ? value.name : undefined;
    const folder = join(root, name ?? "ws");
    await Deno.mkdir(folder, { recursive: true });
    if (name === undefined) {
      await Deno.writeTextFile(join(folder, "Cargo.toml"), '[package]\nname = "ws"\nversion = "0.1.0"\n');
    }
    await Deno.writeTextFile(join(folder, "SYMPOSIUM.toml"), block.text);
    const { code, output } = await runInProcess(["plugin", "validate", folder], root, join(root, "home"));
    if (code === 0) return [];
    const shown = output.replaceAll(root + "/", "").trim().split("\n").join(" | ");
    return [`plugin validate fails (exit ${code}): ${shown}`];
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** The keys under which the agents' config files hold MCP servers (see lib/sync/agents/). */
const SERVER_CONTAINERS = ["mcpServers", "servers", "context_servers", "mcp", "amp.mcpServers", "extensions"];

/**
 * Problems of a JSON, JSONC or YAML block, read by the sync module's own readers (`STRICT_JSON`, `JSONC`,
 * `YAML` of lib/sync/formats/). A block holding a `symposium` entry under one of {@link SERVER_CONTAINERS} is
 * an agent's config as `sync` writes it: the entry must name a program and run `mcp-serve`.
 */
export function checkData(block: DocBlock): string[] {
  const format = block.lang === "json" ? STRICT_JSON : block.lang === "jsonc" ? JSONC : YAML;
  let doc: unknown;
  try {
    doc = format.read(block.text, "the block");
  } catch (error) {
    return [`not valid ${format.label}: ${(error as Error).message}`];
  }
  const problems: string[] = [];
  for (const key of SERVER_CONTAINERS) {
    const container = isPlainObject(doc) ? doc[key] : undefined;
    const entry = isPlainObject(container) ? container[ENTRY_NAME] : undefined;
    if (entry === undefined) continue;
    const hasProgram = isPlainObject(entry) && ["command", "cmd", "url"].some((k) => k in entry);
    if (!hasProgram || !JSON.stringify(entry).includes("mcp-serve")) {
      problems.push(
        `the "${ENTRY_NAME}" entry under "${key}" does not run \`cargo-agents mcp-serve\` (as sync writes it)`,
      );
    }
  }
  return problems;
}

const SHELL = ["sh", "bash", "shell", "console"];

/** Every problem of one block, each prefixed with `file:line (lang)`. */
export async function checkBlock(block: DocBlock): Promise<string[]> {
  const where = `${block.file}:${block.line} (\`\`\`${block.lang})`;
  let problems: string[];
  if (block.badMarker) problems = [`unknown marker ${block.badMarker}: the only one is ${PARSE_ONLY_MARKER}`];
  else if (block.lang === "") problems = ["the fence has no language: use ```text for output"];
  else if (SHELL.includes(block.lang)) {
    problems = await checkShellStatically(block);
    if (problems.length === 0 && !block.isParseOnly) problems = (await runShellBlock(block)).problems;
  } else if (block.lang === "toml") problems = await checkToml(block);
  else if (["json", "jsonc", "yaml", "yml"].includes(block.lang)) problems = checkData(block);
  else problems = [];
  return problems.map((p) => `${where}: ${p}`);
}

/** Checks every block of `files`, `concurrency` at a time; resolves to every problem. */
export async function checkFiles(files: string[], concurrency = 3): Promise<string[]> {
  const blocks = files.flatMap((f) => extractBlocks(Deno.readTextFileSync(f), relative(REPO_ROOT, f)));
  const results: string[][] = new Array(blocks.length);
  let next = 0;
  const worker = async () => {
    while (next < blocks.length) {
      const i = next++;
      results[i] = await checkBlock(blocks[i]!);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results.flat();
}
