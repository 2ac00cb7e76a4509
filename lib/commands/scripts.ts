/**
 * `cargo-agents scripts list|show|rm|trust`: the saved scripts (`<config>/scripts/` and the workspace's
 * `.symposium/scripts/`) as a person sees them: which exist, what each does and takes, which workspace
 * scripts are trusted; removing a user script; trusting workspace scripts by content (a person at a
 * terminal, as `cargo agents trust` does for manifests).
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import type { CommandContext } from "./context.ts";
import { printable, quotedText, UserError } from "../diagnostics.ts";
import { resolveConfigDir } from "../plugins/config.ts";
import { loadWorkspace } from "../workspace/mod.ts";
import { readTrustStore, sha256Hex, trustKeyOf } from "../plugin_sources/mod.ts";
import {
  readSavedScripts,
  type SavedScript,
  type SavedScriptPlaces,
  type SavedScriptSet,
  WORKSPACE_SCRIPTS_FOLDER,
} from "../meta_server/saved_scripts.ts";
import { confirmed, type TrustPrompt, writeTrust } from "./trust.ts";

async function placesOf(ctx: CommandContext): Promise<SavedScriptPlaces> {
  const workspace = await loadWorkspace(ctx.cwd);
  return { configDir: resolveConfigDir(ctx.env, ctx.homeDir, ctx.configDir), workspaceRoot: workspace.root };
}

/**
 * The workspace scripts a `cargo agents trust PATH` means, when PATH is the workspace's scripts folder (every
 * script: `[]`) or one `.ts` file in it (`[name]`); `undefined` for any other PATH (a manifest).
 */
export async function workspaceScriptsAt(path: string, ctx: CommandContext): Promise<string[] | undefined> {
  const { workspaceRoot } = await placesOf(ctx);
  if (workspaceRoot === null) return undefined;
  const folder = join(workspaceRoot, WORKSPACE_SCRIPTS_FOLDER);
  const target = resolve(ctx.cwd, path).replace(/\/+$/, "");
  if (target === folder) return [];
  if (dirname(target) === folder && target.endsWith(".ts")) return [target.slice(folder.length + 1, -3)];
  return undefined;
}

/** A script as `list --json` and `show --json` print it (`show` adds `text`). */
function entryOf(script: SavedScript, usable: boolean): Record<string, unknown> {
  return {
    name: script.name,
    source: script.source,
    file: script.file,
    description: script.description,
    input: script.inputType ?? null,
    servers: script.servers,
    ...(script.source === "workspace" ? { trust: script.trust ?? "untrusted" } : {}),
    usable,
  };
}

function allOf(set: SavedScriptSet): { script: SavedScript; usable: boolean }[] {
  return [
    ...set.usable.map((script) => ({ script, usable: true })),
    ...set.untrusted.map((script) => ({ script, usable: false })),
    ...set.shadowed.map((script) => ({ script, usable: false })),
  ];
}

/**
 * `scripts list [--json]`: every saved script, the user's first, with its description's first line,
 * input type and (workspace scripts) trust. Problems (unreadable files) go to stderr.
 *
 * @returns 0.
 */
export async function runScriptsList(options: { json: boolean }, ctx: CommandContext): Promise<number> {
  const set = await readSavedScripts(await placesOf(ctx));
  const all = allOf(set);
  if (options.json) {
    ctx.writeOut(
      JSON.stringify(
        { scripts: all.map((s) => entryOf(s.script, s.usable)), problems: set.problems },
        null,
        2,
      ) + "\n",
    );
    return 0;
  }
  if (all.length === 0) {
    ctx.writeOut('No saved scripts. An agent saves one with execute { script, save_as: "name" }.\n');
  }
  for (const { script, usable } of all) {
    const state = script.source === "workspace"
      ? ` [workspace, ${script.trust ?? "untrusted"}${
        script.trust === "trusted" && !usable ? ", shadowed by yours" : ""
      }]`
      : "";
    const first = script.description.split("\n")[0] ?? "";
    ctx.writeOut(printable(`${script.name}${state}${first === "" ? "" : ` - ${first}`}`) + "\n");
    ctx.writeOut(printable(`  input: ${script.inputType ?? "(none declared)"}`) + "\n");
  }
  for (const problem of set.problems) ctx.writeErr(printable(problem) + "\n");
  return 0;
}

/** The scripts named `name` (a user one and a workspace one may share it), or a `SCRIPT_UNKNOWN` error. */
function named(set: SavedScriptSet, name: string): { script: SavedScript; usable: boolean }[] {
  const found = allOf(set).filter((s) => s.script.name === name);
  if (found.length === 0) {
    throw new UserError(
      "SCRIPT_UNKNOWN",
      `Cannot find the saved script ${quotedText(name)}: no script has that name`,
      {
        hint: `saved scripts: ${printable(allOf(set).map((s) => s.script.name).join(", ")) || "none"} ` +
          "(`cargo agents scripts list`)",
      },
    );
  }
  return found;
}

