/**
 * Shared helpers of the sandbox tests: limits, an in-process engine (one QuickJS module per test file),
 * and host-call fakes.
 *
 * @module
 */
import { type EngineOutcome, type HostReply, QuickJSEngine } from "../lib/sandbox/guest/engine.ts";
import { createTypeStripper } from "../lib/sandbox/guest/normalize.ts";
import type { HostCallRequest, SandboxLimits, SandboxResult } from "../lib/sandbox/protocol/types.ts";
import { SandboxPool } from "../lib/sandbox/host/pool.ts";
import { type GuestLaunch, guestLaunch } from "../lib/sandbox/host/guest_launch.ts";
import { loadSandboxModule, type SandboxModule } from "../lib/sandbox/guest/wasm_module.ts";

/** Heap cap of the in-process test engine, bytes. */
export const TEST_HEAP_BYTES = 64 * 1024 * 1024;

/** Limits for tests: 2 s, 64 MiB (the pool's default heap hint, so sandbox processes need no second module) unless overridden. */
export function testLimits(overrides: Partial<SandboxLimits> = {}): SandboxLimits {
  return {
    timeoutMs: 2000,
    memoryLimitBytes: TEST_HEAP_BYTES,
    stackLimitBytes: 256 * 1024,
    maxConsoleBytes: 8192,
    maxResultBytes: 32768,
    maxToolCalls: 100,
    ...overrides,
  };
}

let shared: Promise<{ module: SandboxModule; engine: QuickJSEngine }> | undefined;

/** The test file's engine (loaded on first use, with TypeScript stripping). */
export function testEngine(): Promise<{ module: SandboxModule; engine: QuickJSEngine }> {
  shared ??= loadSandboxModule(TEST_HEAP_BYTES).then((module) => ({
    module,
    engine: new QuickJSEngine(module, { stripTypes: createTypeStripper().strip }),
  }));
  return shared;
}

/** A host call as the engine sees it. */
export type EngineHostCall = (req: HostCallRequest) => Promise<unknown>;

/** What {@link runInEngine} returns: the outcome plus what the run logged and sent. */
export interface EngineRun {
  outcome: EngineOutcome;
  console: string[];
  consoleDropped: boolean;
  calls: HostCallRequest[];
  elapsedMs: number;
}

/**
 * Runs `script` in the in-process engine. Host calls go to `hostCall` (default: echo `{ns, key, args}`);
 * a rejection becomes the script-side error with its message.
 */
export async function runInEngine(
  script: string,
  options: {
    limits?: Partial<SandboxLimits>;
    namespaces?: string[];
    hostCall?: EngineHostCall;
    signal?: AbortSignal;
    pollStop?: () => "timeout" | "cancelled" | undefined;
  } = {},
): Promise<EngineRun> {
  const { engine } = await testEngine();
  const lines: string[] = [];
  const calls: HostCallRequest[] = [];
  let consoleDropped = false;
  const hostCall = options.hostCall ??
    ((req) => Promise.resolve({ ns: req.namespace, key: req.key, args: req.args }));
  const started = performance.now();
  const outcome = await engine.run(
    { script, namespaces: options.namespaces ?? ["srv"], limits: testLimits(options.limits) },
    {
      hostCall: async (namespace, key, argsJson): Promise<HostReply> => {
        const req = { namespace, key, args: argsJson === undefined ? undefined : JSON.parse(argsJson) };
        calls.push(req);
        try {
          const value = await hostCall(req);
          return { ok: true, json: value === undefined ? undefined : JSON.stringify(value) };
        } catch (error) {
          return { ok: false, message: error instanceof Error ? error.message : String(error) };
        }
      },
      onConsole: (line) => lines.push(line),
      onConsoleDropped: () => consoleDropped = true,
      signal: options.signal,
      pollStop: options.pollStop,
    },
  );
  // A poisoned module must not run again (the pool replaces its sandbox process); here, load a fresh one.
  if (outcome.poisoned) shared = undefined;
  return { outcome, console: lines, consoleDropped, calls, elapsedMs: performance.now() - started };
}

/** The JSON value of a successful outcome; throws (failing the test) otherwise. */
export function valueOf(run: EngineRun | { outcome: EngineOutcome }): unknown {
  const { outcome } = run;
  if (!outcome.ok) throw new Error(`expected success, got ${JSON.stringify(outcome.failure)}`);
  // A top-level `undefined` reads as the word itself (it has no JSON form).
  return outcome.valueJson === "undefined" ? undefined : JSON.parse(outcome.valueJson);
}

/** The failure of an outcome; throws (failing the test) on success. */
export function failureOf(run: EngineRun | { outcome: EngineOutcome }) {
  const { outcome } = run;
  if (outcome.ok) throw new Error(`expected failure, got ${outcome.valueJson}`);
  return outcome.failure;
}

