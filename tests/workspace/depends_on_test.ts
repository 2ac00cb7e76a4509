import assert from "node:assert/strict";
import { type DependsOnAtom, evaluateDependsOn, parseDependsOn } from "../../lib/workspace/depends_on.ts";
import { UserError } from "../../lib/diagnostics.ts";
import { type Dependency, NO_WORKSPACE, type Workspace } from "../../lib/workspace/mod.ts";

function ws(deps: [name: string, version: string | null, requirement?: string][]): Workspace {
  const dependencies: Dependency[] = deps.map(([name, version, requirement]) => ({
    name,
    version,
    requirement: requirement ?? version,
    kind: "normal",
    member: "app",
  }));
  return {
    root: "/ws",
    lockfile: "/ws/Cargo.lock",
    manifests: ["/ws/Cargo.toml"],
    dependencies,
    problems: [],
  };
}

function holds(atom: string, deps: [string, string | null, string?][]): boolean {
  return evaluateDependsOn([atom], ws(deps)).holds;
}

Deno.test("parseDependsOn() reads a bare name", () => {
  assert.deepEqual(parseDependsOn("serde"), { kind: "crate", text: "serde", name: "serde", range: null });
});

Deno.test("parseDependsOn() reads the wildcard", () => {
  assert.deepEqual(parseDependsOn("*"), { kind: "any", text: "*" } satisfies DependsOnAtom);
});

Deno.test("parseDependsOn() reads = as caret and == as exact", () => {
  assert.equal((parseDependsOn("serde=1.0") as { range: string }).range, "^1.0");
  assert.equal((parseDependsOn("serde==1.0.219") as { range: string }).range, "=1.0.219");
});

Deno.test("parseDependsOn() reads a comma-separated range", () => {
  assert.equal((parseDependsOn("serde>=1.0,<2.0") as { range: string }).range, ">=1.0 <2.0");
});

Deno.test("parseDependsOn() refuses spaces with a corrected atom as the hint", () => {
  assert.throws(() => parseDependsOn("serde >= 1.0"), (e: unknown) => {
    assert.ok(e instanceof UserError);
    assert.equal(e.code, "DEPENDS_ON_INVALID");
    assert.equal(e.message, 'Cannot read depends-on atom "serde >= 1.0": it contains spaces');
    assert.equal(e.hint, 'write it without spaces: "serde>=1.0"');
    return true;
  });
});

const HINTS: [atom: string, hint: string][] = [
  [
    "serde 1",
    'write it without spaces, with an operator before the version: "serde^1" (or "serde" for any version)',
  ],
  ["serde1.0", 'write "serde^1.0" (or "serde==1.0" for exactly that version)'],
  ["tokio1.40,<2", 'write "tokio^1.40,<2"'],
  ["serde >= banana", 'write "name", "name>=1.2", "name^1.2", "name~1.2", "name==1.2.3" or "*"'],
];
for (const [atom, hint] of HINTS) {
  Deno.test(`parseDependsOn() hints only a valid atom for ${JSON.stringify(atom)}`, () => {
    assert.throws(() => parseDependsOn(atom), (e: unknown) => {
      assert.ok(e instanceof UserError);
      assert.equal(e.hint, hint);
      const quoted = /"([^"]+)"/.exec(hint.startsWith('write "name"') ? "" : hint)?.[1];
      if (quoted !== undefined) assert.equal(parseDependsOn(quoted).text, quoted);
      return true;
    });
  });
}

Deno.test("parseDependsOn() says a version glued to the name lacks an operator", () => {
  assert.throws(() => parseDependsOn("serde1.0"), {
    message:
      'Cannot read depends-on atom "serde1.0": there is no comparison operator between the crate name and the version',
  });
});

for (const bad of ["", ">=1.0", "serde>=", "serde>=x.y", "serde@1.0", "serde>=1.0,", "serde1.0", "-serde"]) {
  Deno.test(`parseDependsOn() refuses ${JSON.stringify(bad)}`, () => {
    assert.throws(() => parseDependsOn(bad), { code: "DEPENDS_ON_INVALID" });
  });
}

