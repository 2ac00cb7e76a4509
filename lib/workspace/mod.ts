/**
 * Area `workspace/`: what the Cargo workspace depends on, for `depends-on`. It imports only the shared
 * top level (diagnostics, file_system, toml_position): never plugins, servers or MCP.
 *
 * The face of the area, and its only one: the workspace reader (`cargo_workspace.ts`), `depends-on`
 * atoms (`depends_on.ts`), the `predicates` that gate plugins and servers (`predicates.ts`) and where
 * a crate's sources are (`crate_location.ts`), and whether Cargo's configuration replaces crates.io
 * (`cargo_config.ts`).
 *
 * @module
 */
export {
  type Dependency,
  type DependencyKind,
  loadWorkspace,
  type LockedPackage,
  MAX_CARGO_TOML_BYTES,
  MAX_WORKSPACE_MEMBERS,
  NO_WORKSPACE,
  type Workspace,
} from "./cargo_workspace.ts";
export {
  type DependsOnAtom,
  type DependsOnVerdict,
  evaluateDependsOn,
  normalizeCrateName,
  parseDependsOn,
} from "./depends_on.ts";
export {
  evaluateGate,
  evaluatePredicate,
  MAX_PREDICATE_CHARS,
  MAX_PREDICATE_DEPTH,
  parsePredicate,
  type Predicate,
  type PredicateContext,
  type PredicateVerdict,
} from "./predicates.ts";
export { MAX_CARGO_LOCK_BYTES } from "./_cargo_lock.ts";
export { MAX_MEMBER_GLOB_FOLDERS } from "./_member_globs.ts";
export { type CrateLocation, type CrateMissing, CRATES_IO_SRC_DIRS, locateCrate } from "./crate_location.ts";
export {
  cargoConfigPaths,
  type CratesIoReplacement,
  cratesIoReplacement,
  MAX_CARGO_CONFIG_BYTES,
} from "./cargo_config.ts";
