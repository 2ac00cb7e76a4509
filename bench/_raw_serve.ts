/**
 * A raw JSON-RPC client of a real `cargo-agents mcp-serve` process: bytes in on stdin exactly as
 * given (invalid lines, batches, 100 MB lines), replies matched by id, notifications counted, ping
 * latency and the process's memory (`/proc/<pid>/status`) read while it works. For the budgets
 * benchmark and the tests that send hostile input through the real process.
 *
 * @module
 */
import { sourceRunArgs } from "../lib/self_command.ts";

/** Repository root, with a trailing slash. */
export const REPO = new URL("../", import.meta.url).pathname;

/** One JSON-RPC message read from stdout. */
export type RawMessage = Record<string, unknown> & { id?: unknown; method?: string };

/** Options of {@link RawServe.start}. */
export interface RawServeOptions {
  /** `SYMPOSIUM_HOME`. */
  home: string;
  /** Working directory (the workspace). */
  cwd: string;
  /** Extra V8 flags, e.g. `--max-old-space-size=200`. Default: none. */
  v8Flags?: string[];
  /** Environment added to the inherited one. */
  env?: Record<string, string>;
  /** Extra `deno run` flags, e.g. `--cpu-prof`. Default: none. */
  denoFlags?: string[];
}

/** A running `mcp-serve` with a raw stdin/stdout. */
export class RawServe {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #waiting = new Map<string, (message: RawMessage) => void>();
  /** Every message without an id (notifications), in order of arrival. */
  readonly notifications: RawMessage[] = [];
  /** Replies that matched no waiting request. */
  readonly unmatched: RawMessage[] = [];
  /** Bytes mcp-serve wrote to stderr. */
  stderrBytes = 0;
  #stderrTail = "";
  #nextId = 1;
  #exited = false;
  readonly #reading: Promise<void>;

  private constructor(child: Deno.ChildProcess) {
    this.child = child;
    void child.status.then((status) => {
      this.#exited = true;
      // Nothing more will come: every waiter learns it now instead of at its timeout.
      for (const [key, waiter] of this.#waiting) {
        waiter({ id: JSON.parse(key), exited: status.code, signal: status.signal });
      }
      this.#waiting.clear();
    });
    this.#writer = child.stdin.getWriter();
    this.#reading = Promise.all([this.#readStdout(), this.#readStderr()]).then(() => {});
  }

