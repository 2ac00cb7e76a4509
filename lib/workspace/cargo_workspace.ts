/**
 * The Cargo workspace around a directory and its members' direct dependencies with the versions
 * locked in `Cargo.lock`, read straight from the files: no `cargo` process, no network.
 *
 * @module
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { UserError } from "../diagnostics.ts";
import { SliceClock } from "../time_slices.ts";
import { denoFileSystem, type FileSystem } from "../file_system.ts";
import {
  isTable,
  parseTomlDocument,
  type TomlDocument,
  type TomlPath,
  type TomlTable,
} from "../toml_position.ts";
import { cargoRequirementToRange, highestMatching } from "./_cargo_semver.ts";
import { expandPattern, globBudget, MAX_MEMBER_GLOB_FOLDERS } from "./_member_globs.ts";
import { type LockPackage, readCargoLock } from "./_cargo_lock.ts";

/** Which dependency table a dependency comes from (target-specific tables count as their kind). */
export type DependencyKind = "normal" | "dev" | "build";

/** One direct dependency of one workspace member. */
export interface Dependency {
  /** Package name as published (a renamed dependency appears under its `package`). */
  name: string;
  /** The version locked in `Cargo.lock`, e.g. `"1.0.219"`; `null` when there is no lock entry. */
  version: string | null;
  /** The requirement as written in `Cargo.toml` (after `workspace = true` inheritance), e.g. `"1.0"`; `null` when none (path or git only). */
  requirement: string | null;
  kind: DependencyKind;
  /** Package name of the member that declares it. */
  member: string;
}

/** The workspace around a directory. */
export interface Workspace {
  /** Absolute directory of the workspace root (or of the lone package); `null` outside any Cargo project. */
  root: string | null;
  /** Absolute path of `<root>/Cargo.lock`, `null` when it does not exist (yet). */
  lockfile: string | null;
  /** Absolute paths of the root `Cargo.toml` and of every member's, sorted: the files to watch. */
  manifests: string[];
  /** Direct dependencies of all members, members themselves excluded; sorted by name, member, kind. */
  dependencies: Dependency[];
  /** Files that could not be read (broken TOML, a listed member without `Cargo.toml`...); what could be read is still used. */
  problems: UserError[];
  /** Every member: package name and absolute folder, sorted by folder. Absent outside a workspace. */
  members?: { name: string; dir: string }[];
  /** Every `[[package]]` of `Cargo.lock` (`source` as written, `null` for path packages). Absent without one. */
  packages?: LockedPackage[];
  /** Path dependencies of members that are not members (package name and absolute folder). */
  pathDependencies?: { name: string; dir: string }[];
}

/** One `[[package]]` of `Cargo.lock`. */
export interface LockedPackage {
  name: string;
  version: string;
  /** E.g. `registry+https://github.com/rust-lang/crates.io-index`, `git+https://...#<commit>`; `null` for path packages. */
  source: string | null;
}

/** The value of {@link loadWorkspace} outside any Cargo project. */
export const NO_WORKSPACE: Readonly<Workspace> = Object.freeze({
  root: null,
  lockfile: null,
  manifests: [],
  dependencies: [],
  problems: [],
});

/**
 * Largest `Cargo.toml` read, in bytes (512 KiB: generated manifests with thousands of features stay
 * below it, and one parse of it takes tens of ms on the host thread).
 */
export const MAX_CARGO_TOML_BYTES = 512 * 1024;
/** Most workspace members read (members and path dependencies inside the root); the rest are left out with a problem. */
export const MAX_WORKSPACE_MEMBERS = 2000;
/** Pauses reading between files, so many members do not hold the host thread. */
const clock = new SliceClock();

const DEPENDENCY_TABLES: readonly (readonly [string, DependencyKind])[] = [
  ["dependencies", "normal"],
  ["dev-dependencies", "dev"],
  ["dev_dependencies", "dev"],
  ["build-dependencies", "build"],
  ["build_dependencies", "build"],
];

interface Member {
  manifest: string;
  dir: string;
  toml: TomlTable;
}

