/**
 * The harness side of `bench/peers/`: a driver process (Node running one peer's driver script) and the
 * memory of a process tree, counted as `bench/perf.ts` counts it.
 *
 * @module
 */
import { GUEST_ARGS, rssMiB, sandboxMemory } from "./_perf_stats.ts";

/** Longest wait for one driver answer (first echo included), ms. */
export const DRIVER_REQUEST_TIMEOUT_MS = 120_000;

/** What the harness asks a driver to time: `return 1`, one echo, 200 sequential echoes in one script. */
export type RunKind = "return1" | "echo" | "seq200";

const PREFIX = "@@peer ";

interface Reply {
  id?: number;
  event?: "first" | "error";
  ms?: number;
  error?: string;
  message?: string;
}

/** A running driver (`bench/peers/_driver.mjs` speaks the other side of its protocol). */
export class DriverProcess {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pending = new Map<number, (reply: Reply) => void>();
  #nextId = 1;
  #onFirst: (reply: Reply) => void = () => {};
  /** Resolves with the first reply (the first echo's or the start error), rejects if the driver ends first. */
  readonly #first: Promise<Reply>;
  readonly #spawnedAt: number;

  /**
   * Spawns `node script` with `env` added to this process's environment; stdout carries the protocol,
   * stderr (the library's own logging) is discarded.
   */
  constructor(node: string, script: string, env: Record<string, string>) {
    this.#spawnedAt = performance.now();
    this.#child = new Deno.Command(node, {
      args: [script],
      env,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#first = new Promise((resolve) => this.#onFirst = resolve);
    void this.#read();
  }

  /** Process id of the driver (the peer's host process). */
  get pid(): number {
    return this.#child.pid;
  }

  async #read(): Promise<void> {
    const lines = this.#child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(lineSplitter());
    for await (const line of lines) {
      if (!line.startsWith(PREFIX)) continue; // A library printed on stdout.
      const reply = JSON.parse(line.slice(PREFIX.length)) as Reply;
      if (reply.event) this.#onFirst(reply);
      else this.#pending.get(reply.id!)?.(reply);
    }
    const ended: Reply = { error: `the driver ended (${(await this.#child.status).code})` };
    this.#onFirst({ event: "error", message: ended.error! });
    for (const resolve of this.#pending.values()) resolve(ended);
  }

  /**
   * Waits for the driver's first echo result.
   *
   * @returns ms from spawn to the moment its answer arrived here.
   * @throws {Error} with the driver's message when it could not start, or after
   *   {@link DRIVER_REQUEST_TIMEOUT_MS}.
   */
  async first(): Promise<number> {
    const reply = await withTimeout(this.#first, "the first echo", this.pid);
    if (reply.event !== "first") throw new Error(`the driver could not start: ${reply.message}`);
    return performance.now() - this.#spawnedAt;
  }

  /**
   * Sends one request (`{ op, … }`) and waits for its answer.
   *
   * @returns the ms the driver measured around the work.
   * @throws {Error} with the driver's message when the work failed or the driver ended.
   */
  async request(request: { op: "run"; kind: RunKind } | { op: "loop"; n: number } | { op: "close" }) {
    const id = this.#nextId++;
    const answer = new Promise<Reply>((resolve) => this.#pending.set(id, resolve));
    await this.#writer.write(new TextEncoder().encode(`${JSON.stringify({ id, ...request })}\n`));
    const reply = await withTimeout(answer, request.op, this.pid).finally(() => this.#pending.delete(id));
    if (reply.error !== undefined) throw new Error(reply.error);
    return reply.ms!;
  }

  /** Asks the driver to close its client and exit; kills it after 5 s. */
  async close(): Promise<void> {
    const timer = setTimeout(() => this.#kill(), 5_000);
    await this.request({ op: "close" }).catch(() => this.#kill());
    await this.#child.status;
    clearTimeout(timer);
    await this.#writer.close().catch(() => {}); // Already gone with the process.
  }

  #kill(): void {
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // Already ended.
    }
  }
}

function lineSplitter(): TransformStream<string, string> {
  let rest = "";
  return new TransformStream({
    transform(chunk, controller) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      for (const part of parts) controller.enqueue(part);
    },
    flush(controller) {
      if (rest) controller.enqueue(rest);
    },
  });
}

/** `ps` state, CPU % and the children of `pid`, for the message of a driver that does not answer. */
function processState(pid: number): string {
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command("ps", { args: ["-eo", "pid=,ppid=,stat=,pcpu=,args="], stdout: "piped" })
      .outputSync();
  } catch {
    return "state unknown: ps did not run"; // Only the message loses detail.
  }
  const rows = new TextDecoder().decode(out.stdout).split("\n").map((l) => l.trim().split(/\s+/));
  const own = rows.find((r) => Number(r[0]) === pid);
  const children = rows.filter((r) => Number(r[1]) === pid).map((r) => `${r[0]} ${r[2]} ${r[3]}% ${r[4]}`);
  return `driver ${own ? `state ${own[2]}, CPU ${own[3]}%` : "gone"}; children: ${
    children.join("; ") || "none"
  }`;
}

function withTimeout<T>(promise: Promise<T>, what: string, pid: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `the driver did not answer ${what} within ${DRIVER_REQUEST_TIMEOUT_MS} ms (${processState(pid)})`,
          ),
        ),
      DRIVER_REQUEST_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Memory of one host process and everything under it, MiB. */
