import assert from "node:assert/strict";
import { UserError } from "../../lib/diagnostics.ts";
import {
  evaluateGate,
  evaluatePredicate,
  parsePredicate,
  type PredicateContext,
} from "../../lib/workspace/predicates.ts";
import type { Workspace } from "../../lib/workspace/mod.ts";

const WS: Workspace = {
  root: "/ws",
  lockfile: "/ws/Cargo.lock",
  manifests: ["/ws/Cargo.toml"],
  dependencies: [{ name: "serde", version: "1.0.219", requirement: "1", kind: "normal", member: "demo" }],
  problems: [],
};

const ctx = (over: Partial<PredicateContext> = {}): PredicateContext => ({
  workspace: WS,
  env: { CI: "true", EMPTY: "" },
  baseDir: "/ws",
  isWorkspaceMember: false,
  pathExists: (p) => p === "/ws/Cargo.lock",
  ...over,
});

const holds = (text: string, over?: Partial<PredicateContext>) =>
  evaluatePredicate(parsePredicate(text), ctx(over)).holds;

Deno.test("evaluatePredicate() evaluates depends-on, path_exists, env and workspace-member as upstream documents", () => {
  assert.equal(holds("depends-on(serde)"), true);
  assert.equal(holds("depends-on(tokio, serde>=1)"), true);
  assert.equal(holds("depends-on(serde>=2)"), false);
  assert.equal(holds("path_exists(Cargo.lock)"), true);
  assert.equal(holds('path-exists("missing")'), false);
  assert.equal(holds("env(CI)"), true);
  assert.equal(holds("env(EMPTY)"), false);
  assert.equal(holds("env(CI=true)"), true);
  assert.equal(holds("env(CI=false)"), false);
  assert.equal(holds("workspace-member()"), false);
  assert.equal(holds("workspace-member()", { isWorkspaceMember: true }), true);
});

Deno.test("evaluatePredicate() combines with not, any and all", () => {
  assert.equal(holds("not(env(CI))"), false);
  assert.equal(holds("any(env(NOPE), depends-on(serde))"), true);
  assert.equal(holds("all(env(CI), depends-on(tokio))"), false);
  assert.equal(holds("all(env(CI), not(depends-on(tokio)))"), true);
});

Deno.test("evaluatePredicate() leaves shell(…) and unknown predicates unknown: it fails closed and never runs them", () => {
  const shell = evaluatePredicate(parsePredicate("shell(touch /tmp/pwned)"), ctx());
  assert.equal(shell.holds, "unknown");
  assert.match(shell.reason, /never runs a shell/);
  assert.equal(holds("my-custom()"), "unknown");
  assert.equal(holds("not(shell(true))"), "unknown");
  assert.equal(holds("any(env(CI), shell(false))"), true, "a decided any() does not need the unknown part");
  assert.equal(holds("all(env(NOPE), shell(true))"), false);
  const gate = evaluateGate(["*"], [parsePredicate("shell(true)")], ctx());
  assert.equal(gate.holds, "unknown");
});

Deno.test("parsePredicate() refuses malformed text with PREDICATE_INVALID", () => {
  for (
    const bad of [
      "env(CI",
      "env",
      "depends-on()",
      "not(a(), b())",
      "env(A, B)",
      `${"not(".repeat(40)}env(A)${")".repeat(40)}`,
    ]
  ) {
    assert.throws(
      () => parsePredicate(bad),
      (e: unknown) => e instanceof UserError && e.code === "PREDICATE_INVALID",
      bad,
    );
  }
});
