import assert from "node:assert/strict";
import { BackendError, MAX_ERROR_DETAIL_CHARS } from "../../lib/backends/connection.ts";
import { MAX_LIST_PAGE_ITEMS } from "../../lib/backends/_list_guard.ts";
import { connectStdio, rootsForStdio, StdioProcessTransport } from "../../lib/backends/stdio.ts";
import type { ConnectContext } from "../../lib/backends/stdio.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { fixtureSpec, isAlive, liveProcessesInGroup, ManualScanTimers, waitFor } from "../_fakes_backends.ts";
import {
  DESCENDANT_SCAN_INTERVAL_MS,
  DescendantScanSchedule,
  MAX_DESCENDANT_SCAN_INTERVAL_MS,
  type ProcessTable,
  PsProcessTable,
} from "../../lib/backends/process_tree.ts";
import { processSecrets } from "../../lib/secrets/mod.ts";

function ctx(lines: string[] = [], extra: Partial<ConnectContext> = {}): ConnectContext {
  return { shutdownGraceMs: 1_000, logger: createMemoryLogger(lines), now: Date.now, ...extra };
}

Deno.test("connectStdio() skips non-JSON stdout lines and logs them", async () => {
  const lines: string[] = [];
  const conn = await connectStdio(fixtureSpec("meta_files", ["--banner"]), ctx(lines));
  const result = await conn.callTool("echo", { message: "hi" }, { timeoutMs: 5_000 });
  assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
  await conn.close();
  assert.ok(lines.includes("warn stdout line is not JSON-RPC, skipped: ✓ File metadata MCP server ready"));
  assert.ok(lines.includes("warn stdout line is not JSON-RPC, skipped: ✓ Autograph knowledge graph ready"));
});

Deno.test("connectStdio() fails with the exit code and stderr tail when the server exits at start", async () => {
  const dir = await Deno.makeTempDir();
  const spec = fixtureSpec("locked", ["--fail-starts=1", `--counter-file=${dir}/count`]);
  await assert.rejects(connectStdio(spec, ctx()), (e: unknown) => {
    assert.ok(e instanceof BackendError);
    assert.equal(e.code, "START_FAILED");
    assert.match(
      e.message,
      /^locked failed to start: exited with code 3 before answering initialize; stderr: .*database is locked/s,
    );
    return true;
  });
  await Deno.remove(dir, { recursive: true });
});

/** A logger that takes `busyMs` per line, like a session log on a slow disk. */
function slowLogger(lines: string[], busyMs: number) {
  const memory = createMemoryLogger(lines);
  const slow = (write: (m: string) => void) => (m: string) => {
    const until = performance.now() + busyMs;
    while (performance.now() < until) { /* busy */ }
    write(m);
  };
  return { ...memory, debug: slow(memory.debug), child: () => memory };
}

Deno.test("connectStdio() logs every stderr line and ends the error with the last one when a chatty node server exits at start", async () => {
  const lines: string[] = [];
  // Node writes to a full pipe asynchronously and drops what is still queued at `process.exit`:
  // 30 batches of 100 lines, 5 ms apart, then the real error and exit. A reader that stops
  // reading while it logs lets the pipe fill up and loses the end.
  const script = "let i = 0; const batch = () => { for (let k = 0; k < 100; k++, i++) " +
    "process.stderr.write('debug line ' + i + ' lorem ipsum dolor sit amet\\n'); if (i < 3000) setTimeout(batch, 5);" +
    " else { process.stderr.write('FATAL: the real reason\\n'); process.exit(2); } }; batch();";
  const spec = { ...fixtureSpec("chatty_crash"), command: "node", args: ["-e", script] };
  await assert.rejects(connectStdio(spec, ctx([], { logger: slowLogger(lines, 0.2) })), (e: unknown) => {
    assert.ok(e instanceof BackendError);
    assert.match(
      e.message,
      /exited with code 2 before answering initialize; stderr: debug line \d+ lorem ipsum dolor sit amet\n.*FATAL: the real reason$/s,
    );
    return true;
  });
  const logged = lines.filter((l) => l.startsWith("debug stderr: "));
  assert.equal(logged.length, 3001);
  assert.equal(logged.at(-1), "debug stderr: FATAL: the real reason");
});

