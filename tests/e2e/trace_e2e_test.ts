/**
 * End to end: `execute { trace: true }` and the session log's record of every execute, through a real
 * `mcp-serve` (spawned as `selfCommand()` does) in front of the real server-everything; then
 * `cargo agents report` on that session's log, and the page loaded in headless Chromium
 * (`testdata/commands/report_page_driver.ts`). The page and its screenshot are kept in
 * `tests/artifacts/report/` (ignored by git) for a person to look at.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { REPO, waitFor } from "../_fakes_backends.ts";
import { cargoLock, cargoToml } from "../_fakes_meta.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";
import { unwrapToolResult } from "../../lib/catalog/result_unwrap.ts";
import type { TracedCall } from "../../lib/meta_server/call_trace.ts";

const EVERYTHING = `${REPO}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
const ARTIFACTS = `${REPO}tests/artifacts/report`;
const CHROMIUM = "/usr/bin/chromium";
const LONG = "trigger-long-running-operation";
/** Built inside the scripts from parts, so that it is never in a script's text: only in values. */
const CANARY = "canary-7d41-b0e9";

/** One call of a trace, as `execute` answers it (the shape `call_trace.ts` makes). */
type Traced = TracedCall;
interface Trace {
  calls: Traced[];
  omittedCalls: number;
  totals: { calls: number; errors: number; ms: number; bytesFromServers: number; bytesToAgent: number };
}

const bytes = (text: string) => new TextEncoder().encode(text).length;

async function makeWorld(): Promise<{ root: string; home: string; ws: string }> {
  const root = await Deno.makeTempDir({ prefix: "symposium-trace-" });
  const home = `${root}/home`, ws = `${root}/ws`;
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.mkdir(`${home}/plugins/everything`, { recursive: true });
  await Deno.writeTextFile(`${ws}/Cargo.toml`, cargoToml({ serde: "1" }));
  await Deno.writeTextFile(`${ws}/Cargo.lock`, cargoLock({ serde: "1.0.219" }));
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  await Deno.writeTextFile(`${home}/config.toml`, "[mcp]\nmax-tool-calls = 300\n");
  await Deno.writeTextFile(
    `${home}/plugins/everything/SYMPOSIUM.toml`,
    `name = "everything"\ndepends-on = "*"\n\n[[mcp_servers]]\nname = "everything"\ncommand = "node"\nargs = ${
      JSON.stringify([EVERYTHING, "stdio"])
    }\n`,
  );
  return { root, home, ws };
}

async function connect(command: string, args: string[], env?: Record<string, string>, cwd?: string) {
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...Deno.env.toObject(), ...env },
    ...(cwd ? { cwd } : {}),
    stderr: "ignore",
  });
  const client = new Client({ name: "trace-e2e", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

type Answer = { content: { type: string; text?: string }[]; structuredContent?: Record<string, unknown> };

/** What the backing server answers these calls, asked directly: the sizes a trace must report. */
async function oracle(calls: [string, Record<string, unknown>][]): Promise<[number, number][]> {
  const client = await connect("node", [EVERYTHING, "stdio"]);
  try {
    const sizes: [number, number][] = [];
    for (const [name, args] of calls) {
      const result = await client.callTool({ name, arguments: args });
      const unwrapped = unwrapToolResult(result as Parameters<typeof unwrapToolResult>[0]);
      assert.ok(unwrapped.ok);
      sizes.push([bytes(JSON.stringify(args)), bytes(JSON.stringify(unwrapped.value))]);
    }
    return sizes;
  } finally {
    await client.close();
  }
}

/** The execute records of a session log, read here independently of `lib/` (the `end` lines). */
function logRecords(log: string): Map<string, { end: Record<string, unknown>; calls: unknown[][] }> {
  const out = new Map<string, { end: Record<string, unknown>; calls: unknown[][] }>();
  for (const line of log.split("\n")) {
    const m = / \[trace\] (\{.*\})$/.exec(line);
    if (!m) continue;
    const part = JSON.parse(m[1]!);
    const slot = out.get(part.id) ?? { end: {}, calls: [] };
    out.set(part.id, slot);
    if (Array.isArray(part.calls)) slot.calls.push(...part.calls);
    if (part.part === "end") slot.end = part;
  }
  return out;
}

async function runCli(args: string[], env: Record<string, string>, cwd: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...sourceRunArgs(REPO), ...args],
    env,
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

async function loadPage(page: string, screenshot: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    // -A: playwright-core reads /proc paths that Deno grants only to -A (test helper, not product code).
    args: [
      "run",
      "-A",
      "--config",
      `${REPO}deno.json`,
      `${REPO}testdata/commands/report_page_driver.ts`,
      page,
      screenshot,
    ],
    env: { CHROMIUM_PATH: CHROMIUM },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout)) as {
    title: string;
    scripts: number;
    images: number;
    requests: string[];
    consoleErrors: string[];
    fields: { k: string; text: string; execute: string | null }[];
    bars: { execute: string; start: number; ms: number; left: number; right: number }[];
    scriptTexts: string[];
  };
}

