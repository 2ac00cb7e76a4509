/**
 * `cargo-agents trust [PATH] [--revoke] [--yes]`: records which workspace plugin manifests (and path
 * or git crates' manifests) may start their servers, by path and SHA-256 of their content and of the
 * workspace files their servers run (pins), in `<config>/trusted.toml` (mode 0600). Bare, it shows
 * every server of each of the workspace's manifests as data, except git-ignored ones (not part of the
 * repository: name them to trust them), then asks a person (a terminal) for yes; a script passes
 * `--yes`. An agent cannot answer, so it cannot trust for itself. It never starts anything.
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import type { CommandContext } from "./context.ts";
import { printable, quotedText, UserError } from "../diagnostics.ts";
import { type LoadedResolution, loadResolution } from "../catalog/resolve.ts";
import {
  type LoadedPlugin,
  parseManifest,
  PLUGIN_MANIFEST_NAME,
  type PluginManifest,
} from "../plugins/mod.ts";
import {
  findPins,
  hashPinnedFile,
  layerCrateManifest,
  readTrustStore,
  renderTrustFile,
  sha256Hex,
  TRUST_FILE_NAME,
  trustCommand,
  type TrustEntry,
  trustKeyOf,
} from "../plugin_sources/mod.ts";
import { describeManifest } from "./_trust_view.ts";
import { PRIVATE_FILE_MODE, writePrivateFile } from "../secrets/mod.ts";

/** How many chained crate rounds a bare `trust` follows (as loading follows `[[plugins]]`). */
const MAX_CRATE_CHAIN_DEPTH = 3;

/** Options of {@link runTrust}. */
export interface TrustOptions {
  /** A manifest (`SYMPOSIUM.toml`, or a crate's `Cargo.toml`) or a folder holding one; relative to the working directory. Default: the workspace's. */
  path?: string | undefined;
  /** Take the trust away instead. Default `false`. */
  revoke?: boolean | undefined;
  /** `--yes`: trust without asking (for scripts that reviewed the files). Default `false`: ask a person. */
  yes?: boolean | undefined;
  /** Where to ask. Default: the process's stdin. */
  prompt?: TrustPrompt | undefined;
}

/** Where `trust` asks its question: a person at a terminal, or no one (a script, an agent's tool call). */
export interface TrustPrompt {
  /** Whether stdin is a terminal, so a person can answer. */
  isTerminal(): boolean;
  /** One line of stdin without its line break (at most 1 KiB read), or `null` at end of input. */
  readLine(signal: AbortSignal): Promise<string | null>;
}

/** The real prompt: the process's stdin. */
const stdinPrompt: TrustPrompt = {
  isTerminal: () => Deno.stdin.isTerminal(),
  async readLine(signal) {
    const buf = new Uint8Array(1024);
    let line = "";
    const decoder = new TextDecoder();
    while (!signal.aborted && line.length < 1024) {
      const n = await Deno.stdin.read(buf);
      if (n === null) return line === "" ? null : line;
      line += decoder.decode(buf.subarray(0, n), { stream: true });
      const end = line.indexOf("\n");
      if (end >= 0) return line.slice(0, end).replace(/\r$/, "");
    }
    return line;
  },
};

/** A file about to be trusted: its path (trust key) and the text shown and hashed. */
type TrustFile = { path: string; text: string };
/** One manifest (with a crate's Cargo.toml) about to be trusted. */
type Target = { plugin: LoadedPlugin | undefined; files: TrustFile[] };

/**
 * Trusts (or revokes) manifests. Before trusting it shows every server as data (see
 * `_trust_view.ts`), the files pinned with each manifest and what cannot be pinned, then asks: on a
 * terminal it waits for `yes`; without one it refuses unless `options.yes`.
 *
 * @returns 0; 1 when nothing could be trusted (no manifest at PATH, none in the workspace) or the
 *   person said no.
 * @throws {UserError} `TRUST_NEEDS_PERSON` when stdin is not a terminal and `--yes` was not given, or
 *   in a coding agent's shell even with `--yes`;
 *   `TRUST_NO_MANIFEST` when PATH holds no manifest; `TRUST_WRITE_FAILED` when `trusted.toml` cannot
 *   be written; `TRUST_FILE_UNSAFE`/`TRUST_FILE_INVALID` when the existing file cannot be believed
 *   (remove it first).
 */