/**
 * `scripts show NAME [--json]`: the script's file, source, trust, description, input type and text.
 *
 * @throws {UserError} `SCRIPT_UNKNOWN` when no saved script has that name.
 */
export async function runScriptsShow(
  options: { name: string; json: boolean },
  ctx: CommandContext,
): Promise<number> {
  const found = named(await readSavedScripts(await placesOf(ctx)), options.name);
  if (options.json) {
    const shown = found.map((s) => ({ ...entryOf(s.script, s.usable), text: s.script.text }));
    ctx.writeOut(JSON.stringify(shown.length === 1 ? shown[0] : shown, null, 2) + "\n");
    return 0;
  }
  for (const { script, usable } of found) {
    const trust = script.source === "workspace"
      ? `, ${script.trust ?? "untrusted"}${
        script.trust === "trusted" && !usable ? ", shadowed by yours" : ""
      }`
      : "";
    ctx.writeOut(printable(`${script.name} (${script.source}${trust}): ${script.file}`) + "\n");
    ctx.writeOut(printable(`input: ${script.inputType ?? "(none declared)"}`) + "\n\n");
    ctx.writeOut(script.text.split("\n").map((line) => printable(line)).join("\n") + "\n");
  }
  return 0;
}

/**
 * `scripts rm NAME`: removes the user's saved script. Workspace scripts belong to the repository: they
 * are removed there (a commit), not here.
 *
 * @throws {UserError} `SCRIPT_UNKNOWN` when the user has no script of that name.
 */
export async function runScriptsRm(options: { name: string }, ctx: CommandContext): Promise<number> {
  const found = named(await readSavedScripts(await placesOf(ctx)), options.name);
  const user = found.find((s) => s.script.source === "user");
  if (user === undefined) {
    throw new UserError(
      "SCRIPT_UNKNOWN",
      `Cannot remove ${quotedText(options.name)}: it is a workspace script (${
        printable(found[0]!.script.file)
      })`,
      {
        hint:
          "remove it from the repository, or stop trusting it with `cargo agents scripts trust --revoke NAME`",
      },
    );
  }
  await Deno.remove(user.script.file);
  ctx.writeOut(printable(`removed ${user.script.file}`) + "\n");
  return 0;
}

/**
 * `scripts trust [NAME...] [--yes] [--revoke]`: shows each workspace script not trusted yet (or the named
 * ones) in full, asks a person, then records each file's path and SHA-256 in `trusted.toml`; a script
 * that changes afterwards is untrusted again.
 *
 * @returns 0; 1 when there is nothing to trust or the person said no.
 * @throws {UserError} `TRUST_NEEDS_PERSON` (see `cargo agents trust`), `SCRIPT_UNKNOWN`.
 */
export async function runScriptsTrust(
  options: { names: string[]; yes: boolean; revoke: boolean; prompt?: TrustPrompt | undefined },
  ctx: CommandContext,
): Promise<number> {
  const places = await placesOf(ctx);
  const set = await readSavedScripts(places);
  const workspace = allOf(set).filter((s) => s.script.source === "workspace").map((s) => s.script);
  const targets = options.names.length === 0
    ? workspace.filter((s) => options.revoke ? s.trust === "trusted" : s.trust !== "trusted")
    : options.names.map((name) => {
      const script = workspace.find((s) => s.name === name);
      if (script === undefined) {
        throw new UserError(
          "SCRIPT_UNKNOWN",
          `Cannot trust ${quotedText(name)}: no workspace script has that name`,
          {
            hint: "workspace scripts are the .ts files of .symposium/scripts/ in the workspace",
          },
        );
      }
      return script;
    });
  if (targets.length === 0) {
    ctx.writeOut(options.revoke ? "No workspace script is trusted.\n" : "No workspace script needs trust.\n");
    return 1;
  }
  const store = await readTrustStore(places.configDir);
  if (store.problems[0]) throw store.problems[0];
  const entries = new Map(store.entries);
  if (options.revoke) {
    for (const script of targets) entries.delete(await trustKeyOf(script.file));
    await writeTrust(places.configDir, [...entries.values()]);
    for (const script of targets) ctx.writeOut(printable(`revoked ${script.file}`) + "\n");
    return 0;
  }
  for (const script of targets) {
    ctx.writeOut(printable(`--- ${script.file}`) + "\n");
    ctx.writeOut(script.text.split("\n").map((line) => `  ${printable(line)}`).join("\n") + "\n");
  }
  if (
    !await confirmed({ yes: options.yes, prompt: options.prompt }, ctx, targets.length, ["script", "scripts"])
  ) {
    ctx.writeOut("nothing trusted\n");
    return 1;
  }
  const now = new Date().toISOString();
  for (const script of targets) {
    const path = await trustKeyOf(script.file);
    entries.set(path, { path, sha256: await sha256Hex(script.text), trustedAt: now });
    ctx.writeOut(printable(`trusted ${script.file}`) + "\n");
  }
  await writeTrust(places.configDir, [...entries.values()]);
  return 0;
}
