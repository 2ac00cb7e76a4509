/**
 * `cargo-agents plugin list|show|sync|validate`: the plugin sources and their plugins (where each came
 * from, the last fetch), one plugin's manifest and trust state, fetching git registries, and checking
 * a plugin folder or file for a plugin author's CI. Only `sync` touches the network (through `git`).
 *
 * @module
 */
import { basename, dirname, resolve } from "node:path";
import type { CommandContext } from "./context.ts";
import { printable, printableLines, quotedText, renderDiagnostic, UserError } from "../diagnostics.ts";
import { type LoadedResolution, loadResolution } from "../catalog/resolve.ts";
import { denoFileSystem } from "../file_system.ts";
import {
  discoverPlugins,
  type LoadedPlugin,
  type ManifestNote,
  PLUGIN_MANIFEST_NAME,
  readPluginManifest,
  USER_PLUGINS_SOURCE,
} from "../plugins/mod.ts";
import {
  isFetchDue,
  readFetchRecord,
  readSourcesConfig,
  type RegistryConfig,
  syncGitRegistry,
  type SyncResult,
  trustCommand,
} from "../plugin_sources/mod.ts";
import {
  CONFIG_FILE_NAME,
  resolveConfigDir,
  unsafeConfigProblem,
  unsafeOwnerReason,
} from "../plugins/config.ts";
import { describeStarts } from "./_trust_view.ts";

async function load(ctx: CommandContext): Promise<LoadedResolution> {
  return await loadResolution({ cwd: ctx.cwd, env: ctx.env, homeDir: ctx.homeDir, configDir: ctx.configDir });
}

/** One plugin as `plugin list --json` and `plugin show --json` describe it. */
export interface PluginEntry {
  name: string;
  source: string;
  file: string;
  /** Plugins that need trust: `trusted`, `untrusted` or `changed`. */
  trust?: string | undefined;
  /** The command that trusts it, when it is not trusted. */
  trustCommand?: string | undefined;
  /** When `trust` is `changed`: what changed (the manifest, a pinned file). */
  trustChanges?: string[] | undefined;
  /** Crate plugins: the plugin whose `[[plugins]]` entry reached it, and where the crate was found. */
  reachedFrom?: LoadedPlugin["reachedFrom"];
  servers: { name: string; state: string; starts: string }[];
}

function entryOf(plugin: LoadedPlugin, loaded: LoadedResolution): PluginEntry {
  const source = plugin.source ?? USER_PLUGINS_SOURCE;
  const starts = describeStarts(plugin.manifest);
  const { resolution } = loaded;
  const same = (s: string | undefined) => (s ?? USER_PLUGINS_SOURCE) === source;
  return {
    name: plugin.name,
    source,
    file: plugin.file,
    ...(plugin.trust !== undefined ? { trust: plugin.trust } : {}),
    ...(plugin.trust !== undefined && plugin.trust !== "trusted"
      ? { trustCommand: (plugin.trustFiles ?? [plugin.file]).map(trustCommand).join(" && ") }
      : {}),
    ...(plugin.trustChanges ? { trustChanges: plugin.trustChanges } : {}),
    ...(plugin.reachedFrom ? { reachedFrom: plugin.reachedFrom } : {}),
    servers: plugin.manifest.mcpServers.map((decl, i) => {
      const applies = resolution.servers.some((s) =>
        s.name === decl.name && s.location.file === decl.location.file
      );
      const refusal = resolution.refused.find((r) =>
        r.server === decl.name && r.plugin === plugin.name && same(r.source)
      );
      const state = applies
        ? "applies"
        : refusal?.code === "SERVER_UNTRUSTED"
        ? "untrusted"
        : refusal
        ? "refused"
        : "dormant";
      return { name: decl.name, state, starts: starts[i] ?? "" };
    }),
  };
}

/**
 * `plugin list`: every source (where, last fetch, its note) with its plugins and their servers.
 *
 * @returns 0.
 */
