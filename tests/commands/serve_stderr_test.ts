// mcp-serve's stderr is for humans and best effort: an agent that closed its end (EPIPE), or a stderr that
// is a full non-blocking pipe (here the one stdout also is, `2>&1`), must not end the session.
import assert from "node:assert/strict";
import { denoServerToml, makeRawWorld, rawInitialize, spawnRawServe } from "../../bench/_raw_serve.ts";
import { REPO_ROOT } from "../_fakes_foundation.ts";

const encoder = new TextEncoder();
const initialize = JSON.stringify(rawInitialize("t")) + "\n" +
  JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n";
/** An unparseable line: answered -32700 on stdout, and a warning on stderr. */
const BAD_LINE = '{"jsonrpc":"2.0","id":7,"method":\n';

Deno.test("mcp-serve goes on when the agent closed its end of stderr", async () => {
  const world = await makeRawWorld(denoServerToml("fx", "fixture.ts"));
  try {
    const child = spawnRawServe(world, { stderr: "piped" });
    await child.stderr.cancel();
    const writer = child.stdin.getWriter();
    const call = {
      name: "execute",
      arguments: { script: "return await fx.echo({ message: 'still here' })" },
    };
    await writer.write(encoder.encode(
      initialize + BAD_LINE.repeat(3) +
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: call }) + "\n",
    ));
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes('"id":2')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    await writer.close();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    const replies = text.trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(replies.find((r) => r.id === 2)?.result.structuredContent, { result: "still here" });
    assert.equal((await child.status).code, 0);
  } finally {
    await world.remove();
  }
});

Deno.test("mcp-serve goes on when stderr is the same full non-blocking pipe as stdout", async () => {
  const world = await makeRawWorld(denoServerToml("fx", "fixture.ts"));
  try {
    const child = spawnRawServe(world, {
      prefix: [
        "run",
        "-A",
        `${REPO_ROOT}/testdata/jsonrpc/nonblocking_stdout.ts`,
        "/bin/sh",
        "-c",
        'exec "$@" 2>&1',
        "sh",
      ],
    });
    const writer = child.stdin.getWriter();
    // Thousands of bad lines: answers and warnings fill the shared pipe while the agent does not read.
    await writer.write(encoder.encode(initialize + BAD_LINE.repeat(3_000)));
    await writer.write(encoder.encode(JSON.stringify({ jsonrpc: "2.0", id: 99, method: "ping" }) + "\n"));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const timer = setTimeout(() => reader.cancel(), 30_000);
    while (!text.includes('{"result":{},"jsonrpc":"2.0","id":99}')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    clearTimeout(timer);
    assert.ok(text.includes('"id":99'), "the ping after the flood was answered");
    await writer.close();
    await reader.cancel();
    assert.equal((await child.status).code, 0);
  } finally {
    await world.remove();
  }
});