const TRACED_SCRIPT = `
const first = await everything.echo({ message: "first" });
const [a, b] = await Promise.all([
  everything["${LONG}"]({ duration: 0.4, steps: 1 }),
  everything["${LONG}"]({ duration: 0.3, steps: 1 }),
]);
let failed = "";
try { await everything.no_such_tool({}); } catch (e) { failed = "yes"; }
return { first, done: [a, b].length, failed };`;

const HOSTILE_SCRIPT = `// </pre><script>alert("pwned")</script><img src=x onerror=alert(2)>
try { await everything["<img src=x onerror=alert(1)>"]({}); } catch { /* no such tool */ }
return "</section><script>alert(3)</script>";`;

Deno.test("execute's trace, its record in the session log and the report page of the session", async (t) => {
  const world = await makeWorld();
  const env = { ...Deno.env.toObject(), SYMPOSIUM_HOME: world.home };
  const client = await connect(Deno.execPath(), [...sourceRunArgs(REPO), "mcp-serve"], env, world.ws);
  let closed = false;
  try {
    let traced!: Trace;
    await t.step("trace: true adds a trace matching what the backing server answers", async () => {
      const answer = await client.callTool({
        name: "execute",
        arguments: { script: TRACED_SCRIPT, trace: true },
      }) as Answer;
      const structured = answer.structuredContent!;
      assert.ok(structured, JSON.stringify(answer).slice(0, 400));
      assert.equal(answer.content[0]!.text, JSON.stringify(structured)); // the text is still the object
      traced = structured.trace as Trace;
      assert.deepEqual(traced.calls.map((c) => `${c.server}.${c.tool}:${c.ok ? "ok" : c.error}`), [
        "everything.echo:ok",
        `everything.${LONG}:ok`,
        `everything.${LONG}:ok`,
        "everything.no_such_tool:TOOL_UNKNOWN",
      ]);
      const expected = await oracle([
        ["echo", { message: "first" }],
        [LONG, { duration: 0.4, steps: 1 }],
        [LONG, { duration: 0.3, steps: 1 }],
      ]);
      assert.deepEqual(traced.calls.slice(0, 3).map((c) => [c.argsBytes, c.resultBytes]), expected);
      const [, long1, long2] = traced.calls as [Traced, Traced, Traced];
      // Promise.all: the second long call started before the first one ended.
      assert.ok(long2.startMs < long1.startMs + long1.ms, JSON.stringify(traced.calls));
      const { trace: _trace, ...rest } = structured;
      assert.deepEqual(traced.totals, {
        calls: 4,
        errors: 1,
        ms: traced.totals.ms,
        bytesFromServers: expected.reduce((n, [, r]) => n + r, 0),
        bytesToAgent: bytes(JSON.stringify(rest)),
      });
      assert.ok(traced.totals.ms >= long1.startMs + long1.ms);
    });

    await t.step("a trace describes the first 200 calls and counts the rest", async () => {
      const script =
        'await Promise.all(Array.from({ length: 205 }, (_, i) => everything.echo({ message: "m" + i }))); return 1';
      const answer = await client.callTool({ name: "execute", arguments: { script, trace: true } }) as Answer;
      const trace = answer.structuredContent!.trace as Trace;
      assert.equal(trace.calls.length, 200);
      assert.equal(trace.omittedCalls, 5);
      assert.equal(trace.totals.calls, 205);
      assert.equal(trace.totals.errors, 0);
    });

    await t.step("an execute without trace answers none and is recorded without values", async () => {
      const script = `const v = ["canary", "7d41", "b0e9"].join("-");
const echoed = await everything.echo({ message: v });
return echoed.length;`;
      const answer = await client.callTool({ name: "execute", arguments: { script } }) as Answer;
      assert.deepEqual(answer.structuredContent, { result: bytes(`Echo: ${CANARY}`) });
      assert.ok(!answer.content.some((c) => c.text?.includes('"trace"')));
      await assert.rejects(
        client.callTool({ name: "execute", arguments: { script: "return 1", trace: "yes" } }),
        /`trace` must be true or false/,
      );
      const hostile = await client.callTool({
        name: "execute",
        arguments: { script: HOSTILE_SCRIPT },
      }) as Answer;
      assert.equal(hostile.structuredContent?.result, "</section><script>alert(3)</script>");
    });

    await client.close();
    closed = true;
    const logs = [...Deno.readDirSync(`${world.home}/logs`)].map((e) => e.name);
    assert.equal(logs.length, 1, logs.join(", "));
    const logPath = `${world.home}/logs/${logs[0]}`;
    let records = new Map<string, { end: Record<string, unknown>; calls: unknown[][] }>();
    assert.ok(
      await waitFor(async () => {
        records = logRecords(await Deno.readTextFile(logPath));
        return records.size === 4 && [...records.values()].every((r) => r.end.outcome === "ok");
      }),
      "the session log does not hold the four execute records",
    );
    const log = await Deno.readTextFile(logPath);

    await t.step("every execute is in the log by names and sizes, never a value", () => {
      assert.ok(!log.includes(CANARY), "a value reached the session log");
      const untraced = [...records.values()].find((r) => r.end.traced === false && r.calls.length === 1)!;
      assert.deepEqual(untraced.calls[0]!.slice(0, 2), ["everything", "echo"]);
      assert.equal(untraced.calls[0]![4], bytes(JSON.stringify({ message: CANARY })));
      assert.equal(untraced.calls[0]![5], bytes(JSON.stringify(`Echo: ${CANARY}`)));
      const first = [...records.values()].find((r) => r.calls.length === 4)!;
      assert.deepEqual(first.end.totals, traced.totals); // the log and the answer agree
      const big = [...records.values()].find((r) => (r.end.totals as Trace["totals"]).calls === 205)!;
      assert.equal(big.calls.length, 200);
      assert.equal(big.end.omittedCalls, 5);
    });

    await t.step(
      "report writes a page that loads nothing, shows the log's numbers and escapes the log",
      async () => {
        await Deno.mkdir(ARTIFACTS, { recursive: true });
        const page = `${ARTIFACTS}/report.html`;
        const id = logs[0]!.replace(/\.log$/, "");
        const run = await runCli(["report", "--session", id, "--out", page], env, world.ws);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(run.stdout.trim(), page);
        const html = await Deno.readTextFile(page);
        assert.ok(!/<script|<img/i.test(html), "markup from the log reached the page");
        assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
        const shown = await loadPage(page, `${ARTIFACTS}/report.png`);
        assert.deepEqual(shown.requests, []);
        assert.deepEqual(shown.consoleErrors, []);
        assert.equal(shown.scripts, 0);
        assert.equal(shown.images, 0);
        assert.ok(shown.scriptTexts.includes(HOSTILE_SCRIPT), "the hostile script is not shown as text");
        assert.ok(shown.scriptTexts.includes(TRACED_SCRIPT));
        const value = (k: string, execute: string | null) =>
          Number(shown.fields.find((f) => f.k === k && f.execute === execute)!.text.replace(/,/g, ""));
        let sumCalls = 0, sumFrom = 0, sumTo = 0;
        for (const [id, record] of records) {
          const totals = record.end.totals as Trace["totals"];
          assert.equal(value("calls", id), totals.calls);
          assert.equal(value("errors", id), totals.errors);
          assert.equal(value("ms", id), totals.ms);
          assert.equal(value("from", id), totals.bytesFromServers);
          assert.equal(value("to", id), totals.bytesToAgent);
          assert.equal(value("kept", id), Math.max(0, totals.bytesFromServers - totals.bytesToAgent));
          sumCalls += totals.calls;
          sumFrom += totals.bytesFromServers;
          sumTo += totals.bytesToAgent;
        }
        assert.equal(value("executes", null), 4);
        assert.equal(value("calls", null), sumCalls);
        assert.equal(value("from", null), sumFrom);
        assert.equal(value("to", null), sumTo);
        // The two calls of the Promise.all overlap on the time axis.
        const tracedId = [...records].find(([, r]) => r.calls.length === 4)![0];
        const [, bar1, bar2] = shown.bars.filter((b) => b.execute === tracedId);
        assert.ok(bar2!.left < bar1!.right, JSON.stringify(shown.bars.slice(0, 4)));
        await Deno.stat(`${ARTIFACTS}/report.png`);
      },
    );

    await t.step("report --open hands the page's file URL to the browser program", async () => {
      const opener = `${world.root}/browser.sh`;
      await Deno.writeTextFile(opener, `#!/bin/sh\nprintf '%s' "$1" > "${world.root}/opened.txt"\n`);
      await Deno.chmod(opener, 0o755);
      const run = await runCli(["report", "--open"], { ...env, SYMPOSIUM_BROWSER: opener }, world.ws);
      assert.equal(run.code, 0, run.stderr);
      const written = run.stdout.trim();
      assert.ok(written.startsWith(`${world.home}/reports/`), written);
      assert.ok(
        await waitFor(async () =>
          (await Deno.readTextFile(`${world.root}/opened.txt`).catch(() => "")) !== ""
        ),
      );
      assert.equal(await Deno.readTextFile(`${world.root}/opened.txt`), `file://${written}`);
    });
  } finally {
    if (!closed) await client.close();
    await Deno.remove(world.root, { recursive: true });
  }
});
