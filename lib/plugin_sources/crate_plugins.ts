/**
 * Crate plugins: a plugin's `[[plugins]] source.cargo = "name"` entry chains to the crate's own
 * manifest, layered as upstream does (defaults -> `[package.metadata.symposium]` of the crate's
 * `Cargo.toml` -> its `SYMPOSIUM.toml`: lists such as `mcp_servers` append, metadata first), from the crate's folder on this machine
 * (`locateCrate()`). Only trusted plugins chain. A crate from crates.io needs no trust of its own
 * (the plugin that names it is trusted, and the registry's content is checksummed by Cargo), and a
 * crate counts as crates.io's only when Cargo.lock says so, it lies in crates.io's own folder under
 * `$CARGO_HOME/registry/src`, and no Cargo configuration replaces crates.io (a cloned repository can
 * ship a `.cargo/config.toml` that swaps in a registry of its own while Cargo.lock still says
 * crates.io). Every other crate (path, git, another registry, crates.io replaced) holds content this
 * workspace may control, so its manifest needs `cargo agents trust` like a workspace manifest.
 *
 * @module
 */
import { join } from "node:path";
import { stringify } from "smol-toml";
import type { FileSystem } from "../file_system.ts";
import { isTable, parseTomlDocument, type TomlTable } from "../toml_position.ts";
import {
  layerManifests,
  type LoadedPlugin,
  ManifestError,
  MAX_MANIFEST_BYTES,
  parseManifest,
  PLUGIN_MANIFEST_NAME,
  type PluginManifest,
  type Refusal,
} from "../plugins/mod.ts";
import {
  evaluateGate,
  locateCrate,
  MAX_CARGO_TOML_BYTES,
  parsePredicate,
  type PredicateContext,
  type Workspace,
} from "../workspace/mod.ts";
import { trustDetailOf, trustKeyOf, type TrustStore } from "./trust.ts";

/** How many `[[plugins]]` links are followed from a plugin (a crate's manifest may chain again). */
export const MAX_CRATE_CHAIN_DEPTH = 3;

/** What following the `[[plugins]]` entries found. */
export interface CratePlugins {
  plugins: LoadedPlugin[];
  refused: Refusal[];
  /** Entries not followed and why (not a dependency here, gate does not hold, chained from an untrusted plugin). */
  notes: string[];
  /** Files read for crate manifests: their change means re-resolution. */
  files: string[];
}

/**
 * Follows the `[[plugins]]` entries of `from` (and of the crate plugins they reach, up to
 * {@link MAX_CRATE_CHAIN_DEPTH}).
 *
 * @param options.cargoHome `$CARGO_HOME`.
 * @param options.predicates How the entries' gates are evaluated (workspace, env, base folder).
 */
