/**
 * Where a dependency's source is on this machine, found the way Cargo lays its folders out, without
 * running `cargo` and without network: path dependencies and members from the workspace, registry
 * crates under `$CARGO_HOME/registry/src/<index>/<name>-<version>/` at the version in `Cargo.lock`,
 * git dependencies under `$CARGO_HOME/git/checkouts/<repo>-<hash>/<short commit>/`. A crate that
 * is not there is reported (`cargo fetch` puts it there), never fetched.
 *
 * @module
 */
import { join } from "node:path";
import { denoFileSystem, type FileSystem } from "../file_system.ts";
import { isTable, parseTomlDocument } from "../toml_position.ts";
import { cargoRequirementToRange, highestMatching } from "./_cargo_semver.ts";
import { cratesIoReplacement } from "./cargo_config.ts";
import { normalizeCrateName } from "./depends_on.ts";
import { type LockedPackage, MAX_CARGO_TOML_BYTES, type Workspace } from "./cargo_workspace.ts";

/** Where a crate's source was found. */
export interface CrateLocation {
  ok: true;
  /** Absolute folder holding the crate's `Cargo.toml`. */
  dir: string;
  /**
   * `member` (a workspace member), `path` (a path dependency), `registry` (crates.io: locked as
   * crates.io, unpacked in crates.io's own folder, crates.io not replaced), `replaced` (locked as
   * crates.io, but crates.io is replaced in Cargo's configuration or the crate was unpacked from
   * another index), `other-registry` (an alternative registry), `git` (a git dependency's checkout).
   * Only `registry` is content the workspace does not control.
   */
  origin: "member" | "path" | "registry" | "replaced" | "other-registry" | "git";
  /** The locked version, when it came from `Cargo.lock`. */
  version?: string | undefined;
  /** `replaced`: why the crate is not taken as crates.io's, e.g. `crates.io is replaced in /w/.cargo/config.toml (...)`. */
  why?: string | undefined;
  /** Cargo configuration files read to decide the origin (their change means re-resolution). */
  configFiles?: string[] | undefined;
}

/** Why a crate's source was not found. */
export interface CrateMissing {
  ok: false;
  /** `CRATE_NOT_A_DEPENDENCY` (not in `Cargo.lock`, no path dependency) or `CRATE_NOT_PRESENT` (locked, not on disk). */
  code: "CRATE_NOT_A_DEPENDENCY" | "CRATE_NOT_PRESENT";
  reason: string;
  hint: string;
}

const CRATES_IO_SOURCES = [
  "registry+https://github.com/rust-lang/crates.io-index",
  "sparse+https://index.crates.io/",
];
/**
 * The folders Cargo unpacks crates.io's crates into, under `$CARGO_HOME/registry/src`: the index's
 * host, `-`, and a hash of its source id (its kind and URL; the hash function changed in Cargo 1.85).
 * Any other folder, a look-alike host with another hash included, holds crates of another source.
 */
export const CRATES_IO_SRC_DIRS: ReadonlySet<string> = new Set([
  "index.crates.io-1949cf8c6b5b557f", // sparse+https://index.crates.io/, Cargo 1.85 and later
  "index.crates.io-6f17d22bba15001f", // sparse+https://index.crates.io/, Cargo 1.68 to 1.84
  "github.com-25cdd57fae9f0462", // registry+https://github.com/rust-lang/crates.io-index, Cargo 1.85 and later
  "github.com-1ecc6299db9ec823", // registry+https://github.com/rust-lang/crates.io-index, before Cargo 1.85
]);
/** Folder levels searched inside a git checkout for the crate's `Cargo.toml`. */
const MAX_CHECKOUT_DEPTH = 3;

/**
 * Finds the folder of crate `name` for this workspace.
 *
 * @param options.cargoHome `$CARGO_HOME` (default `<home>/.cargo`, resolved by the caller).
 * @param options.version A Cargo version requirement the locked version must meet (e.g. `"1.2"`).
 * @param options.fs File access. Default {@link denoFileSystem}.
 * @param options.env The environment Cargo runs with (see `cratesIoReplacement`). Default none.
 */
export async function locateCrate(
  name: string,
  workspace: Workspace,
  options: {
    cargoHome: string;
    version?: string | undefined;
    fs?: FileSystem | undefined;
    env?: Readonly<Record<string, string | undefined>> | undefined;
  },
): Promise<CrateLocation | CrateMissing> {
  const fs = options.fs ?? denoFileSystem;
  const wanted = normalizeCrateName(name);
  const member = workspace.members?.find((m) => normalizeCrateName(m.name) === wanted);
  if (member) return { ok: true, dir: member.dir, origin: "member" };
  const pathDep = workspace.pathDependencies?.find((d) => normalizeCrateName(d.name) === wanted);
  if (pathDep) return { ok: true, dir: pathDep.dir, origin: "path" };
  const range = options.version === undefined ? null : cargoRequirementToRange(options.version);
  const locked = (workspace.packages ?? []).filter((p) =>
    normalizeCrateName(p.name) === wanted && p.source !== null
  );
  const direct = workspace.dependencies.filter((d) =>
    normalizeCrateName(d.name) === wanted && d.version !== null
  )
    .map((d) => d.version!);
  const version = highestMatching(direct, range) ?? highestMatching(locked.map((p) => p.version), range);
  const pkg = locked.find((p) => p.version === version);
  if (pkg === undefined) {
    return {
      ok: false,
      code: "CRATE_NOT_A_DEPENDENCY",
      reason: `crate "${name}"${
        options.version ? ` (${options.version})` : ""
      } is not a dependency of this workspace${workspace.lockfile === null ? " (no Cargo.lock yet)" : ""}`,
      hint: workspace.lockfile === null
        ? "run `cargo generate-lockfile` (or any cargo build) in the workspace"
        : `add it to a member's [dependencies], or remove the [[plugins]] entry`,
    };
  }
  const source = pkg.source!;
  if (source.startsWith("git+")) {
    const found = await findGitCheckout(fs, options.cargoHome, pkg);
    if (found !== undefined) return { ok: true, dir: found, origin: "git", version: pkg.version };
  } else {
    const found = await locateRegistryCrate(fs, options.cargoHome, workspace.root, pkg, options.env ?? {});
    if (found !== undefined) return found;
  }
  return {
    ok: false,
    code: "CRATE_NOT_PRESENT",
    reason:
      `crate "${name}" ${pkg.version} is locked in Cargo.lock but its source is not under ${options.cargoHome}`,
    hint: "run `cargo fetch` in the workspace (cargo-agents never downloads crates itself)",
  };
}

