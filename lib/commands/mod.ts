/**
 * The command table of `cargo-agents`: every command's summary, help text, options and the module that runs
 * it (imported when the command runs, so a command loads only what it uses), and the routing of the
 * arguments after the program name to one of them. `main.ts` builds the context and renders errors; this
 * module must never read `Deno.args`, print on its own, or exit.
 *
 * @module
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { closestMatch, UsageError } from "../diagnostics.ts";
import type { CommandContext } from "./context.ts";
import denoJson from "../../deno.json" with { type: "json" };
export type { CommandContext } from "./context.ts";

/** The program's version, from `deno.json` (the only place it is written). */
export const PROGRAM_VERSION: string = denoJson.version;
const VERSION = PROGRAM_VERSION;

interface CommandDef {
  /** One line for the command list. */
  summary: string;
  /** Full `--help` text: usage, then every flag with its unit and default. */
  help: string;
  options: Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }>;
  /** Positional arguments accepted: `"none"`, `"one"` or `"many"`. Default `"none"`. */
  positionals?: "none" | "one" | "many";
  /** Runs the command; resolves to the exit code. */
  run(values: Record<string, unknown>, positionals: string[], ctx: CommandContext): Promise<number>;
}

const COMMANDS: Record<string, CommandDef> = {
  "mcp-serve": {
    summary: "Run the MCP meta-server on stdio (stdout carries JSON-RPC only)",
    help: `Usage: cargo-agents mcp-serve [--config-dir DIR]

Runs the meta-server for the workspace around the current directory. An agent
starts it; stdout carries JSON-RPC only, logs go to stderr and <config>/logs/.

Options:
  --config-dir DIR   The configuration folder. Default: $SYMPOSIUM_HOME, else
                     $XDG_CONFIG_HOME/symposium, else ~/.symposium

Examples:
  cargo agents mcp-serve
  cargo agents mcp-serve --config-dir ~/.config/symposium-work`,
    options: { "config-dir": { type: "string" } },
    run: async (v, _p, ctx) => (await import("./serve.ts")).runServe(withConfigDir(ctx, v["config-dir"])),
  },
  "status": {
    summary: "Show plugins and which MCP servers apply here, and why",
    help: `Usage: cargo-agents status [--json]

Lists every plugin, every MCP server it declares, whether the server applies
to the workspace around the current directory and why (or why not), its
transport and, for remote servers, the sign-in state. Starts nothing.

Options:
  --json   Print one JSON document instead of text. Default: off

Examples:
  cargo agents status
  cargo agents status --json | jq '.servers[] | {name, state}'`,
    options: { json: { type: "boolean" } },
    run: async (v, _p, ctx) => (await import("./status.ts")).runStatus({ json: v.json === true }, ctx),
  },
  "doctor": {
    summary: "Check what may be wrong: config, plugins, agents, servers, sign-ins, sandbox",
    help: `Usage: cargo-agents doctor [--json] [--timeout-secs N] [--config-dir DIR]

The first thing to run when something does not work: checks, without a model,
the program, config.toml, the workspace and its plugins (trust), git registries,
each detected agent's MCP entry (as \`sync\` would write it), each server in scope
(started at once and asked tools/list, each bounded), remote sign-ins, the
sandbox and the last session's log. One line each, \u2713, ! (worth knowing) or \u2717
with the fix. Exit 1 when any check fails (\u2717).

Options:
  --json             Print one JSON document instead of text. Default: off
  --timeout-secs N   Longest a server may take to start and list its tools,
                     in seconds (1 to 300). Default: 10
  --config-dir DIR   The configuration folder (as given to \`sync\`). Default:
                     $SYMPOSIUM_HOME, else $XDG_CONFIG_HOME/symposium, else ~/.symposium

Examples:
  cargo agents doctor
  cargo agents doctor --json | jq '.checks[] | select(.state == "fail")'`,
    options: {
      json: { type: "boolean" },
      "timeout-secs": { type: "string" },
      "config-dir": { type: "string" },
    },
    run: async (v, _p, ctx) => {
      const secs = v["timeout-secs"] === undefined ? undefined : Number(v["timeout-secs"]);
      if (secs !== undefined && !(Number.isInteger(secs) && secs >= 1 && secs <= 300)) {
        throw new UsageError(
          `Cannot use --timeout-secs "${v["timeout-secs"]}": expected a whole number from 1 to 300`,
        );
      }
      return (await import("./doctor.ts")).runDoctor({
        json: v.json === true,
        version: VERSION,
        timeoutMs: secs === undefined ? undefined : secs * 1000,
      }, withConfigDir(ctx, v["config-dir"]));
    },
  },
  "sync": {
    summary: "Write the one `symposium` MCP entry into each agent's config",
    help:
      `Usage: cargo-agents sync [--agent NAME]... [--project [--via-cargo]] [--dry-run] [--remove] [--force]
       cargo-agents sync --list [--project]

Registers the meta-server (this program with \`mcp-serve\`) under the name
"symposium" in the MCP configuration of every detected coding agent.

Options:
  --agent NAME       Only this agent (repeatable; an id from --list). Default: every detected agent
  --project          Write project-level files in the workspace where the agent has them; they
                     start \`cargo-agents mcp-serve\` from PATH. Default: off
  --via-cargo        With --project: start \`cargo agents mcp-serve\` instead. Default: off
  --dry-run          Print a unified diff per file and write nothing. Default: off
  --remove           Take the "symposium" entry out instead. Default: off
  --force            Also replace config files that are read-only (they stay read-only). Default: off
  --list             List every agent id, whether it is detected and why, and its files; write nothing
  --config-dir DIR   The configuration folder the entry carries (\`mcp-serve --config-dir\`).
                     Default: $SYMPOSIUM_HOME, else $XDG_CONFIG_HOME/symposium, else ~/.symposium

Examples:
  cargo agents sync --dry-run
  cargo agents sync --agent claude-code --project`,
    options: {
      agent: { type: "string", multiple: true },
      project: { type: "boolean" },
      "dry-run": { type: "boolean" },
      remove: { type: "boolean" },
      force: { type: "boolean" },
      list: { type: "boolean" },
      "via-cargo": { type: "boolean" },
      "config-dir": { type: "string" },
    },
    run: async (v, _p, ctx) =>
      (await import("./sync.ts")).runSync({
        agents: (v.agent as string[] | undefined) ?? [],
        project: v.project === true,
        dryRun: v["dry-run"] === true,
        remove: v.remove === true,
        force: v.force === true,
        list: v.list === true,
        viaCargo: v["via-cargo"] === true,
      }, withConfigDir(ctx, v["config-dir"])),
  },
  "mcp login": {
    summary: "Sign in to a remote MCP server (OAuth, opens the browser)",
    help: `Usage: cargo-agents mcp login <server>

Signs in to the remote MCP server <server> (as named in its plugin manifest):
opens the browser, waits up to 300 s for the redirect, stores the tokens in
<config>/credentials/<server>.json (mode 0600).

Examples:
  cargo agents mcp login linear`,
    options: {},
    positionals: "one",
    run: async (_v, p, ctx) =>
      (await import("./login.ts")).runLogin({ server: onePositional(p, "server") }, ctx),
  },
  "mcp logout": {
    summary: "Forget (and revoke) the stored sign-in of a remote MCP server",
    help: `Usage: cargo-agents mcp logout <server>

Revokes the token at the server when it offers revocation (RFC 7009) and
deletes <config>/credentials/<server>.json. Running it twice is harmless.

Examples:
  cargo agents mcp logout linear`,
    options: {},
    positionals: "one",
    run: async (_v, p, ctx) =>
      (await import("./login.ts")).runLogout({ server: onePositional(p, "server") }, ctx),
  },
  "mcp exec": {
    summary: "Run one script as `execute` would and print the result",
    help: `Usage: cargo-agents mcp exec <file.js|-> [--trace]

Runs the script in <file.js> (or stdin for "-") exactly as the \`execute\` tool
would in this workspace, and prints the text the agent would receive. Exit 1
when the result is an error.

Options:
  --trace   Also print the run's trace, as execute { trace: true } answers it:
            each tool call's server, tool, start and duration (ms), bytes of
            arguments and result, ok or its error code. Default: off

Examples:
  cargo agents mcp exec find_todos.js
  echo 'return 6 * 7' | cargo agents mcp exec - --trace`,
    options: { trace: { type: "boolean" } },
    positionals: "one",
    run: async (v, p, ctx) =>
      (await import("./exec.ts")).runExec(
        { file: onePositional(p, "file.js|-"), trace: v.trace === true },
        ctx,
      ),
  },
  "mcp tools": {
    summary: "Print what `list_tools` would answer",
    help: `Usage: cargo-agents mcp tools [server...] [--detail names|signatures|full] [--pattern GLOB]
                          [--query WORDS [--limit N]]

Prints what the \`list_tools\` tool would answer in this workspace. Naming
servers implies --detail full.

Options:
  --detail LEVEL   names, signatures or full. Default: names
  --pattern GLOB   Only tools whose name matches (\`*\` = any run of characters)
  --query WORDS    Ranked search by what a tool does; starts no server
  --limit N        Most search results, 1 to 50. Default: 10

Examples:
  cargo agents mcp tools --query "read a file" --limit 5
  cargo agents mcp tools filesystem --detail signatures`,
    options: {
      detail: { type: "string" },
      pattern: { type: "string" },
      query: { type: "string" },
      limit: { type: "string" },
    },
    positionals: "many",
    run: async (v, p, ctx) => {
      const detail = v.detail as string | undefined;
      if (detail !== undefined && !["names", "signatures", "full"].includes(detail)) {
        throw new UsageError(`Cannot use --detail "${detail}": expected names, signatures or full`);
      }
      const limit = v.limit === undefined ? undefined : Number(v.limit);
      if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 50)) {
        throw new UsageError(`Cannot use --limit "${v.limit}": expected a whole number from 1 to 50`);
      }
      return (await import("./tools.ts")).runTools({
        servers: p,
        detail: detail as "names" | "signatures" | "full" | undefined,
        pattern: v.pattern as string | undefined,
        query: v.query as string | undefined,
        limit,
      }, ctx);
    },
  },
  "report": {
    summary: "Write an HTML page of a session: each execute, its script, its calls on a timeline",
    help: `Usage: cargo-agents report [--last | --session ID] [--out FILE] [--open]

Writes one self-contained HTML page of an agent session from its log in
<config>/logs/: each execute with its script, a timeline of its tool calls
(calls run with Promise.all overlap), its time, its errors and how many bytes
it kept out of the agent's context; the session's totals. The page loads
nothing (no script, font or image) and holds no argument or result value.
Prints the page's path.

Options:
  --last             The newest session that ran an execute. Default
  --session ID       That session: its log file's name, e.g.
                     2026-01-31T12-00-00-000Z-4242 (see <config>/logs/)
  --out FILE         Write the page there. Default: <config>/reports/<ID>.html
  --open             Then open it in the browser (SYMPOSIUM_BROWSER names the
                     program; none only prints the path). Default: off
  --config-dir DIR   The configuration folder. Default: $SYMPOSIUM_HOME, else
                     $XDG_CONFIG_HOME/symposium, else ~/.symposium

Examples:
  cargo agents report --open
  cargo agents report --session 2026-01-31T12-00-00-000Z-4242 --out session.html`,
    options: {
      last: { type: "boolean" },
      session: { type: "string" },
      out: { type: "string" },
      open: { type: "boolean" },
      "config-dir": { type: "string" },
    },
    run: async (v, _p, ctx) => {
      if (v.last === true && v.session !== undefined) {
        throw new UsageError("Cannot use --last with --session: name one session or none");
      }
      return (await import("./report.ts")).runReport({
        session: v.session as string | undefined,
        out: v.out as string | undefined,
        open: v.open === true,
      }, withConfigDir(ctx, v["config-dir"]));
    },
  },
  "trust": {
    summary: "Trust the workspace's plugin manifests so their servers may start",
    help: `Usage: cargo-agents trust [PATH] [--revoke] [--yes]

A SYMPOSIUM.toml at the workspace root or in a member folder (and a path or git
crate's plugin manifest) starts its servers only once you trust that exact
content: this records its path and SHA-256, and those of the workspace files its
servers run (a script named in command or args), in <config>/trusted.toml (mode
0600). A manifest or pinned file that changes is untrusted again. Shows every
server (command, args, cwd, url, environment, headers, gates) and what cannot
be pinned, then asks you to type yes. Without PATH: every manifest of the
workspace (git-ignored ones only when named). Starts nothing. A PATH that is
the workspace's .symposium/scripts folder, or a script in it, trusts saved
scripts instead (as \`cargo agents scripts trust\` does).

Options:
  --yes              Trust without asking: for a script that has reviewed the
                     files. Without a terminal, trust refuses unless given this
  --revoke           Take the trust away (PATH, or every manifest of the workspace)
  --config-dir DIR   The configuration folder. Default: $SYMPOSIUM_HOME, else
                     $XDG_CONFIG_HOME/symposium, else ~/.symposium

Examples:
  cargo agents trust
  cargo agents trust crates/xtask --revoke`,
    options: { revoke: { type: "boolean" }, yes: { type: "boolean" }, "config-dir": { type: "string" } },
    positionals: "many",
    run: async (v, p, ctx) => {
      if (p.length > 1) throw new UsageError("Cannot trust: expected at most one PATH");
      const scriptsCtx = withConfigDir(ctx, v["config-dir"]);
      const scripts = p[0] === undefined
        ? undefined
        : await (await import("./scripts.ts")).workspaceScriptsAt(p[0], scriptsCtx);
      if (scripts !== undefined) {
        return (await import("./scripts.ts")).runScriptsTrust(
          { names: scripts, yes: v.yes === true, revoke: v.revoke === true },
          scriptsCtx,
        );
      }
      return (await import("./trust.ts")).runTrust(
        { path: p[0], revoke: v.revoke === true, yes: v.yes === true },
        withConfigDir(ctx, v["config-dir"]),
      );
    },
  },
  "plugin list": {
    summary: "List plugin sources, their plugins and servers, and where each came from",
    help: `Usage: cargo-agents plugin list [--json]

Every plugin source (the recommendations registry, <config>/plugins, each
[[registry]], the workspace, crates), its last fetch, its plugins and their
servers with their state here. Starts nothing, fetches nothing.

Options:
  --json   Print one JSON document instead of text. Default: off

Examples:
  cargo agents plugin list
  cargo agents plugin list --json | jq '.sources[].name'`,
    options: { json: { type: "boolean" } },
    run: async (v, _p, ctx) => (await import("./plugin.ts")).runPluginList({ json: v.json === true }, ctx),
  },
  "plugin show": {
    summary: "Show one plugin: its manifest, file, source and trust state",
    help: `Usage: cargo-agents plugin show <name> [--json]

Shows one plugin by name: its manifest file, the source it came from, its
servers as declared, and whether it is trusted here. Starts nothing.

Options:
  --json   Print one JSON document instead of text. Default: off

Examples:
  cargo agents plugin show fs-tools`,
    options: { json: { type: "boolean" } },
    positionals: "one",
    run: async (v, p, ctx) =>
      (await import("./plugin.ts")).runPluginShow({
        name: onePositional(p, "name"),
        json: v.json === true,
      }, ctx),
  },
  "plugin sync": {
    summary: "Fetch git registries into <config>/cache/plugin-sources",
    help: `Usage: cargo-agents plugin sync [NAME...] [--due]

Fetches each named git registry with the real \`git\` (a shallow clone, swapped in
whole), or without a name every registry with auto-update = true. A fetch that
fails keeps the last copy (exit 1).

Options:
  --due              Only registries with auto-update = true whose copy exists
                     and was last fetched a day ago or more (the daily update)
  --timeout-secs N   Longest one git run may take, in seconds. Default: 120
  --config-dir DIR   The configuration folder. Default: $SYMPOSIUM_HOME, else
                     $XDG_CONFIG_HOME/symposium, else ~/.symposium

Examples:
  cargo agents plugin sync
  cargo agents plugin sync team --timeout-secs 300`,
    options: {
      due: { type: "boolean" },
      "timeout-secs": { type: "string" },
      "config-dir": { type: "string" },
    },
    positionals: "many",
    run: async (v, p, ctx) => {
      const secs = v["timeout-secs"] === undefined ? undefined : Number(v["timeout-secs"]);
      if (secs !== undefined && !(Number.isInteger(secs) && secs >= 1 && secs <= 3600)) {
        throw new UsageError(
          `Cannot use --timeout-secs "${v["timeout-secs"]}": expected a whole number from 1 to 3600`,
        );
      }
      return (await import("./plugin.ts")).runPluginSync(
        { names: p, due: v.due === true, timeoutMs: secs === undefined ? undefined : secs * 1000 },
        withConfigDir(ctx, v["config-dir"]),
      );
    },
  },
  "plugin validate": {
    summary: "Check a plugin file or folder: every problem with file:line:col",
    help: `Usage: cargo-agents plugin validate <PATH> [--json]

Checks one SYMPOSIUM.toml, a plugin folder, or a folder of plugins (searched
as a registry is). Prints every problem with file:line:col and the upstream
keys that are accepted and not acted on. Exit 1 on any problem (for CI).

Options:
  --json   Print one JSON document instead of text. Default: off

Examples:
  cargo agents plugin validate ~/.symposium/plugins/fs-tools
  cargo agents plugin validate SYMPOSIUM.toml --json`,
    options: { json: { type: "boolean" } },
    positionals: "one",
    run: async (v, p, ctx) =>
      (await import("./plugin.ts")).runPluginValidate({
        path: onePositional(p, "PATH"),
        json: v.json === true,
      }, ctx),
  },
};