export async function runTrust(options: TrustOptions, ctx: CommandContext): Promise<number> {
  const where = { cwd: ctx.cwd, env: ctx.env, homeDir: ctx.homeDir, configDir: ctx.configDir };
  const loaded = await loadResolution(where);
  const store = await readTrustStore(loaded.configDir);
  if (store.problems[0] && !options.revoke) throw store.problems[0];
  const entries = new Map(store.entries);
  const root = loaded.workspace.root ?? ctx.cwd;
  let targets: Target[];
  if (options.path !== undefined) {
    const file = await manifestAt(resolve(ctx.cwd, options.path));
    const key = await trustKeyOf(file);
    const plugin = loaded.plugins.find((p) => p.trust !== undefined && (p.trustFiles ?? []).includes(key));
    targets = [{ plugin, files: await readFiles(plugin?.trustFiles ?? [key]) }];
  } else {
    const found = await workspaceTargets(loaded, options, ctx);
    if (found === undefined) return 1;
    targets = found;
  }
  if (options.revoke) {
    for (const { files } of targets) {
      const shown = files.map((f) => f.path).join(" and ");
      const removed = files.filter((f) => entries.delete(f.path)).length;
      ctx.writeOut(
        removed > 0 ? `revoked ${printable(shown)}\n` : `not trusted before: ${printable(shown)}\n`,
      );
    }
    await writeTrust(loaded.configDir, [...entries.values()]);
    return 0;
  }
  for (let round = 0; round <= MAX_CRATE_CHAIN_DEPTH && targets.length > 0; round++) {
    const now = new Date().toISOString();
    const planned = [];
    for (const target of targets) planned.push(await showTarget(target, root, ctx)); // in order: no interleaving
    if (!await confirmed(options, ctx, targets.length)) {
      ctx.writeOut("nothing trusted\n");
      return 1;
    }
    for (const { files, pins } of planned) {
      files.forEach((f, i) => entries.set(f.path, { ...f, trustedAt: now, ...(i === 0 ? { pins } : {}) }));
      ctx.writeOut(`trusted ${printable(files.map((f) => f.path).join(" and "))}\n`);
    }
    await writeTrust(loaded.configDir, [...entries.values()]);
    if (options.path !== undefined) break;
    // A bare trust goes on with the path and git crates the just-trusted manifests chain to.
    targets = await chainedTargets(entries, where);
  }
  ctx.writeOut(
    `(${join(loaded.configDir, TRUST_FILE_NAME)}: ${entries.size} trusted file${
      entries.size === 1 ? "" : "s"
    })\n`,
  );
  return 0;
}

/** The workspace's manifests that need trust, git-ignored ones skipped (said); `undefined` when there are none. */
async function workspaceTargets(
  loaded: LoadedResolution,
  options: TrustOptions,
  ctx: CommandContext,
): Promise<Target[] | undefined> {
  const needing = loaded.plugins.filter((p) => p.trust !== undefined);
  if (needing.length === 0) {
    const broken = unloadedWorkspaceManifests(loaded);
    ctx.writeOut(
      loaded.workspace.root === null
        ? "No Cargo workspace here: there are no workspace manifests to trust.\n"
        : broken.length > 0
        ? `Nothing in ${printable(loaded.workspace.root)} can be trusted yet: its manifests did not load.\n`
        : `No plugin manifest in ${
          printable(loaded.workspace.root)
        } needs trust (a ${PLUGIN_MANIFEST_NAME} at the root or in a member folder would).\n`,
    );
    for (const line of broken) ctx.writeOut(line);
    return undefined;
  }
  const targets: Target[] = [];
  for (const plugin of needing) {
    if (plugin.isGitIgnored && !options.revoke) {
      ctx.writeOut(
        `skipped ${
          printable(plugin.file)
        }: git ignores it, so it is not part of the repository; if it is yours, run \`${
          printable(trustCommand(plugin.file))
        }\`\n`,
      );
      continue;
    }
    targets.push({ plugin, files: await readFiles(plugin.trustFiles ?? [plugin.file]) });
  }
  return targets;
}

/**
 * One line per workspace manifest that failed to load (so there is nothing of it to trust yet): its
 * file:line:col, why, and how to see every problem. Printable (escaped) text.
 */