interface Collected {
  members: Map<string, Member>;
  rootDir: string;
  rootManifest: string;
  rootToml: TomlTable;
}

/**
 * Finds the Cargo workspace around `cwd` and lists its members' direct dependencies.
 *
 * The root: the nearest `Cargo.toml` walking up from `cwd`; when it has no `[workspace]`, the
 * first ancestor `Cargo.toml` with `[workspace]` (or the one `package.workspace` names) if it
 * counts this package as a member, else the package alone. Members: `workspace.members` (globs
 * `*`, `?`, `[...]`, `**`; matches without `Cargo.toml` skipped), minus `workspace.exclude`
 * (path prefixes), plus the root package and path dependencies inside the root. Dependencies:
 * `[dependencies]`, `[dev-dependencies]`, `[build-dependencies]` and their `[target.*....]`
 * variants, renamed ones by `package`, `workspace = true` taken from `[workspace.dependencies]`,
 * path dependencies on members left out. Versions: from `Cargo.lock` (the member's own lock entry
 * first, then any entry whose version meets the requirement, highest first).
 *
 * Never throws for the content of the files: problems are listed in {@link Workspace.problems}.
 *
 * @param cwd Absolute directory to start from.
 * @param fs File access. Default {@link denoFileSystem}.
 */
export async function loadWorkspace(cwd: string, fs: FileSystem = denoFileSystem): Promise<Workspace> {
  const problems: UserError[] = [];
  const nearest = await findUp(fs, resolve(cwd));
  if (nearest === null) return { ...NO_WORKSPACE, manifests: [], dependencies: [], problems: [] };
  const nearestDoc = await readToml(fs, nearest, problems);
  if (nearestDoc === null) {
    const root = dirname(nearest);
    return { root, lockfile: await lockfileOf(fs, root), manifests: [nearest], dependencies: [], problems };
  }
  let collected: Collected | null = null;
  if (isTable(nearestDoc.value.workspace)) {
    collected = await collectMembers(fs, nearest, nearestDoc, problems);
  } else {
    const ancestor = await findWorkspaceRoot(fs, nearest, nearestDoc.value, problems);
    if (ancestor) {
      // Problems of a workspace this package is not part of are not this workspace's problems.
      const candidateProblems: UserError[] = [];
      const candidate = await collectMembers(fs, ancestor.manifest, ancestor.doc, candidateProblems);
      if (candidate.members.has(dirname(nearest))) {
        collected = candidate;
        problems.push(...candidateProblems);
      }
    }
    collected ??= await collectMembers(fs, nearest, nearestDoc, problems);
  }
  const lockfile = await lockfileOf(fs, collected.rootDir);
  const lock = lockfile === null ? [] : await readCargoLock(fs, lockfile, problems);
  const dependencies = listDependencies(collected, lock);
  const manifests = [
    ...new Set([collected.rootManifest, ...[...collected.members.values()].map((m) => m.manifest)]),
  ]
    .sort();
  const ws = isTable(collected.rootToml.workspace) ? collected.rootToml.workspace : null;
  const members = [...collected.members.values()].map((m) => ({
    name: packageIdentity(m, ws).name,
    dir: m.dir,
  }))
    .sort((a, b) => a.dir.localeCompare(b.dir));
  const pathDependencies = new Map<string, string>();
  for (const member of collected.members.values()) {
    for (const dep of declaredDependencies(member, ws, collected.rootDir)) {
      if (dep.path !== null && !collected.members.has(dep.path)) pathDependencies.set(dep.name, dep.path);
    }
  }
  return {
    root: collected.rootDir,
    lockfile,
    manifests,
    dependencies,
    problems,
    members,
    packages: lock.map(({ name, version, source }) => ({ name, version, source })),
    pathDependencies: [...pathDependencies].map(([name, dir]) => ({ name, dir })),
  };
}

async function findUp(fs: FileSystem, start: string): Promise<string | null> {
  for (let dir = start;; dir = dirname(dir)) {
    const candidate = join(dir, "Cargo.toml");
    if ((await fs.stat(candidate))?.isFile) return candidate;
    if (dirname(dir) === dir) return null;
  }
}

