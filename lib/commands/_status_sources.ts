/**
 * The plugin sources part of `status` (private to `lib/commands/`): each source's line and JSON
 * entry, and the daily background update of git registries' copies.
 *
 * @module
 */
import type { CommandContext } from "./context.ts";
import type { LoadedResolution } from "../catalog/resolve.ts";
import { USER_PLUGINS_SOURCE } from "../plugins/mod.ts";
import {
  gitCopyDir,
  isFetchDue,
  type PluginSourceInfo,
  readFetchRecord,
  readSourcesConfig,
} from "../plugin_sources/mod.ts";
import { CONFIG_FILE_NAME } from "../plugins/config.ts";

/** One plugin source in the `--json` document. */
export interface StatusSource {
  name: string;
  kind: PluginSourceInfo["kind"];
  dir: string;
  git?: string | undefined;
  autoUpdate?: boolean | undefined;
  /** Git registries: when the copy was last fetched, ms since the epoch. */
  fetchedAtMs?: number | undefined;
  /** Git registries: the last fetch's failure (the last copy is used). */
  fetchError?: string | undefined;
  /** A state worth saying (not fetched yet, last fetch failed, updating in the background). */
  note?: string | undefined;
  plugins: number;
}

/** How a source is named beside a plugin: `registry team`, `workspace`, `crate foo`. */
export function sourceLabel(source: string): string {
  return source === "workspace" || source.startsWith("crate ") ? source : `registry ${source}`;
}

/** One source as `status` lists it: `team: git https://... (3 plugins, fetched ...); <note>`. */
export function sourceLine(src: StatusSource, report: { plugins: { source: string }[] }): string {
  const where = src.kind === "git" ? `git ${src.git}` : src.kind === "path" ? `path ${src.dir}` : src.dir;
  const fetched = src.fetchedAtMs === undefined ? "" : `, fetched ${new Date(src.fetchedAtMs).toISOString()}`;
  const count = report.plugins.filter((p) => p.source === src.name).length;
  return `${src.name}: ${where} (${count} plugin${count === 1 ? "" : "s"}${fetched})${
    src.note ? `; ${src.note}` : ""
  }`;
}

/** A source as `status --json` lists it, its note saying when it is being updated in the background. */
export function describeSource(
  src: PluginSourceInfo,
  loaded: LoadedResolution,
  updating: readonly string[],
): StatusSource {
  const note = updating.includes(src.name)
    ? [src.note, "updating in the background (auto-update)"].filter(Boolean).join("; ")
    : src.note;
  return {
    name: src.name,
    kind: src.kind,
    dir: src.dir,
    ...(src.git !== undefined ? { git: src.git } : {}),
    ...(src.autoUpdate !== undefined ? { autoUpdate: src.autoUpdate } : {}),
    ...(src.fetch?.fetchedAtMs !== undefined ? { fetchedAtMs: src.fetch.fetchedAtMs } : {}),
    ...(src.fetch?.error !== undefined ? { fetchError: src.fetch.error } : {}),
    ...(note !== undefined ? { note } : {}),
    plugins: loaded.plugins.filter((p) => (p.source ?? USER_PLUGINS_SOURCE) === src.name).length,
  };
}

/**
 * Git registries with `auto-update` whose copy exists and was last fetched a day ago or more. A
 * registry never fetched is not fetched here: the first copy is made by `cargo agents plugin sync`.
 */
export function dueRegistries(loaded: LoadedResolution, nowMs: number): string[] {
  return (loaded.sources?.sources ?? []).filter((s) =>
    s.kind === "git" && s.autoUpdate === true && s.hasCopy === true && isFetchDue(s.fetch ?? null, nowMs)
  ).map((s) => s.name);
}

/**
 * Starts `cargo-agents plugin sync --due NAME...` detached (no stdio, not waited for), so `status` and
 * `sync` answer at once while the copies update; the next run sees them.
 */
export function startBackgroundSync(names: readonly string[], ctx: CommandContext): void {
  try {
    const child = new Deno.Command(ctx.selfCommand.command, {
      args: [
        ...ctx.selfCommand.args,
        "plugin",
        "sync",
        "--due",
        ...(ctx.configDir ? ["--config-dir", ctx.configDir] : []),
        ...names,
      ],
      cwd: ctx.cwd,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    child.unref();
  } catch (error) {
    ctx.writeErr(`warning: cannot start the background registry update: ${(error as Error).message}\n`);
  }
}

/**
 * {@link dueRegistries} without a resolution (for `sync`): reads `config.toml`'s registries and their
 * fetch records only.
 */
export async function findDueRegistries(
  configDir: string,
  env: Readonly<Record<string, string>>,
  nowMs: number,
): Promise<string[]> {
  const file = `${configDir}/${CONFIG_FILE_NAME}`;
  const text = await Deno.readTextFile(file).catch(() => null); // no config: the defaults
  const config = readSourcesConfig(text, file, { configDir, env });
  const due: string[] = [];
  for (const registry of config.registries) {
    if (registry.kind !== "git" || !registry.autoUpdate) continue;
    const hasCopy = await Deno.stat(gitCopyDir(configDir, registry.name)).then(
      (i) => i.isDirectory,
      () => false,
    );
    if (hasCopy && isFetchDue(await readFetchRecord(configDir, registry.name), nowMs)) {
      due.push(registry.name);
    }
  }
  return due;
}