function unloadedWorkspaceManifests(loaded: LoadedResolution): string[] {
  const lines = new Set<string>();
  for (const r of loaded.resolution.refused) {
    if (r.source !== "workspace" || r.location === undefined || r.code === "SERVER_UNTRUSTED") continue;
    const at = `${r.location.file}:${r.location.line}:${r.location.column}`;
    lines.add(
      printable(`${at}: ${r.reason}`) +
        `\n  fix it (\`${
          printable(`cargo agents plugin validate ${r.location.file}`)
        }\` lists every problem), then run \`cargo agents trust\` again\n`,
    );
  }
  return [...lines];
}

/** The path and git crates that trusted manifests chain to and that are not trusted yet. */
async function chainedTargets(
  entries: ReadonlyMap<string, TrustEntry>,
  where: Parameters<typeof loadResolution>[0],
): Promise<Target[]> {
  const again = await loadResolution(where);
  const targets: Target[] = [];
  for (const plugin of again.plugins) {
    if (plugin.trust === undefined || plugin.trust === "trusted" || plugin.isGitIgnored) continue;
    if (!plugin.source?.startsWith("crate ")) continue;
    const keys = plugin.trustFiles ?? [plugin.file];
    if (keys.every((k) => entries.has(k))) continue; // trusted with other content: shown by status
    targets.push({ plugin, files: await readFiles(keys) });
  }
  return targets;
}

async function readFiles(paths: readonly string[]): Promise<TrustFile[]> {
  return await Promise.all(paths.map(async (path) => ({ path, text: await Deno.readTextFile(path) })));
}

/**
 * Shows one target: its servers as data, the files pinned with it (hashed now, so what is recorded is
 * what was shown) and what cannot be pinned. What is shown is parsed from the very text that is
 * hashed: a file changed meanwhile cannot slip in.
 */
async function showTarget(
  { plugin, files }: Target,
  root: string,
  ctx: CommandContext,
): Promise<{ files: TrustEntry[]; pins: { path: string; sha256: string }[] }> {
  const manifest = parseForShow(files, plugin);
  const label = plugin ? ` (${plugin.source ?? "workspace"} plugin "${plugin.name}")` : "";
  ctx.writeOut(`${printable(files.map((f) => f.path).join(" and ") + label)} would start:\n`);
  for (const line of describeManifest(manifest)) ctx.writeOut(`  ${line}\n`);
  const plan = await findPins(manifest, root, plugin?.dir);
  const pins: { path: string; sha256: string }[] = [];
  const unpinned = [...plan.unpinned];
  for (const path of plan.files) {
    const sha256 = await hashPinnedFile(path);
    if (sha256 !== undefined) pins.push({ path, sha256 });
    else unpinned.push(`${path} is not a regular file that can be read (a device, a FIFO, gone): not pinned`);
  }
  if (pins.length > 0) {
    ctx.writeOut(`  pinned with it (a change makes it untrusted again):\n`);
    for (const pin of pins) ctx.writeOut(`    ${quotedText(pin.path)}\n`);
  }
  if (pins.length > 0) {
    unpinned.push("what the pinned files load in turn (a script's imports, sourced files, its data)");
  }
  for (const line of unpinned) ctx.writeOut(`  not pinned: ${printable(line)}\n`);
  const hashed = await Promise.all(
    files.map(async (f) => ({ path: f.path, sha256: await sha256Hex(f.text) })),
  );
  return { files: hashed, pins };
}

/**
 * Variables coding agents set in the shells they run commands in (Claude Code, Codex, Gemini CLI,
 * Cursor's agent, Qwen Code): `trust` is refused there even with `--yes`, since what reads the
 * repository there is the agent, which a file in the repository can tell to trust it.
 */
const AGENT_MARKERS: readonly string[] = [
  "CLAUDECODE",
  "CLAUDE_CODE_ENTRYPOINT",
  "CODEX_SANDBOX",
  "CODEX_SANDBOX_NETWORK_DISABLED",
  "GEMINI_CLI",
  "CURSOR_AGENT",
  "QWEN_CODE",
];

/** What a refused `trust` says: for the agent that ran it, to hand the decision to the user. */
const PERSON_HINT =
  "an agent must not trust for the user: ask the user to review the file and run `cargo agents trust` themselves, in their own terminal outside the agent, and answer yes after reading what it shows";