Deno.test("StdioProcessTransport.stderrTail() starts at a line boundary", async () => {
  const transport = new StdioProcessTransport(
    {
      command: "sh",
      args: ["-c", "echo first-line-is-long >&2; echo second >&2; echo END >&2; sleep 5"],
      env: {},
      cwd: "/",
    },
    { shutdownGraceMs: 200 },
  );
  await transport.start();
  assert.ok(await waitFor(() => transport.stderrTail(100).includes("END")));
  assert.equal(transport.stderrTail(20), "second\nEND\n");
  assert.equal(transport.stderrTail(4), "END\n");
  assert.equal(transport.stderrTail(2), "D\n");
  await transport.close();
});

Deno.test("StdioProcessTransport.stderrTail() masks a long secret its cut would split (a token on one long line)", async () => {
  // A server that prints its long token (600 characters, no credential shape) on one line before it fails.
  const secret = Array.from({ length: 19 }, () => crypto.randomUUID().replaceAll("-", "")).join("").slice(
    0,
    600,
  );
  processSecrets.register(secret);
  const transport = new StdioProcessTransport(
    { command: "sh", args: ["-c", `echo "auth failed for ${secret} END" >&2; sleep 5`], env: {}, cwd: "/" },
    { shutdownGraceMs: 200 },
  );
  await transport.start();
  assert.ok(await waitFor(() => transport.stderrTail(1000).includes("END")));
  const tail = transport.stderrTail(400);
  assert.ok(!tail.includes(secret.slice(-40)), `the end of the secret was shown: ${tail}`);
  assert.match(tail, /\*\*\* END\n$/);
  await transport.close();
});

Deno.test("connectStdio() fails with START_FAILED when the command does not exist", async () => {
  const spec = { ...fixtureSpec("ghost"), command: "/nonexistent/mcp-server", args: [] };
  await assert.rejects(connectStdio(spec, ctx()), {
    code: "START_FAILED",
    message: "ghost failed to start: command `/nonexistent/mcp-server` does not exist " +
      "(plugins/fixtures/SYMPOSIUM.toml:1): install it, or set `command` to its absolute path",
  });
});

Deno.test("connectStdio() says a bare command was not found on PATH and where it is declared", async () => {
  const spec = { ...fixtureSpec("ghost"), command: "nonexistent-binary-4711", args: [] };
  await assert.rejects(connectStdio(spec, ctx()), {
    code: "START_FAILED",
    message: "ghost failed to start: command `nonexistent-binary-4711` was not found on PATH " +
      "(plugins/fixtures/SYMPOSIUM.toml:1): install it, or set `command` to its absolute path",
  });
});

Deno.test("connectStdio() leads with the exit code when the server exits before reading initialize", async () => {
  const spec = {
    ...fixtureSpec("dies"),
    command: "sh",
    args: ["-c", "echo 'cannot open config' >&2; exit 1"],
  };
  await assert.rejects(connectStdio(spec, ctx()), {
    code: "START_FAILED",
    message:
      "dies failed to start: exited with code 1 before answering initialize; stderr: cannot open config",
  });
});

Deno.test("connectStdio() fails with STARTUP_TIMEOUT and the stderr tail when the handshake is too slow", async () => {
  const spec = fixtureSpec("slow", ["--slow-start-ms=4000", "--stderr-bytes=200"], {
    startupTimeoutMs: 1_200,
  });
  const t0 = Date.now();
  await assert.rejects(connectStdio(spec, ctx()), (e: unknown) => {
    assert.ok(e instanceof BackendError);
    assert.equal(e.code, "STARTUP_TIMEOUT");
    assert.match(e.message, /^slow did not start within \d+(\.\d)?s: stderr: e+/);
    return true;
  });
  assert.ok(Date.now() - t0 < 3_500);
});

