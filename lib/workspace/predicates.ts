/**
 * Upstream's `predicates` (`depends-on(...)`, `path_exists(...)`, `env(...)`, `workspace-member()`,
 * `not`/`any`/`all`): parsed once, evaluated against the workspace with three values. A predicate
 * this program does not evaluate (`shell(...)`, a custom `[[predicate]]`) is "unknown" and leaves what
 * it gates dormant: it fails closed and never runs a program to decide.
 *
 * @module
 */
import { isAbsolute, join } from "node:path";
import { UserError } from "../diagnostics.ts";
import { evaluateDependsOn, parseDependsOn } from "./depends_on.ts";
import type { Workspace } from "./cargo_workspace.ts";

/** A parsed predicate expression. */
export type Predicate =
  | { kind: "depends-on"; atoms: string[] }
  | { kind: "path_exists"; path: string }
  | { kind: "env"; name: string; value: string | undefined }
  | { kind: "workspace-member" }
  | { kind: "not"; arg: Predicate }
  | { kind: "any" | "all"; args: Predicate[] }
  /** `shell(...)`, a custom predicate, or any other name: never evaluated. */
  | { kind: "unknown"; name: string; text: string };

/** Longest predicate text read, in UTF-16 units (a manifest may come from a cloned repository). */
export const MAX_PREDICATE_CHARS = 4096;
/** Deepest nesting of `not`/`any`/`all`. */
export const MAX_PREDICATE_DEPTH = 32;

/**
 * Parses one predicate expression, e.g. `all(depends-on(serde), not(env(CI)))`. Arguments may be
 * quoted with `"` or `'`. Names are compared with `-` and `_` equal (`path-exists` = `path_exists`).
 *
 * @throws {UserError} `PREDICATE_INVALID` for unbalanced parentheses, a missing argument, an invalid
 *   `depends-on` atom, text over {@link MAX_PREDICATE_CHARS} or nesting over {@link MAX_PREDICATE_DEPTH}.
 *   An unknown name is not an error: it parses as `{ kind: "unknown" }`.
 * @example
 * ```ts
 * import { parsePredicate } from "./predicates.ts";
 * parsePredicate("env(CI=true)"); // { kind: "env", name: "CI", value: "true" }
 * ```
 */
export function parsePredicate(text: string): Predicate {
  const fail = (why: string): never => {
    throw new UserError("PREDICATE_INVALID", `Cannot read predicate "${text}": ${why}`, {
      hint:
        'write e.g. "depends-on(serde)", "env(CI)", "path_exists(Cargo.lock)", "not(\u2026)", "any(\u2026)", "all(\u2026)"',
    });
  };
  if (text.length > MAX_PREDICATE_CHARS) fail(`it is longer than ${MAX_PREDICATE_CHARS} characters`);
  splitArguments(text, fail); // balance of parentheses and quotes over the whole text first
  const parse = (source: string, depth: number): Predicate => {
    if (depth > MAX_PREDICATE_DEPTH) fail(`it nests deeper than ${MAX_PREDICATE_DEPTH} levels`);
    const trimmed = source.trim();
    const open = trimmed.indexOf("(");
    if (open <= 0 || !trimmed.endsWith(")")) fail(`"${trimmed}" is not of the form name(arguments)`);
    const name = trimmed.slice(0, open).trim().replaceAll("_", "-");
    const args = splitArguments(trimmed.slice(open + 1, -1), fail);
    const one = (): string => {
      if (args.length !== 1 || args[0] === "") fail(`${name}(\u2026) takes one argument`);
      return unquote(args[0]!);
    };
    switch (name) {
      case "depends-on": {
        const atoms = args.map(unquote).filter((a) => a !== "");
        if (atoms.length === 0) fail("depends-on(\u2026) needs at least one crate");
        for (const atom of atoms) {
          try {
            parseDependsOn(atom);
          } catch (error) {
            fail((error as Error).message.replace(/^Cannot read /, ""));
          }
        }
        return { kind: "depends-on", atoms };
      }
      case "path-exists":
        return { kind: "path_exists", path: one() };
      case "env": {
        const arg = one();
        const eq = arg.indexOf("=");
        return eq < 0
          ? { kind: "env", name: arg, value: undefined }
          : { kind: "env", name: arg.slice(0, eq), value: arg.slice(eq + 1) };
      }
      case "workspace-member":
        if (args.some((a) => a !== "")) fail("workspace-member() takes no argument");
        return { kind: "workspace-member" };
      case "not":
        if (args.length !== 1) fail("not(\u2026) takes one predicate");
        return { kind: "not", arg: parse(args[0]!, depth + 1) };
      case "any":
      case "all":
        return { kind: name, args: args.filter((a) => a !== "").map((a) => parse(a, depth + 1)) };
      default:
        return { kind: "unknown", name: trimmed.slice(0, open).trim(), text: trimmed };
    }
  };
  return parse(text, 0);
}