export async function loadCratePlugins(
  from: readonly LoadedPlugin[],
  workspace: Workspace,
  options: {
    cargoHome: string;
    store: TrustStore;
    fs: FileSystem;
    predicates: Omit<PredicateContext, "isWorkspaceMember">;
  },
): Promise<CratePlugins> {
  const out: CratePlugins = { plugins: [], refused: [], notes: [], files: [] };
  const seen = new Set(from.map((p) => p.file));
  let frontier = [...from];
  for (let depth = 0; depth < MAX_CRATE_CHAIN_DEPTH && frontier.length > 0; depth++) {
    const next: LoadedPlugin[] = [];
    for (const parent of frontier) {
      for (const ref of parent.manifest.plugins ?? []) {
        const source = `crate ${ref.crate}`;
        if (parent.trust !== undefined && parent.trust !== "trusted") {
          out.notes.push(`${source} (from ${parent.file}) is not followed: that plugin is not trusted`);
          continue;
        }
        const gate = evaluateGate(ref.dependsOn ?? [ref.crate], ref.predicates?.map(parsePredicate), {
          ...options.predicates,
          isWorkspaceMember: parent.isWorkspaceMember === true,
        });
        if (gate.holds !== true) {
          out.notes.push(`${source} (from ${parent.file}) is not loaded: ${gate.reason}`);
          continue;
        }
        const where = await locateCrate(ref.crate, workspace, {
          cargoHome: options.cargoHome,
          version: ref.version,
          fs: options.fs,
          env: options.predicates.env,
        });
        if (!where.ok) {
          const refusal = { server: source, plugin: parent.name, source, location: ref.location };
          if (where.code === "CRATE_NOT_PRESENT") {
            out.refused.push({ ...refusal, code: where.code, reason: where.reason, hint: where.hint });
          } else out.notes.push(`${source} (from ${parent.file}) is not loaded: ${where.reason}`);
          continue;
        }
        const loaded = await readCrateManifest(where.dir, ref.crate, options.fs);
        for (const file of [...loaded.files, ...(where.configFiles ?? [])]) {
          if (!out.files.includes(file)) out.files.push(file);
        }
        if (!loaded.ok) {
          for (const problem of loaded.problems) {
            out.refused.push({ ...problem, server: ref.crate, plugin: ref.crate, source });
          }
          continue;
        }
        if (loaded.manifest === undefined) {
          out.notes.push(
            `${source} (${where.dir}) declares no plugin (no SYMPOSIUM.toml, no [package.metadata.symposium])`,
          );
          continue;
        }
        const file = loaded.files.find((f) => f.endsWith(PLUGIN_MANIFEST_NAME)) ?? loaded.files[0]!;
        if (seen.has(file)) continue; // Already loaded (a workspace member's own SYMPOSIUM.toml, or a second reference).
        seen.add(file);
        const needsTrust = where.origin !== "registry";
        const keys = await Promise.all(
          loaded.texts.map(async (t) => ({ key: await trustKeyOf(t.file, options.fs), text: t.text })),
        );
        const trust = needsTrust ? await trustDetailOf(options.store, keys) : undefined;
        const plugin: LoadedPlugin = {
          name: loaded.manifest.name,
          dir: where.dir,
          file,
          manifest: loaded.manifest,
          source,
          ...(trust
            ? {
              trust: trust.state,
              trustFiles: keys.map((k) => k.key),
              ...(trust.changes.length > 0 ? { trustChanges: trust.changes } : {}),
            }
            : {}),
          ...(where.origin === "member" ? { isWorkspaceMember: true } : {}),
          referenceGate: { dependsOn: ref.dependsOn ?? [ref.crate], predicates: ref.predicates },
          reachedFrom: {
            plugin: parent.name,
            file: parent.file,
            origin: where.origin,
            version: where.version,
          },
        };
        if (where.why !== undefined) {
          out.notes.push(
            `${source} (${where.dir}) is not taken as a crates.io crate: ${where.why}; its manifest needs your trust`,
          );
        }
        out.plugins.push(plugin);
        next.push(plugin);
      }
    }
    frontier = next;
  }
  return out;
}

type CrateManifestResult =
  & { files: string[]; texts: { file: string; text: string }[] }
  & ({ ok: true; manifest: PluginManifest | undefined } | {
    ok: false;
    problems: Omit<Refusal, "server" | "plugin">[];
  });