Deno.test("connectStdio() waits longer while the server keeps writing progress to stderr", async () => {
  const spec = fixtureSpec("npxlike", ["--slow-start-ms=2500", "--stderr-progress"], {
    startupTimeoutMs: 1_500,
  });
  const conn = await connectStdio(spec, ctx());
  const result = await conn.callTool("echo", { message: "ready" }, { timeoutMs: 5_000 });
  assert.deepEqual(result.content, [{ type: "text", text: "ready" }]);
  await conn.close();
});

Deno.test("connectStdio() keeps working when the server writes megabytes to stderr", async () => {
  const lines: string[] = [];
  const conn = await connectStdio(fixtureSpec("chatty", ["--stderr-bytes=1000000"]), ctx(lines));
  for (let i = 0; i < 3; i++) {
    const result = await conn.callTool("chatty", { bytes: 1_000_000 }, { timeoutMs: 10_000 });
    assert.deepEqual(result.content, [{ type: "text", text: "ok" }]);
  }
  await conn.close();
  assert.ok(lines.some((l) => l.startsWith("debug stderr: eeee")));
});

Deno.test("StdioProcessTransport keeps only a bounded stderr tail", async () => {
  const transport = new StdioProcessTransport(
    {
      command: "sh",
      args: ["-c", "head -c 3000000 /dev/zero | tr '\\0' x >&2; echo END >&2; sleep 5"],
      env: {},
      cwd: "/",
    },
    { shutdownGraceMs: 200 },
  );
  await transport.start();
  assert.ok(await waitFor(() => transport.stderrTail(10).includes("END")));
  assert.ok(transport.stderrTail(10_000_000).length <= 64 * 1024);
  await transport.close();
});

Deno.test("connectStdio() delivers a 5 MB result", async () => {
  const conn = await connectStdio(fixtureSpec("bulky"), ctx());
  const result = await conn.callTool("big", { bytes: 5_000_000 }, { timeoutMs: 10_000 });
  assert.equal((result.content[0] as { text: string }).text.length, 5_000_000);
  await conn.close();
});

Deno.test("callTool() fails fast naming the exit code when the server crashes", async () => {
  const conn = await connectStdio(fixtureSpec("fragile", ["--crash-after=1"]), ctx());
  const first = await conn.callTool("echo", { message: "one" }, { timeoutMs: 5_000 });
  assert.deepEqual(first.content, [{ type: "text", text: "one" }]);
  const end = await conn.ended;
  assert.equal(end.isExpected, false);
  assert.match(end.reason, /exited with code 1/);
  const t0 = Date.now();
  await assert.rejects(conn.callTool("echo", { message: "two" }, { timeoutMs: 30_000 }), {
    code: "CONNECTION_LOST",
    message: /^fragile: connection lost: exited with code 1/,
  });
  assert.ok(Date.now() - t0 < 1_000);
});

Deno.test("a pending call fails with CONNECTION_LOST when the server is killed", async () => {
  const conn = await connectStdio(fixtureSpec("fragile", ["--crash-after=1", "--crash-signal=KILL"]), ctx());
  const pending = conn.callTool("hang", {}, { timeoutMs: 30_000 });
  await assert.rejects(pending, { code: "CONNECTION_LOST", message: /killed by SIGKILL/ });
});

Deno.test("close() ends the server's whole process group", async () => {
  const lines: string[] = [];
  const conn = await connectStdio(fixtureSpec("parent", ["--spawn-child"]), ctx(lines));
  const pidResult = await conn.callTool("pid", {}, { timeoutMs: 5_000 });
  const pid = (pidResult.structuredContent as { pid: number }).pid;
  const grandchild = Number(/grandchild pid (\d+)/.exec(lines.join("\n"))?.[1]);
  assert.ok(grandchild > 0);
  assert.ok(await isAlive(grandchild));
  await conn.close();
  assert.deepEqual(await liveProcessesInGroup(pid), []);
  assert.equal(await isAlive(grandchild), false);
});

