// A backing server that misbehaves on the wire (testdata/backends/raw_wire_server.ts), through the real
// stdio connection (BYOB reads into a reused buffer, the LeanClient's shared timer and its skipped re-check):
// answers split at every byte, string ids, duplicates, off-shape results, answers to ids never asked, late
// answers after a timeout and a death mid-line each end as the SDK would end them, and the next call works.
import assert from "node:assert/strict";
import { connectStdio } from "../../lib/backends/stdio.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { fixtureSpec, REPO } from "../_fakes_backends.ts";

const spec = fixtureSpec("raw", [], {
  args: ["run", "-A", "--quiet", `${REPO}testdata/backends/raw_wire_server.ts`],
});

Deno.test("a server misbehaving on the wire: each call ends as the SDK would end it, the next one works", async () => {
  const lines: string[] = [];
  const conn = await connectStdio(spec, {
    shutdownGraceMs: 1_000,
    logger: createMemoryLogger(lines),
    now: Date.now,
  });
  try {
    const textOf = async (name: string, args: Record<string, unknown> = {}, timeoutMs = 5_000) =>
      ((await conn.callTool(name, args, { timeoutMs })).content as { text: string }[])[0]!.text;
    assert.match(await textOf("bytewise"), /^é✓ bytewise#\d+ $/);
    assert.match(await textOf("string_id"), /^string_id#\d+$/);
    assert.match(await textOf("dup"), /^dup#\d+$/);
    assert.equal(await textOf("echo", { message: "after dup" }), "after dup");
    for (const name of ["null_result", "array_result", "wrong_id"]) {
      await assert.rejects(conn.callTool(name, {}, { timeoutMs: 300 }), { code: "CALL_TIMEOUT" });
    }
    await assert.rejects(conn.callTool("late", { ms: 400 }, { timeoutMs: 200 }), {
      code: "CALL_TIMEOUT",
      message: /^raw\.late did not answer within 0\.2s/,
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(await textOf("echo", { message: "after late" }), "after late");
    // Many calls in flight, half of them answered one byte per write, or longer than a read buffer in
    // pieces that straddle its end:
    // no answer carries bytes of another (the read buffer is reused).
    const pads = [0, 10, 70_000, 3, 140_000];
    const answers = await Promise.all(
      Array.from(
        { length: 40 },
        (_, i) =>
          i % 2
            ? textOf("bytewise", {
              pad: pads[i % pads.length],
              piece: pads[i % pads.length]! > 1000 ? 4093 : 1,
            }, 60_000).then((t) => t.replace(/#\d+/, "#"))
            : textOf("echo", { message: `m${i}` }, 60_000),
      ),
    );
    assert.deepEqual(
      answers,
      Array.from(
        { length: 40 },
        (_, i) => i % 2 ? `é✓ bytewise# ${"z".repeat(pads[i % pads.length]!)}` : `m${i}`,
      ),
    );
    assert.ok(lines.some((l) => /^warn stdout line is not JSON-RPC, skipped: .*"result":null\}$/.test(l)));
    assert.ok(lines.some((l) => l.includes("unknown message ID") && l.includes("second dup#")));
    assert.ok(lines.some((l) => l.includes("unknown message ID") && l.includes("late late#")));
    await assert.rejects(conn.callTool("die_mid_line", {}, { timeoutMs: 5_000 }), {
      code: "CONNECTION_LOST",
      message: /exited with code 3/,
    });
  } finally {
    await conn.close();
  }
});
