// `mcp exec --trace` prints the run's trace as `execute { trace: true }` answers it (a real `mcp exec`, a
// real fixture server): one entry per call with its server, tool and sizes, and the totals.
import assert from "node:assert/strict";
import { sourceRunArgs } from "../../lib/self_command.ts";
import { REPO_ROOT } from "../_fakes_foundation.ts";
import { fixtureServerToml, makeDirs, writePlugin } from "../_fakes_meta.ts";

async function exec(args: string[], home: string, cwd: string): Promise<{ code: number; stdout: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...sourceRunArgs(REPO_ROOT).slice(1), "mcp", "exec", ...args],
    cwd,
    env: { NO_COLOR: "1", SYMPOSIUM_HOME: home },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

Deno.test("mcp exec --trace prints each call's trace and the totals; without it, no trace", async () => {
  const dirs = await makeDirs();
  try {
    await writePlugin(dirs.home, "fx", fixtureServerToml("fx"));
    const script = `${dirs.root}/script.js`;
    await Deno.writeTextFile(
      script,
      `const a = await fx.echo({ message: "one" });
      const b = await fx.echo({ message: "two" });
      return [a, b].length;`,
    );
    const traced = await exec([script, "--trace"], dirs.home, dirs.ws);
    assert.equal(traced.code, 0, traced.stdout);
    const answer = JSON.parse(traced.stdout) as {
      result: number;
      trace: {
        calls: { server: string; tool: string; argsBytes: number; ok: boolean }[];
        totals: { calls: number };
      };
    };
    assert.equal(answer.result, 2);
    assert.deepEqual(answer.trace.calls.map((c) => [c.server, c.tool, c.ok]), [["fx", "echo", true], [
      "fx",
      "echo",
      true,
    ]]);
    assert.equal(answer.trace.calls[0]!.argsBytes, JSON.stringify({ message: "one" }).length);
    assert.equal(answer.trace.totals.calls, 2);
    const plain = await exec([script], dirs.home, dirs.ws);
    assert.equal(plain.code, 0, plain.stdout);
    assert.deepEqual(JSON.parse(plain.stdout), { result: 2 });
  } finally {
    await dirs.remove();
  }
});
