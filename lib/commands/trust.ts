/**
 * `cargo-agents trust [PATH] [--revoke]`: records which workspace plugin manifests (and path or git
 * crates' manifests) may start their servers, by path and SHA-256 of their content, in
 * `<config>/trusted.toml` (mode 0600). Bare, it shows what each of the workspace's manifests would
 * start and trusts them all, except git-ignored ones (not part of the repository: name them to trust
 * them). It never starts anything.
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import type { CommandContext } from "./context.ts";
import { UserError } from "../diagnostics.ts";
import { loadResolution } from "../catalog/resolve.ts";
import {
  type LoadedPlugin,
  parseManifest,
  PLUGIN_MANIFEST_NAME,
  type PluginManifest,
} from "../plugins/mod.ts";
import {
  readTrustStore,
  renderTrustFile,
  sha256Hex,
  TRUST_FILE_NAME,
  type TrustEntry,
  trustKeyOf,
} from "../plugin_sources/mod.ts";
import { PRIVATE_FILE_MODE, writePrivateFile } from "../secrets/mod.ts";

/** How many chained crate rounds a bare `trust` follows (as loading follows `[[plugins]]`). */
const MAX_CRATE_CHAIN_DEPTH = 3;

/** Options of {@link runTrust}. */
export interface TrustOptions {
  /** A manifest (`SYMPOSIUM.toml`, or a crate's `Cargo.toml`) or a folder holding one; relative to the working directory. Default: the workspace's. */
  path?: string | undefined;
  /** Take the trust away instead. Default `false`. */
  revoke?: boolean | undefined;
}

/** What a manifest's servers would run, one line each (`name: command args` or `name: url`). */
export function describeStarts(manifest: PluginManifest): string[] {
  const lines = manifest.mcpServers.map((s) =>
    s.transport === "stdio"
      ? `${s.name}: runs ${
        [s.command, ...s.args].map((a) => /^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a)).join(" ")
      }${s.cwd ? ` (in ${s.cwd})` : ""}`
      : `${s.name}: connects to ${s.url}`
  );
  for (const ref of manifest.plugins ?? []) {
    lines.push(`also loads the plugin of crate "${ref.crate}" ([[plugins]])`);
  }
  return lines.length > 0 ? lines : ["(no MCP servers)"];
}

/**
 * Trusts (or revokes) manifests and prints what each would start.
 *
 * @returns 0; 1 when nothing could be trusted (no manifest at PATH, none in the workspace).
 * @throws {UserError} `TRUST_NO_MANIFEST` when PATH holds no manifest; `TRUST_WRITE_FAILED` when
 *   `trusted.toml` cannot be written; `TRUST_FILE_UNSAFE`/`TRUST_FILE_INVALID` when the existing
 *   file cannot be believed (remove it first).
 */
