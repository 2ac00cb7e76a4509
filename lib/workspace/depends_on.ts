/**
 * `depends-on` atoms (`docs/writing-plugins.md`, "`depends-on`"): which plugins and servers apply to a workspace, and a
 * sentence saying why for `status` and `list_tools`.
 *
 * @module
 */
import { UserError } from "../diagnostics.ts";
import type { Dependency, Workspace } from "./cargo_workspace.ts";
import {
  cargoRequirementToRange,
  type Comparator,
  comparatorsToRange,
  isPartialVersion,
  lowestInRange,
  satisfiesRange,
} from "./_cargo_semver.ts";

/** A parsed atom: `*`, a crate name, or a crate name with a version requirement. */
export type DependsOnAtom =
  | { kind: "any"; text: "*" }
  | {
    kind: "crate";
    /** The atom as written, e.g. `"serde>=1.0,<2.0"`. */
    text: string;
    /** Crate name as written. */
    name: string;
    /** The requirement as an npm range (Cargo rules applied), or `null` for any version. */
    range: string | null;
  };

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_-]*/;
const OPERATOR = /^(==|=|>=|<=|>|<|\^|~)/;

/**
 * Parses one atom: `*`, `name`, or `name` followed by one or more comma-separated comparators
 * with operators `>=`, `<=`, `>`, `<`, `^`, `~`, `=` (caret, as a bare version in Cargo) or `==`
 * (exact), e.g. `serde>=1.0,<2.0`, `tokio^1.40`, `serde==1.0.219`. No spaces.
 *
 * @throws {UserError} `DEPENDS_ON_INVALID` naming the atom, with a hint showing the accepted forms.
 * @example
 * ```ts
 * import { parseDependsOn } from "./depends_on.ts";
 * parseDependsOn("serde=1.0"); // { kind: "crate", text: "serde=1.0", name: "serde", range: "^1.0" }
 * ```
 */
export function parseDependsOn(atom: string): DependsOnAtom {
  if (atom === "*") return { kind: "any", text: "*" };
  const fail = (why: string, hint?: string): never => {
    throw new UserError("DEPENDS_ON_INVALID", `Cannot read depends-on atom "${atom}": ${why}`, {
      hint: hint ?? 'write "name", "name>=1.2", "name^1.2", "name~1.2", "name==1.2.3" or "*"',
    });
  };
  if (/\s/.test(atom)) fail("it contains spaces", spacesHint(atom));
  const nameMatch = NAME.exec(atom);
  if (!nameMatch) fail("it does not start with a crate name");
  const name = nameMatch![0];
  const rest = atom.slice(name.length);
  if (rest === "") return { kind: "crate", text: atom, name, range: null };
  const comparators: Comparator[] = [];
  for (const part of rest.split(",")) {
    const op = OPERATOR.exec(part);
    if (!op && comparators.length === 0) {
      // `serde1.0`: the name ran into the version (NAME takes digits too).
      const glued = /^(.*[A-Za-z_-])(\d+)$/.exec(name);
      const fix = glued && part.startsWith(".") ? validAtom(`${glued[1]}^${glued[2]}${rest}`) : undefined;
      if (fix !== undefined) {
        const exact = fix.includes(",") ? "" : ` (or "${fix.replace("^", "==")}" for exactly that version)`;
        fail(
          "there is no comparison operator between the crate name and the version",
          `write "${fix}"${exact}`,
        );
      }
    }
    if (!op) fail(`"${part}" has no comparison operator`);
    const version = part.slice(op![0].length);
    if (!isPartialVersion(version)) fail(`"${version}" is not a version`);
    comparators.push({ op: op![0] as Comparator["op"], version });
  }
  const range = comparatorsToRange(comparators, "caret");
  if (range === null) fail("the version requirement is not valid");
  return { kind: "crate", text: atom, name, range };
}

