/**
 * Budgets (`docs/security.md`, "Budgets"), measured through a real `mcp-serve` (`deno task bench`): each hostile input
 * is sent the way an attacker would, and the figures that say whether the host held are printed
 * once at load (they are not timings of a loop): ping latency while a backtracking `pattern` or
 * `list_tools` glob is handled; peak RSS and time to fail for an endless HTTP body and SSE line;
 * what 11 MB and 100 MB stdin lines get; RSS growth, log size and per-call time for 1,000 calls
 * writing 200 KB of stderr each; peak RSS for 100 × 8 MiB arguments in flight; how many of
 * 20,000 `tools/list_changed` reach the agent.
 *
 * `BUDGETS=redos,glob,http,sse,stdin,stderr,inflight,flood` picks figures (default: all).
 *
 * @module
 */
import {
  denoServerToml,
  makeRawWorld,
  RawServe,
  type RawWorld,
  remoteServerToml,
  REPO,
  startHostileHttp,
} from "./_raw_serve.ts";

const picked = new Set(
  (Deno.env.get("BUDGETS") ?? "redos,glob,http,sse,stdin,stderr,inflight,flood").split(","),
);
const HOSTILE = denoServerToml("hostile", "hostile_stdio.ts");
const FILESYSTEM = `[[mcp_servers]]\nname = "filesystem"\ncommand = "node"\nargs = ${
  JSON.stringify([`${REPO}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`, "/tmp"])
}\n`;
/** Past this RSS (MiB) or time (ms, unless a figure says otherwise) a run that has not failed is stopped and reported as such. */
const STOP_RSS_MIB = 3_000;
const STOP_AFTER_MS = 30_000;

function report(figure: string, text: string): void {
  console.log(`[budgets] ${figure}: ${text}`);
}

async function session(world: RawWorld, v8Flags: string[] = []): Promise<RawServe> {
  const serve = RawServe.start({ home: world.home, cwd: world.ws, v8Flags });
  await serve.initialize();
  return serve;
}

function isAlive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

/** Runs `work`; stops mcp-serve when it grows past {@link STOP_RSS_MIB} or runs past {@link STOP_AFTER_MS}. */
async function watched<T>(
  serve: RawServe,
  work: Promise<T>,
  stopAfterMs = STOP_AFTER_MS,
): Promise<{ value?: T; ms: number; peakMiB: number; stopped?: string }> {
  const started = performance.now();
  let peakMiB = 0;
  let stopped: string | undefined;
  const sampler = setInterval(() => {
    const { rss, peak } = serve.memoryMiB();
    peakMiB = Math.max(peakMiB, peak, rss);
    const ms = performance.now() - started;
    if (!stopped && (rss > STOP_RSS_MIB || ms > stopAfterMs)) {
      stopped = `stopped by the bench at ${(ms / 1000).toFixed(1)} s, RSS ${
        rss.toFixed(0)
      } MiB, not failed yet`;
      void serve.kill();
    }
  }, 100);
  try {
    const value = await work;
    return { value, ms: performance.now() - started, peakMiB: Math.max(peakMiB, serve.memoryMiB().peak) };
  } catch (error) {
    if (stopped) return { ms: performance.now() - started, peakMiB, stopped };
    throw error;
  } finally {
    clearInterval(sampler);
  }
}

if (picked.has("redos")) {
  const world = await makeRawWorld(HOSTILE);
  const serve = await session(world);
  await serve.execute("return await hostile.pid()");
  const n = 27;
  const { value, maxPingMs } = await serve.whilePinging(
    serve.execute(`return await hostile.redos({ n: ${n} })`),
  );
  report(
    "redos outputSchema pattern",
    `value of ${n + 1} chars: slowest ping ${maxPingMs.toFixed(0)} ms; result ${value.text.slice(0, 120)}`,
  );
  await serve.close();
  await world.remove();
}

if (picked.has("glob")) {
  const world = await makeRawWorld(FILESYSTEM);
  const serve = await session(world);
  await serve.listTools({ servers: ["filesystem"] });
  const started = performance.now();
  const { value, maxPingMs } = await serve.whilePinging(serve.listTools({ pattern: "************!" }));
  report(
    "redos list_tools glob",
    `"************!" over server-filesystem: answered in ${
      (performance.now() - started).toFixed(0)
    } ms, slowest ping ${maxPingMs.toFixed(0)} ms; answer ${JSON.stringify(value.text.slice(0, 80))}`,
  );
  await serve.close();
  await world.remove();
}

for (const mode of ["http", "sse"] as const) {
  if (!picked.has(mode)) continue;
  const remote = await startHostileHttp(mode === "http" ? "json" : "sse");
  const world = await makeRawWorld(remoteServerToml("endless", remote.url));
  const serve = await session(world);
  const outcome = await watched(serve, serve.execute("return await endless.x({})", 600_000));
  const after = outcome.stopped ? "process stopped" : `next ping ${(await serve.pingMs()).toFixed(0)} ms`;
  report(
    mode === "http" ? "endless HTTP JSON body" : "endless SSE line",
    outcome.stopped
      ? `${outcome.stopped}; peak RSS ${outcome.peakMiB.toFixed(0)} MiB`
      : `failed after ${(outcome.ms / 1000).toFixed(1)} s at peak RSS ${outcome.peakMiB.toFixed(0)} MiB: ${
        outcome.value!.text.slice(0, 160)
      }; ${after}`,
  );
  if (serve.isRunning) await serve.close();
  await remote.stop();
  await world.remove();
}

