// Hostile input sent through a real `mcp-serve` (`docs/security.md`, "Budgets"): each ends with a clear message and the session
// answers the next request. The timing and memory figures (250 ms pings, peak RSS) are in
// bench/budgets_bench.ts; here the bounds are loose enough for a loaded machine and still far below what
// the unbounded behaviour took (seconds to hours, gigabytes).
import assert from "node:assert/strict";
import {
  denoServerToml,
  makeRawWorld,
  RawServe,
  type RawWorld,
  remoteServerToml,
  startHostileHttp,
} from "../../bench/_raw_serve.ts";

const HOSTILE = denoServerToml("hostile", "hostile_stdio.ts");

async function withSession(
  world: RawWorld,
  body: (serve: RawServe) => Promise<void>,
): Promise<void> {
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    await serve.initialize();
    await body(serve);
  } finally {
    if (serve.isRunning) await serve.close();
    else await serve.kill();
    await world.remove();
  }
}

/** The value of a successful `execute`: its text is the answer object `{ result }` serialized. */
function valueOf(answer: { text: string; isError: boolean }): unknown {
  assert.equal(answer.isError, false, answer.text);
  return (JSON.parse(answer.text) as { result?: unknown }).result;
}

function isAlive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

Deno.test("mcp-serve answers bad JSON-RPC on stdin with -32700/-32600 and keeps serving", async () => {
  await withSession(await makeRawWorld(HOSTILE), async (serve) => {
    const lines = [
      "{oops",
      '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
      '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
      '{"jsonrpc":"2.0","id":77}',
      '{"jsonrpc":"2.0","id":78,"method":5}',
    ];
    for (const line of lines) await serve.sendLine(line);
    const answers = [await serve.waitReply(null), await serve.waitReply(null), await serve.waitReply(null)];
    const codes = answers.map((a) => (a.error as { code: number }).code).sort();
    assert.deepEqual(codes, [-32700, -32600, -32600].sort());
    const missing = await serve.waitReply(77);
    assert.equal((missing.error as { code: number }).code, -32600);
    assert.match((missing.error as { message: string }).message, /no "method"/);
    const wrongMethod = await serve.waitReply(78);
    assert.match((wrongMethod.error as { message: string }).message, /"method" must be a string/);
    assert.ok((await serve.pingMs()) >= 0);
  });
});

Deno.test("mcp-serve refuses a stdin message over max-message-mb by id; the backing servers keep running", async () => {
  await withSession(await makeRawWorld(HOSTILE, "max-message-mb = 1"), async (serve) => {
    const backing = (valueOf(await serve.execute("return await hostile.pid()")) as { pid: number }).pid;
    assert.ok(Number.isInteger(backing));
    const head = '{"jsonrpc":"2.0","id":9011,"method":"ping","params":{"pad":"';
    const reply = serve.waitReply(9011);
    await serve.sendLine(`${head}${"x".repeat(3_000_000)}"}}`);
    const error = (await reply).error as { code: number; message: string };
    assert.equal(error.code, -32600);
    assert.match(
      error.message,
      /2\.9 MiB, more than the 1 MiB one message may be \(\[mcp\] max-message-mb\)/,
    );
    assert.ok(isAlive(backing));
    assert.equal(valueOf(await serve.execute("return (await hostile.pid()).pid")), backing);
  });
});

Deno.test("mcp-serve answers pings while it checks a backtracking outputSchema pattern and a hostile glob", async () => {
  await withSession(await makeRawWorld(HOSTILE), async (serve) => {
    await serve.execute("return await hostile.pid()");
    // 2^60 steps for a backtracking engine; RE2 answers at once.
    const checked = await serve.whilePinging(serve.execute("return await hostile.redos({ n: 60 })", 60_000));
    assert.match(checked.value.text, /"notices":\["hostile\.redos: result off-shape, treat as unknown"\]/);
    assert.ok(checked.maxPingMs < 5_000, `slowest ping ${checked.maxPingMs} ms`);
    const globbed = await serve.whilePinging(serve.listTools({ pattern: `${"*".repeat(28)}!` }, 60_000));
    assert.match(
      globbed.value.text,
      /^Problems:\n {2}No tool matches the pattern "\*+!" among \d+ tools of 1 server: /,
    );
    assert.ok(globbed.maxPingMs < 5_000, `slowest ping ${globbed.maxPingMs} ms`);
  });
});

for (const mode of ["json", "sse"] as const) {
  Deno.test(`mcp-serve fails an endless HTTP ${mode} answer at max-message-mb, naming the server and the key`, async () => {
    const remote = await startHostileHttp(mode);
    try {
      await withSession(
        await makeRawWorld(remoteServerToml("endless", remote.url), "max-message-mb = 2"),
        async (serve) => {
          const result = await serve.execute("return await endless.x({})", 60_000);
          assert.equal(result.isError, true);
          assert.match(
            result.text,
            /endless\.x answered .*more than the 2 MiB one answer may be \(\[mcp\] max-message-mb\)/,
          );
          assert.ok((await serve.pingMs()) >= 0);
        },
      );
    } finally {
      await remote.stop();
    }
  });
}