Deno.test("close() also ends a grandchild that left the process group with setsid", async () => {
  if (Deno.build.os === "windows") return; // No process groups or table there (see process_tree.ts).
  const lines: string[] = [];
  const conn = await connectStdio(fixtureSpec("setsid", ["--spawn-setsid-child"]), ctx(lines));
  const pid =
    ((await conn.callTool("pid", {}, { timeoutMs: 5_000 })).structuredContent as { pid: number }).pid;
  const grandchild = Number(/setsid grandchild pid (\d+)/.exec(lines.join("\n"))?.[1]);
  assert.ok(grandchild > 0 && await isAlive(grandchild));
  assert.equal(
    await liveProcessesInGroup(pid).then((g) => g.includes(grandchild)),
    false,
    "it left the group",
  );
  await conn.close();
  assert.ok(await waitFor(async () => !(await isAlive(grandchild)), 3_000), `pid ${grandchild} survived`);
});

Deno.test("close() ends a setsid'd descendant whose parent exited before shutdown (recorded while running)", async () => {
  if (Deno.build.os === "windows") return;
  const lines: string[] = [];
  const conn = await connectStdio(fixtureSpec("orphan", ["--spawn-orphan-setsid"]), ctx(lines));
  assert.ok(await waitFor(() => /orphan pid (\d+)/.test(lines.join("\n")), 5_000));
  const orphan = Number(/orphan pid (\d+)/.exec(lines.join("\n"))![1]);
  // The intermediate shell exits after 1.5 s; the sleep is reparented out of the server's tree.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  assert.ok(await isAlive(orphan));
  await conn.close();
  assert.ok(await waitFor(async () => !(await isAlive(orphan)), 3_000), `pid ${orphan} survived`);
});

Deno.test("StdioProcessTransport starts the child with exactly the spec's environment", async () => {
  const lines: string[] = [];
  const spec = fixtureSpec("env", [], { env: { PATH: Deno.env.get("PATH") ?? "", ONLY_THIS: "yes" } });
  const unrelated = "UNRELATED_SECRET_FOR_ENV_TEST";
  Deno.env.set(unrelated, "must-not-reach-the-child");
  try {
    const conn = await connectStdio(spec, ctx(lines));
    const result = await conn.callTool("env", {}, { timeoutMs: 5_000 });
    await conn.close();
    const env = (result.structuredContent as { env: Record<string, string> }).env;
    assert.equal(env.ONLY_THIS, "yes");
    assert.equal(env[unrelated], undefined);
    assert.equal(env.HOME, undefined, "not in the spec, so not inherited");
  } finally {
    Deno.env.delete(unrelated);
  }
});

Deno.test("connectStdio() masks registered secrets and credential shapes in the stderr tail of errors", async () => {
  const dir = await Deno.makeTempDir();
  processSecrets.register("tail-secret-7f3a9c");
  const spec = fixtureSpec("leaky", [
    "--stderr-text=auth failed for tail-secret-7f3a9c (token=abc123, Authorization: Basic dXNlcjpwYXNz)",
    "--fail-starts=1",
    `--counter-file=${dir}/count`,
  ]);
  await assert.rejects(connectStdio(spec, ctx()), (e: unknown) => {
    assert.ok(e instanceof BackendError);
    assert.match(e.message, /auth failed for \*\*\* \(token=\*\*\*, Authorization: Basic \*\*\*\)/);
    for (const secret of ["tail-secret-7f3a9c", "abc123", "dXNlcjpwYXNz"]) {
      assert.ok(!e.message.includes(secret));
    }
    return true;
  });
  await Deno.remove(dir, { recursive: true });
});

Deno.test("close() kills a server that ignores stdin closing and SIGTERM after the grace", async () => {
  const conn = await connectStdio(
    fixtureSpec("stubborn", ["--ignore-sigterm", "--linger"]),
    ctx([], { shutdownGraceMs: 600 }),
  );
  const pid =
    ((await conn.callTool("pid", {}, { timeoutMs: 5_000 })).structuredContent as { pid: number }).pid;
  const t0 = Date.now();
  await conn.close();
  const took = Date.now() - t0;
  assert.ok(took >= 500 && took < 2_500, `took ${took} ms`);
  assert.equal(await isAlive(pid), false);
});

