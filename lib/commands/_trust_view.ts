/**
 * What `trust` shows before the user says yes (private to `lib/commands/`): each server as data, every
 * field quoted and escaped (a `cwd` holding `CR` and erase codes cannot paint a harmless line over a
 * `curl ... | sh`), with what reaches the process (environment, headers) and when it starts (gates).
 *
 * @module
 */
import { printable, quotedText } from "../diagnostics.ts";
import type { McpServerDecl, PluginManifest } from "../plugins/mod.ts";

/** A word as a shell would need it: plain when it is plain, else quoted and escaped. */
function word(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : quotedText(text);
}

/** The variables a value reads through `${VAR}` or `${VAR:-default}`, in order, once each. */
function referencedVariables(value: string): string[] {
  return [...new Set([...value.matchAll(/\$\{([^}:]*)(?::-[^}]*)?\}/g)].map((m) => m[1]!))];
}

/**
 * Environment variables that make a program load or run other code than its command and arguments
 * say (the dynamic loader, interpreters' start-up options and files, shells' start-up files, git's
 * commands, `PATH`): their value is shown, since it decides what runs.
 */
const CODE_LOADING_ENV =
  /^(LD_\w+|DYLD_\w+|PATH|NODE_OPTIONS|NODE_PATH|PYTHON(PATH|STARTUP|HOME)|BASH_ENV|ENV|ZDOTDIR|PERL5?(OPT|LIB)|RUBY(OPT|LIB)|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|GIT_\w+|DENO_\w+|CARGO_\w+|RUSTC\w*|RUSTFLAGS|PAGER|EDITOR|VISUAL|SHELL|PROMPT_COMMAND)$/i;

/**
 * `NAME (from ${A}, ${B})` for each key of a table of values that may reference variables; values
 * are not shown, except for {@link CODE_LOADING_ENV} names when `showCodeLoading` (env tables).
 */
function namesWithReferences(table: Readonly<Record<string, string>>, showCodeLoading = false): string {
  const names = Object.entries(table).map(([name, value]) => {
    const vars = referencedVariables(value);
    const shown = showCodeLoading && CODE_LOADING_ENV.test(name)
      ? ` = ${quotedText(value)} (decides what runs)`
      : "";
    return `${quotedText(name)}${shown}${
      vars.length > 0 ? ` (from ${vars.map((v) => `\${${printable(v)}}`).join(", ")})` : ""
    }`;
  });
  return names.length > 0 ? names.join(", ") : "none";
}

/** `depends-on [...]; predicates [...]` of one level, or `undefined` when that level has no gate. */
function gateText(
  dependsOn: readonly string[] | undefined,
  predicates: readonly string[] | undefined,
): string | undefined {
  const parts = [
    ...(dependsOn !== undefined ? [`depends-on [${dependsOn.map(quotedText).join(", ")}]`] : []),
    ...(predicates !== undefined ? [`predicates [${predicates.map(quotedText).join(", ")}]`] : []),
  ];
  return parts.length > 0 ? parts.join("; ") : undefined;
}

/**
 * One server as indented lines of data: `command`, `args`, `cwd` (stdio) or `url`, header names
 * (remote); the environment it gets (`env` names and the variables their values read, `inherit-env`,
 * `env-passthrough`); and its gates with the plugin's. Every value is quoted and escaped.
 */
export function describeServer(server: McpServerDecl, manifest: PluginManifest): string[] {
  const lines: string[] = [];
  if (server.transport === "stdio") {
    lines.push(`server ${quotedText(server.name)} runs a command:`);
    lines.push(`  command: ${quotedText(server.command)}`);
    lines.push(`  args: [${server.args.map(quotedText).join(", ")}]`);
    lines.push(`  cwd: ${server.cwd === undefined ? "the workspace root" : quotedText(server.cwd)}`);
    lines.push(`  env: ${namesWithReferences(server.env, true)}`);
    lines.push(
      `  inherits: ${
        server.inheritEnv
          ? "your whole environment (inherit-env = true)"
          : server.envPassthrough.length > 0
          ? `${server.envPassthrough.map(quotedText).join(", ")} (env-passthrough)`
          : "nothing of your environment"
      }`,
    );
  } else {
    lines.push(`server ${quotedText(server.name)} connects to a remote server (${server.transport}):`);
    lines.push(`  url: ${quotedText(server.url)}${referencedText(server.url)}`);
    lines.push(`  headers: ${namesWithReferences(server.headers)}`);
    if (server.clientSecret !== undefined) {
      lines.push(`  client-secret: set${referencedText(server.clientSecret)}`);
    }
  }
  const own = gateText(server.dependsOn, server.predicates);
  const plugin = gateText(manifest.dependsOn, manifest.predicates);
  lines.push(
    `  starts when: ${
      [own, plugin && `plugin: ${plugin}`].filter((g) => g !== undefined).join("; ") ||
      "always, in this workspace (no gate)"
    }`,
  );
  return lines;
}

function referencedText(value: string): string {
  const vars = referencedVariables(value);
  return vars.length > 0 ? ` (reads ${vars.map((v) => `\${${printable(v)}}`).join(", ")})` : "";
}

/** What a manifest's servers would run, one escaped line each (`name: runs command args` or `name: connects to url`). */
export function describeStarts(manifest: PluginManifest): string[] {
  const lines = manifest.mcpServers.map((s) =>
    s.transport === "stdio"
      ? `${printable(s.name)}: runs ${[s.command, ...s.args].map(word).join(" ")}${
        s.cwd ? ` (in ${word(s.cwd)})` : ""
      }`
      : `${printable(s.name)}: connects to ${word(s.url)}`
  );
  for (const ref of manifest.plugins ?? []) {
    lines.push(`also loads the plugin of crate ${quotedText(ref.crate)} ([[plugins]])`);
  }
  return lines.length > 0 ? lines : ["(no MCP servers)"];
}

/** Every server of a manifest ({@link describeServer}) and the crates it chains to, as indented lines. */
export function describeManifest(manifest: PluginManifest): string[] {
  const lines = manifest.mcpServers.flatMap((s) => describeServer(s, manifest));
  for (const ref of manifest.plugins ?? []) {
    lines.push(
      `also loads the plugin of crate ${quotedText(ref.crate)} ([[plugins]]), which trust asks about next`,
    );
  }
  return lines.length > 0 ? lines : ["(no MCP servers)"];
}
