/**
 * The host of the isolation floors (`bench/isolation_floors.ts`): an MCP server on stdio whose tool
 * `execute` does the least a design with cargo-agents' properties must do. Run with the flags of
 * `mcp-serve` (`DENO_RUN_FLAGS`), it reads the agent with the product's own transport
 * (`LineStdioServerTransport`) under the SDK's `McpServer`. Arguments:
 *
 * - none: answers `{ content: [{ type: "text", text: "1" }] }` at once (the MCP hop floor);
 * - `--transport=sdk`: reads and writes through the SDK's `StdioServerTransport` instead (Node's
 *   `process.stdin`/`process.stdout` as Deno provides them), for comparison;
 * - `--child --read=… --quickjs=…`: hands each `execute` to one long-lived child (`bench/_floor_guest.ts`,
 *   started as the product starts its sandbox, `guestLaunch`) as a frame and answers with the child's
 *   result frame (the process-isolation floor);
 * - a second tool, `gc`, collects the heap of the server and of its child (for the memory floors);
 * - `--calls=N` (with `--child`): the child makes N tool calls per run, each answered by a call of
 *   `@modelcontextprotocol/server-everything`'s `echo` through an SDK client held here (the echo floor);
 *   with `--client=product`, through the product's own backend connection instead (`connectStdio`).
 *
 * @module
 */
import { McpServer } from "@modelcontextprotocol/server";
import { LineStdioServerTransport } from "../lib/jsonrpc/mod.ts";
import { NULL_LOGGER } from "../lib/log.ts";
import { type GuestLaunch, guestLaunch } from "../lib/sandbox/host/guest_launch.ts";
import { encodeFrame, FrameDecoder } from "../lib/sandbox/protocol/frames.ts";
import {
  collectGarbage,
  FLOOR_FRAME_MAX_BYTES,
  FLOOR_HEAP_LIMIT_BYTES,
  type FloorMessage,
} from "./_floor_guest.ts";

/** The sandbox's launch, with the product's guest module replaced by the floor's child and its `args`. */
export function floorGuestLaunch(args: readonly string[]): GuestLaunch {
  const launch = guestLaunch({ heapLimitBytes: FLOOR_HEAP_LIMIT_BYTES });
  const guest = new URL("../lib/sandbox/guest/main.ts", import.meta.url).pathname;
  const at = launch.args.indexOf(guest);
  if (at < 0) throw new Error(`guestLaunch no longer runs ${guest}: update bench/_floor_server.ts`);
  launch.args.splice(at, 1, new URL("./_floor_guest.ts", import.meta.url).pathname, ...args);
  return launch;
}

/** One long-lived floor child (`bench/_floor_guest.ts`) and the frames to and from it; one run at a time. */
export class FloorChild {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #waiting: ((message: FloorMessage) => void)[] = [];
  readonly #onCall: (message: string) => Promise<string>;
  readonly #onEnd: () => void;

  /**
   * Spawns the child with `args` (`--read=…`, `--quickjs=…`); `onCall` answers its tool calls; `onEnd` is
   * called if its stdout ends (it died, or {@link close} was called). Default: exit this process with 70.
   */
  constructor(
    args: readonly string[],
    onCall: (message: string) => Promise<string>,
    onEnd: () => void = () => Deno.exit(70),
  ) {
    const launch = floorGuestLaunch(args);
    this.#child = new Deno.Command(launch.command, {
      args: launch.args,
      env: launch.env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#onCall = onCall;
    this.#onEnd = onEnd;
    void this.#read();
  }

  /** Resolves once the child said `ready`. */
  ready(): Promise<FloorMessage> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** One run of `calls` tool calls: the run frame out, calls answered, the result's text back. */
  run(calls: number): Promise<string> {
    const result = new Promise<FloorMessage>((resolve) => this.#waiting.push(resolve));
    void this.#writer.write(encodeFrame({ type: "run", calls } satisfies FloorMessage));
    return result.then((m) => (m as { text: string }).text);
  }

  /** A full collection of the child's heap; resolves once it is done. */
  async collectGarbage(): Promise<void> {
    const done = new Promise<FloorMessage>((resolve) => this.#waiting.push(resolve));
    await this.#writer.write(encodeFrame({ type: "gc" } satisfies FloorMessage));
    await done;
  }

  /** Closes the child's stdin (it exits) and waits for its exit. */
  async close(): Promise<void> {
    await this.#writer.close().catch(() => {}); // Already broken: the child is gone.
    await this.#child.status;
  }

  /** Reads frames as the product's host does (a BYOB reader into one reused buffer). */
  async #read(): Promise<void> {
    const decoder = new FrameDecoder(FLOOR_FRAME_MAX_BYTES);
    const reader = this.#child.stdout.getReader({ mode: "byob" });
    let buffer = new ArrayBuffer(64 * 1024);
    for (;;) {
      const { value, done } = await reader.read(new Uint8Array(buffer));
      if (done || value === undefined) return this.#onEnd();
      buffer = value.buffer as ArrayBuffer;
      for (const message of decoder.push(value) as FloorMessage[]) {
        if (message.type === "call") void this.#answer(message.message);
        else this.#waiting.shift()?.(message);
      }
    }
  }

  async #answer(message: string): Promise<void> {
    const text = await this.#onCall(message);
    await this.#writer.write(encodeFrame({ type: "reply", text } satisfies FloorMessage));
  }
}