/** `candidate` when it is a valid atom, else `undefined`: hints only ever suggest atoms that parse. */
function validAtom(candidate: string): string | undefined {
  try {
    parseDependsOn(candidate);
    return candidate;
  } catch {
    return undefined;
  }
}

/**
 * The hint for an atom with spaces: the atom without them, with `^` (what a bare version means in
 * `Cargo.toml`) between a name and a version that has no operator (`serde 1` -> `serde^1`, never
 * `serde1`, another crate); the generic one when that is still not a valid atom.
 */
function spacesHint(atom: string): string | undefined {
  const [head = "", ...tail] = atom.trim().split(/\s+/);
  const version = tail.join("");
  const nameOnly = NAME.exec(head)?.[0] === head;
  if (nameOnly && version !== "" && !OPERATOR.test(version)) {
    const fix = validAtom(`${head}^${version}`);
    return fix === undefined
      ? undefined
      : `write it without spaces, with an operator before the version: "${fix}" (or "${head}" for any version)`;
  }
  const fix = validAtom(atom.replace(/\s+/g, ""));
  return fix === undefined ? undefined : `write it without spaces: "${fix}"`;
}

/** Crate names compare with `-` and `_` equal (and, like Cargo's lookups, case-sensitively otherwise). */
export function normalizeCrateName(name: string): string {
  return name.replaceAll("-", "_");
}

/** Whether a `depends-on` list holds, and a sentence saying why. */
export interface DependsOnVerdict {
  holds: boolean;
  /** E.g. `serde 1.0.219 matches serde>=1.0` or `needs one of: tokio (not a dependency here)`. */
  reason: string;
}

/**
 * Evaluates a `depends-on` list against the workspace's direct dependencies: it holds when any
 * atom holds. `*` holds everywhere, even outside a Cargo workspace; a crate atom holds when a
 * member depends directly on that crate (any kind: normal, dev, build, target-specific) at a
 * version the requirement admits. A dependency without a locked version (no `Cargo.lock` entry)
 * is compared by the lowest version its own requirement admits.
 *
 * @param atoms The list; `undefined` (no `depends-on` written) holds.
 * @param ws From `loadWorkspace()`.
 */
export function evaluateDependsOn(atoms: readonly string[] | undefined, ws: Workspace): DependsOnVerdict {
  if (atoms === undefined) return { holds: true, reason: "no depends-on" };
  const misses: string[] = [];
  for (const text of atoms) {
    let atom: DependsOnAtom;
    try {
      atom = parseDependsOn(text);
    } catch (error) {
      misses.push(`${text} (${(error as Error).message})`);
      continue;
    }
    if (atom.kind === "any") return { holds: true, reason: "depends-on * applies everywhere" };
    const found = ws.dependencies.filter((d) => normalizeCrateName(d.name) === normalizeCrateName(atom.name));
    if (found.length === 0) {
      misses.push(`${text} (${ws.root === null ? "not in a Cargo workspace" : "not a dependency here"})`);
      continue;
    }
    const hit = found.find((d) => matches(d, atom.range));
    if (hit) {
      const version = hit.version ?? `${hit.requirement ?? "?"} (not locked)`;
      return { holds: true, reason: `${hit.name} ${version} matches ${text}` };
    }
    const versions = [...new Set(found.map((d) => d.version ?? `${d.requirement ?? "?"} (not locked)`))];
    misses.push(`${text} (workspace has ${found[0]!.name} ${versions.join(", ")})`);
  }
  return { holds: false, reason: `needs one of: ${misses.join(", ")}` };
}

function matches(dep: Dependency, range: string | null): boolean {
  if (range === null) return true;
  if (dep.version !== null) return satisfiesRange(dep.version, range);
  if (dep.requirement === null) return false;
  const requirement = cargoRequirementToRange(dep.requirement);
  const lowest = requirement === null ? null : lowestInRange(requirement);
  return lowest !== null && satisfiesRange(lowest, range);
}
