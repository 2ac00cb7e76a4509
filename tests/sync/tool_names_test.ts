import assert from "node:assert/strict";
import { AGENT_IDS, TOOL_NAME_RULES, toolNameProblem } from "../../lib/sync/agents/mod.ts";

Deno.test("TOOL_NAME_RULES has a rule for every agent sync knows", () => {
  assert.deepEqual(Object.keys(TOOL_NAME_RULES).sort(), [...AGENT_IDS].sort());
});

Deno.test("toolNameProblem() refuses a name past an agent's bound (the check can fail)", () => {
  assert.match(toolNameProblem("claude-code", "x".repeat(49)) ?? "", /65 characters, more than 64/);
  assert.match(toolNameProblem("cursor", "x".repeat(52)) ?? "", /61 characters, more than 60/);
  assert.match(toolNameProblem("vscode", "a.b") ?? "", /refuses/);
  assert.equal(toolNameProblem("gemini", "a.b"), undefined);
});