async function findWorkspaceRoot(
  fs: FileSystem,
  packageManifest: string,
  packageToml: TomlTable,
  problems: UserError[],
): Promise<{ manifest: string; doc: TomlDocument } | null> {
  const pkg = packageToml.package;
  if (isTable(pkg) && typeof pkg.workspace === "string") {
    const manifest = join(resolve(dirname(packageManifest), pkg.workspace), "Cargo.toml");
    const doc = (await fs.stat(manifest))?.isFile ? await readToml(fs, manifest, problems) : null;
    return doc && isTable(doc.value.workspace) ? { manifest, doc } : null;
  }
  for (let dir = dirname(dirname(packageManifest));; dir = dirname(dir)) {
    const manifest = join(dir, "Cargo.toml");
    if (manifest !== packageManifest && (await fs.stat(manifest))?.isFile) {
      const doc = await readToml(fs, manifest, problems);
      if (doc && isTable(doc.value.workspace)) return { manifest, doc };
    }
    if (dirname(dir) === dir) return null;
  }
}

async function collectMembers(
  fs: FileSystem,
  rootManifest: string,
  rootDoc: TomlDocument,
  problems: UserError[],
): Promise<Collected> {
  const rootToml = rootDoc.value;
  const locate = (path: TomlPath) => rootDoc.index.locate(path);
  const rootDir = dirname(rootManifest);
  const members = new Map<string, Member>();
  const ws = isTable(rootToml.workspace) ? rootToml.workspace : null;
  const excludes = stringArray(ws?.exclude).map((p) => resolve(rootDir, p));
  const isExcluded = (dir: string) => excludes.some((ex) => dir === ex || dir.startsWith(ex + sep));
  const queue: Member[] = [];
  let full = false;
  /** Whether the member cap is reached (said once, as a problem). */
  const isFull = () => {
    if (members.size < MAX_WORKSPACE_MEMBERS) return false;
    if (!full) problems.push(tooManyMembers(rootManifest, locate));
    full = true;
    return true;
  };
  const add = (member: Member) => {
    if (members.has(member.dir) || isFull()) return;
    members.set(member.dir, member);
    queue.push(member);
  };
  if (isTable(rootToml.package)) add({ manifest: rootManifest, dir: rootDir, toml: rootToml });
  if (ws) {
    await addGlobbedMembers(
      fs,
      { rootDir, rootManifest, ws, locate, isExcluded, isFull, members, add },
      problems,
    );
  }
  // Path dependencies inside the root are members too (Cargo's implicit members).
  while (ws && queue.length > 0 && !full) {
    const member = queue.shift()!;
    for (const dep of declaredDependencies(member, ws, rootDir)) {
      if (dep.path === null || members.has(dep.path) || isExcluded(dep.path)) continue;
      if (relative(rootDir, dep.path).startsWith("..") || isAbsolute(relative(rootDir, dep.path))) continue;
      const manifest = join(dep.path, "Cargo.toml");
      if (!(await fs.stat(manifest))?.isFile) continue;
      const doc = await readToml(fs, manifest, problems);
      if (doc) add({ manifest, dir: dep.path, toml: doc.value });
    }
  }
  return { members, rootDir, rootManifest, rootToml };
}

/** Most `CARGO_MEMBER_MISSING` problems listed one by one; past them, one more says how many were left out. */
const MAX_MISSING_MEMBER_PROBLEMS = 10;