if (picked.has("stdin")) {
  const world = await makeRawWorld(HOSTILE);
  for (const [megabytes, kind] of [[11, "ping"], [11, "junk"], [100, "ping"]] as const) {
    const serve = await session(world);
    const backing = Number((await serve.execute("return (await hostile.pid()).pid")).text);
    const id = kind === "junk" ? null : 9000 + megabytes;
    const head = kind === "junk"
      ? '{"jsonrpc":"2.0","id":'
      : `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"pad":"`;
    const line = new TextEncoder().encode(head + "x".repeat(megabytes * 1_000_000 - head.length - 3) + '"}}');
    const started = performance.now();
    const reply = serve.waitReply(id, 60_000);
    const written = await serve.sendLine(line);
    const outcome = await Promise.race([
      reply.then((m) => JSON.stringify("error" in m ? m.error : m.result).slice(0, 160)),
      serve.child.status.then((s) => `mcp-serve exited with code ${s.code}`),
    ]).catch((error) => `no answer: ${String(error).slice(0, 80)}`);
    const ms = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const running = serve.isRunning;
    const next = running ? `next ping ${(await serve.pingMs()).toFixed(0)} ms` : "no session";
    report(
      `${megabytes} MB stdin line (${kind === "junk" ? "not JSON" : "a ping request"})`,
      `${written ? "" : "(write broke) "}${outcome} after ${ms.toFixed(0)} ms; mcp-serve ${
        running ? "running" : "gone"
      }, backing server ${isAlive(backing) ? "running" : "gone"}; ${next}`,
    );
    if (running) await serve.close();
    else await serve.kill();
  }
  await world.remove();
}

if (picked.has("stderr")) {
  const world = await makeRawWorld(HOSTILE, "max-tool-calls = 2000\nscript-timeout-secs = 600\n");
  const serve = await session(world);
  await serve.execute("return await hostile.quiet()");
  const loop = (tool: string) =>
    `for (let i = 0; i < 1000; i++) await hostile.${tool}(${
      tool === "chatty" ? "{ bytes: 200000 }" : ""
    }); return 1`;
  let started = performance.now();
  await serve.execute(loop("quiet"), 600_000);
  const quietMs = (performance.now() - started) / 1000;
  const rssBefore = serve.memoryMiB().rss;
  started = performance.now();
  const outcome = await watched(serve, serve.execute(loop("chatty"), 600_000), 580_000);
  const chattyMs = (performance.now() - started) / 1000;
  const logSize = () => {
    let bytes = 0;
    for (const entry of Deno.readDirSync(`${world.home}/logs`)) {
      bytes += Deno.statSync(`${world.home}/logs/${entry.name}`).size;
    }
    return bytes / 1024 / 1024;
  };
  const logAtEnd = logSize();
  const rssAfter = serve.memoryMiB().rss;
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  report(
    "1,000 calls × 200 KB stderr",
    outcome.stopped
      ? `${outcome.stopped}; peak RSS ${outcome.peakMiB.toFixed(0)} MiB`
      : `RSS growth ${(rssAfter - rssBefore).toFixed(0)} MiB (peak ${outcome.peakMiB.toFixed(0)} MiB); log ${
        logAtEnd.toFixed(1)
      } MiB at the end, ${logSize().toFixed(1)} MiB 5 s later; per call ${chattyMs.toFixed(2)} ms vs quiet ${
        quietMs.toFixed(2)
      } ms (${(chattyMs / quietMs).toFixed(1)}×)`,
  );
  if (serve.isRunning) await serve.close();
  await world.remove();
}

if (picked.has("inflight")) {
  const world = await makeRawWorld(HOSTILE, "script-timeout-secs = 60\ntool-call-timeout-secs = 50\n");
  const serve = await session(world);
  await serve.execute("return await hostile.pid()");
  const script = `const big = "x".repeat(8 * 1024 * 1024 - 64);
const outcomes = {};
for (let i = 0; i < 100; i++) {
  hostile.hang({ big }).then(() => "answered", (e) => String(e.message).slice(0, 60))
    .then((o) => { outcomes[o] = (outcomes[o] ?? 0) + 1; });
}
await new Promise((resolve) => setTimeout(resolve, 8000));
return outcomes;`;
  const outcome = await watched(serve, serve.execute(script, 600_000), 120_000);
  report(
    "100 × 8 MiB arguments in flight",
    outcome.stopped
      ? `${outcome.stopped}; peak RSS ${outcome.peakMiB.toFixed(0)} MiB`
      : `peak RSS ${outcome.peakMiB.toFixed(0)} MiB, ended after ${(outcome.ms / 1000).toFixed(1)} s: ${
        outcome.value!.text.slice(0, 300)
      }`,
  );
  if (serve.isRunning) await serve.close();
  await world.remove();
}

if (picked.has("flood")) {
  const world = await makeRawWorld(HOSTILE);
  const serve = await session(world);
  await serve.execute("return await hostile.pid()");
  const before = serve.notifications.length;
  const started = performance.now();
  const { value, maxPingMs } = await serve.whilePinging(
    serve.execute("return await hostile.flood({ count: 20000 })"),
  );
  const ms = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const reached = serve.notifications.slice(before).filter((n) =>
    n.method === "notifications/tools/list_changed"
  );
  report(
    "20,000 tools/list_changed",
    `${reached.length} reached the agent; the call took ${ms.toFixed(0)} ms (${
      value.text.slice(0, 40)
    }), slowest ping ${maxPingMs.toFixed(0)} ms`,
  );
  await serve.close();
  await world.remove();
}

const idleWorld = await makeRawWorld(HOSTILE);
const idle = await session(idleWorld);
Deno.bench("ping round-trip on an idle mcp-serve", async () => {
  await idle.pingMs();
});
globalThis.addEventListener("unload", () => {
  idle.child.kill("SIGKILL");
  Deno.removeSync(idleWorld.root, { recursive: true });
});
