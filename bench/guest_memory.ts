// The sandbox process's own memory and CPU, measured on one guest behind a `SandboxPool` of size 1 (no
// MCP, no backing server): `return 1` latency, CPU per call over 200 sequential calls in one script, then
// N executes of one echo call each (default 1,000) and the guest's memory by mapping, from
// `/proc/<pid>/smaps` (Linux only): private (Private_Clean + Private_Dirty, what `bench/perf.ts` counts)
// and RSS, split into the runtime's binary, `[heap]` (the main malloc arena), anonymous mappings (V8's heap,
// the WASM memory, thread arenas and stacks) and the rest.
//
//   deno run -P --v8-flags=--stack-size=1800 bench/guest_memory.ts
//
// GUEST_MEMORY_RUNS=1000 sets N; GUEST_MEMORY_V8_FLAGS="--a,--b" replaces the guest's V8 flags (from
// source only); GUEST_MEMORY_MODULE=path runs another guest module (a wrapper that prints its heap to stderr,
// say); GUEST_MEMORY_ARGS="--x --y" adds `deno run` flags before the module; GUEST_MEMORY_JSON=1 prints
// one JSON line instead of the table. Interleave before/after runs: the machine is shared and noisy.
import { type HostCall, SandboxPool } from "../lib/sandbox/mod.ts";
import { GUEST_V8_FLAGS, guestLaunch } from "../lib/sandbox/host/guest_launch.ts";
import { IDLE_COMPACT_MS } from "../lib/sandbox/guest/_heap_trim.ts";
import { BENCH_SANDBOX_LIMITS } from "./_sandbox_limits.ts";

const RUNS = Number(Deno.env.get("GUEST_MEMORY_RUNS") ?? 1000);
const V8_FLAGS = Deno.env.get("GUEST_MEMORY_V8_FLAGS");
const EXTRA_ARGS = (Deno.env.get("GUEST_MEMORY_ARGS") ?? "").split(/\s+/).filter(Boolean);
const MODULE = Deno.env.get("GUEST_MEMORY_MODULE");
const SEQ_CALLS = 200;
const SEQ_RUNS = 10;
const limits = BENCH_SANDBOX_LIMITS;
const ECHO_RESULT = { content: [{ type: "text", text: "Echo: hello" }] };
const echo: HostCall = () => Promise.resolve(ECHO_RESULT);

const pool = new SandboxPool({
  size: 1,
  launch: (heapHintBytes) => {
    const launch = guestLaunch({ heapLimitBytes: heapHintBytes });
    let args = launch.args;
    if (V8_FLAGS !== undefined) {
      args = args.map((arg) => arg === GUEST_V8_FLAGS ? `--v8-flags=${V8_FLAGS}` : arg);
    }
    if (MODULE !== undefined) args = args.map((arg) => /guest[/\\]main\.ts$/.test(arg) ? MODULE : arg);
    const at = args.indexOf("--config");
    if (EXTRA_ARGS.length > 0 && at >= 0) args = [...args.slice(0, at), ...EXTRA_ARGS, ...args.slice(at)];
    return { ...launch, args };
  },
});

async function run(script: string): Promise<void> {
  const result = await pool.run({ script, namespaces: ["srv"], limits, hostCall: echo });
  if (!result.ok) throw new Error(JSON.stringify(result.failure));
}

/** The guest under this process (the one child running the guest module). */
function guestPid(): number {
  const out = new TextDecoder().decode(
    new Deno.Command("ps", { args: ["-eo", "pid=,ppid=,args="] }).outputSync().stdout,
  );
  for (const line of out.split("\n")) {
    const [pid, ppid, ...args] = line.trim().split(/\s+/);
    if (Number(ppid) === Deno.pid && /sandbox[/\\]guest[/\\]main\.ts|__sandbox-guest/.test(args.join(" "))) {
      return Number(pid);
    }
  }
  throw new Error("no sandbox process found");
}

/** A file of `/proc/<pid>/` (through `cat`: Deno asks for all access to read `/proc` itself). */
function procFile(pid: number, name: string): string {
  const out = new Deno.Command("cat", { args: [`/proc/${pid}/${name}`] }).outputSync();
  if (!out.success) throw new Error(`cannot read /proc/${pid}/${name}`);
  return new TextDecoder().decode(out.stdout);
}

/** The guest's CPU time so far (user + system), milliseconds. */
function cpuMs(pid: number): number {
  const stat = procFile(pid, "stat");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in clock ticks (100 Hz)
}

interface Split {
  privateMiB: number;
  rssMiB: number;
}

/**
 * The kind of one mapping (heuristics, Linux x86-64): the runtime's binary; `[heap]` (the main thread's malloc
 * arena); `arena` (another thread's malloc arena: anonymous, 64 MiB-aligned); `wasm code` (V8's one large
 * read-write-execute reservation); `v8 pages` (anonymous, a multiple of 256 KiB, outside the 0x7f… range
 * where mmap puts the rest); `anonymous` (the WASM memory, thread stacks, large mallocs).
 */
function kindOf(start: bigint, end: bigint, perms: string, name: string): string {
  if (name === "[heap]") return "[heap]";
  if (name.startsWith("[stack")) return "[stack]";
  if (/\/deno$|cargo-agents$/.test(name)) return "binary";
  if (name !== "") return name.startsWith("[") ? "other" : "files";
  const size = end - start;
  if (perms.startsWith("rwx") && size >= 64n * 1024n * 1024n) return "wasm code";
  if (start % (64n * 1024n * 1024n) === 0n && start >= 0x7f0000000000n) return "arena";
  if (size % (256n * 1024n) === 0n && start < 0x7f0000000000n) return "v8 pages";
  return "anonymous";
}