export async function runPluginList(options: { json: boolean }, ctx: CommandContext): Promise<number> {
  const loaded = await load(ctx);
  const sources = loaded.sources?.sources ?? [];
  const entries = loaded.plugins.map((p) => entryOf(p, loaded));
  if (options.json) {
    ctx.writeOut(
      JSON.stringify({ sources, plugins: entries, notes: loaded.sources?.notes ?? [] }, null, 2) + "\n",
    );
    return 0;
  }
  const lines: string[] = [];
  for (const src of sources) {
    const where = src.kind === "git" ? `git ${src.git}` : src.dir;
    const fetched = src.kind !== "git"
      ? ""
      : src.fetch?.fetchedAtMs !== undefined
      ? `, last fetch ${new Date(src.fetch.fetchedAtMs).toISOString()}`
      : ", never fetched";
    lines.push(`${src.name} (${src.kind}: ${where}${fetched})`);
    if (src.note) lines.push(`  note: ${src.note}`);
    const mine = entries.filter((e) => e.source === src.name);
    if (mine.length === 0) lines.push("  (no plugins)");
    for (const entry of mine) {
      const trust = entry.trust ? ` [${entry.trust}]` : "";
      lines.push(`  ${entry.name}${trust}  ${entry.file}`);
      for (const s of entry.servers) {
        lines.push(`    ${s.name} (${s.state}): ${s.starts.replace(/^[^:]*: /, "")}`);
      }
      if (entry.trustCommand) lines.push(`    to trust it: ${entry.trustCommand}`);
    }
  }
  for (const note of loaded.sources?.notes ?? []) lines.push(`note: ${note}`);
  ctx.writeOut(lines.map(printable).join("\n") + "\n");
  return 0;
}

/**
 * `plugin show NAME`: the plugin's file, source, trust state, servers, the upstream keys it sets that
 * cargo-agents does not act on (once each), and its manifest text.
 *
 * @returns 0, or 1 when no plugin has that name (the names are listed).
 */