/**
 * A host call that holds every call until `count` calls are pending, then answers them all, so a test
 * can prove the calls were dispatched concurrently (serialized calls would never reach the barrier).
 */
export function barrierHost(count: number): { hostCall: EngineHostCall; maxPending: () => number } {
  const waiting: Array<() => void> = [];
  let maxPending = 0;
  return {
    hostCall: (req) =>
      new Promise((resolve) => {
        waiting.push(() => resolve(req.args));
        maxPending = Math.max(maxPending, waiting.length);
        if (waiting.length === count) { for (const release of waiting.splice(0)) release(); }
      }),
    maxPending: () => maxPending,
  };
}

/** The value of a successful pool run (its JSON parsed). @throws Error naming the failure otherwise. */
export function resultValue(result: SandboxResult): unknown {
  if (!result.ok) throw new Error(`expected success, got ${JSON.stringify(result.failure)}`);
  return JSON.parse(result.valueJson);
}

/** Runs `fn` with a new {@link SandboxPool} made with `options`, closing the pool after, whatever happens. */
export async function withPool<T>(
  options: ConstructorParameters<typeof SandboxPool>[0],
  fn: (pool: SandboxPool) => Promise<T>,
): Promise<T> {
  const pool = new SandboxPool(options);
  try {
    return await fn(pool);
  } finally {
    await pool.close();
  }
}

/**
 * A `SandboxPoolOptions.launch` that starts `testdata/sandbox/<name>` exactly as the real guest is started
 * (same runtime, flags, empty environment and OS cap), in place of `lib/sandbox/guest/main.ts`.
 */
export function standInGuest(name: string): (heapHintBytes: number) => GuestLaunch {
  const module = new URL(`../testdata/sandbox/${name}`, import.meta.url).pathname;
  return (heapLimitBytes) => {
    const launch = guestLaunch({ heapLimitBytes });
    return { ...launch, args: [...launch.args.slice(0, -1), module] };
  };
}

/**
 * `{ pid: [ppid, cpu ms] }` of every process now, from `/proc` (Linux), read by `cat` because Deno grants
 * `/proc` only to `--allow-all`.
 */
async function processTable(): Promise<Map<number, { ppid: number; cpuMs: number }>> {
  const { stdout } = await new Deno.Command("sh", {
    args: ["-c", "cat /proc/[0-9]*/stat 2>/dev/null"],
    stdout: "piped",
    stderr: "null",
  }).output();
  const table = new Map<number, { ppid: number; cpuMs: number }>();
  for (const stat of new TextDecoder().decode(stdout).split("\n")) {
    const close = stat.lastIndexOf(")");
    if (close < 0) continue;
    const fields = stat.slice(close + 2).split(" ");
    table.set(Number(stat.slice(0, stat.indexOf(" "))), {
      ppid: Number(fields[1]),
      cpuMs: (Number(fields[11]) + Number(fields[12])) * 10,
    });
  }
  return table;
}

/** The pids of `rootPid` and all its descendants in `table`. */
function treeOf(table: Map<number, { ppid: number }>, rootPid: number): Set<number> {
  const tree = new Set([rootPid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, { ppid }] of table) {
      if (!tree.has(pid) && tree.has(ppid)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  return tree;
}

/** The pids of the process tree under `rootPid` now (Linux `/proc`). */
export async function treePids(rootPid: number): Promise<Set<number>> {
  return treeOf(await processTable(), rootPid);
}

/**
 * CPU time the process tree under `rootPid` uses over the next `windowMs`, sampled every 100 ms (Linux
 * `/proc`, 10 ms steps): `existingMs` counts the processes in `existing` (taken before a run started: a
 * finished run's work, had it survived, is there, in a thread or a process), `startedMs` the others (e.g. a
 * fresh sandbox process loading QuickJS, which is not a finished run's work). Milliseconds.
 */
export async function treeCpuOver(
  rootPid: number,
  windowMs: number,
  existing: Set<number>,
): Promise<{ existingMs: number; startedMs: number }> {
  let table = await processTable();
  let last = new Map([...treeOf(table, rootPid)].map((pid) => [pid, table.get(pid)!.cpuMs]));
  let existingMs = 0;
  let startedMs = 0;
  const until = performance.now() + windowMs;
  while (performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    table = await processTable();
    const next = new Map<number, number>();
    for (const pid of treeOf(table, rootPid)) {
      const cpuMs = table.get(pid)!.cpuMs;
      const delta = cpuMs - (last.get(pid) ?? 0);
      if (existing.has(pid)) existingMs += delta;
      else startedMs += delta;
      next.set(pid, cpuMs);
    }
    last = next;
  }
  return { existingMs, startedMs };
}