export interface TreeMemory {
  /** The host's RSS. */
  hostMiB: number;
  /** The sandbox processes' private memory (USS), as `bench/perf.ts` counts them (0 when none). */
  sandboxMiB: number;
  /** Their RSS (pages of the runtime they share with the host counted again); not in the total. */
  sandboxRssMiB: number;
  /** RSS of every other process under the host (the backing server). */
  othersMiB: number;
  /** host + sandbox + others. */
  totalMiB: number;
  /** Command lines of the other processes counted, shortened. */
  others: string[];
}

/**
 * The memory of `pid`'s process tree: its RSS, plus its sandbox children's private memory (what they hold
 * beyond what the host maps, {@link sandboxMemory}), plus every other descendant's RSS.
 *
 * @param guest What a sandbox process's command line holds. @default {@link GUEST_ARGS}
 */
export function treeMemory(pid: number, guest: RegExp = GUEST_ARGS): TreeMemory {
  const out = new Deno.Command("ps", { args: ["-eo", "pid=,ppid=,rss=,args="], stdout: "piped" })
    .outputSync();
  const rows = new TextDecoder().decode(out.stdout).trim().split("\n").map((line) => {
    const [child, ppid, rss, ...args] = line.trim().split(/\s+/);
    return { pid: Number(child), ppid: Number(ppid), rssKiB: Number(rss), args: args.join(" ") };
  });
  const under = new Set([pid]);
  let othersKiB = 0;
  const others: string[] = [];
  for (let grew = true; grew;) {
    grew = false;
    for (const row of rows) {
      if (under.has(row.pid) || !under.has(row.ppid)) continue;
      under.add(row.pid);
      grew = true;
      if (guest.test(row.args) || row.rssKiB === 0) continue; // sandboxMemory counts the guests; 0: a zombie.
      othersKiB += row.rssKiB;
      others.push(row.args.slice(0, 120));
    }
  }
  const hostMiB = rssMiB(pid);
  const { ussMiB: sandboxMiB, rssMiB: sandboxRssMiB } = sandboxMemory(pid, guest);
  const othersMiB = othersKiB / 1024;
  return {
    hostMiB,
    sandboxMiB,
    sandboxRssMiB,
    othersMiB,
    totalMiB: hostMiB + sandboxMiB + othersMiB,
    others,
  };
}