const SCRIPTS_COMMANDS: Record<string, CommandDef> = {
  "scripts list": {
    summary: "List saved scripts: yours and the workspace's, with their input and trust",
    help: `Usage: cargo-agents scripts list [--json]

Lists the saved scripts: yours (<config>/scripts/, saved by an agent with
execute { script, save_as }) and the workspace's (.symposium/scripts/, usable
once trusted), each with its description's first line and input type.

Options:
  --json             Print one JSON document instead of text. Default: off
  --config-dir DIR   The configuration folder. Default: $SYMPOSIUM_HOME, else
                     $XDG_CONFIG_HOME/symposium, else ~/.symposium

Examples:
  cargo agents scripts list
  cargo agents scripts list --json`,
    options: { json: { type: "boolean" }, "config-dir": { type: "string" } },
    run: async (v, _p, ctx) =>
      (await import("./scripts.ts")).runScriptsList(
        { json: v.json === true },
        withConfigDir(ctx, v["config-dir"]),
      ),
  },
  "scripts show": {
    summary: "Show one saved script: its file, input type, trust and text",
    help: `Usage: cargo-agents scripts show <name> [--json]

Shows one saved script (yours first, then the workspace's): its file, its
description, the input type it declares, whether it is trusted, and its text.

Options:
  --json             Print one JSON document instead of text. Default: off
  --config-dir DIR   The configuration folder. Default: $SYMPOSIUM_HOME, else
                     $XDG_CONFIG_HOME/symposium, else ~/.symposium

Examples:
  cargo agents scripts show find_todos
  cargo agents scripts show find_todos --json`,
    options: { json: { type: "boolean" }, "config-dir": { type: "string" } },
    positionals: "one",
    run: async (v, p, ctx) =>
      (await import("./scripts.ts")).runScriptsShow(
        { name: onePositional(p, "name"), json: v.json === true },
        withConfigDir(ctx, v["config-dir"]),
      ),
  },
  "scripts rm": {
    summary: "Remove one of your saved scripts",
    help: `Usage: cargo-agents scripts rm <name>

Deletes <config>/scripts/<name>.ts. Workspace scripts are removed from the
repository instead.

Options:
  --config-dir DIR   The configuration folder. Default: $SYMPOSIUM_HOME, else
                     $XDG_CONFIG_HOME/symposium, else ~/.symposium

Examples:
  cargo agents scripts rm find_todos`,
    options: { "config-dir": { type: "string" } },
    positionals: "one",
    run: async (v, p, ctx) =>
      (await import("./scripts.ts")).runScriptsRm(
        { name: onePositional(p, "name") },
        withConfigDir(ctx, v["config-dir"]),
      ),
  },
  "scripts trust": {
    summary: "Trust the workspace's saved scripts so agents may run them",
    help: `Usage: cargo-agents scripts trust [NAME...] [--yes] [--revoke]

Shows each workspace script (.symposium/scripts/NAME.ts) that is not trusted
yet, or the named ones, and asks you to confirm; then records each file's path
and SHA-256 in <config>/trusted.toml. A script that changes is untrusted again.
Refused inside a coding agent's shell: a person trusts, not the agent.

Options:
  --yes              Trust without asking (a script that reviewed the files). Default: off
  --revoke           Take the trust away instead. Default: off
  --config-dir DIR   The configuration folder. Default: $SYMPOSIUM_HOME, else
                     $XDG_CONFIG_HOME/symposium, else ~/.symposium

Examples:
  cargo agents scripts trust
  cargo agents scripts trust find_todos --revoke`,
    options: { yes: { type: "boolean" }, revoke: { type: "boolean" }, "config-dir": { type: "string" } },
    positionals: "many",
    run: async (v, p, ctx) =>
      (await import("./scripts.ts")).runScriptsTrust(
        { names: p, yes: v.yes === true, revoke: v.revoke === true },
        withConfigDir(ctx, v["config-dir"]),
      ),
  },
};
Object.assign(COMMANDS, SCRIPTS_COMMANDS);