/** Reads and merges a crate's plugin manifest; `manifest` undefined when the crate declares none. */
async function readCrateManifest(dir: string, crate: string, fs: FileSystem): Promise<CrateManifestResult> {
  const cargoToml = join(dir, "Cargo.toml");
  const symposiumToml = join(dir, PLUGIN_MANIFEST_NAME);
  const files: string[] = [];
  const texts: { file: string; text: string }[] = [];
  const fail = (error: unknown): CrateManifestResult => {
    const problems = error instanceof ManifestError ? error.problems : [error as Error];
    return {
      ok: false,
      files,
      texts,
      problems: problems.map((p) => ({
        code: "PLUGIN_INVALID",
        reason: p.message,
        hint: (p as ManifestError).hint,
        location: (p as ManifestError).location ?? { file: symposiumToml, line: 1, column: 1 },
      })),
    };
  };
  try {
    const read = async (file: string, capBytes: number) => {
      const size = (await fs.stat(file))?.size;
      if (size !== undefined && size > capBytes) {
        throw new Error(`Cannot read ${file}: it is ${size} bytes, over the cap of ${capBytes} bytes`);
      }
      return await fs.readTextFile(file);
    };
    const cargoText = (await fs.stat(cargoToml))?.isFile
      ? await read(cargoToml, MAX_CARGO_TOML_BYTES)
      : undefined;
    const fileText = (await fs.stat(symposiumToml))?.isFile
      ? await read(symposiumToml, MAX_MANIFEST_BYTES)
      : undefined;
    // Watched even when they fail to parse, so that a fix is seen mid-session.
    if (fileText !== undefined) files.push(symposiumToml);
    if (cargoText !== undefined) files.push(cargoToml);
    const merged = layerCrateManifest(dir, crate, cargoText, fileText);
    files.length = 0;
    files.push(...merged.texts.map((t) => t.file));
    texts.push(...merged.texts);
    return { ok: true, files, texts, manifest: merged.manifest };
  } catch (error) {
    return fail(error);
  }
}

/**
 * A crate's plugin manifest from the texts of its files, as upstream layers them: `[package.metadata.symposium]`
 * of `Cargo.toml` (when it has one), then `SYMPOSIUM.toml` (lists append, metadata first; the file's other
 * keys win). Pure: `trust` shows exactly what it hashes by calling it on the texts it read.
 *
 * @param dir The crate's folder (absolute); file names are joined to it.
 * @param crate The crate's name: the plugin's default `name`.
 * @param cargoText `Cargo.toml`'s text, `undefined` when there is none.
 * @param fileText `SYMPOSIUM.toml`'s text, `undefined` when there is none.
 * @returns `manifest` undefined when neither declares a plugin; `texts` the files that declare it
 *   (`SYMPOSIUM.toml` first).
 * @throws {ManifestError} or `UserError` (`CARGO_TOML_INVALID`, `MANIFEST_SYNTAX`) for a file that is not a valid one.
 */
export function layerCrateManifest(
  dir: string,
  crate: string,
  cargoText: string | undefined,
  fileText: string | undefined,
): { manifest: PluginManifest | undefined; texts: { file: string; text: string }[] } {
  const cargoToml = join(dir, "Cargo.toml");
  const symposiumToml = join(dir, PLUGIN_MANIFEST_NAME);
  const texts: { file: string; text: string }[] = [];
  let metadata: TomlTable | undefined;
  if (cargoText !== undefined) {
    const pkg =
      parseTomlDocument(cargoText, cargoToml, { code: "CARGO_TOML_INVALID", what: "Cargo.toml" }).value
        .package;
    const found = isTable(pkg) && isTable(pkg.metadata) ? pkg.metadata.symposium : undefined;
    if (isTable(found)) {
      metadata = found;
      texts.push({ file: cargoToml, text: cargoText });
    }
  }
  if (fileText !== undefined) texts.unshift({ file: symposiumToml, text: fileText });
  const options = { defaultName: crate, requireGate: false };
  if (metadata === undefined && fileText === undefined) return { manifest: undefined, texts };
  if (metadata === undefined) return { manifest: parseManifest(fileText!, symposiumToml, options), texts };
  // Both or only the metadata: layered as upstream does, then read as one manifest.
  const own = fileText === undefined ? {} : parseTomlDocument(fileText, symposiumToml, {
    code: "MANIFEST_SYNTAX",
    what: "plugin manifest",
  }).value;
  const label = fileText === undefined
    ? `${cargoToml} [package.metadata.symposium]`
    : `${symposiumToml} (merged with ${cargoToml})`;
  return { manifest: parseManifest(stringify(layerManifests(metadata, own)), label, options), texts };
}
