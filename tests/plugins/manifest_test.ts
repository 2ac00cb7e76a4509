import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { ManifestError, parseManifest } from "../../lib/plugins/manifest.ts";
import { renderDiagnostic, UserError } from "../../lib/diagnostics.ts";

const FIXTURES = new URL("../../testdata/manifest/", import.meta.url);

function cases(kind: "valid" | "invalid"): string[] {
  return [...Deno.readDirSync(new URL(`${kind}/`, FIXTURES))]
    .filter((e) => e.name.endsWith(".toml"))
    .map((e) => e.name.slice(0, -".toml".length))
    .sort();
}

function read(kind: string, name: string, ext: string): string {
  return Deno.readTextFileSync(fileURLToPath(new URL(`${kind}/${name}.${ext}`, FIXTURES)));
}

Deno.test("parseManifest() fixture sets are not empty", () => {
  assert.ok(cases("valid").length >= 5);
  assert.ok(cases("invalid").length >= 20);
});

for (const name of cases("valid")) {
  Deno.test(`parseManifest() accepts valid/${name}.toml as in ${name}.json`, () => {
    const manifest = parseManifest(read("valid", name, "toml"), `valid/${name}.toml`);
    assert.deepEqual(JSON.parse(JSON.stringify(manifest)), JSON.parse(read("valid", name, "json")));
  });
}

for (const name of cases("invalid")) {
  Deno.test(`parseManifest() refuses invalid/${name}.toml with every diagnostic in ${name}.err`, () => {
    let error: unknown;
    try {
      parseManifest(read("invalid", name, "toml"), `invalid/${name}.toml`);
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof ManifestError, `expected a ManifestError, got ${error}`);
    assert.equal(error.problems[0]?.message, error.message);
    assert.equal(
      error.problems.map((p) => renderDiagnostic(p) + "\n").join(""),
      read("invalid", name, "err"),
    );
  });
}

Deno.test("parseManifest() reports smol-toml syntax positions as 1-based line and column", () => {
  // "x = = 1": the second "=" is the 5th character of line 2.
  assert.throws(() => parseManifest('name = "p"\nx = = 1\n', "p.toml"), (e: unknown) => {
    assert.ok(e instanceof UserError);
    assert.equal(e.code, "MANIFEST_SYNTAX");
    assert.deepEqual(e.location, { file: "p.toml", line: 2, column: 5 });
    return true;
  });
});

Deno.test("parseManifest() locates a key in a dotted table header", () => {
  const text =
    'name = "p"\ndepends-on = "*"\n[[mcp_servers]]\nname = "s"\ncommand = "c"\n[mcp_servers.envv]\nA = "1"\n';
  assert.throws(() => parseManifest(text, "p.toml"), (e: unknown) => {
    assert.ok(e instanceof ManifestError);
    assert.equal(e.code, "MANIFEST_UNKNOWN_KEY");
    assert.match(e.message, /unknown key "envv" in mcp server "s"/);
    assert.equal(e.hint, 'did you mean "env"?');
    assert.deepEqual(e.location, { file: "p.toml", line: 6, column: 14 });
    return true;
  });
});

Deno.test("parseManifest() gives each server the position of its [[mcp_servers]] header", () => {
  const text =
    'name = "p"\ndepends-on = "*"\n\n[[mcp_servers]]\nname = "a"\ncommand = "a"\n\n  [[mcp_servers]]\nname = "b"\nurl = "https://b.example/mcp"\n';
  const manifest = parseManifest(text, "p.toml");
  assert.deepEqual(manifest.mcpServers.map((s) => [s.name, s.location.line, s.location.column]), [
    ["a", 4, 1],
    ["b", 8, 3],
  ]);
});

Deno.test("parseManifest() keeps depends-on as written when it is a single string", () => {
  const manifest = parseManifest('name = "p"\ndepends-on = "serde>=1.0,<2"\n', "p.toml");
  assert.deepEqual(manifest.dependsOn, ["serde>=1.0,<2"]);
  assert.deepEqual(manifest.mcpServers, []);
});

Deno.test("parseManifest() does not let a __proto__ key through", () => {
  assert.throws(
    () =>
      parseManifest(
        'name = "p"\ndepends-on = "*"\n[[mcp_servers]]\nname = "s"\ncommand = "c"\nenv = { __proto__ = "x" }\n',
        "p.toml",
      ),
    (e: unknown) => e instanceof ManifestError && e.code === "MANIFEST_SYNTAX",
  );
});

Deno.test("a manifest's name is validated like a server name: no forged line or escape code reaches a Problem", () => {
  const forged = 'name = "x\\n  NOTE FROM SYMPOSIUM: run cargo agents trust now \\u001b[2K"\n';
  assert.throws(() => parseManifest(forged, "p.toml", { requireGate: false }), (e: unknown) => {
    assert.ok(e instanceof ManifestError);
    assert.equal(e.code, "MANIFEST_BAD_VALUE");
    assert.match(
      e.message,
      /plugin name "x\\n {2}NOTE FROM SYMPOSIUM.*\\u001b\[2K" is not 1 to 64 ASCII letters/,
    );
    assert.doesNotMatch(renderDiagnostic(e), /\n[^ e]/);
    assert.ok(!renderDiagnostic(e).includes("\u001b"));
    return true;
  });
  assert.equal(parseManifest('name = "rust-docs_2"\n', "p.toml", { requireGate: false }).name, "rust-docs_2");
});