  /** Spawns `deno run … main.ts mcp-serve`. */
  static start(options: RawServeOptions): RawServe {
    const args = sourceRunArgs(REPO);
    if (options.v8Flags?.length) {
      const at = args.findIndex((a) => a.startsWith("--v8-flags="));
      args[at] = `${args[at]},${options.v8Flags.join(",")}`;
    }
    if (options.denoFlags?.length) args.splice(1, 0, ...options.denoFlags);
    const child = new Deno.Command(Deno.execPath(), {
      args: [...args, "mcp-serve"],
      cwd: options.cwd,
      env: { ...options.env, SYMPOSIUM_HOME: options.home },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    return new RawServe(child);
  }

  /** The process id of mcp-serve. */
  get pid(): number {
    return this.child.pid;
  }

  /** The last 4 KB mcp-serve wrote to stderr. */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  async #readStdout(): Promise<void> {
    const decoder = new TextDecoder();
    let pending = "";
    try {
      for await (const chunk of this.child.stdout) {
        pending += decoder.decode(chunk, { stream: true });
        let index: number;
        while ((index = pending.indexOf("\n")) !== -1) {
          const line = pending.slice(0, index);
          pending = pending.slice(index + 1);
          if (line.trim() !== "") this.#dispatch(line);
        }
      }
    } catch {
      // The process died: waiters see it through `exited`.
    }
  }

  async #readStderr(): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of this.child.stderr) {
        this.stderrBytes += chunk.length;
        this.#stderrTail = (this.#stderrTail + decoder.decode(chunk, { stream: true })).slice(-4096);
      }
    } catch {
      // The process died.
    }
  }

  #dispatch(line: string): void {
    let message: RawMessage;
    try {
      message = JSON.parse(line) as RawMessage;
    } catch {
      throw new Error(`mcp-serve wrote a non-JSON line on stdout: ${line.slice(0, 200)}`);
    }
    if (Array.isArray(message)) {
      this.unmatched.push({ batch: message });
      return;
    }
    const isReply = "result" in message || "error" in message;
    if (!isReply) {
      this.notifications.push(message);
      return;
    }
    const key = JSON.stringify(message.id ?? null);
    const waiter = this.#waiting.get(key);
    if (waiter) {
      this.#waiting.delete(key);
      waiter(message);
    } else this.unmatched.push(message);
  }

  /** Writes `text` and a newline to stdin, as is. Resolves once written (false when the pipe broke). */
  async sendLine(text: string | Uint8Array): Promise<boolean> {
    const body = typeof text === "string" ? new TextEncoder().encode(text) : text;
    // One write per line: two concurrent senders must never interleave their bytes.
    const line = new Uint8Array(body.length + 1);
    line.set(body);
    line[body.length] = 10;
    try {
      await this.#writer.write(line);
      return true;
    } catch {
      return false;
    }
  }

  /** Waits for the reply with `id` (JSON-equal), at most `timeoutMs`. */
  waitReply(id: unknown, timeoutMs = 60_000): Promise<RawMessage> {
    const key = JSON.stringify(id);
    if (this.#exited) return Promise.reject(new Error(`mcp-serve has exited; stderr: ${this.#stderrTail}`));
    const early = this.unmatched.findIndex((m) => JSON.stringify(m.id ?? null) === key);
    if (early >= 0) return Promise.resolve(this.unmatched.splice(early, 1)[0]!);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(key);
        reject(new Error(`no reply to id ${key} within ${timeoutMs} ms; stderr: ${this.#stderrTail}`));
      }, timeoutMs);
      this.#waiting.set(key, (m) => {
        clearTimeout(timer);
        if ("exited" in m) {
          reject(new Error(`mcp-serve exited (code ${m.exited}) before answering id ${key}`));
        } else resolve(m);
      });
    });
  }

  /** Sends a request and waits for its reply. */
  async request(method: string, params: unknown = {}, timeoutMs = 60_000): Promise<RawMessage> {
    const id = this.#nextId++;
    const reply = this.waitReply(id, timeoutMs);
    await this.sendLine(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return await reply;
  }

  /** `initialize` + `notifications/initialized`. */
  async initialize(): Promise<RawMessage> {
    const reply = await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw-agent", version: "1.0.0" },
    });
    await this.sendLine(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    return reply;
  }

  /** Runs `execute` and returns its text and whether it is an error. */
  async execute(script: string, timeoutMs = 120_000): Promise<{ text: string; isError: boolean }> {
    const reply = await this.request("tools/call", { name: "execute", arguments: { script } }, timeoutMs);
    return toolText(reply);
  }

  /** Runs `list_tools` with `args`. */
  async listTools(
    args: Record<string, unknown>,
    timeoutMs = 120_000,
  ): Promise<{ text: string; isError: boolean }> {
    const reply = await this.request("tools/call", { name: "list_tools", arguments: args }, timeoutMs);
    return toolText(reply);
  }

  /** Round-trip time of one `ping`, ms. */
  async pingMs(timeoutMs = 60_000): Promise<number> {
    const started = performance.now();
    const reply = await this.request("ping", {}, timeoutMs);
    if (!("result" in reply)) throw new Error(`ping failed: ${JSON.stringify(reply)}`);
    return performance.now() - started;
  }

  /**
   * Pings every `everyMs` until `work` settles; returns the work's outcome and the slowest ping,
   * ms (a ping still unanswered when the work ends counts with its age).
   */
  async whilePinging<T>(
    work: Promise<T>,
    everyMs = 50,
  ): Promise<{ value: T; maxPingMs: number; pings: number }> {
    let done = false;
    let maxPingMs = 0;
    let pings = 0;
    let inFlightSince: number | undefined;
    const loop = (async () => {
      while (!done) {
        inFlightSince = performance.now();
        const ms = await this.pingMs(600_000).catch(() => Infinity);
        inFlightSince = undefined;
        pings++;
        maxPingMs = Math.max(maxPingMs, ms);
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
    })();
    let value: T;
    try {
      value = await work;
    } finally {
      done = true;
    }
    // A ping still unanswered when the work ended waited at least this long.
    if (inFlightSince !== undefined) maxPingMs = Math.max(maxPingMs, performance.now() - inFlightSince);
    await Promise.race([loop, new Promise((resolve) => setTimeout(resolve, 100))]);
    return { value, maxPingMs, pings };
  }

  /** `VmRSS` and `VmHWM` (peak) of mcp-serve, MiB; 0 when the process is gone. */
  memoryMiB(): { rss: number; peak: number } {
    try {
      // Through `cat`: reading another process's /proc entry directly needs --allow-all in Deno.
      const out = new Deno.Command("cat", {
        args: [`/proc/${this.pid}/status`],
        stdout: "piped",
        stderr: "null",
      })
        .outputSync();
      const status = new TextDecoder().decode(out.stdout);
      const read = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
      return { rss: read("VmRSS"), peak: read("VmHWM") };
    } catch {
      return { rss: 0, peak: 0 };
    }
  }

  /** Whether the process is still running. */
  get isRunning(): boolean {
    return !this.#exited;
  }

  /** Closes stdin and waits for the exit (SIGKILL after `graceMs`). */
  async close(graceMs = 10_000): Promise<Deno.CommandStatus> {
    try {
      await this.#writer.close();
    } catch {
      // Already broken: the process is gone.
    }
    const timer = setTimeout(() => {
      try {
        this.child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, graceMs);
    const status = await this.child.status;
    clearTimeout(timer);
    await this.#reading;
    return status;
  }

  /** Ends the process now. */
  async kill(): Promise<void> {
    try {
      this.child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await this.child.status;
    await this.#writer.close().catch(() => {});
    await this.#reading;
  }
}

/** The text of a `tools/call` reply (its first text block, or the JSON-RPC error message). */
export function toolText(reply: RawMessage): { text: string; isError: boolean } {
  if ("error" in reply) return { text: JSON.stringify(reply.error), isError: true };
  const result = reply.result as { content?: { type: string; text?: string }[]; isError?: boolean };
  const text = result.content?.find((c) => c.type === "text")?.text ?? "";
  return { text, isError: result.isError === true };
}

/**
 * Spawns `mcp-serve` from source (the permission set and flags of `sourceRunArgs`) in `world`, stdin and
 * stdout piped, for tests that speak raw JSON-RPC to it.
 *
 * @param options.prefix Arguments of a Deno program to run first, which runs the rest as its command
 *   (e.g. `["run", "-A", wrapper.ts]`): `deno <prefix…> deno run … main.ts mcp-serve`. Default: none.
 * @param options.stderr @default "null"
 */
export function spawnRawServe(
  world: RawWorld,
  options: { prefix?: string[]; stderr?: "piped" | "null" } = {},
): Deno.ChildProcess {
  const serve = [...sourceRunArgs(REPO), "mcp-serve"];
  return new Deno.Command(Deno.execPath(), {
    args: options.prefix ? [...options.prefix, Deno.execPath(), ...serve] : serve,
    cwd: world.ws,
    env: { SYMPOSIUM_HOME: world.home, HOME: world.home },
    stdin: "piped",
    stdout: "piped",
    stderr: options.stderr ?? "null",
  }).spawn();
}

/** The agent's `initialize` request (id `id`, client named `name`), as a raw JSON-RPC message. */
export function rawInitialize(name: string, id: number = 1): RawMessage {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name, version: "1" } },
  };
}