async function listNames(fs: FileSystem, dir: string): Promise<string[]> {
  try {
    return (await fs.readDir(dir)).filter((e) => e.isDirectory || e.isSymlink).map((e) => e.name).sort();
  } catch {
    return []; // No such folder: nothing of Cargo's is there.
  }
}

/**
 * A registry crate's folder and origin: `registry` only when Cargo.lock names crates.io, no Cargo
 * configuration replaces crates.io, and the folder is one of {@link CRATES_IO_SRC_DIRS}.
 */
async function locateRegistryCrate(
  fs: FileSystem,
  cargoHome: string,
  root: string | null,
  pkg: LockedPackage,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CrateLocation | undefined> {
  const lockedCratesIo = CRATES_IO_SOURCES.includes(pkg.source ?? "");
  const replacement = lockedCratesIo && root !== null
    ? await cratesIoReplacement(root, cargoHome, fs, env)
    : { replaced: false, files: [] as string[] };
  // Where Cargo would have unpacked it: crates.io's folders first for crates.io not replaced, else the others.
  const wantCratesIo = lockedCratesIo && !replacement.replaced;
  const found = await findRegistryCrate(fs, cargoHome, pkg, wantCratesIo);
  if (found === undefined) return undefined;
  const base = { ok: true as const, dir: found.dir, version: pkg.version, configFiles: replacement.files };
  if (!lockedCratesIo) return { ...base, origin: "other-registry" };
  if (replacement.replaced) {
    return {
      ...base,
      origin: "replaced",
      why: `crates.io is replaced in ${replacement.file} (${replacement.reason})`,
    };
  }
  if (!CRATES_IO_SRC_DIRS.has(found.index)) {
    return {
      ...base,
      origin: "replaced",
      why: `it was unpacked under ${join(cargoHome, "registry", "src", found.index)}, not a crates.io folder`,
    };
  }
  return { ...base, origin: "registry" };
}

async function findRegistryCrate(
  fs: FileSystem,
  cargoHome: string,
  pkg: LockedPackage,
  cratesIoFirst: boolean,
): Promise<{ dir: string; index: string } | undefined> {
  const src = join(cargoHome, "registry", "src");
  const indexes = await listNames(fs, src);
  const ordered = [...indexes].sort((a, b) =>
    Number(CRATES_IO_SRC_DIRS.has(b) === cratesIoFirst) - Number(CRATES_IO_SRC_DIRS.has(a) === cratesIoFirst)
  );
  for (const index of ordered) {
    const dir = join(src, index, `${pkg.name}-${pkg.version}`);
    if ((await fs.stat(join(dir, "Cargo.toml")))?.isFile) return { dir, index };
  }
  return undefined;
}

async function findGitCheckout(
  fs: FileSystem,
  cargoHome: string,
  pkg: LockedPackage,
): Promise<string | undefined> {
  const source = pkg.source!;
  const commit = source.slice(source.lastIndexOf("#") + 1);
  const url = source.slice("git+".length, source.includes("#") ? source.lastIndexOf("#") : undefined).split(
    "?",
  )[0]!;
  const repo = url.replace(/\/+$/, "").replace(/\.git$/, "").split("/").pop() ?? "";
  if (!/^[0-9a-f]{7,64}$/.test(commit) || repo === "") return undefined;
  const checkouts = join(cargoHome, "git", "checkouts");
  for (const dir of await listNames(fs, checkouts)) {
    if (!dir.startsWith(`${repo}-`)) continue;
    for (const rev of await listNames(fs, join(checkouts, dir))) {
      if (rev.length < 7 || !commit.startsWith(rev)) continue;
      const found = await findPackageDir(fs, join(checkouts, dir, rev), pkg.name, MAX_CHECKOUT_DEPTH);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** The folder under `dir` whose `Cargo.toml` declares package `name` (breadth first, bounded). */
async function findPackageDir(
  fs: FileSystem,
  dir: string,
  name: string,
  depth: number,
): Promise<string | undefined> {
  const manifest = join(dir, "Cargo.toml");
  const info = await fs.stat(manifest);
  if (info?.isFile && (info.size ?? 0) <= MAX_CARGO_TOML_BYTES) {
    try {
      const pkg = parseTomlDocument(await fs.readTextFile(manifest), manifest, {
        code: "CARGO_TOML_INVALID",
        what: "Cargo.toml",
      }).value
        .package;
      if (isTable(pkg) && pkg.name === name) return dir;
    } catch {
      // A broken Cargo.toml in a checkout is not the crate we look for: keep searching.
    }
  }
  if (depth === 0) return undefined;
  for (const sub of await listNames(fs, dir)) {
    if (sub.startsWith(".") || sub === "target") continue;
    const found = await findPackageDir(fs, join(dir, sub), name, depth - 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