async function addGlobbedMembers(
  fs: FileSystem,
  at: {
    rootDir: string;
    rootManifest: string;
    ws: TomlTable;
    locate: (path: TomlPath) => { line: number; column: number };
    isExcluded: (dir: string) => boolean;
    isFull: () => boolean;
    members: Map<string, Member>;
    add: (member: Member) => void;
  },
  problems: UserError[],
): Promise<void> {
  const location = { file: at.rootManifest, ...at.locate(["workspace", "members"]) };
  const budget = globBudget();
  let missing = 0;
  for (const pattern of stringArray(at.ws.members)) {
    for (const dir of await expandPattern(fs, at.rootDir, pattern, budget)) {
      if (at.isExcluded(dir) || at.members.has(dir)) continue;
      if (at.isFull()) return;
      const manifest = join(dir, "Cargo.toml");
      if (!(await fs.stat(manifest))?.isFile) {
        if (++missing <= MAX_MISSING_MEMBER_PROBLEMS) {
          problems.push(
            new UserError(
              "CARGO_MEMBER_MISSING",
              `Cannot load workspace member ${dir} (from "${pattern}"): it has no Cargo.toml`,
              {
                hint: `add a Cargo.toml there, or list it in workspace.exclude of ${at.rootManifest}`,
                location,
              },
            ),
          );
        }
        continue;
      }
      const doc = await readToml(fs, manifest, problems);
      if (doc) at.add({ manifest, dir, toml: doc.value });
    }
  }
  if (missing > MAX_MISSING_MEMBER_PROBLEMS) {
    problems.push(
      new UserError(
        "CARGO_MEMBER_MISSING",
        `${
          missing - MAX_MISSING_MEMBER_PROBLEMS
        } more folders matched by workspace.members of ${at.rootManifest} ` +
          "have no Cargo.toml",
        { hint: "narrow the globs in workspace.members, or list the folders in workspace.exclude", location },
      ),
    );
  }
  if (budget.exhausted) {
    problems.push(
      new UserError(
        "CARGO_MEMBER_GLOB_TOO_WIDE",
        `Cannot expand workspace.members of ${at.rootManifest} fully: its globs listed ` +
          `${MAX_MEMBER_GLOB_FOLDERS} folders, the cap; members in folders beyond it are left out`,
        { hint: "narrow the globs (a `**` over a large tree), or list the members by path", location },
      ),
    );
  }
}

function tooManyMembers(
  rootManifest: string,
  locate: (path: TomlPath) => { line: number; column: number },
): UserError {
  return new UserError(
    "CARGO_MEMBERS_TOO_MANY",
    `Cannot load every member of the workspace of ${rootManifest}: it has more than ${MAX_WORKSPACE_MEMBERS} ` +
      "members, the cap; the others are left out",
    {
      hint:
        "narrow the globs in workspace.members; if the workspace truly is this large, open the agent in a " +
        "smaller one",
      location: { file: rootManifest, ...locate(["workspace", "members"]) },
    },
  );
}

interface Declared {
  name: string;
  requirement: string | null;
  kind: DependencyKind;
  /** Absolute directory of a path dependency. */
  path: string | null;
}

function declaredDependencies(member: Member, ws: TomlTable | null, rootDir: string): Declared[] {
  const tables: [unknown, DependencyKind][] = DEPENDENCY_TABLES.map((
    [key, kind],
  ) => [member.toml[key], kind]);
  if (isTable(member.toml.target)) {
    for (const target of Object.values(member.toml.target)) {
      if (!isTable(target)) continue;
      for (const [key, kind] of DEPENDENCY_TABLES) tables.push([target[key], kind]);
    }
  }
  const wsDeps = isTable(ws?.dependencies) ? ws.dependencies : {};
  const out: Declared[] = [];
  for (const [table, kind] of tables) {
    if (!isTable(table)) continue;
    for (const [key, spec] of Object.entries(table)) {
      let source = spec;
      let baseDir = member.dir;
      if (isTable(spec) && spec.workspace === true) {
        source = wsDeps[key];
        baseDir = rootDir;
      }
      out.push({ ...readSpec(key, source, baseDir), kind });
    }
  }
  return out;
}

function readSpec(key: string, spec: unknown, baseDir: string): Omit<Declared, "kind"> {
  if (typeof spec === "string") return { name: key, requirement: spec, path: null };
  if (!isTable(spec)) return { name: key, requirement: null, path: null };
  return {
    name: typeof spec.package === "string" ? spec.package : key,
    requirement: typeof spec.version === "string" ? spec.version : null,
    path: typeof spec.path === "string" ? resolve(baseDir, spec.path) : null,
  };
}