Deno.test("rootsForStdio() announces the workspace and every absolute directory argument", () => {
  const spec = {
    command: "npx",
    args: ["-y", "pkg", "/tmp/data", "/etc/passwd", "rel/dir"],
    env: {},
    cwd: "/ws",
  };
  const roots = rootsForStdio(spec, "/ws", (p) => p === "/tmp/data");
  assert.deepEqual(roots, [{ uri: "file:///ws", name: "ws" }, { uri: "file:///tmp/data", name: "data" }]);
});

Deno.test("connectStdio() answers the server's roots/list request", async () => {
  const conn = await connectStdio(
    fixtureSpec("rooted"),
    ctx([], { roots: () => [{ uri: "file:///work/space", name: "space" }] }),
  );
  const result = await conn.callTool("roots", {}, { timeoutMs: 5_000 });
  assert.deepEqual(result.structuredContent, { roots: [{ uri: "file:///work/space", name: "space" }] });
  await conn.close();
});

Deno.test("listTools() over stdio stops when the server's cursor never advances", async () => {
  const conn = await connectStdio(fixtureSpec("loopy", ["--endless-cursor"]), ctx());
  const listing = await conn.listTools({ timeoutMs: 5_000 });
  const names = listing.tools.map((t) => t.name);
  assert.equal(new Set(names).size, names.length);
  assert.ok(names.includes("echo"));
  assert.match(listing.warnings[0] ?? "", /^loopy: tools\/list cursor "c1" repeated/);
  await conn.close();
});

Deno.test("listTools() over stdio: a server's long error text is cut in the message", async () => {
  // The error text of a server (here 10,000 characters) reached the script, the agent and the log whole.
  const conn = await connectStdio(fixtureSpec("junk", [`--fail-lists=${"e".repeat(10_000)}`]), ctx());
  const error = await conn.listTools({ timeoutMs: 10_000 }).then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof BackendError);
  assert.equal(error.code, "REQUEST_FAILED");
  assert.match(error.message, /^junk tools\/list failed: .*eee/);
  assert.ok(error.message.length <= MAX_ERROR_DETAIL_CHARS + 200, `${error.message.length} chars`);
  assert.match(error.message, /… \d+ more characters$/);
  await conn.close();
});

Deno.test("listTools() over stdio: a long secret in a server's error text is masked whole where the text is cut", async () => {
  const secret = Array.from({ length: 19 }, () => crypto.randomUUID().replaceAll("-", "")).join("").slice(
    0,
    600,
  );
  processSecrets.register(secret);
  const text = `${"e".repeat(MAX_ERROR_DETAIL_CHARS - 300)} bad token ${secret}`;
  const conn = await connectStdio(fixtureSpec("junk", [`--fail-lists=${text}`]), ctx());
  const error = await conn.listTools({ timeoutMs: 10_000 }).then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof BackendError);
  assert.ok(!error.message.includes(secret.slice(0, 40)), "the start of the secret was shown");
  assert.match(error.message, /bad token \*\*\*$/);
  await conn.close();
});

Deno.test("listTools() over stdio: a large off-schema page is refused naming its first bad tool, or its size", async () => {
  // Through mcp-serve, 200,000 tools named by a number (2.2 MB) took the SDK's zod check 757 MB and 2.8 s of
  // the main thread, and its message was 78 MB; 1,000,000 (11 MB) took 3.2 GB and 19 s.
  const junk = await connectStdio(fixtureSpec("junk", ["--garbage-lists=4000"]), ctx());
  await assert.rejects(junk.listTools({ timeoutMs: 10_000 }), {
    code: "REQUEST_FAILED",
    message: /^junk tools\/list failed: .*Invalid result for tools\/list: tools\[0\] has no string name$/,
  });
  assert.ok((await junk.callTool("echo", { message: "on" }, { timeoutMs: 5_000 })).content.length > 0);
  await junk.close();
  const big = await connectStdio(fixtureSpec("big", [`--garbage-lists=${MAX_LIST_PAGE_ITEMS + 1}`]), ctx());
  await assert.rejects(big.listTools({ timeoutMs: 10_000 }), {
    code: "REQUEST_FAILED",
    message: new RegExp(
      `tools/list answered a page of ${MAX_LIST_PAGE_ITEMS + 1} tools, more than the ${MAX_LIST_PAGE_ITEMS}`,
    ),
  });
  await big.close();
});