/** Private and RSS memory of `pid` by kind of mapping ({@link kindOf}), MiB. */
function smapsBreakdown(pid: number): Record<string, Split> {
  const text = procFile(pid, "smaps");
  const kinds: Record<string, Split> = {};
  let kind = "other";
  for (const line of text.split("\n")) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      kind = kindOf(BigInt(`0x${header[1]}`), BigInt(`0x${header[2]}`), header[3]!, header[4]!);
      kinds[kind] ??= { privateMiB: 0, rssMiB: 0 };
      continue;
    }
    const field = /^(Rss|Private_Clean|Private_Dirty):\s+(\d+) kB/.exec(line);
    if (!field) continue;
    const mib = Number(field[2]) / 1024;
    if (field[1] === "Rss") kinds[kind]!.rssMiB += mib;
    else kinds[kind]!.privateMiB += mib;
  }
  const total = { privateMiB: 0, rssMiB: 0 };
  for (const split of Object.values(kinds)) {
    total.privateMiB += split.privateMiB;
    total.rssMiB += split.rssMiB;
  }
  kinds.total = total;
  return kinds;
}

function threads(pid: number): number {
  return Number(/^Threads:\s+(\d+)/m.exec(procFile(pid, "status"))?.[1]);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

try {
  await run("return 0");
  const pid = guestPid();
  const started = smapsBreakdown(pid);
  // `return 1`: 200 runs, median wall time.
  const returns: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t0 = performance.now();
    await run("return 1");
    returns.push(performance.now() - t0);
  }
  // 200 sequential calls in one script, SEQ_RUNS times: wall (median) and guest CPU (all runs) per call.
  const seq =
    `let s = 0; for (let i = 0; i < ${SEQ_CALLS}; i++) s += (await srv.echo({ message: "hi" })) ? 1 : 0; ` +
    "return s";
  const perCallWall: number[] = [];
  const seqCpu0 = cpuMs(pid);
  for (let i = 0; i < SEQ_RUNS; i++) {
    const t0 = performance.now();
    await run(seq);
    perCallWall.push((performance.now() - t0) / SEQ_CALLS);
  }
  const perCallCpu = (cpuMs(pid) - seqCpu0) / (SEQ_RUNS * SEQ_CALLS);
  const cpu0 = cpuMs(pid);
  for (let i = 0; i < RUNS; i++) await run(`return await srv.echo({ message: "hello ${i % 7}" })`);
  const cpuPerExecute = (cpuMs(pid) - cpu0) / RUNS;
  if (guestPid() !== pid) throw new Error("the sandbox process was replaced during the runs");
  // Let the guest finish its idle work (spare contexts, heap trim) before reading its memory.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const after = smapsBreakdown(pid);
  // Idle past the guest's idle compaction (`IDLE_COMPACT_MS`), as between an agent's scripts.
  await new Promise((resolve) => setTimeout(resolve, IDLE_COMPACT_MS + 1_500));
  const idle = smapsBreakdown(pid);
  // The first runs after that idle time (after a compaction, they compile again what it dropped).
  const afterIdleMs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    await run(`return await srv.echo({ message: "hello" })`);
    afterIdleMs.push(performance.now() - t0);
  }
  const result = {
    v8Flags: V8_FLAGS ?? GUEST_V8_FLAGS,
    extraArgs: EXTRA_ARGS,
    runs: RUNS,
    startedPrivateMiB: started.total!.privateMiB,
    startedRssMiB: started.total!.rssMiB,
    after,
    idle,
    afterIdleMs,
    threads: threads(pid),
    return1Ms: median(returns),
    perCallWallMs: median(perCallWall),
    perCallGuestCpuMs: perCallCpu,
    executeGuestCpuMs: cpuPerExecute,
    load: Deno.loadavg()[0] ?? 0,
  };
  if (Deno.env.get("GUEST_MEMORY_JSON")) console.log(JSON.stringify(result));
  else {
    console.log(
      `guest after 1 run: private ${started.total!.privateMiB.toFixed(1)} MiB, RSS ` +
        `${started.total!.rssMiB.toFixed(1)} MiB`,
    );
    console.log(
      `guest after ${RUNS} echo executes (threads ${result.threads}, load ${result.load.toFixed(2)}):`,
    );
    for (const [kind, split] of Object.entries(after)) {
      console.log(
        `  ${kind.padEnd(10)} private ${split.privateMiB.toFixed(1).padStart(5)} MiB   RSS ` +
          `${split.rssMiB.toFixed(1).padStart(5)} MiB`,
      );
    }
    console.log(
      `idle ${((IDLE_COMPACT_MS + 1_500) / 1000).toFixed(1)} s after: private ${
        idle.total!.privateMiB.toFixed(1)
      } MiB (V8 pages ${(idle["v8 pages"]?.privateMiB ?? 0).toFixed(1)} MiB), RSS ${
        idle.total!.rssMiB.toFixed(1)
      } MiB`,
    );
    console.log(
      `return 1: ${result.return1Ms.toFixed(2)} ms; per call (200 sequential): ${
        result.perCallWallMs.toFixed(3)
      } ms wall, ${result.perCallGuestCpuMs.toFixed(3)} ms guest CPU; guest CPU per echo execute ${
        cpuPerExecute.toFixed(3)
      } ms`,
    );
  }
} finally {
  await pool.close();
}