/** One `echo` of `server-everything` with `message`; resolves to the answer's text. */
type Echo = (message: string) => Promise<string>;

/** `server-everything` as the product starts a backing server: `node …/dist/index.js stdio`. */
async function everythingCommand(): Promise<{ command: string; args: string[] }> {
  const { npmServer } = await import("./_world.ts");
  return { command: "node", args: [npmServer("server-everything"), "stdio"] };
}

/**
 * Connects to `server-everything` over stdio and returns its `echo`: through the SDK's `Client` and
 * `StdioClientTransport` (`sdk`), or through the product's own backend connection (`product`: `connectStdio`
 * of `lib/backends/stdio.ts`, its lean client and transport). Loaded on demand, so that the hop floor's
 * memory holds no client.
 */
async function connectEverything(client: "sdk" | "product"): Promise<Echo> {
  const server = await everythingCommand();
  if (client === "product") {
    const { connectStdio } = await import("../lib/backends/stdio.ts");
    const connection = await connectStdio({
      transport: "stdio",
      name: "everything",
      plugin: "floor",
      location: { file: import.meta.filename ?? "floor", line: 1, column: 1 },
      startupTimeoutMs: 30_000,
      toolCallTimeoutMs: 60_000,
      ...server,
      env: Deno.env.toObject(),
      cwd: Deno.cwd(),
    }, { shutdownGraceMs: 1_000, logger: NULL_LOGGER, now: Date.now });
    return async (message) => {
      const result = await connection.callTool("echo", { message }, { timeoutMs: 60_000 });
      return (result.content as { type: string; text: string }[])[0]!.text;
    };
  }
  const [{ Client }, { StdioClientTransport }] = await Promise.all([
    import("@modelcontextprotocol/client"),
    import("@modelcontextprotocol/client/stdio"),
  ]);
  const sdk = new Client({ name: "floor-host", version: "1.0.0" });
  await sdk.connect(new StdioClientTransport(server));
  return async (message) => {
    const result = await sdk.callTool({ name: "echo", arguments: { message } });
    return (result.content as { type: string; text: string }[])[0]!.text;
  };
}

/** Starts the floor server as `args` say (see the module's description) and serves until stdin closes. */
async function serveFloorHost(args: readonly string[]): Promise<void> {
  const calls = Number(args.find((a) => a.startsWith("--calls="))?.slice("--calls=".length) ?? 0);
  let child: FloorChild | undefined;
  if (args.includes("--child")) {
    const echo = calls > 0
      ? await connectEverything(args.includes("--client=product") ? "product" : "sdk")
      : undefined;
    child = new FloorChild(
      args.filter((a) => a.startsWith("--read=") || a.startsWith("--quickjs=")),
      (message) => echo!(message),
    );
    await child.ready();
  }
  const server = new McpServer({ name: "floor", version: "1.0.0" });
  server.registerTool(
    "execute",
    { description: "Answers at once (the floor of an execute)." },
    async () => ({ content: [{ type: "text", text: child ? await child.run(calls) : "1" }] }),
  );
  server.registerTool(
    "gc",
    { description: "A full collection of this server's heap and its child's (for the memory floors)." },
    async () => {
      collectGarbage();
      await child?.collectGarbage();
      return { content: [{ type: "text", text: "gc" }] };
    },
  );
  // `--transport=sdk`: the SDK's own stdio transport (`process.stdin` and `process.stdout`), for comparison.
  const transport = args.includes("--transport=sdk")
    ? new (await import("@modelcontextprotocol/server/stdio")).StdioServerTransport()
    : new LineStdioServerTransport();
  // The agent closed stdin: end now (the child's pipes would keep this process alive), and the child with it.
  server.server.onclose = () => Deno.exit(0);
  await server.connect(transport);
}

if (import.meta.main) await serveFloorHost(Deno.args);