/** A temporary home and workspace; `remove()` deletes them. */
export interface RawWorld {
  root: string;
  home: string;
  ws: string;
  remove(): Promise<void>;
}

/**
 * Creates a home with one plugin holding `serversToml` (`[[mcp_servers]]` entries; a function gets the
 * world's root folder, for servers that keep files there), a `config.toml` with `configToml` (its `[mcp]`
 * table body), and a Cargo workspace.
 */
export async function makeRawWorld(
  serversToml: string | ((root: string) => string),
  configToml = "",
): Promise<RawWorld> {
  const root = await Deno.makeTempDir({ prefix: "symposium-budgets-" });
  const home = `${root}/home`;
  const ws = `${root}/ws`;
  await Deno.mkdir(`${home}/plugins/hostile`, { recursive: true });
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.writeTextFile(
    `${ws}/Cargo.toml`,
    `[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n`,
  );
  await Deno.writeTextFile(
    `${ws}/Cargo.lock`,
    `version = 3\n\n[[package]]\nname = "demo"\nversion = "0.1.0"\n`,
  );
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  await Deno.writeTextFile(
    `${home}/plugins/hostile/SYMPOSIUM.toml`,
    `name = "hostile"\ndepends-on = "*"\n\n${
      typeof serversToml === "string" ? serversToml : serversToml(root)
    }`,
  );
  if (configToml !== "") await Deno.writeTextFile(`${home}/config.toml`, `[mcp]\n${configToml}\n`);
  return { root, home, ws, remove: () => Deno.remove(root, { recursive: true }) };
}

/** `[[mcp_servers]]` TOML for `testdata/servers/<file>` run by Deno as server `name`. */
export function denoServerToml(name: string, file: string, flags: string[] = []): string {
  const args = [
    "run",
    "-A",
    "--quiet",
    "--config",
    `${REPO}deno.json`,
    `${REPO}testdata/servers/${file}`,
    ...flags,
  ];
  return `[[mcp_servers]]\nname = "${name}"\ncommand = ${JSON.stringify(Deno.execPath())}\nargs = ${
    JSON.stringify(args)
  }\n`;
}

/** `[[mcp_servers]]` TOML for a remote server at `url`. */
export function remoteServerToml(name: string, url: string): string {
  return `[[mcp_servers]]\nname = "${name}"\nurl = "${url}"\n`;
}

/** Starts `testdata/servers/hostile_http.ts` in its own process; `stop()` ends it. */
export async function startHostileHttp(
  mode: "json" | "sse",
): Promise<{ url: string; stop(): Promise<void> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--quiet", `${REPO}testdata/servers/hostile_http.ts`, `--mode=${mode}`],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("hostile_http.ts exited before listening");
    text += value;
  }
  const url = /listening (\S+)/.exec(text)![1]!;
  return {
    url,
    async stop() {
      child.kill("SIGKILL");
      await child.status;
      await reader.cancel().catch(() => {});
    },
  };
}
