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
 */
export async function cratesIoReplacement(
  dir: string,
  cargoHome: string,
  fs: FileSystem = denoFileSystem,
): Promise<CratesIoReplacement> {
  const result: CratesIoReplacement = { replaced: false, files: cargoConfigPaths(dir, cargoHome) };
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
    const source = parseTomlDocument(text, file, { code: "CARGO_CONFIG_INVALID", what: "Cargo config" })
      .value.source;
    const cratesIo = isTable(source) ? source["crates-io"] : undefined;
    const replaceWith = isTable(cratesIo) ? cratesIo["replace-with"] : undefined;
    if (replaceWith === undefined) return { replaced: false };
    return { replaced: true, reason: `[source.crates-io] replace-with = ${JSON.stringify(replaceWith)}` };
  } catch {
    return { replaced: true, reason: "it is not valid TOML, so what it replaces is unknown" };
  }
}