Deno.test("a burst of tools/list_changed over stdio is logged at most once a second, with the count", async () => {
  // 20,000 notifications wrote 20,000 debug lines (1.4 MB) to the session log, whose 10 MiB then ended it.
  const lines: string[] = [];
  let heard = 0;
  const conn = await connectStdio(
    fixtureSpec("burst", ["--change-burst=3000"], {}),
    ctx(lines, { onToolListChanged: () => heard++ }),
  );
  await conn.callTool("enable_b", {}, { timeoutMs: 10_000 });
  assert.ok(await waitFor(() => heard === 3000, 20_000), `${heard} heard`);
  const logged = lines.filter((line) => line.includes("tools/list_changed"));
  assert.ok(logged.length >= 1 && logged.length <= 3, `${logged.length} lines`);
  await conn.close();
});

Deno.test("callTool() over stdio fails with CALL_TIMEOUT on a hanging tool and the server stays usable", async () => {
  const conn = await connectStdio(fixtureSpec("sleepy"), ctx());
  await assert.rejects(conn.callTool("hang", {}, { timeoutMs: 300 }), {
    code: "CALL_TIMEOUT",
    message: /^sleepy\.hang did not answer within 0\.3s/,
  });
  const result = await conn.callTool("echo", { message: "still here" }, { timeoutMs: 5_000 });
  assert.deepEqual(result.content, [{ type: "text", text: "still here" }]);
  await conn.close();
});

Deno.test("callTool() over stdio returns image content blocks as sent", async () => {
  const conn = await connectStdio(fixtureSpec("pics"), ctx());
  const result = await conn.callTool("image", {}, { timeoutMs: 5_000 });
  assert.deepEqual(result.content.map((c) => c.type), ["text", "image", "text"]);
  await conn.close();
});

/** The real process table, counting its reads; a schedule over it driven by manual timers. */
function countedSchedule() {
  const ps = new PsProcessTable();
  const counted = {
    reads: 0,
    get isSupported() {
      return ps.isSupported;
    },
    snapshot(options?: { fresh?: boolean }) {
      counted.reads++;
      return ps.snapshot(options);
    },
  } satisfies ProcessTable & { reads: number };
  const timers = new ManualScanTimers();
  const scans = new DescendantScanSchedule({ table: counted, timers });
  /** Runs the next look; returns how long after the previous one it came, in ms. */
  const look = async () => {
    const waitedMs = timers.fireNext();
    await scans.settled();
    return waitedMs;
  };
  return { counted, timers, scans, look };
}

Deno.test("StdioProcessTransport: several running servers share one read of the process table per look", async () => {
  if (Deno.build.os === "windows") return; // No process table there (see process_tree.ts).
  const { counted, timers, scans, look } = countedSchedule();
  const ready = `sleep 30 & echo '{"jsonrpc":"2.0","method":"ready"}'; wait`;
  const transports = [1, 2, 3].map(() =>
    new StdioProcessTransport({ command: "sh", args: ["-c", ready], env: {}, cwd: "/" }, {
      shutdownGraceMs: 200,
      scans,
    })
  );
  try {
    await Promise.all(transports.map((t) =>
      new Promise<void>((resolve, reject) => {
        t.onmessage = () => resolve();
        t.start().catch(reject);
      })
    ));
    assert.equal(timers.pending.size, 1, "one timer for the three servers");
    counted.reads = 0;
    await look();
    assert.equal(counted.reads, 1);
    const found = transports.map((t) => t.trackedDescendants());
    assert.deepEqual(found.map((pids) => pids.length), [1, 1, 1], "each found its own `sleep`");
    assert.equal(new Set(found.flat()).size, 3);
  } finally {
    await Promise.all(transports.map((t) => t.close()));
  }
  assert.equal(timers.pending.size, 0, "no timer once the last server stopped");
  assert.equal(scans.isScheduled, false);
});

