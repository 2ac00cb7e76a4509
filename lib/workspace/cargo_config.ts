/**
 * Whether Cargo's configuration replaces crates.io for a workspace (`[source.crates-io] replace-with`).
 * Cargo reads `.cargo/config.toml` (and the older `.cargo/config`) in the folder it runs in and in
 * every parent, then `$CARGO_HOME/config.toml` (and `config`); a repository can ship one that swaps
 * crates.io for a registry it contains. `Cargo.lock` still names crates.io then, so the lock file
 * alone cannot tell where a crate came from: this module reads the configuration the same way, without
 * running `cargo`. Rules: <https://doc.rust-lang.org/cargo/reference/config.html#hierarchical-structure>
 * and <https://doc.rust-lang.org/cargo/reference/source-replacement.html>.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { denoFileSystem, describeFsError, type FileSystem } from "../file_system.ts";
import { isTable, parseTomlDocument } from "../toml_position.ts";

/** Largest Cargo configuration file read, in bytes; a larger one counts as replacing crates.io. */
export const MAX_CARGO_CONFIG_BYTES = 1024 * 1024;
/** Environment variables Cargo reads as crates.io's source (`[source.crates-io]`) or index configuration. */
const REPLACING_ENV = /^CARGO_(SOURCE_CRATES_IO_|REGISTRY_INDEX$|REGISTRIES_CRATES_IO_INDEX$)/i;
/** Most parent folders searched for `.cargo/config.toml` above the workspace root. */
const MAX_CONFIG_PARENTS = 64;

/** What Cargo's configuration says about crates.io. */
export interface CratesIoReplacement {
  /** Whether crates.io may be replaced (also `true` when a configuration file cannot be read: fails closed). */
  replaced: boolean;
  /** The configuration file that replaces it (or could not be read). */
  file?: string | undefined;
  /** Why, e.g. `[source.crates-io] replace-with = "vendored"`, or why the file could not be read. */
  reason?: string | undefined;
  /** Every configuration file Cargo would read, existing or not, in its order: their change means re-resolution. */
  files: string[];
}

/**
 * The configuration files Cargo reads for a `cargo` run in `dir`: `<d>/.cargo/config.toml` and
 * `<d>/.cargo/config` for `dir` and each parent (nearest first, at most {@link MAX_CONFIG_PARENTS}),
 * then `<cargoHome>/config.toml` and `<cargoHome>/config`. Existing or not.
 */
export function cargoConfigPaths(dir: string, cargoHome: string): string[] {
  const out: string[] = [];
  let at = dir;
  for (let i = 0; i <= MAX_CONFIG_PARENTS; i++) {
    out.push(join(at, ".cargo", "config.toml"), join(at, ".cargo", "config"));
    if (dirname(at) === at) break;
    at = dirname(at);
  }
  out.push(join(cargoHome, "config.toml"), join(cargoHome, "config"));
  return [...new Set(out)];
}

/**
 * Reads the configuration files of {@link cargoConfigPaths} for `[source.crates-io] replace-with`.
 * A file that exists but cannot be used (larger than {@link MAX_CARGO_CONFIG_BYTES}, not UTF-8, not
 * TOML, unreadable) counts as replacing crates.io: what it says is unknown, so crates found for it
 * need the user's trust.
 *
 * @param dir Absolute folder Cargo runs in (the workspace root).
 * @param cargoHome `$CARGO_HOME`.
 * @param fs File access. Default {@link denoFileSystem}.
 * @param env The environment Cargo runs with: a `CARGO_SOURCE_CRATES_IO_*`, `CARGO_REGISTRY_INDEX` or
 *   `CARGO_REGISTRIES_CRATES_IO_INDEX` variable counts as replacing crates.io. Default none.
 */
export async function cratesIoReplacement(
  dir: string,
  cargoHome: string,
  fs: FileSystem = denoFileSystem,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<CratesIoReplacement> {
  const result: CratesIoReplacement = { replaced: false, files: cargoConfigPaths(dir, cargoHome) };
  // Cargo reads any config key from a `CARGO_<KEY>` variable too (dots and dashes as `_`).
  const fromEnv = Object.keys(env).filter((name) => REPLACING_ENV.test(name) && env[name] !== undefined)
    .sort();
  if (fromEnv.length > 0) {
    result.replaced = true;
    result.file = `the environment (${fromEnv.join(", ")})`;
    result.reason = "Cargo reads these variables as configuration of crates.io's source or registry";
  }
  for (const file of result.files) {
    const verdict = await readReplacement(file, fs);
    if (verdict === null) continue;
    if (verdict.replaced && !result.replaced) {
      result.replaced = true;
      result.file = file;
      result.reason = verdict.reason;
    }
  }
  return result;
}

async function readReplacement(
  file: string,
  fs: FileSystem,
): Promise<{ replaced: boolean; reason?: string } | null> {
  let text: string;
  try {
    const info = await fs.stat(file);
    if (info === null || info.isDirectory) return null;
    if (info.size !== undefined && info.size > MAX_CARGO_CONFIG_BYTES) {
      return {
        replaced: true,
        reason: `it is ${info.size} bytes, over the ${MAX_CARGO_CONFIG_BYTES}-byte cap, so it was not read`,
      };
    }
    text = await fs.readTextFile(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    return { replaced: true, reason: `it cannot be read (${describeFsError(error)})` };
  }
  try {
    const config =
      parseTomlDocument(text, file, { code: "CARGO_CONFIG_INVALID", what: "Cargo config" }).value;
    return replacementIn(config);
  } catch {
    return { replaced: true, reason: "it is not valid TOML, so what it replaces is unknown" };
  }
}

/**
 * What a parsed configuration file says about crates.io. Fails closed: besides `[source.crates-io]
 * replace-with`, any other key of `[source.crates-io]` (however spelled, e.g. `replace_with`), a
 * `[registry] index` or `[registries.crates-io] index` (crates.io's index moved), and an `include` of
 * other configuration files (not read here) count as replacing it.
 */
function replacementIn(config: Record<string, unknown>): { replaced: boolean; reason?: string } {
  const table = (value: unknown, key: string) => isTable(value) ? value[key] : undefined;
  const cratesIo = table(config.source, "crates-io");
  if (isTable(cratesIo) && Object.keys(cratesIo).length > 0) {
    const keys = Object.keys(cratesIo).map((k) => `${k} = ${JSON.stringify(cratesIo[k])}`).join(", ");
    return { replaced: true, reason: `[source.crates-io] ${keys}` };
  }
  if (cratesIo !== undefined && !isTable(cratesIo)) {
    return { replaced: true, reason: "source.crates-io is not a table, so what it replaces is unknown" };
  }
  for (
    const [what, value] of [
      ["[registry] index", table(config.registry, "index")],
      ["[registries.crates-io] index", table(table(config.registries, "crates-io"), "index")],
    ] as const
  ) {
    if (value !== undefined) return { replaced: true, reason: `${what} = ${JSON.stringify(value)}` };
  }
  if (config.include !== undefined) {
    return {
      replaced: true,
      reason: `it includes other configuration files (include = ${
        JSON.stringify(config.include)
      }), which are not read here`,
    };
  }
  return { replaced: false };
}
