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
import { normalizeCrateName } from "./depends_on.ts";
import type { LockedPackage, Workspace } from "./cargo_workspace.ts";

/** Where a crate's source was found. */
export interface CrateLocation {
  ok: true;
  /** Absolute folder holding the crate's `Cargo.toml`. */
  dir: string;
  /**
   * `member` (a workspace member), `path` (a path dependency), `registry` (crates.io),
   * `other-registry` (an alternative registry), `git` (a git dependency's checkout).
   */
  origin: "member" | "path" | "registry" | "other-registry" | "git";
  /** The locked version, when it came from `Cargo.lock`. */
  version?: string | undefined;
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
/** How Cargo names crates.io's folders under `registry/src`. */
const CRATES_IO_DIR = /^(index\.crates\.io|github\.com)-[0-9a-f]+$/;
/** Folder levels searched inside a git checkout for the crate's `Cargo.toml`. */
const MAX_CHECKOUT_DEPTH = 3;

/**
 * Finds the folder of crate `name` for this workspace.
 *
 * @param options.cargoHome `$CARGO_HOME` (default `<home>/.cargo`, resolved by the caller).
 * @param options.version A Cargo version requirement the locked version must meet (e.g. `"1.2"`).
 * @param options.fs File access. Default {@link denoFileSystem}.
 */
export async function locateCrate(
  name: string,
  workspace: Workspace,
  options: { cargoHome: string; version?: string | undefined; fs?: FileSystem | undefined },
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
  const found = source.startsWith("git+")
    ? await findGitCheckout(fs, options.cargoHome, pkg)
    : await findRegistryCrate(fs, options.cargoHome, pkg);
  if (found !== undefined) {
    const origin = source.startsWith("git+")
      ? "git"
      : CRATES_IO_SOURCES.includes(source)
      ? "registry"
      : "other-registry";
    return { ok: true, dir: found, origin, version: pkg.version };
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

async function findRegistryCrate(
  fs: FileSystem,
  cargoHome: string,
  pkg: LockedPackage,
): Promise<string | undefined> {
  const src = join(cargoHome, "registry", "src");
  const indexes = await listNames(fs, src);
  const cratesIo = CRATES_IO_SOURCES.includes(pkg.source ?? "");
  // crates.io's folders first for a crates.io package; for another registry, the others first.
  const ordered = [...indexes].sort((a, b) =>
    Number(CRATES_IO_DIR.test(b) === cratesIo) - Number(CRATES_IO_DIR.test(a) === cratesIo)
  );
  for (const index of ordered) {
    const dir = join(src, index, `${pkg.name}-${pkg.version}`);
    if ((await fs.stat(join(dir, "Cargo.toml")))?.isFile) return dir;
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
  if ((await fs.stat(manifest))?.isFile) {
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