/**
 * Whether a person said yes: `--yes` (a script that reviewed the files), or `yes`/`y` typed at the
 * terminal. `noun` names what is trusted, singular and plural (also `cargo agents scripts trust`).
 *
 * @throws {UserError} `TRUST_NEEDS_PERSON` without a terminal and without `--yes`, or in a coding
 *   agent's shell ({@link AGENT_MARKERS}), `--yes` or not.
 */
export async function confirmed(
  options: TrustOptions,
  ctx: CommandContext,
  count: number,
  noun: [string, string] = ["manifest", "manifests"],
): Promise<boolean> {
  const agent = Object.keys(ctx.env).find((name) => AGENT_MARKERS.includes(name) && ctx.env[name] !== "");
  if (agent !== undefined) {
    throw new UserError(
      "TRUST_NEEDS_PERSON",
      `Cannot trust from inside a coding agent's shell (${agent} is set), so nothing was trusted`,
      { hint: PERSON_HINT },
    );
  }
  if (options.yes) return true;
  const prompt = options.prompt ?? stdinPrompt;
  if (!prompt.isTerminal()) {
    throw new UserError(
      "TRUST_NEEDS_PERSON",
      "Cannot trust: no one to confirm (stdin is not a terminal), so nothing was trusted",
      { hint: PERSON_HINT },
    );
  }
  ctx.writeOut(`Trust ${count === 1 ? `this ${noun[0]}` : `these ${count} ${noun[1]}`}? Type yes to trust: `);
  const answer = await prompt.readLine(ctx.signal);
  return answer !== null && /^\s*y(es)?\s*$/i.test(answer);
}

/** The manifest a PATH names: the file itself, or `SYMPOSIUM.toml` (else `Cargo.toml`) in a folder. */
async function manifestAt(path: string): Promise<string> {
  const info = await Deno.stat(path).catch(() => null);
  if (info?.isFile) return path;
  if (info?.isDirectory) {
    for (const name of [PLUGIN_MANIFEST_NAME, "Cargo.toml"]) {
      if ((await Deno.stat(join(path, name)).catch(() => null))?.isFile) return join(path, name);
    }
  }
  throw new UserError(
    "TRUST_NO_MANIFEST",
    `Cannot trust ${quotedText(path)}: there is no ${PLUGIN_MANIFEST_NAME} there`,
    {
      hint: `name a ${PLUGIN_MANIFEST_NAME} file or the folder holding it`,
    },
  );
}

function parseForShow(
  files: readonly { path: string; text: string }[],
  plugin: LoadedPlugin | undefined,
): PluginManifest {
  const file = files[0]!;
  const name = plugin?.name ?? basename(dirname(file.path));
  try {
    if (plugin?.source?.startsWith("crate ")) {
      // A crate's manifest is its Cargo.toml metadata and SYMPOSIUM.toml layered: shown from the very
      // texts that are hashed, both of them (the file alone would hide the metadata's servers).
      const text = (fileName: string) => files.find((f) => basename(f.path) === fileName)?.text;
      const crate = plugin.source.slice("crate ".length);
      const layered = layerCrateManifest(plugin.dir, crate, text("Cargo.toml"), text(PLUGIN_MANIFEST_NAME));
      return layered.manifest ?? { name, dependsOn: undefined, mcpServers: [] };
    }
    return parseManifest(file.text, file.path, { defaultName: name, requireGate: false });
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(
      "TRUST_NO_MANIFEST",
      `Cannot trust ${quotedText(file.path)}: ${printable((error as Error).message)}`,
    );
  }
}

/**
 * Writes `<configDir>/trusted.toml` (mode 0600) holding `entries`.
 *
 * @throws {UserError} `TRUST_WRITE_FAILED` when it cannot be written.
 */
export async function writeTrust(configDir: string, entries: TrustEntry[]): Promise<void> {
  try {
    await Deno.mkdir(configDir, { recursive: true, mode: 0o700 });
    await writePrivateFile(configDir, TRUST_FILE_NAME, new TextEncoder().encode(renderTrustFile(entries)));
    if (Deno.build.os !== "windows") await Deno.chmod(join(configDir, TRUST_FILE_NAME), PRIVATE_FILE_MODE);
  } catch (error) {
    throw new UserError(
      "TRUST_WRITE_FAILED",
      `Cannot write ${join(configDir, TRUST_FILE_NAME)}: ${(error as Error).message}`,
      {
        hint: "make the configuration folder writable by your user",
        cause: error,
      },
    );
  }
}