export async function runTrust(options: TrustOptions, ctx: CommandContext): Promise<number> {
  const loaded = await loadResolution({
    cwd: ctx.cwd,
    env: ctx.env,
    homeDir: ctx.homeDir,
    configDir: ctx.configDir,
  });
  const store = await readTrustStore(loaded.configDir);
  if (store.problems[0] && !options.revoke) throw store.problems[0];
  const entries = new Map(store.entries);
  const needing = loaded.plugins.filter((p) => p.trust !== undefined);
  let targets: { plugin: LoadedPlugin | undefined; files: { path: string; text: string }[] }[];
  if (options.path !== undefined) {
    const file = await manifestAt(resolve(ctx.cwd, options.path));
    const key = await trustKeyOf(file);
    const plugin = needing.find((p) => (p.trustFiles ?? []).includes(key));
    const keys = plugin?.trustFiles ?? [key];
    targets = [{
      plugin,
      files: await Promise.all(keys.map(async (path) => ({ path, text: await Deno.readTextFile(path) }))),
    }];
  } else {
    if (needing.length === 0) {
      ctx.writeOut(
        loaded.workspace.root === null
          ? "No Cargo workspace here: there are no workspace manifests to trust.\n"
          : `No plugin manifest in ${loaded.workspace.root} needs trust (a ${PLUGIN_MANIFEST_NAME} at the root or in a member folder would).\n`,
      );
      return 1;
    }
    targets = [];
    for (const plugin of needing) {
      if (plugin.isGitIgnored && !options.revoke) {
        ctx.writeOut(
          `skipped ${plugin.file}: git ignores it, so it is not part of the repository; if it is yours, run \`cargo agents trust ${plugin.file}\`\n`,
        );
        continue;
      }
      const files = await Promise.all((plugin.trustFiles ?? [plugin.file]).map(async (path) => ({
        path,
        text: await Deno.readTextFile(path),
      })));
      targets.push({ plugin, files });
    }
  }
  const now = new Date().toISOString();
  for (let round = 0; round <= MAX_CRATE_CHAIN_DEPTH && targets.length > 0; round++) {
    for (const { plugin, files } of targets) {
      const shown = files.map((f) => f.path).join(" and ");
      if (options.revoke) {
        const removed = files.filter((f) => entries.delete(f.path)).length;
        ctx.writeOut(removed > 0 ? `revoked ${shown}\n` : `not trusted before: ${shown}\n`);
        continue;
      }
      // What is shown is parsed from the very text that is hashed: a file changed meanwhile cannot slip in.
      const manifest = parseForShow(files[0]!, plugin);
      ctx.writeOut(
        `${shown}${
          plugin ? ` (${plugin.source ?? "workspace"} plugin "${plugin.name}")` : ""
        } would start:\n`,
      );
      for (const line of describeStarts(manifest)) ctx.writeOut(`  ${line}\n`);
      for (const f of files) {
        entries.set(f.path, { path: f.path, sha256: await sha256Hex(f.text), trustedAt: now });
      }
      ctx.writeOut(`trusted ${shown}\n`);
    }
    await writeTrust(loaded.configDir, [...entries.values()]);
    if (options.path !== undefined || options.revoke) break;
    // A bare trust goes on with the path and git crates the just-trusted manifests chain to.
    const again = await loadResolution({
      cwd: ctx.cwd,
      env: ctx.env,
      homeDir: ctx.homeDir,
      configDir: ctx.configDir,
    });
    targets = [];
    for (const plugin of again.plugins) {
      if (plugin.trust === undefined || plugin.trust === "trusted" || plugin.isGitIgnored) continue;
      if (!plugin.source?.startsWith("crate ")) continue;
      const keys = plugin.trustFiles ?? [plugin.file];
      if (keys.every((k) => entries.has(k))) continue; // trusted with other content: shown by status
      targets.push({
        plugin,
        files: await Promise.all(keys.map(async (path) => ({ path, text: await Deno.readTextFile(path) }))),
      });
    }
  }
  ctx.writeOut(
    `(${join(loaded.configDir, TRUST_FILE_NAME)}: ${entries.size} trusted file${
      entries.size === 1 ? "" : "s"
    })\n`,
  );
  return 0;
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
    `Cannot trust "${path}": there is no ${PLUGIN_MANIFEST_NAME} there`,
    {
      hint: `name a ${PLUGIN_MANIFEST_NAME} file or the folder holding it`,
    },
  );
}

function parseForShow(
  file: { path: string; text: string },
  plugin: LoadedPlugin | undefined,
): PluginManifest {
  const name = plugin?.name ?? basename(dirname(file.path));
  // A crate's Cargo.toml metadata is shown as loaded (its merge is not a file of its own).
  if (basename(file.path) !== PLUGIN_MANIFEST_NAME) {
    return plugin?.manifest ?? { name, dependsOn: undefined, mcpServers: [] };
  }
  try {
    return parseManifest(file.text, file.path, { defaultName: name, requireGate: false });
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError("TRUST_NO_MANIFEST", `Cannot trust ${file.path}: ${(error as Error).message}`);
  }
}

async function writeTrust(configDir: string, entries: TrustEntry[]): Promise<void> {
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