function listDependencies(collected: Collected, lock: LockPackage[]): Dependency[] {
  const ws = isTable(collected.rootToml.workspace) ? collected.rootToml.workspace : null;
  const seen = new Set<string>();
  const out: Dependency[] = [];
  for (const member of collected.members.values()) {
    const { name: memberName, version: memberVersion } = packageIdentity(member, ws);
    const ownEntry = lock.find((p) =>
      p.name === memberName && p.source === null && p.version === memberVersion
    ) ??
      lock.find((p) => p.name === memberName && p.source === null);
    for (const dep of declaredDependencies(member, ws, collected.rootDir)) {
      if (dep.path !== null && collected.members.has(dep.path)) continue;
      const version = lockedVersion(dep, ownEntry, lock);
      const entry: Dependency = {
        name: dep.name,
        version,
        requirement: dep.requirement,
        kind: dep.kind,
        member: memberName,
      };
      const key = JSON.stringify(entry);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(entry);
    }
  }
  return out.sort((a, b) =>
    a.name.localeCompare(b.name) || a.member.localeCompare(b.member) || a.kind.localeCompare(b.kind)
  );
}

function packageIdentity(member: Member, ws: TomlTable | null): { name: string; version: string } {
  const pkg = isTable(member.toml.package) ? member.toml.package : {};
  const name = typeof pkg.name === "string" ? pkg.name : basename(member.dir);
  let version = "0.0.0";
  if (typeof pkg.version === "string") version = pkg.version;
  else if (isTable(pkg.version) && pkg.version.workspace === true && isTable(ws?.package)) {
    if (typeof ws.package.version === "string") version = ws.package.version;
  }
  return { name, version };
}

function lockedVersion(dep: Declared, ownEntry: LockPackage | undefined, lock: LockPackage[]): string | null {
  const range = dep.requirement === null ? null : cargoRequirementToRange(dep.requirement);
  const all = lock.filter((p) => p.name === dep.name).map((p) => p.version);
  if (ownEntry) {
    const refs = ownEntry.dependencies.map((d) => d.split(" ")).filter(([name]) => name === dep.name);
    const versions = refs.map(([, version]) => version ?? (all.length === 1 ? all[0]! : null))
      .filter((v): v is string => v !== null);
    if (versions.length === 1) return versions[0]!;
    if (versions.length > 1) return highestMatching(versions, range) ?? null;
  }
  return highestMatching(all, range);
}

/**
 * Reads and parses one `Cargo.toml`: `null` (with a problem) when it is over
 * {@link MAX_CARGO_TOML_BYTES}, not TOML or not UTF-8. Pauses at a slice boundary after each file, so a
 * workspace of many members does not hold the host thread.
 */
async function readToml(fs: FileSystem, file: string, problems: UserError[]): Promise<TomlDocument | null> {
  await clock.pause();
  try {
    const size = (await fs.stat(file))?.size;
    if (size !== undefined && size > MAX_CARGO_TOML_BYTES) {
      problems.push(cargoTomlTooLarge(file, size));
      return null;
    }
    const text = await fs.readTextFile(file);
    if (text.length > MAX_CARGO_TOML_BYTES) {
      problems.push(cargoTomlTooLarge(file, text.length));
      return null;
    }
    return parseTomlDocument(text, file, { code: "CARGO_TOML_INVALID", what: basename(file) });
  } catch (error) {
    if (error instanceof UserError) {
      problems.push(error);
      return null;
    }
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** The problem of a `Cargo.toml` over {@link MAX_CARGO_TOML_BYTES}. */
export function cargoTomlTooLarge(file: string, bytes: number): UserError {
  return new UserError(
    "CARGO_TOML_TOO_LARGE",
    `Cannot read ${file}: it is ${bytes} bytes, over the cap of ${MAX_CARGO_TOML_BYTES} bytes for a Cargo.toml`,
    {
      hint:
        "the crate it declares is left out of the workspace; a Cargo.toml that large is not hand-written, " +
        "check where it came from",
      location: { file, line: 1, column: 1 },
    },
  );
}

async function lockfileOf(fs: FileSystem, root: string): Promise<string | null> {
  const file = join(root, "Cargo.lock");
  return (await fs.stat(file))?.isFile ? file : null;
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}