function unquote(arg: string): string {
  const t = arg.trim();
  return t.length >= 2 && (t[0] === '"' || t[0] === "'") && t.at(-1) === t[0] ? t.slice(1, -1) : t;
}

/** Splits on top-level commas (outside parentheses and quotes). */
function splitArguments(inner: string, fail: (why: string) => never): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "(") depth++;
    else if (c === ")") {
      if (--depth < 0) fail("a parenthesis is closed that was never opened");
    } else if (c === "," && depth === 0) {
      out.push(inner.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (quote || depth !== 0) fail(quote ? "a quote is not closed" : "a parenthesis is not closed");
  out.push(inner.slice(start).trim());
  return out.length === 1 && out[0] === "" ? [] : out;
}

/** What a predicate is evaluated against. */
export interface PredicateContext {
  workspace: Workspace;
  /** The environment `env(...)` reads. */
  env: Readonly<Record<string, string>>;
  /** Folder relative `path_exists(...)` paths start from: the workspace root, else the working directory. */
  baseDir: string;
  /** Whether the plugin comes from the workspace itself (a workspace plugin, or a member crate's). */
  isWorkspaceMember: boolean;
  /** Whether a path exists (synchronous stat). @default Deno.statSync */
  pathExists?: (path: string) => boolean;
}

/** A predicate's value: `"unknown"` when it uses one this program does not evaluate. */
export interface PredicateVerdict {
  holds: boolean | "unknown";
  /** E.g. `env(CI) holds`, `not(env(CI)) does not hold`, `shell(...) is not evaluated`. */
  reason: string;
}

function defaultPathExists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false; // Missing or unreadable: it does not exist for this predicate.
  }
}

/**
 * Evaluates a predicate (three-valued: `any` holds when one argument holds even if another is
 * unknown, `all` fails when one fails; otherwise an unknown argument makes the whole unknown).
 */
export function evaluatePredicate(predicate: Predicate, ctx: PredicateContext): PredicateVerdict {
  const verdict = (holds: boolean, what: string): PredicateVerdict => ({
    holds,
    reason: `${what} ${holds ? "holds" : "does not hold"}`,
  });
  switch (predicate.kind) {
    case "depends-on": {
      const v = evaluateDependsOn(predicate.atoms, ctx.workspace);
      return { holds: v.holds, reason: v.reason };
    }
    case "path_exists": {
      const path = isAbsolute(predicate.path) ? predicate.path : join(ctx.baseDir, predicate.path);
      return verdict((ctx.pathExists ?? defaultPathExists)(path), `path_exists(${predicate.path})`);
    }
    case "env": {
      const value = ctx.env[predicate.name];
      const holds = predicate.value === undefined
        ? value !== undefined && value !== ""
        : value === predicate.value;
      const shown = predicate.value === undefined ? predicate.name : `${predicate.name}=\u2026`;
      return verdict(holds, `env(${shown})`);
    }
    case "workspace-member":
      return verdict(ctx.isWorkspaceMember, "workspace-member()");
    case "not": {
      const inner = evaluatePredicate(predicate.arg, ctx);
      if (inner.holds === "unknown") return inner;
      return { holds: !inner.holds, reason: `not(${inner.reason})` };
    }
    case "any":
    case "all": {
      const results = predicate.args.map((p) => evaluatePredicate(p, ctx));
      const decisive = results.find((r) => r.holds === (predicate.kind === "any"));
      if (decisive) return decisive;
      const unknown = results.find((r) => r.holds === "unknown");
      if (unknown) return unknown;
      return {
        holds: predicate.kind === "all",
        reason: `${predicate.kind}(${results.map((r) => r.reason).join(", ")})`,
      };
    }
    case "unknown":
      return {
        holds: "unknown",
        reason: predicate.name === "shell"
          ? `${predicate.text} is not evaluated: cargo-agents never runs a shell to decide`
          : `${predicate.text} is a predicate cargo-agents does not know`,
      };
  }
}

/**
 * Evaluates a gate: `depends-on` (any atom) AND every predicate. `undefined` parts hold.
 *
 * @returns `holds: "unknown"` when no part fails and one is unknown (the gated thing stays dormant).
 */
export function evaluateGate(
  dependsOn: readonly string[] | undefined,
  predicates: readonly Predicate[] | undefined,
  ctx: PredicateContext,
): PredicateVerdict {
  const parts: PredicateVerdict[] = [];
  if (dependsOn !== undefined) {
    const v = evaluateDependsOn(dependsOn, ctx.workspace);
    parts.push({ holds: v.holds, reason: v.reason });
  }
  for (const p of predicates ?? []) parts.push(evaluatePredicate(p, ctx));
  const failed = parts.find((p) => p.holds === false);
  if (failed) return failed;
  const unknown = parts.find((p) => p.holds === "unknown");
  if (unknown) return unknown;
  return { holds: true, reason: parts.map((p) => p.reason).join("; ") || "no depends-on" };
}