Deno.test("StdioProcessTransport: a message to or from an idle server brings the next look within 2 s", async () => {
  if (Deno.build.os === "windows") return;
  const { timers, scans, look } = countedSchedule();
  // Writes a message on SIGUSR1; otherwise idle (one `sleep` child, nothing read from stdin).
  const script = `trap 'echo "$MSG"' USR1; sleep 1000 & while kill -0 $! 2>/dev/null; do wait; done`;
  const transport = new StdioProcessTransport({
    command: "sh",
    args: ["-c", script],
    env: { MSG: '{"jsonrpc":"2.0","method":"poke"}' },
    cwd: "/",
  }, { shutdownGraceMs: 200, scans });
  let received = () => {};
  transport.onmessage = () => received();
  await transport.start();
  const backOff = async () => {
    while (scans.intervalMs < MAX_DESCENDANT_SCAN_INTERVAL_MS) await look();
    assert.equal(await look(), MAX_DESCENDANT_SCAN_INTERVAL_MS);
  };
  try {
    assert.ok(await waitFor(async () => (await look(), transport.trackedDescendants().length === 1)));
    await backOff();
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    assert.equal(scans.intervalMs, DESCENDANT_SCAN_INTERVAL_MS);
    assert.equal(await look(), DESCENDANT_SCAN_INTERVAL_MS, "sent: the 30 s look is pulled in");
    await backOff();
    const poked = new Promise<void>((resolve) => (received = resolve));
    Deno.kill(transport.pid!, "SIGUSR1");
    await poked;
    assert.equal(await look(), DESCENDANT_SCAN_INTERVAL_MS, "received: the 30 s look is pulled in");
  } finally {
    await transport.close();
  }
  assert.equal(timers.pending.size, 0);
});

Deno.test("StdioProcessTransport: when a server dies first, a child its recorded setsid'd helper started while the schedule was idle is ended too", async () => {
  if (Deno.build.os === "windows") return;
  const dir = await Deno.makeTempDir();
  const timers = new ManualScanTimers();
  const scans = new DescendantScanSchedule({ table: new PsProcessTable(), timers });
  // The helper leaves the server's session; on SIGUSR1 it starts a long-lived child and writes its pid.
  const helper = `trap 'sleep 1000 & echo $! > "$D/late"' USR1; sleep 1000 & while :; do wait; done`;
  const transport = new StdioProcessTransport({
    command: "sh",
    args: [
      "-c",
      `setsid sh -c "$HELPER" </dev/null >/dev/null 2>&1 & echo $! > "$D/helper"; sleep 1000 & wait`,
    ],
    env: { D: dir, HELPER: helper, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    cwd: "/",
  }, { shutdownGraceMs: 200, scans });
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await transport.start();
  const read = (name: string) => Deno.readTextFile(`${dir}/${name}`).then(Number, () => 0);
  let late = 0;
  try {
    assert.ok(await waitFor(async () => (await read("helper")) > 0));
    const helperPid = await read("helper");
    assert.ok(
      await waitFor(async () => {
        timers.fireNext();
        await scans.settled();
        return transport.trackedDescendants().includes(helperPid);
      }),
    );
    Deno.kill(helperPid, "SIGUSR1"); // after the last look: nothing records its new child but the end
    assert.ok(await waitFor(async () => (late = await read("late")) > 0));
    Deno.kill(transport.pid!, "SIGKILL"); // the server dies first; its helper is still alive
    await closed;
    assert.ok(await waitFor(async () => !(await isAlive(late)), 3_000), `pid ${late} survived`);
  } finally {
    if (late > 0 && await isAlive(late)) Deno.kill(late, "SIGKILL");
    await transport.close();
    await Deno.remove(dir, { recursive: true });
  }
});
