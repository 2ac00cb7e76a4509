/**
 * Where `mcp-serve`'s own memory goes in a session like `bench/perf.ts`'s (the bench world, `n` executes
 * of one echo): spawn → first echo result, host RSS after 50 and `n` executes, the smaps breakdown of
 * the host (anonymous memory, the Deno binary, other files) and, with `--inspect`, the V8 heap by space,
 * the modules V8 parsed (count and source bytes by package) and optionally a heap snapshot.
 *
 * `deno run -A --v8-flags=--stack-size=1800 bench/host_memory.ts [options]`, options:
 * - `--checkout=/other/repo/` runs another checkout's `main.ts` (a before); `--n=1000` executes; `--runs=1`;
 * - `--inspect` starts the host with `--inspect=127.0.0.1:<port>` (which itself costs memory: compare RSS
 *   only between runs alike) and prints the V8 heap by space and the scripts parsed by package; with it,
 *   `--gc` prints the live heap after a full collection at 50 and `n` executes, `--urls` every script,
 *   `--source=lib/log.ts` the end of one script as V8 holds it, `--snapshot=/tmp/h.heapsnapshot` writes a
 *   heap snapshot after `n` executes (`--snapshot50`: also one after 50, to `<path>.50`);
 * - `--list-first` times the session's first `list_tools` calls and first run of a saved script;
 * - `--seq=10` runs 10 executes of 200 echo calls each after the `n`, with the host's CPU per call;
 * - `--binmaps` prints the resident part of each mapping of the Deno binary;
 * - `--drop=--flag`, `--add=--flag` (comma-separated) and `--v8=--max-opt=1` change the host's command line.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { makeWorld, REPO } from "./_world.ts";
import { sourceRunArgs } from "../lib/self_command.ts";

const arg = (name: string) => Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const CHECKOUT = arg("checkout") ?? REPO;
const N = Number(arg("n") ?? 1000);
const INSPECT = Deno.args.includes("--inspect") || arg("snapshot") !== undefined;
const SNAPSHOT = arg("snapshot");
const RUNS = Number(arg("runs") ?? 1);
const ECHO = "return await everything.echo({ message: 'x' })";

const kib = (text: string, field: string) =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);

/** RSS of `pid` by mapping kind, MiB. */
function smapsBreakdown(pid: number): Record<string, number> {
  const text = Deno.readTextFileSync(`/proc/${pid}/smaps`);
  const out: Record<string, number> = {};
  let name = "";
  for (const line of text.split("\n")) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const path = head[1] ?? "";
      name = path === ""
        ? "anon"
        : path.endsWith("/deno")
        ? "deno binary"
        : path.startsWith("[")
        ? path
        : path.includes(".so")
        ? "shared libs"
        : "other files";
      continue;
    }
    const m = /^Rss:\s+(\d+) kB/.exec(line);
    if (m) out[name] = (out[name] ?? 0) + Number(m[1]) / 1024;
  }
  const rollup = Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`);
  out["(total Rss)"] = kib(rollup, "Rss") / 1024;
  out["(Private_Dirty)"] = kib(rollup, "Private_Dirty") / 1024;
  out["(Anonymous)"] = kib(rollup, "Anonymous") / 1024;
  return out;
}

/** User + system CPU of `pid` so far, ms (Linux `/proc/<pid>/stat`, clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
/** Resident MiB of each mapping of the Deno binary in `pid` (text, read-only data, data). */
function binaryMaps(pid: number): string[] {
  const rows: string[] = [];
  let current = "";
  for (const line of Deno.readTextFileSync(`/proc/${pid}/smaps`).split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) (\S+) \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const mib = (parseInt(head[2]!, 16) - parseInt(head[1]!, 16)) / 1048576;
      current = head[5]!.endsWith("/deno") ? `${head[3]} offset ${head[4]} size ${mib.toFixed(1)} MiB` : "";
      continue;
    }
    const rssLine = /^Rss:\s+(\d+) kB/.exec(line);
    if (rssLine && current) rows.push(`${current}: resident ${(Number(rssLine[1]) / 1024).toFixed(1)} MiB`);
  }
  return rows;
}

const rss = (pid: number) => kib(Deno.readTextFileSync(`/proc/${pid}/status`), "VmRSS") / 1024;

/** A minimal CDP client over the inspector's WebSocket. */
class Cdp {
  #ws: WebSocket;
  #next = 1;
  #pending = new Map<number, (v: Record<string, unknown>) => void>();
  readonly scripts: { url: string; length: number; scriptId: string }[] = [];
  chunks: string[] = [];
  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.onmessage = (e) => {
      const msg = JSON.parse(e.data as string);
      if (msg.id !== undefined) this.#pending.get(msg.id)?.(msg.result ?? msg.error);
      else if (msg.method === "Debugger.scriptParsed") {
        this.scripts.push({
          url: msg.params.url,
          length: msg.params.length ?? 0,
          scriptId: msg.params.scriptId,
        });
      } else if (msg.method === "HeapProfiler.addHeapSnapshotChunk") this.chunks.push(msg.params.chunk);
    };
  }
  static async open(port: number): Promise<Cdp> {
    for (let i = 0; i < 100; i++) {
      try {
        const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
        const ws = new WebSocket(list[0].webSocketDebuggerUrl);
        await new Promise((r, j) => {
          ws.onopen = r;
          ws.onerror = j;
        });
        return new Cdp(ws);
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    throw new Error("no inspector");
  }
  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.#next++;
    this.#ws.send(JSON.stringify({ id, method, params }));
    return new Promise((r) => this.#pending.set(id, r));
  }
  async eval(expression: string): Promise<unknown> {
    const r = await this.send("Runtime.evaluate", {
      expression,
      awaitPromise: true,
      returnByValue: true,
    }) as { result?: { value?: unknown }; exceptionDetails?: unknown };
    if (r.exceptionDetails) throw new Error(JSON.stringify(r.exceptionDetails));
    if (Deno.args.includes("--debug")) console.log(JSON.stringify(r));
    return r.result?.value;
  }
  close() {
    this.#ws.close();
  }
}

function packageOf(url: string): string {
  const nm = /node_modules\/\.deno\/([^/]+)\//.exec(url) ?? /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return `npm:${nm[1]!.replace(/@\d[^/]*$/, "")}`;
  const lib = /\/(lib\/[^/]+)\//.exec(url);
  if (lib) return lib[1]!;
  if (url.startsWith("ext:") || url.startsWith("node:")) return "deno runtime";
  return url === "" ? "(eval)" : url.replace(/^.*\//, "");
}

async function oneRun(run: number) {
  const world = await makeWorld(200);
  const port = 19_230 + run;
  const args = sourceRunArgs(CHECKOUT);
  if (INSPECT) args.splice(1, 0, `--inspect=127.0.0.1:${port}`);
  for (const flag of (arg("drop") ?? "").split(",").filter(Boolean)) args.splice(args.indexOf(flag), 1);
  for (const flag of (arg("add") ?? "").split(",").filter(Boolean)) args.splice(1, 0, flag);
  const v8 = arg("v8");
  if (v8) {
    const i = args.findIndex((a) => a.startsWith("--v8-flags="));
    args[i] = `${args[i]},${v8}`;
  }
  const t0 = performance.now();
  const stdio = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...args, "mcp-serve"],
    env: { ...Deno.env.toObject(), SYMPOSIUM_HOME: world.home },
    cwd: world.ws,
    stderr: "ignore",
  });
  const client = new Client({ name: "probe", version: "1.0.0" });
  await client.connect(stdio);
  const pid = stdio.pid!;
  const cdp = INSPECT ? await Cdp.open(port) : undefined;
  if (cdp) await cdp.send("Debugger.enable");
  const exec = async () => {
    const r = await client.callTool({ name: "execute", arguments: { script: ECHO } });
    if (r.isError) throw new Error(JSON.stringify(r.content));
  };
  await exec();
  const coldMs = performance.now() - t0;
  const t1 = performance.now();
  await exec();
  const secondMs = performance.now() - t1;
  if (Deno.args.includes("--list-first")) {
    const times: string[] = [];
    for (const args of [{}, {}, { query: "echo a message" }, { query: "add numbers" }]) {
      const t = performance.now();
      await client.callTool({ name: "list_tools", arguments: args });
      times.push((performance.now() - t).toFixed(1));
    }
    const t = performance.now();
    await client.callTool({ name: "execute", arguments: { run: "nope" } });
    console.log(
      `list_tools 1st, 2nd, 1st query, 2nd query: ${times.join(", ")} ms; first run of a saved script: ${
        (performance.now() - t).toFixed(1)
      } ms`,
    );
  }
  for (let i = 2; i < 50; i++) await exec();
  const rss50 = rss(pid);
  const smaps50 = smapsBreakdown(pid);
  const live = async (at: string) => {
    if (!cdp || !Deno.args.includes("--gc")) return;
    const before = await cdp.eval("Deno.memoryUsage().heapUsed / 1048576");
    await cdp.send("HeapProfiler.collectGarbage");
    const after = await cdp.eval("Deno.memoryUsage()");
    console.log(`at ${at}: heapUsed before GC ${Number(before).toFixed(2)} MiB; after`, after);
  };
  await live("50");
  if (cdp && SNAPSHOT && Deno.args.includes("--snapshot50")) {
    await cdp.send("HeapProfiler.collectGarbage");
    await cdp.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    await Deno.writeTextFile(`${SNAPSHOT}.50`, cdp.chunks.join(""));
    cdp.chunks = [];
  }
  const t50 = performance.now();
  const cpu50 = cpuMs(pid);
  for (let i = 50; i < N; i++) await exec();
  console.log(
    `executes 51..${N}: ${((performance.now() - t50) / (N - 50)).toFixed(2)} ms each, host CPU ` +
      `${((cpuMs(pid) - cpu50) / (N - 50)).toFixed(2)} ms each; host CPU to 50 ${cpu50} ms`,
  );
  const rssN = rss(pid);
  await live(String(N));
  console.log(
    `run ${run}: cold ${coldMs.toFixed(0)} ms, 2nd execute ${secondMs.toFixed(1)} ms, ` +
      `host RSS after 50 ${rss50.toFixed(1)} MiB, after ${N} ${rssN.toFixed(1)} MiB`,
  );
  const seq = Number(arg("seq") ?? 0);
  if (seq > 0) {
    const script =
      "let n = 0; for (let i = 0; i < 200; i++) { await everything.echo({ message: 'x' }); n++ } return n";
    const c0 = cpuMs(pid), w0 = performance.now();
    for (let i = 0; i < seq; i++) {
      const r = await client.callTool({ name: "execute", arguments: { script } });
      if (r.isError) throw new Error(JSON.stringify(r.content));
    }
    console.log(
      `${seq} × 200 calls: ${((performance.now() - w0) / seq / 200).toFixed(3)} ms per call wall, host CPU ` +
        `${((cpuMs(pid) - c0) / seq / 200).toFixed(3)} ms per call; RSS after ${rss(pid).toFixed(1)} MiB`,
    );
  }
  const smapsN = smapsBreakdown(pid);
  if (Deno.args.includes("--binmaps")) console.log(binaryMaps(pid).join("\n"));
  console.log(
    "smaps (MiB) at 50 → N:",
    Object.entries(smapsN).filter(([, v]) => v > 0.2).map(([k, v]) =>
      `${k} ${smaps50[k]?.toFixed(1)} → ${v.toFixed(1)}`
    )
      .join(", "),
  );
  if (cdp) {
    const stats = await cdp.eval(`(async () => {
      const v8 = await import("node:v8");
      const mib = (b) => +(b / 1048576).toFixed(2);
      const h = v8.getHeapStatistics();
      return { mem: Object.fromEntries(Object.entries(Deno.memoryUsage()).map(([k, v]) => [k, mib(v)])),
        heap: { total: mib(h.total_heap_size), used: mib(h.used_heap_size), physical: mib(h.total_physical_size),
          malloced: mib(h.malloced_memory), external: mib(h.external_memory), contexts: h.number_of_native_contexts },
        spaces: Object.fromEntries(v8.getHeapSpaceStatistics().filter((s) => s.space_size > 0)
          .map((s) => [s.space_name, [mib(s.space_used_size), mib(s.physical_space_size)]])) };
    })()`);
    console.log("V8 (MiB; spaces [used, physical]):", JSON.stringify(stats, null, 1));
    const byPkg = new Map<string, [number, number]>();
    for (const s of cdp.scripts) {
      const k = packageOf(s.url);
      const [c, b] = byPkg.get(k) ?? [0, 0];
      byPkg.set(k, [c + 1, b + s.length]);
    }
    const rows = [...byPkg].sort((a, b) => b[1][1] - a[1][1]);
    console.log(
      `scripts parsed: ${cdp.scripts.length}, ${
        (rows.reduce((s, r) => s + r[1][1], 0) / 1048576).toFixed(2)
      } MiB source`,
    );
    for (const [k, [c, b]] of rows.slice(0, 40)) {
      console.log(`  ${k.padEnd(50)} ${String(c).padStart(4)} ${(b / 1024).toFixed(0).padStart(6)} KiB`);
    }
    if (Deno.args.includes("--urls")) { for (const s of cdp.scripts) console.log("   ", s.url, s.length); }
    const probe = arg("source");
    const script = probe ? cdp.scripts.find((s) => s.url.endsWith(probe)) : undefined;
    if (script) {
      const src = await cdp.send("Debugger.getScriptSource", { scriptId: script.scriptId });
      console.log(String(src.scriptSource).slice(-3000));
    }
    if (SNAPSHOT) {
      await cdp.send("HeapProfiler.collectGarbage");
      await cdp.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
      await Deno.writeTextFile(SNAPSHOT, cdp.chunks.join(""));
      console.log(`heap snapshot: ${SNAPSHOT}, RSS after GC ${rss(pid).toFixed(1)} MiB`);
    }
    cdp.close();
  }
  await client.close();
  await world.remove();
}

for (let run = 0; run < RUNS; run++) await oneRun(run);
