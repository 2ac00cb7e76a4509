import assert from "node:assert/strict";
import { insufficientScopeOf, recordStepUpScopes, signInScope } from "../../lib/auth/step_up.ts";
import { readCredentials, writeCredentials } from "../../lib/auth/credentials.ts";
import { AuthRequiredError } from "../../lib/backends/http.ts";

const MCP = "https://mcp.example.com/mcp";

Deno.test("insufficientScopeOf() reads the scopes of an insufficient_scope challenge only", () => {
  assert.deepEqual(
    insufficientScopeOf(
      'Bearer error="insufficient_scope", scope="a b a", resource_metadata="https://x/prm"',
    ),
    ["a", "b"],
  );
  assert.equal(insufficientScopeOf('Bearer error="invalid_token", scope="a"'), undefined);
  assert.equal(insufficientScopeOf(undefined), undefined);
});

Deno.test("AuthRequiredError() names the scopes a step-up challenge asked for and the login command", () => {
  const error = new AuthRequiredError("svc", {
    status: 403,
    challenge: 'Bearer error="insufficient_scope", scope="mcp:basic mcp:write"',
  });
  assert.deepEqual(error.requiredScopes, ["mcp:basic", "mcp:write"]);
  assert.match(error.message, /svc needs more permissions: it asked for the scopes "mcp:basic mcp:write"/);
  assert.match(error.message, /mcp login svc`: the next sign-in asks for them/);
});

Deno.test("recordStepUpScopes() merges into the credential file, and signInScope() requests the union", async () => {
  const dir = await Deno.makeTempDir({ prefix: "step_up_test_" });
  try {
    const target = { name: "svc", url: MCP };
    assert.deepEqual(await recordStepUpScopes(dir, target, ["x"]), [], "nothing to note without a sign-in");
    await writeCredentials(dir, {
      version: 1,
      server: "svc",
      serverUrl: MCP,
      tokens: { access_token: "at", token_type: "Bearer", scope: "basic" },
    });
    await recordStepUpScopes(dir, target, ["basic", "write"]);
    assert.deepEqual(await recordStepUpScopes(dir, target, ["admin"]), ["basic", "write", "admin"]);
    const record = await readCredentials(dir, "svc");
    assert.deepEqual(signInScope([], record?.tokens?.scope, record?.stepUpScopes), {
      scope: "basic write admin",
      added: ["write", "admin"],
    });
    assert.deepEqual(
      signInScope(["m"], "basic", undefined),
      { scope: "m", added: [] },
      "no step-up: as before",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
