/**
 * Golden tests for every agent's config edit: `testdata/sync/agents/<case>/` holds `before.*`
 * (comments and unrelated servers), `stale.*` (an outdated `symposium` entry), the expected
 * `after_register.*`, `after_update.*`, `after_remove.*` and `new.*`, and `malformed.*` with the
 * expected rendered diagnostic in `malformed.err`. Adding a case means adding a folder.
 */
import assert from "node:assert/strict";
import { renderDiagnostic } from "../../lib/diagnostics.ts";
import { ConfigSyntaxError } from "../../lib/sync/formats/config_format.ts";
import { AGENT_IDS } from "../../lib/sync/agents/mod.ts";
import { editConfigText } from "../../lib/sync/sync_agents.ts";
import {
  AGENT_FIXTURES,
  catchError,
  FIXED_SERVER,
  goldenCases,
  goldenTarget,
  readCaseFile,
} from "../_fakes_sync.ts";

Deno.test("golden cases cover every agent and both OpenCode layouts", () => {
  assert.deepEqual(goldenCases(), [...AGENT_IDS, "opencode-v2"].sort());
});

for (const name of goldenCases()) {
  Deno.test(`editConfigText() registers into ${name}/before and keeps every other byte`, async () => {
    const target = await goldenTarget(name);
    const { after, hadEntry } = editConfigText(target, readCaseFile(name, "before"), {
      server: FIXED_SERVER,
      remove: false,
    });
    assert.equal(after, readCaseFile(name, "after_register"));
    assert.equal(hadEntry, false);
  });

  Deno.test(`editConfigText() changes nothing when ${name} is already registered`, async () => {
    const target = await goldenTarget(name);
    for (const file of ["after_register", "after_update", "new"]) {
      const text = readCaseFile(name, file);
      assert.equal(editConfigText(target, text, { server: FIXED_SERVER, remove: false }).after, text, file);
    }
  });

  Deno.test(`editConfigText() removes the entry from ${name}/after_register back to before, byte for byte`, async () => {
    const target = await goldenTarget(name);
    const { after } = editConfigText(target, readCaseFile(name, "after_register"), {
      server: FIXED_SERVER,
      remove: true,
    });
    assert.equal(after, readCaseFile(name, "before"));
  });

  Deno.test(`editConfigText() replaces the stale entry in ${name}/stale`, async () => {
    const target = await goldenTarget(name);
    const { after, hadEntry } = editConfigText(target, readCaseFile(name, "stale"), {
      server: FIXED_SERVER,
      remove: false,
    });
    assert.equal(after, readCaseFile(name, "after_update"));
    assert.equal(hadEntry, true);
  });

  Deno.test(`editConfigText() removes only the entry from ${name}/stale`, async () => {
    const target = await goldenTarget(name);
    const { after } = editConfigText(target, readCaseFile(name, "stale"), {
      server: FIXED_SERVER,
      remove: true,
    });
    assert.equal(after, readCaseFile(name, "after_remove"));
    const again = editConfigText(target, after, { server: FIXED_SERVER, remove: true });
    assert.equal(again.after, after);
    assert.equal(again.hadEntry, false);
  });

  Deno.test(`editConfigText() creates ${name}/new from no file`, async () => {
    const target = await goldenTarget(name);
    assert.equal(
      editConfigText(target, null, { server: FIXED_SERVER, remove: false }).after,
      readCaseFile(name, "new"),
    );
  });

  Deno.test(`editConfigText() reports ${name}/malformed with file, line and column`, async () => {
    const target = await goldenTarget(name);
    const text = readCaseFile(name, "malformed");
    const error = catchError(() => editConfigText(target, text, { server: FIXED_SERVER, remove: false }));
    assert.ok(error instanceof ConfigSyntaxError);
    assert.equal(error.code, "SYNC_CONFIG_SYNTAX");
    assert.equal(error.location?.file, target.path);
    const expected = Deno.readTextFileSync(`${AGENT_FIXTURES}/${name}/malformed.err`);
    assert.equal(renderDiagnostic(error) + "\n", expected);
    assert.throws(
      () => editConfigText(target, text, { server: FIXED_SERVER, remove: true }),
      ConfigSyntaxError,
    );
  });
}