const GLOBAL_HELP = `cargo-agents ${VERSION}: one MCP server for all of a Rust workspace's plugin tools

Usage: cargo-agents <command> [options]
       cargo agents <command> [options]

Commands:
${Object.entries(COMMANDS).map(([name, def]) => `  ${name.padEnd(15)} ${def.summary}`).join("\n")}

Global options:
  -h, --help      Show help (also after a command; \`help COMMAND\` too)
  -V, --version   Show the version
  -v, --verbose   Show causes and stacks with errors; mcp-serve also logs
                  debug lines to stderr

Configuration lives in $SYMPOSIUM_HOME, else $XDG_CONFIG_HOME/symposium, else ~/.symposium.
An error's code (error[CODE]) is explained by \`cargo-agents help CODE\`.`;

/** node:util parseArgs messages, made to follow our grammar (no raw quoting advice). */
function describeParseError(error: unknown): string {
  const e = error as { code?: string; message?: string };
  const option = /'(-[^']*)'/.exec(e.message ?? "")?.[1];
  switch (e.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option "${option ?? "?"}"`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return `option "${option?.split(" ")[0] ?? "?"}" needs a value`;
    default:
      return e.message ?? String(error);
  }
}

/** The context with `--config-dir` (resolved against the working directory) when it was given. */
function withConfigDir(ctx: CommandContext, value: unknown): CommandContext {
  if (typeof value !== "string") return ctx;
  if (value.trim() === "") throw new UsageError('Cannot use --config-dir "": expected a folder');
  return { ...ctx, configDir: resolve(ctx.cwd, value) };
}

function onePositional(positionals: string[], name: string): string {
  if (positionals.length !== 1) {
    throw new UsageError(
      `Cannot run the command: expected exactly one <${name}> argument, got ${positionals.length}`,
    );
  }
  return positionals[0]!;
}

/** A command as the help test and the doc-example test see it: its name, texts, flags and arity. */
export interface CommandInfo {
  /** E.g. `"status"`, `"mcp login"`. */
  name: string;
  /** The one line of the command list. */
  summary: string;
  /** The full `--help` text. */
  help: string;
  /** Every flag the parser accepts, as written: `--json`, and `-x` for a short form. */
  flags: string[];
  /** Positional arguments accepted. */
  positionals: "none" | "one" | "many";
}

/** Every command of the table, in table order. */
export function listCommands(): CommandInfo[] {
  return Object.entries(COMMANDS).map(([name, def]) => ({
    name,
    summary: def.summary,
    help: def.help,
    flags: Object.entries(def.options).flatMap((
      [flag, o],
    ) => [`--${flag}`, ...(o.short ? [`-${o.short}`] : [])]),
    positionals: def.positionals ?? "none",
  }));
}

/** What a command line asks for, once parsed: a help text, the version, or one command with its arguments. */
export type ParsedCommandLine =
  | { kind: "text"; text: string; exitCode: number }
  | { kind: "error-help"; code: string }
  | { kind: "command"; name: string; values: Record<string, unknown>; positionals: string[] };

/**
 * Parses the arguments after the program name (without `-v`/`--verbose` and a leading `agents`) as
 * {@link runCommandLine} does, running nothing: the doc-example test checks documented lines with it.
 *
 * @throws {UsageError} For an unknown command or option, or arguments the command does not take.
 */
export function parseCommandLine(rest: string[]): ParsedCommandLine {
  if (rest[0] === "help" && rest.length > 1) {
    // `help COMMAND` is `COMMAND --help`; `help CODE` prints the troubleshooting entry of an error code.
    const named = rest.slice(1).join(" ");
    if (COMMANDS[named] || named === "mcp" || named === "plugin") {
      return parseCommandLine([...rest.slice(1), "--help"]);
    }
    return { kind: "error-help", code: named };
  }
  if (rest.length === 0 || rest[0] === "-h" || rest[0] === "--help" || rest[0] === "help") {
    return { kind: "text", text: GLOBAL_HELP + "\n", exitCode: rest.length === 0 ? 2 : 0 };
  }
  if (rest[0] === "-V" || rest[0] === "--version") {
    return { kind: "text", text: `cargo-agents ${VERSION}\n`, exitCode: 0 };
  }
  let name = rest[0]!;
  let tail = rest.slice(1);
  if (name === "mcp" || name === "plugin" || name === "scripts") {
    const group = name;
    const sub = tail[0];
    const subs = group === "mcp"
      ? "login|logout|exec|tools"
      : group === "plugin"
      ? "list|show|sync|validate"
      : "list|show|rm|trust";
    if (sub === undefined || sub === "-h" || sub === "--help") {
      const text = `Usage: cargo-agents ${group} <${subs}> ...\n\n` +
        Object.entries(COMMANDS).filter(([n]) => n.startsWith(`${group} `))
          .map(([n, d]) => `  ${n.padEnd(12)} ${d.summary}`).join("\n") +
        "\n";
      return { kind: "text", text, exitCode: sub === undefined ? 2 : 0 };
    }
    name = `${group} ${sub}`;
    tail = tail.slice(1);
  }
  const def = COMMANDS[name];
  if (!def) {
    if (name.startsWith("-")) {
      throw new UsageError(`Cannot run cargo-agents: unknown option "${name}"`, {
        hint: "run `cargo-agents --help` for the options and commands",
      });
    }
    const near = closestMatch(name, Object.keys(COMMANDS));
    throw new UsageError(`Cannot run "${name}": no such command`, {
      hint: near
        ? `did you mean \`${near}\`? (\`cargo-agents --help\` lists them all)`
        : "run `cargo-agents --help` for the list",
    });
  }
  if (tail.includes("-h") || tail.includes("--help")) {
    return { kind: "text", text: def.help + "\n", exitCode: 0 };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: tail, options: def.options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`Cannot parse the arguments of "${name}": ${describeParseError(e)}`, {
      hint: `run \`cargo-agents ${name} --help\``,
    });
  }
  const arity = def.positionals ?? "none";
  if (arity === "none" && parsed.positionals.length > 0) {
    throw new UsageError(
      `Cannot parse the arguments of "${name}": unexpected argument "${parsed.positionals[0]}"`,
      {
        hint: `\`${name}\` takes no arguments; run \`cargo-agents ${name} --help\``,
      },
    );
  }
  return {
    kind: "command",
    name,
    values: parsed.values as Record<string, unknown>,
    positionals: parsed.positionals,
  };
}

/**
 * Runs the command `rest` names (the arguments after the program name, without `-v`/`--verbose` and a
 * leading `agents`), or prints the help or the version.
 *
 * @returns The exit code: 0 ok, 2 usage shown without a command; the command's own code otherwise.
 * @throws {UsageError} For an unknown command or option, or arguments the command does not take.
 * @throws {UserError} What the command throws for bad input.
 */
export async function runCommandLine(rest: string[], ctx: CommandContext): Promise<number> {
  const parsed = parseCommandLine(rest);
  if (parsed.kind === "text") {
    ctx.writeOut(parsed.text);
    return parsed.exitCode;
  }
  if (parsed.kind === "error-help") {
    ctx.writeOut(await (await import("./_troubleshooting.ts")).troubleshootingEntry(parsed.code) + "\n");
    return 0;
  }
  return await COMMANDS[parsed.name]!.run(parsed.values, parsed.positionals, ctx);
}