const CASES: [atom: string, version: string, expected: boolean][] = [
  ["serde", "0.1.0", true],
  ["serde>=1.0", "1.0.219", true],
  ["serde>=1.0", "0.9.15", false],
  ["serde>1.0", "1.0.219", false], // Cargo: >1.0 means >=1.1.0
  ["serde>1.0", "1.1.0", true],
  ["serde<2", "1.99.0", true],
  ["serde<2", "2.0.0", false],
  ["serde<=1.2", "1.2.9", true], // Cargo: <=1.2 admits 1.2.x
  ["serde<=1.2", "1.3.0", false],
  ["serde^1.2", "1.9.0", true],
  ["serde^1.2", "2.0.0", false],
  ["serde=1.0", "1.5.0", true], // = is caret in an atom
  ["serde==1.0.219", "1.0.219", true],
  ["serde==1.0.219", "1.0.220", false],
  ["serde==1.0", "1.0.7", true], // a partial exact version fixes only what it names
  ["serde~1.2", "1.2.7", true],
  ["serde~1.2", "1.3.0", false],
  ["rand^0.7", "0.8.5", false], // caret on 0.x fixes the minor, as in Cargo
  ["rand^0.7", "0.7.3", true],
  ["x^0.0.3", "0.0.4", false],
  ["serde>=1.0,<1.0.200", "1.0.219", false],
  ["serde>=1.0,<1.0.220", "1.0.219", true],
  ["tokio>=1.0", "1.0.0-alpha.1", false], // pre-releases only match requirements that name them
  ["tokio>=1.0.0-alpha.1", "1.0.0-alpha.2", true],
  ["wasi^0.11", "0.11.0+wasi-snapshot-preview1", true], // build metadata is ignored
];
for (const [atom, version, expected] of CASES) {
  Deno.test(`evaluateDependsOn() ${expected ? "holds" : "does not hold"} for ${atom} when the lock has ${version}`, () => {
    const name = /^[a-z_-]+/.exec(atom)![0];
    assert.equal(holds(atom, [[name, version]]), expected);
  });
}

Deno.test("evaluateDependsOn() treats - and _ in names as equal", () => {
  assert.equal(holds("serde-json", [["serde_json", "1.0.120"]]), true);
  assert.equal(holds("proc_macro2", [["proc-macro2", "1.0.86"]]), true);
});

Deno.test("evaluateDependsOn() holds when any atom of the list holds, and says which", () => {
  const verdict = evaluateDependsOn(["tokio", "serde>=1.0"], ws([["serde", "1.0.219"]]));
  assert.deepEqual(verdict, { holds: true, reason: "serde 1.0.219 matches serde>=1.0" });
});

Deno.test("evaluateDependsOn() lists every atom and what the workspace has when none holds", () => {
  const verdict = evaluateDependsOn(["tokio", "serde>=1.0"], ws([["serde", "0.9.15"]]));
  assert.deepEqual(verdict, {
    holds: false,
    reason: "needs one of: tokio (not a dependency here), serde>=1.0 (workspace has serde 0.9.15)",
  });
});

Deno.test("evaluateDependsOn() holds when any of several versions of a crate matches", () => {
  assert.equal(holds("rand^0.7", [["rand", "0.8.5"], ["rand", "0.7.3"]]), true);
});

Deno.test("evaluateDependsOn() holds for no list at all", () => {
  assert.deepEqual(evaluateDependsOn(undefined, ws([])), { holds: true, reason: "no depends-on" });
});

Deno.test("evaluateDependsOn() never holds for an empty list", () => {
  assert.equal(evaluateDependsOn([], ws([["serde", "1.0.0"]])).holds, false);
});

Deno.test("evaluateDependsOn() holds for * outside a workspace", () => {
  assert.equal(evaluateDependsOn(["*"], NO_WORKSPACE).holds, true);
});

Deno.test("evaluateDependsOn() says when there is no workspace", () => {
  assert.deepEqual(evaluateDependsOn(["serde"], NO_WORKSPACE), {
    holds: false,
    reason: "needs one of: serde (not in a Cargo workspace)",
  });
});

Deno.test("evaluateDependsOn() compares an unlocked dependency by the lowest version its requirement admits", () => {
  const unlocked: [string, string | null, string][] = [["serde", null, "1.0.200"]];
  assert.equal(holds("serde>=1.0.150", unlocked), true);
  assert.equal(holds("serde>=1.0.250", unlocked), false);
  assert.equal(
    evaluateDependsOn(["serde>=1.0"], ws(unlocked)).reason,
    "serde 1.0.200 (not locked) matches serde>=1.0",
  );
});

Deno.test("evaluateDependsOn() reports an invalid atom instead of throwing", () => {
  const verdict = evaluateDependsOn(["serde >=1"], ws([["serde", "1.0.0"]]));
  assert.equal(verdict.holds, false);
  assert.match(verdict.reason, /serde >=1 \(Cannot read depends-on atom "serde >=1": it contains spaces\)/);
});
