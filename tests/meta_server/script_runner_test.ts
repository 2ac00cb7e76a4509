import assert from "node:assert/strict";
import { createSandboxRunner, MAX_RESULT_TRANSFER_BYTES } from "../../lib/meta_server/script_runner.ts";
import { DEFAULT_MCP_CONFIG, type McpConfig } from "../../lib/plugins/config_types.ts";
import { NULL_LOGGER } from "../../lib/log.ts";
import type { HostCallRequest } from "../../lib/meta_server/mod.ts";

const IMAGE_DATA = "iVBORw0KGgo" + "A".repeat(200_000);

/** A host call that answers `shots.take()` with what an MCP image tool returns, unwrapped. */
const hostCall = (request: HostCallRequest): Promise<unknown> =>
  Promise.resolve(
    request.key === "take"
      ? [{ type: "text", text: "screenshot" }, { type: "image", data: IMAGE_DATA, mimeType: "image/png" }]
      : null,
  );

async function run(script: string, config: Partial<McpConfig> = {}) {
  let current: McpConfig = { ...DEFAULT_MCP_CONFIG, maxResultBytes: 1_000, ...config };
  const runner = createSandboxRunner(() => current, NULL_LOGGER);
  try {
    const first = await runner.run({ script, namespaces: ["shots"], hostCall, notices: () => [] });
    current = { ...current, maxResultBytes: 10 };
    const again = await runner.run({ script, namespaces: ["shots"], hostCall, notices: () => [] });
    return { first, again };
  } finally {
    await runner.close();
  }
}

Deno.test("createSandboxRunner() returns an image larger than max-result-bytes as a whole content block", async () => {
  const { first } = await run("return await shots.take()");
  assert.equal(first.isError, false);
  assert.deepEqual(first.extraContent, [{ type: "image", data: IMAGE_DATA, mimeType: "image/png" }]);
  assert.deepEqual(first.structured, {
    result: [{ type: "text", text: "screenshot" }, { type: "image", mimeType: "image/png", attachment: 1 }],
  });
  assert.equal(first.text, JSON.stringify(first.structured));
});

Deno.test("createSandboxRunner() cuts the text without its media at max-result-bytes, read at every run", async () => {
  const { first, again } = await run(
    "const shot = await shots.take(); return { note: 'é'.repeat(600), shot }",
  );
  assert.deepEqual(first.extraContent?.map((b) => b.type), ["image"]);
  const json = JSON.stringify({
    note: "é".repeat(600),
    shot: [{ type: "text", text: "screenshot" }, { type: "image", mimeType: "image/png", attachment: 1 }],
  });
  const bytes = new TextEncoder().encode(json).length;
  const truncated = `cut from ${bytes} bytes. Return less data — filter or select fields inside the script.`;
  // Bounded as the agent receives it, a JSON string: its quotes (2), `{\"note\":\"` (12), each é 2 bytes.
  assert.deepEqual(first.structured, {
    result: json.slice(0, 9 + Math.floor((1_000 - 2 - 12) / 2)),
    truncated,
  });
  assert.equal(first.text, JSON.stringify(first.structured));
  assert.deepEqual(again.structured, { result: '{"note', truncated });
});

Deno.test("createSandboxRunner() cuts a value past the transfer cap as text, keeping its original size", async () => {
  const { first } = await run(`return "x".repeat(${MAX_RESULT_TRANSFER_BYTES + 10})`, {
    scriptMemoryLimitMb: 128,
  });
  assert.equal(first.isError, false);
  assert.deepEqual(first.extraContent, []);
  assert.deepEqual(first.structured, {
    result: `"${"x".repeat(1_000 - 2 - 2)}`, // quotes, then `\"`, then one byte each
    truncated:
      `cut from ${MAX_RESULT_TRANSFER_BYTES + 12} bytes. Return less data — filter or select fields ` +
      "inside the script.",
  });
});

Deno.test("createSandboxRunner() counts the wait for a busy sandbox toward the script's deadline", async () => {
  // Runs 1 and 2 take a process each and a 2.6 s call of their 4 s; run 3 waits 2.6 s for a process, then
  // its own call cannot end within the 1.4 s left.
  const runner = createSandboxRunner(() => ({ ...DEFAULT_MCP_CONFIG, scriptTimeoutSecs: 4 }), NULL_LOGGER);
  const slowCall = (request: HostCallRequest): Promise<unknown> =>
    new Promise((resolve) => setTimeout(() => resolve(request.key), 2_600));
  try {
    const runs = [1, 2, 3].map((i) =>
      runner.run({
        script: `return await slow.wait${i}()`,
        namespaces: ["slow"],
        hostCall: slowCall,
        notices: () => [],
      })
    );
    const [first, second, third] = await Promise.all(runs);
    assert.equal(first!.text, '{"result":"wait1"}');
    assert.equal(second!.text, '{"result":"wait2"}');
    assert.equal(third!.isError, true);
    assert.match(third!.text, /"error":"script_timeout","limit_secs":4\b/);
  } finally {
    await runner.close();
  }
});

Deno.test("createSandboxRunner() fails a run whose returned image block has an invalid mimeType", async () => {
  const runner = createSandboxRunner(() => DEFAULT_MCP_CONFIG, NULL_LOGGER);
  try {
    const result = await runner.run({
      script:
        `console.log("made it"); return { shot: { type: "image", mimeType: "text/html\\r\\nX-Evil: 1", data: "AAAA" } }`,
      namespaces: [],
      hostCall,
      notices: () => [],
    });
    assert.equal(result.isError, true);
    assert.deepEqual(result.extraContent, []);
    assert.equal(
      result.text,
      JSON.stringify({
        error: "script_error",
        message:
          'Cannot return the result: the image block at result.shot has mimeType "text/html\\r\\nX-Evil: 1"; an image block needs mimeType image/<type>, e.g. image/png',
      }) + "\n\nconsole:\n  made it",
    );
  } finally {
    await runner.close();
  }
});