export async function runPluginShow(
  options: { name: string; json: boolean },
  ctx: CommandContext,
): Promise<number> {
  const loaded = await load(ctx);
  const matches = loaded.plugins.filter((p) => p.name === options.name);
  if (matches.length === 0) {
    throw new UserError(
      "PLUGIN_UNKNOWN",
      `Cannot show plugin ${quotedText(options.name)}: no plugin has that name`,
      {
        hint: `known plugins: ${
          printable(loaded.plugins.map((p) => p.name).join(", ")) || "none"
        } (\`cargo agents plugin list\`)`,
      },
    );
  }
  const shown = await Promise.all(matches.map(async (p) => ({
    ...entryOf(p, loaded),
    notes: p.manifest.notes ?? [],
    manifest: await Deno.readTextFile(p.file).catch(() => ""),
  })));
  if (options.json) {
    ctx.writeOut(JSON.stringify(shown.length === 1 ? shown[0] : shown, null, 2) + "\n");
    return 0;
  }
  // Every line is printable: names, paths and the manifest's own text cannot write escape codes.
  const out = (line: string) => ctx.writeOut(`${printable(line)}\n`);
  for (const p of shown) {
    out(`${p.name} (source: ${p.source})`);
    out(`  file: ${p.file}`);
    if (p.trust) out(`  trust: ${p.trust}${p.trustCommand ? ` (run \`${p.trustCommand}\`)` : ""}`);
    for (const change of p.trustChanges ?? []) out(`    ${change}`);
    if (p.reachedFrom) {
      out(
        `  reached from: ${p.reachedFrom.file} (${p.reachedFrom.origin}${
          p.reachedFrom.version ? ` ${p.reachedFrom.version}` : ""
        })`,
      );
    }
    for (const s of p.servers) out(`  ${s.starts} [${s.state}]`);
    for (const l of noteLines(p.notes)) out(`  ${l}`);
    ctx.writeOut(`\n${printableLines(p.manifest.replace(/\n?$/, ""))}\n`);
  }
  return 0;
}

/** Upstream keys not acted on, once each: `note: skills (line 5): handled by ...`. */
function noteLines(notes: readonly ManifestNote[]): string[] {
  const seen = new Set<string>();
  return notes.filter((n) => !seen.has(n.key) && seen.add(n.key)).map((n) =>
    `note: \`${n.key}\` (${n.location.file}:${n.location.line}:${n.location.column}) is accepted and not acted on here: ${n.text}`
  );
}

/**
 * `plugin sync [NAME...]`: fetches git registries (by name; without one, every registry with
 * `auto-update = true`, as upstream does). `due`: only those whose copy exists and whose last fetch is
 * a day old (the background update of `status`).
 *
 * @param options.timeoutMs Longest one `git` run may take, in ms. @default 120000
 * @returns 0 when every fetch succeeded; 1 when one failed (its last copy is kept, and said so).
 * @throws {UserError} `REGISTRY_UNKNOWN` for a name no git registry has.
 */
export async function runPluginSync(
  options: { names: string[]; due?: boolean; timeoutMs?: number | undefined },
  ctx: CommandContext,
): Promise<number> {
  const configDir = resolveConfigDir(ctx.env, ctx.homeDir, ctx.configDir);
  const configFile = `${configDir}/${CONFIG_FILE_NAME}`;
  const unsafe = unsafeOwnerReason(configFile);
  if (unsafe !== undefined) ctx.writeErr(renderDiagnostic(unsafeConfigProblem(configFile, unsafe)) + "\n");
  const text = unsafe === undefined ? await Deno.readTextFile(configFile).catch(() => null) : null;
  const config = readSourcesConfig(text, configFile, { configDir, env: ctx.env });
  for (const problem of config.problems) ctx.writeErr(renderDiagnostic(problem) + "\n");
  const git = config.registries.filter((r) => r.kind === "git");
  let chosen: RegistryConfig[];
  if (options.names.length > 0) {
    chosen = options.names.map((name) => {
      const found = config.registries.find((r) => r.name === name);
      if (found?.kind === "path") {
        ctx.writeOut(`${name}: a path registry (${found.path}); nothing to fetch\n`);
        return undefined;
      }
      if (!found) {
        throw new UserError(
          "REGISTRY_UNKNOWN",
          `Cannot sync registry "${name}": no git registry has that name`,
          {
            hint: `git registries: ${
              git.map((r) => r.name).join(", ") || "none"
            } (declared with [[registry]] in ${configFile})`,
          },
        );
      }
      return found;
    }).filter((r): r is RegistryConfig => r !== undefined);
  } else chosen = git.filter((r) => r.autoUpdate);
  if (options.due === true) {
    const nowMs = Date.now();
    const due: RegistryConfig[] = [];
    for (const r of chosen) {
      const hasCopy = await Deno.stat(`${configDir}/cache/plugin-sources/${r.name}`).then(
        () => true,
        () => false,
      );
      if (r.autoUpdate && hasCopy && isFetchDue(await readFetchRecord(configDir, r.name), nowMs)) due.push(r);
    }
    chosen = due;
  }
  const results: SyncResult[] = [];
  for (const registry of chosen) {
    const result = await syncGitRegistry(registry, {
      configDir,
      timeoutMs: options.timeoutMs,
      signal: ctx.signal,
    });
    results.push(result);
    if (result.ok) {
      ctx.writeOut(
        `${registry.name}: ${result.changed ? "fetched" : "up to date"} (${registry.git} at ${
          result.commit?.slice(0, 12) ?? "?"
        })\n`,
      );
    } else if (result.busy) {
      ctx.writeOut(`${registry.name}: another sync is fetching it now\n`);
    } else {
      const kept = result.commit
        ? `; keeping the copy at ${result.commit.slice(0, 12)}`
        : "; there is no copy yet";
      ctx.writeErr(
        `${registry.name}: cannot fetch ${registry.git}: ${result.error?.split("\n").at(-1)}${kept}\n`,
      );
    }
  }
  if (chosen.length === 0 && options.due !== true) ctx.writeOut("No git registry to fetch.\n");
  return results.every((r) => r.ok || r.busy === true) ? 0 : 1;
}

/** One problem `plugin validate` found. */
export interface ValidateProblem {
  code: string;
  message: string;
  hint?: string | undefined;
  file: string;
  line: number;
  column: number;
}

/**
 * `plugin validate PATH`: checks a plugin file, a plugin folder, or a registry folder (every plugin
 * in it, by the discovery rules) and prints every problem with file:line:col, then the upstream keys
 * accepted and not acted on (once each). A `SYMPOSIUM.toml` beside a `Cargo.toml` is read as a
 * workspace plugin (its name defaults to the folder's, it needs no gate).
 *
 * @returns 0 when there is no problem; 1 on any.
 */
export async function runPluginValidate(
  options: { path: string; json: boolean },
  ctx: CommandContext,
): Promise<number> {
  const path = resolve(ctx.cwd, options.path);
  const info = await Deno.stat(path).catch(() => null);
  if (info === null) {
    throw new UserError("VALIDATE_NO_PATH", `Cannot validate "${path}": it does not exist`, {
      hint: `name a ${PLUGIN_MANIFEST_NAME} or a folder of plugins`,
    });
  }
  const problems: ValidateProblem[] = [];
  const notes: ManifestNote[] = [];
  const plugins: string[] = [];
  const add = (
    r: {
      code: string;
      detailCode?: string;
      reason: string;
      hint?: string | undefined;
      location?: { file: string; line: number; column: number } | undefined;
    },
  ) =>
    problems.push({
      code: r.detailCode ?? r.code,
      message: r.reason,
      hint: r.hint,
      file: r.location?.file ?? path,
      line: r.location?.line ?? 1,
      column: r.location?.column ?? 1,
    });
  const single = info.isFile
    ? path
    : (await Deno.stat(`${path}/${PLUGIN_MANIFEST_NAME}`).catch(() => null))?.isFile
    ? `${path}/${PLUGIN_MANIFEST_NAME}`
    : undefined;
  if (single !== undefined) {
    // Beside a Cargo.toml it is a workspace plugin: its name defaults to the folder's, no gate needed.
    const isWorkspacePlugin = (await Deno.stat(`${dirname(single)}/Cargo.toml`).catch(() =>
      null
    ))?.isFile === true;
    const read = await readPluginManifest(
      single,
      denoFileSystem,
      undefined,
      isWorkspacePlugin ? { defaultName: basename(dirname(single)), requireGate: false } : {},
    );
    if (read.ok) {
      plugins.push(read.manifest.name);
      notes.push(...read.manifest.notes ?? []);
    } else read.problems.forEach(add);
  } else {
    const found = await discoverPlugins(path, {
      source: basename(path),
      label: `folder ${path}`,
      confine: true,
    });
    const reread = new Set<string>();
    for (const refusal of found.refused) {
      const file = refusal.location?.file;
      if (refusal.code !== "PLUGIN_INVALID" || file === undefined) add(refusal);
      else if (!reread.has(file)) {
        // Read again for each diagnostic's own code (the refusal says only PLUGIN_INVALID).
        reread.add(file);
        const again = await readPluginManifest(file, denoFileSystem);
        if (!again.ok) again.problems.forEach(add);
      }
    }
    for (const p of found.plugins) {
      plugins.push(p.name);
      notes.push(...p.manifest.notes ?? []);
    }
  }
  if (options.json) {
    ctx.writeOut(JSON.stringify({ path, plugins, problems, notes }, null, 2) + "\n");
    return problems.length > 0 ? 1 : 0;
  }
  for (const p of problems) {
    ctx.writeOut(
      renderDiagnostic(
        new UserError(p.code, p.message, {
          hint: p.hint,
          location: { file: p.file, line: p.line, column: p.column },
        }),
      ) + "\n",
    );
  }
  for (const line of noteLines(notes)) ctx.writeOut(line + "\n");
  const where = single ? dirname(single) : path;
  ctx.writeOut(
    problems.length === 0
      ? `ok: ${plugins.length} plugin${plugins.length === 1 ? "" : "s"} in ${where}\n`
      : `${problems.length} problem${problems.length === 1 ? "" : "s"} in ${where}\n`,
  );
  return problems.length > 0 ? 1 : 0;
}
