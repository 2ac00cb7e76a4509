// lib/workspace/_semver.ts against npm `semver` on generated versions and Cargo-made ranges: the same
// verdicts, the same lowest and highest versions.
import assert from "node:assert/strict";
import fc from "fast-check";
import semverUntyped from "semver";
import {
  compareVersions,
  minVersionOf,
  parseRange,
  parseVersion,
  satisfies,
} from "../../lib/workspace/_semver.ts";
import { cargoRequirementToRange, highestMatching } from "../../lib/workspace/_cargo_semver.ts";

const npm = semverUntyped as {
  valid(v: string): string | null;
  validRange(r: string): string | null;
  satisfies(v: string, r: string): boolean;
  minVersion(r: string): { version: string } | null;
  compare(a: string, b: string): number;
  maxSatisfying(v: string[], r: string): string | null;
};

const num = fc.integer({ min: 0, max: 4 });
const pre = fc.oneof(
  fc.constant(""),
  fc.constantFrom("-0", "-1", "-alpha", "-alpha.1", "-beta.2", "-rc.1", "-0.3.7", "-x.7.z.92"),
);
const build = fc.constantFrom("", "", "+build", "+wasi-snapshot-preview1");
const version = fc.tuple(num, num, num, pre, build).map(([a, b, c, p, bu]) => `${a}.${b}.${c}${p}${bu}`);
const part = fc.oneof(num.map(String), fc.constantFrom("*", "x"));
const partial = fc.oneof(
  part,
  fc.tuple(num, part).map(([a, b]) => `${a}.${b}`),
  fc.tuple(num, num, part).map(([a, b, c]) => `${a}.${b}.${c}`),
  version.map((v) => v.replace(/\+.*/, "")),
);
const comparator = fc.tuple(fc.constantFrom("", "^", "~", "=", ">", ">=", "<", "<="), partial)
  .map(([op, p]) => `${op}${p}`);
const range = fc.array(comparator, { minLength: 1, maxLength: 3 }).map((cs) => cs.join(" "));

Deno.test("_semver satisfies() agrees with npm semver on generated versions and ranges", () => {
  fc.assert(
    fc.property(version, range, (ver, r) => {
      const parsed = parseRange(r);
      assert.equal(parsed !== null, npm.validRange(r) !== null, r);
      if (parsed === null) return;
      assert.equal(satisfies(parseVersion(ver)!, parsed), npm.satisfies(ver, r), `${ver} in ${r}`);
    }),
    { numRuns: 3000 },
  );
});

Deno.test("_semver minVersionOf() and compareVersions() agree with npm semver", () => {
  fc.assert(
    fc.property(range, (r) => {
      const parsed = parseRange(r);
      if (parsed === null) return;
      assert.equal(minVersionOf(parsed), npm.minVersion(r)?.version ?? null, r);
    }),
    { numRuns: 3000 },
  );
  fc.assert(
    fc.property(version, version, (a, b) => {
      assert.equal(
        Math.sign(compareVersions(parseVersion(a)!, parseVersion(b)!)),
        Math.sign(npm.compare(a, b)),
        `${a} ? ${b}`,
      );
    }),
    { numRuns: 3000 },
  );
});

Deno.test("highestMatching() agrees with npm semver maxSatisfying on Cargo requirements", () => {
  const requirement = fc.array(fc.tuple(fc.constantFrom("", "=", "^", "~", ">=", "<", "<=", ">"), partial), {
    minLength: 1,
    maxLength: 2,
  }).map((cs) => cs.map(([op, p]) => `${op}${p}`).join(", "));
  fc.assert(
    fc.property(fc.array(version, { maxLength: 6 }), requirement, (versions, req) => {
      const r = cargoRequirementToRange(req);
      if (r === null) return;
      const mine = highestMatching(versions, r);
      const theirs = npm.maxSatisfying(versions, r);
      assert.equal(
        mine === null ? null : npm.valid(mine),
        theirs === null ? null : npm.valid(theirs),
        `${versions} ${r}`,
      );
    }),
    { numRuns: 2000 },
  );
});

Deno.test('_semver reads a desugared >=0.0.0 as any version, as npm does (0.0.0-0 in "0 0.0.0-0")', () => {
  for (const r of ["0 0.0.0-0", ">=0.0.0 0.0.0-0", "<1 =0.0.0-0"]) {
    assert.equal(minVersionOf(parseRange(r)!), npm.minVersion(r)?.version ?? null, r);
    assert.equal(satisfies(parseVersion("0.0.0-0")!, parseRange(r)!), npm.satisfies("0.0.0-0", r), r);
  }
});

Deno.test("parseVersion() refuses what npm semver refuses", () => {
  for (const text of ["01.2.3", "1.2", "1.2.3-", "1.2.3-01", "a.b.c", "1.2.3.4", ""]) {
    assert.equal(parseVersion(text) !== null, npm.valid(text) !== null, text);
  }
});