Deno.test("mcp-serve reports a stdio answer over max-message-mb as too large, not as a timeout", async () => {
  await withSession(
    await makeRawWorld(HOSTILE, "max-message-mb = 1\ntool-call-timeout-secs = 60"),
    async (serve) => {
      const started = performance.now();
      const result = await serve.execute(
        "try { await hostile.huge_line({ bytes: 3000000 }) } catch (e) { return e.message }",
        60_000,
      );
      assert.match(
        result.text,
        /hostile\.huge_line answered 2\.9 MiB, more than the 1 MiB one answer may be/,
      );
      assert.ok(performance.now() - started < 50_000);
      assert.equal(valueOf(await serve.execute("return await hostile.quiet()")), "ok");
    },
  );
});

Deno.test("mcp-serve keeps the session log within its budget under a flood of backing stderr", async () => {
  const world = await makeRawWorld(HOSTILE, "max-tool-calls = 200");
  const serve = RawServe.start({ home: world.home, cwd: world.ws });
  try {
    await serve.initialize();
    // 14 MB of stderr lines: more than the 10 MiB a session log may hold.
    const result = await serve.execute(
      "for (let i = 0; i < 70; i++) await hostile.chatty({ bytes: 200000 }); return 'done'",
      120_000,
    );
    assert.equal(valueOf(result), "done");
    assert.equal(valueOf(await serve.execute("return await hostile.quiet()")), "ok");
    await serve.close();
    const logs = [...Deno.readDirSync(`${world.home}/logs`)].map((e) => `${world.home}/logs/${e.name}`);
    assert.equal(logs.length, 1);
    const size = Deno.statSync(logs[0]!).size;
    assert.ok(size <= 10 * 1024 * 1024 + 4096, `${size} bytes`);
    const text = Deno.readTextFileSync(logs[0]!);
    assert.match(
      text,
      /log cut at 10485760 bytes \(the session log budget\)|line\(s\) .* (not logged|dropped)/,
    );
  } finally {
    if (serve.isRunning) await serve.kill();
    await world.remove();
  }
});

Deno.test("mcp-serve coalesces a flood of tools/list_changed for the agent", async () => {
  await withSession(await makeRawWorld(HOSTILE), async (serve) => {
    await serve.execute("return await hostile.pid()");
    const before = serve.notifications.length;
    assert.equal(
      valueOf(await serve.execute("return await hostile.flood({ count: 3000 })", 60_000)),
      "flooded",
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const reached = serve.notifications.slice(before).filter((n) =>
      n.method === "notifications/tools/list_changed"
    );
    assert.ok(reached.length >= 1 && reached.length <= 10, `${reached.length} reached the agent`);
  });
});

Deno.test("mcp-serve refuses a call past max-in-flight-mb with a catchable error", async () => {
  await withSession(await makeRawWorld(HOSTILE, "max-in-flight-mb = 1"), async (serve) => {
    const result = await serve.execute(
      `const big = "x".repeat(400000);
const outcomes = [];
for (let i = 0; i < 4; i++) hostile.hang({ big }).catch((e) => outcomes.push(e.message));
await new Promise((resolve) => setTimeout(resolve, 200));
return outcomes;`,
      60_000,
    );
    const refused = valueOf(result) as string[];
    assert.equal(refused.length, 2);
    assert.match(
      refused[0]!,
      /hostile\.hang\(\) was not sent: .*1 MiB budget of a script \(\[mcp\] max-in-flight-mb\)/,
    );
  });
});

Deno.test("mcp-serve names server.tool in an uncaught tool error and tells undefined from null", async () => {
  await withSession(await makeRawWorld(HOSTILE), async (serve) => {
    const denied = await serve.execute("await hostile.deny()");
    assert.equal(denied.isError, true);
    assert.match(denied.text, /Error: hostile\.deny: Permission denied: \/root/);
    // Caught, its message names the call too.
    const caught = await serve.execute("try { await hostile.deny() } catch (e) { return e.message }");
    assert.equal(valueOf(caught), "hostile.deny: Permission denied: /root");
    // No `result` at all for undefined, `result: null` for null.
    assert.equal((await serve.execute("return undefined")).text, "{}");
    assert.equal((await serve.execute("return null")).text, '{"result":null}');
  });
});

Deno.test("mcp-serve applies the good keys of a config with a bad one and tells the problem once", async () => {
  const world = await makeRawWorld(HOSTILE, 'script-timeout-secs = 5\nmax-tool-calls = "many"');
  await withSession(world, async (serve) => {
    const first = await serve.execute("return await hostile.quiet()");
    assert.match(
      first.text,
      /"config\.toml: Cannot apply \[mcp\] max-tool-calls: it must be an integer, not a string; until it is fixed, its default \(\d+\) applies/,
    );
    assert.match(
      first.text,
      /tool-call-timeout-secs is 4 s \(not 60 s\) to stay below script-timeout-secs \(5 s\)/,
    );
    const second = await serve.execute("return await hostile.quiet()");
    assert.equal(valueOf(second), "ok");
    const timedOut = await serve.execute("await new Promise((resolve) => setTimeout(resolve, 8000))", 60_000);
    assert.match(timedOut.text, /"error":"script_timeout","limit_secs":5/);
  });
});
