/**
 * The child process of the isolation floors (`bench/isolation_floors.ts`): the least a sandbox process can
 * do per `execute`. Started by `bench/_floor_server.ts` exactly as the product starts its sandbox
 * (`lib/sandbox/host/guest_launch.ts`: no permission, an empty environment, the same V8 flags, behind
 * `prlimit` and `setpriv` where they exist), it speaks the product's framing (`lib/sandbox/protocol/frames.ts`)
 * on stdin/stdout and answers each run at once:
 *
 * - `{ type: "run", calls }` → `{ type: "result", text }`, after `calls` round trips
 *   `{ type: "call", message: "x" }` → `{ type: "reply", text }` through the host (0: none);
 * - with `--quickjs=fresh` the run evaluates a script in a QuickJS runtime and context made ahead (loaded as
 *   the product loads it, `lib/sandbox/guest/wasm_module.ts`), whose calls go through one native function,
 *   and a new runtime and context are made right after the answer (a fresh context per script, as the
 *   isolation rules ask); `--quickjs=reused` keeps the first one (a property given up, for comparison);
 * - `{ type: "gc" }` → `{ type: "result", text: "gc" }` after a full collection of the child's heap (what the
 *   product's sandbox does when idle), for its memory floor;
 * - `--read=async` waits for frames in the event loop (`Deno.stdin.read`), `--read=sync` blocks on
 *   `Deno.stdin.readSync` (the product reads synchronously while a run waits on the host).
 *
 * Says `{ type: "ready" }` once loaded. Exits when stdin closes.
 *
 * @module
 */
import type { QuickJSContext, QuickJSRuntime } from "quickjs-emscripten-core";
import { encodeFrame, FrameDecoder } from "../lib/sandbox/protocol/frames.ts";
import type { SandboxModule } from "../lib/sandbox/guest/wasm_module.ts";

/** A message of the floor protocol (see the module's description). */
export type FloorMessage =
  | { type: "ready" }
  | { type: "run"; calls: number }
  | { type: "gc" }
  | { type: "call"; message: string }
  | { type: "reply"; text: string }
  | { type: "result"; text: string };

/** Largest frame either side accepts, bytes. */
export const FLOOR_FRAME_MAX_BYTES = 1024 * 1024;

/** QuickJS heap limit of the floor's runtime, bytes (the product's default `script-memory-limit-mb`). */
export const FLOOR_HEAP_LIMIT_BYTES = 64 * 1024 * 1024;

/** The script a run of `calls` tool calls evaluates in QuickJS; its value is the run's result. */
export function floorScript(calls: number): string {
  return calls === 0
    ? "1"
    : `let n = 0; for (let i = 0; i < ${calls}; i++) { if (call("x") === "Echo: x") n++ } n`;
}

/** Frames in and out on stdin/stdout, read either way. */
class FramedStdio {
  readonly #decoder = new FrameDecoder(FLOOR_FRAME_MAX_BYTES);
  readonly #chunk = new Uint8Array(64 * 1024);
  readonly #queue: FloorMessage[] = [];

  /** The next message, blocking this thread; exits the process at end of input. */
  nextSync(): FloorMessage {
    while (this.#queue.length === 0) this.#take(Deno.stdin.readSync(this.#chunk));
    return this.#queue.shift()!;
  }

  /** The next message, waiting in the event loop; exits the process at end of input. */
  async next(): Promise<FloorMessage> {
    while (this.#queue.length === 0) this.#take(await Deno.stdin.read(this.#chunk));
    return this.#queue.shift()!;
  }

  /** Writes one message as one frame. */
  send(message: FloorMessage): void {
    const frame = encodeFrame(message);
    for (let at = 0; at < frame.length;) at += Deno.stdout.writeSync(frame.subarray(at));
  }

  #take(read: number | null): void {
    if (read === null) Deno.exit(0);
    this.#queue.push(...this.#decoder.push(this.#chunk.subarray(0, read)) as FloorMessage[]);
  }
}

/** One tool call through the host: the call frame out, then (blocking) its reply. */
function hostCall(io: FramedStdio): string {
  io.send({ type: "call", message: "x" });
  const reply = io.nextSync();
  if (reply.type !== "reply") throw new Error(`expected a reply, got ${reply.type}`);
  return reply.text;
}

/** A QuickJS runtime and context with one native function, `call()`, defined (a tool call through the host). */
export class FloorContext {
  readonly rt: QuickJSRuntime;
  readonly ctx: QuickJSContext;

  /** Makes the runtime and context; `call` answers the script's `call()` with a string. */
  constructor(sandbox: SandboxModule, call: () => string) {
    this.rt = sandbox.module.newRuntime();
    this.rt.setMemoryLimit(FLOOR_HEAP_LIMIT_BYTES);
    this.ctx = this.rt.newContext();
    const native = this.ctx.newFunction("call", () => this.ctx.newString(call()));
    this.ctx.setProp(this.ctx.global, "call", native);
    native.dispose();
  }

  /** Evaluates `source` and returns its value as JSON text. */
  evaluate(source: string): string {
    const value = this.ctx.unwrapResult(this.ctx.evalCode(source));
    const text = JSON.stringify(this.ctx.dump(value));
    value.dispose();
    return text;
  }

  /** Frees the context, then the runtime. */
  dispose(): void {
    this.ctx.dispose();
    this.rt.dispose();
  }
}

/** The run of `calls` tool calls without QuickJS: the calls in a plain loop, the result `1` or the count. */
function bareRun(io: FramedStdio, calls: number): string {
  let n = 0;
  for (let i = 0; i < calls; i++) if (hostCall(io) === "Echo: x") n++;
  return calls === 0 ? "1" : String(n);
}

/**
 * A full collection of this isolate's heap (`gc()`, defined by `--expose-gc`, which the sandbox's V8 flags
 * and `mcp-serve`'s pass); nothing where it is not defined.
 */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Serves runs until stdin closes, as `args` say (`--read=async|sync`, `--quickjs=none|fresh|reused`). */
async function serveFloor(args: readonly string[]): Promise<void> {
  const option = (name: string, fallback: string) =>
    args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
  const readSync = option("read", "sync") === "sync";
  const quickjs = option("quickjs", "none");
  // As the product's guest does (`forgetNodeGlobals`, lib/sandbox/guest/main.ts): without Node's `process`
  // global, Emscripten's loader does not load Deno's Node layer.
  Reflect.deleteProperty(globalThis, "process");
  const io = new FramedStdio();
  // Loaded only when asked for: the bare child holds no QuickJS.
  const sandbox = quickjs === "none"
    ? undefined
    : await (await import("../lib/sandbox/guest/wasm_module.ts")).loadSandboxModule(FLOOR_HEAP_LIMIT_BYTES);
  const call = () => hostCall(io);
  let context = sandbox ? new FloorContext(sandbox, call) : undefined;
  io.send({ type: "ready" });
  for (;;) {
    const message = readSync ? io.nextSync() : await io.next();
    if (message.type === "gc") {
      collectGarbage();
      io.send({ type: "result", text: "gc" });
      continue;
    }
    if (message.type !== "run") throw new Error(`expected a run, got ${message.type}`);
    const text = context ? context.evaluate(floorScript(message.calls)) : bareRun(io, message.calls);
    io.send({ type: "result", text });
    if (sandbox && quickjs === "fresh") {
      context!.dispose();
      context = new FloorContext(sandbox, call);
    }
  }
}

if (import.meta.main) await serveFloor(Deno.args);
