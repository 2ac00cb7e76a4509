/**
 * The sandbox process (the guest): a child of `mcp-serve` that owns one QuickJS module and runs one script
 * at a time, forwarding tool calls and console lines to the host over its stdout and taking replies, stops
 * and deadline changes from its stdin (one frame per message, `../protocol/frames.ts`). It holds no
 * permission at all (it revokes every one before it reads its first message, and from source it is started
 * with none), so even a script that escaped QuickJS could read, write, connect or run nothing. The host
 * may kill it at any moment (SIGKILL): it keeps no state worth saving.
 *
 * The first tool call a run makes after it woke is sent at once (the host works on it while the script goes
 * on); the calls after it are held back and sent together, in one write, when the run blocks, sends anything
 * else, or QuickJS polls its interrupt handler: 100 calls under `Promise.all` cost the host two wake-ups and
 * reads instead of up to 100.
 *
 * Between runs it reads its stdin asynchronously, so that spare contexts are made between messages; while a
 * run waits only on the host it reads synchronously instead (no event-loop wake per reply: ~90 µs less per
 * round trip, measured), asking the host for a `tick` when one of its timers is due. The two readers never
 * overlap: the asynchronous one is parked while a run is going.
 *
 * Run from source as this module (`deno run ... lib/sandbox/guest/main.ts`) or, in the compiled binary, as
 * the hidden subcommand `cargo-agents __sandbox-guest` (`main.ts`); see `../host/guest_launch.ts`.
 *
 * @module
 */
import { type EngineIo, type EngineOutcome, type HostReply, QuickJSEngine } from "./engine.ts";
import { createTypeStripper } from "./normalize.ts";
import { loadSandboxModule } from "./wasm_module.ts";
import { HeapTrim, IDLE_COMPACT_MS } from "./_heap_trim.ts";
import { FrameDecoder } from "../protocol/frames.ts";
import {
  encodeFromGuest,
  type FromGuest,
  type GuestInit,
  liftToGuest,
  MAX_HOST_FRAME_BYTES,
  type ToGuest,
} from "../protocol/messages.ts";

/** Empty macrotask hops (~0.03-0.1 ms each) between a run's end and the first step making spare contexts. */
const REFILL_YIELDS = 2;

/** Bytes read from stdin at a time. */
const READ_CHUNK_BYTES = 256 * 1024;

/** Bytes of tool-call frames held back at most before they are sent (see `GuestServer.#hold`). */
const MAX_HELD_BYTES = 256 * 1024;

/** Every Deno permission, revoked at the guest's start (`Deno.PermissionName`). */
const PERMISSIONS: readonly string[] = [
  "read",
  "write",
  "net",
  "env",
  "run",
  "ffi",
  "sys",
  "import",
];

/**
 * Revokes every permission this process holds (a compiled binary carries the host's; from source the guest
 * has none to begin with).
 *
 * @throws {Error} When a permission is still granted afterwards: the guest must not run scripts then.
 */
export function revokeAllPermissions(): void {
  for (const name of PERMISSIONS) {
    try {
      Deno.permissions.revokeSync({ name } as Deno.PermissionDescriptor);
    } catch {
      // A name this runtime does not know: there is nothing of it to hold.
      continue;
    }
    if (Deno.permissions.querySync({ name } as Deno.PermissionDescriptor).state === "granted") {
      throw new Error(`Cannot revoke the sandbox's "${name}" permission`);
    }
  }
}

/** The guest's pipes (a seam for tests; `serveGuest()` passes stdin and stdout). */
export interface GuestPipes {
  /** Reads what is there, waiting in the event loop; `null` at end of input. */
  read(buffer: Uint8Array): Promise<number | null>;
  /** Reads what is there, blocking this thread; `null` at end of input. */
  readSync(buffer: Uint8Array): number | null;
  /** Writes some of `bytes`, blocking this thread; returns how many were written. */
  writeSync(bytes: Uint8Array): number;
}

/** A run in progress, as the guest tracks it. */
interface ActiveRun {
  runId: number;
  /** Resolved when the run's result was sent. */
  ended: Promise<void>;
  end(): void;
  /** Set when a message for this run arrived (reply, deadline, stop) or its wake-up came, since last asked. */
  woken: "message" | "tick" | undefined;
  /** Whether a host call holds the deadline clock (the host then wants to hear when the run blocks). */
  held: boolean;
  replies: Map<number, (reply: HostReply) => void>;
  stop: AbortController;
  setDeadline?: ((remainingMs: number | null) => void) | undefined;
}

/**
 * Serves the host: takes `init`, loads QuickJS, says `ready`, then runs each `run` it is sent until stdin
 * closes. Spare contexts are made one step per macrotask while no run is going; once they are ready and no
 * run came for `IDLE_COMPACT_MS`, the V8 heap is compacted (`HeapTrim.compact()`).
 */
export class GuestServer {
  readonly #pipes: GuestPipes;
  readonly #decoder = new FrameDecoder(MAX_HOST_FRAME_BYTES);
  readonly #chunk = new Uint8Array(READ_CHUNK_BYTES);
  readonly #stripper = createTypeStripper();
  readonly #heapTrim: HeapTrim;
  /** Frames of tool calls not sent yet, in order, and their size in bytes. */
  readonly #held: Uint8Array[] = [];
  #heldBytes = 0;
  /** Whether the run sent a tool call since it last woke (the next ones are held back). */
  #calledSinceWake = false;
  #loaded: { heapLimitBytes: number; ready: Promise<LoadedEngine> } | undefined;
  #active: ActiveRun | undefined;
  #nextCallId = 1;
  #closing = false;
  readonly #ticks = new MessageChannel();
  #stepQueued = false;
  #yields = 0;
  /** The idle compaction's timer, armed once spare contexts are ready and cleared by the next run. */
  #compactTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #idleCompactMs: number;

  /**
   * @param pipes The guest's stdin and stdout.
   * @param options.heapTrim Decides when the V8 heap is collected and compacted. @default a new `HeapTrim()`
   * @param options.idleCompactMs Idle time after the spare contexts are ready before the heap is compacted
   *   (`HeapTrim.compact()`), milliseconds. @default IDLE_COMPACT_MS
   */
  constructor(pipes: GuestPipes, options: { heapTrim?: HeapTrim; idleCompactMs?: number } = {}) {
    this.#pipes = pipes;
    this.#heapTrim = options.heapTrim ?? new HeapTrim();
    this.#idleCompactMs = options.idleCompactMs ?? IDLE_COMPACT_MS;
    this.#ticks.port1.onmessage = () => this.#refillStep();
  }

  /**
   * Serves until stdin closes: reads asynchronously while no run is going, and leaves the reading to the
   * run while one is (see `#waitForHost`).
   *
   * @throws {FrameError} When the host's frames are malformed (a bug: the host is trusted).
   */
  async serve(): Promise<void> {
    for (;;) {
      const active = this.#active;
      if (active) {
        await active.ended;
        continue;
      }
      const read = await this.#pipes.read(this.#chunk);
      if (read === null) return this.close();
      this.#dispatch(read);
    }
  }

  /** Sends one message to the host now, after the calls held back (synchronously, in order). */
  #write(message: FromGuest): void {
    this.#hold(message);
    this.#flush();
  }

  /** Holds one message back, to go with the next ones in one write ({@link MAX_HELD_BYTES} at most). */
  #hold(message: FromGuest): void {
    const bytes = encodeFromGuest(message);
    this.#held.push(bytes);
    this.#heldBytes += bytes.length;
    if (this.#heldBytes >= MAX_HELD_BYTES) this.#flush();
  }

  /** Sends every message held back, in one write. */
  #flush(): void {
    const held = this.#held;
    if (held.length === 0) return;
    let bytes = held[0]!;
    if (held.length > 1) {
      bytes = new Uint8Array(this.#heldBytes);
      let at = 0;
      for (const frame of held) {
        bytes.set(frame, at);
        at += frame.length;
      }
    }
    held.length = 0;
    this.#heldBytes = 0;
    let offset = 0;
    while (offset < bytes.length) offset += this.#pipes.writeSync(bytes.subarray(offset));
  }

  /** Decodes `read` bytes of the chunk and handles each message in order. */
  #dispatch(read: number): void {
    for (const message of this.#decoder.push(this.#chunk.subarray(0, read))) {
      this.receive(liftToGuest(message));
    }
  }

  /**
   * `EngineIo.waitForHost`: blocks on stdin until a message for the run arrives, or its wake-up (asked of
   * the host when a timer is due in `timeoutMs`). The host gone (end of input) ends the process.
   */
  #waitForHost(entry: ActiveRun, timeoutMs: number): "woken" | "timeout" {
    // A timer is due (now or later): the host's tick wakes the read, and whatever the host sent before it
    // (replies, a stop) is read on the way, so a loop of `setTimeout(..., 0)` still sees its tool results.
    if (Number.isFinite(timeoutMs)) {
      this.#write({ type: "wake", runId: entry.runId, delayMs: Math.max(0, Math.ceil(timeoutMs)) });
    }
    if (entry.held) this.#write({ type: "waiting", runId: entry.runId });
    this.#flush();
    entry.woken = undefined;
    while (entry.woken === undefined) {
      const read = this.#pipes.readSync(this.#chunk);
      if (read === null) Deno.exit(0);
      this.#dispatch(read);
    }
    this.#calledSinceWake = false;
    return entry.woken === "tick" ? "timeout" : "woken";
  }

  /** Handles one message from the host. */
  receive(message: GuestInit | ToGuest): void {
    const active = this.#active;
    switch (message.type) {
      case "init":
        this.#engineFor(message.heapLimitBytes).then(
          () => {
            this.#write({ type: "ready" });
            this.#scheduleRefill(false);
          },
          (error: unknown) => this.#write({ type: "fatal", message: String(error) }),
        );
        break;
      case "run":
        this.#cancelCompaction();
        this.#run(message).catch((error: unknown) => this.#write({ type: "fatal", message: String(error) }));
        break;
      case "reply": {
        if (active?.runId !== message.runId) break;
        const resolve = active.replies.get(message.callId);
        active.replies.delete(message.callId);
        active.woken = "message";
        resolve?.(message.reply);
        break;
      }
      case "stop":
        if (active?.runId !== message.runId) break;
        active.woken = "message";
        active.stop.abort(message.reason);
        break;
      case "deadline":
        if (active?.runId !== message.runId) break;
        active.woken = "message";
        active.held = message.remainingMs === null;
        active.setDeadline?.(message.remainingMs);
        break;
      case "tick":
        if (active?.runId === message.runId) active.woken ??= "tick";
        break;
    }
  }

  /** Stops making spare contexts (stdin closed; the process exits). */
  close(): void {
    this.#closing = true;
    this.#cancelCompaction();
    this.#ticks.port1.close();
  }

  /** The engine for a memory limit (the limit is the module's heap cap, so another limit needs a module). */
  #engineFor(heapLimitBytes: number): Promise<LoadedEngine> {
    if (this.#loaded?.heapLimitBytes !== heapLimitBytes) {
      // Another module: the old one's spares are freed, never used for it.
      this.#loaded?.ready.then((old) => old.engine.dispose(), () => {});
      const ready = loadSandboxModule(heapLimitBytes).then((module) => ({
        engine: new QuickJSEngine(module, { stripTypes: this.#stripper.strip }),
        wasmBytes: module.wasmBytes,
      }));
      this.#loaded = { heapLimitBytes, ready };
    }
    return this.#loaded.ready;
  }

  async #run(message: Extract<ToGuest, { type: "run" }>): Promise<void> {
    const { runId } = message;
    let end = () => {};
    const ended = new Promise<void>((resolve) => end = resolve);
    const entry: ActiveRun = {
      runId,
      ended,
      end,
      woken: undefined,
      held: false,
      replies: new Map(),
      stop: new AbortController(),
    };
    this.#active = entry;
    this.#calledSinceWake = false;
    const current = await this.#engineFor(message.limits.memoryLimitBytes);
    let posted = false;
    const done = (outcome: EngineOutcome) => {
      this.#active = undefined;
      posted = true;
      this.#write({ type: "done", runId, outcome, wasmBytes: current.wasmBytes() });
      entry.end();
    };
    // The result is sent before the run's runtime is freed (~0.2 ms, kept here: freeing later would let the
    // next run start in a module whose freeing may still fail); spare contexts are made after, one step per
    // macrotask: both off the path of a result.
    const outcome = await current.engine.run(message, this.#io(entry), { onOutcome: done });
    if (!posted) done(outcome);
    else if (outcome.poisoned) {
      this.#write({ type: "fatal", message: "QuickJS failed while freeing a finished run" });
    }
    // A poisoned module must not run again: the host replaces this process.
    if (outcome.poisoned) this.close();
    else this.#scheduleRefill(true);
  }

  #io(entry: ActiveRun): EngineIo {
    const { runId } = entry;
    return {
      waitForHost: (timeoutMs) => this.#waitForHost(entry, timeoutMs),
      onDeadline: (set) => (entry.setDeadline = set),
      hostCall: (namespace, key, argsJson) =>
        new Promise<HostReply>((resolve) => {
          const callId = this.#nextCallId++;
          entry.replies.set(callId, resolve);
          const call: FromGuest = { type: "call", runId, callId, namespace, key, argsJson };
          if (this.#calledSinceWake) this.#hold(call);
          else this.#write(call);
          this.#calledSinceWake = true;
        }),
      onConsole: (line) => this.#write({ type: "console", runId, line }),
      onConsoleDropped: () => this.#write({ type: "consoleDropped", runId }),
      flush: () => this.#flush(),
      signal: entry.stop.signal,
    };
  }

  // Spare contexts of the current engine are made one step per macrotask, so that a `run` message that
  // arrives meanwhile waits at most one step (~1 ms) instead of the whole making. Steps follow one another
  // through a MessageChannel (setTimeout(0) waits 1-2 ms in Deno); after a run, REFILL_YIELDS empty hops
  // come first, so that a `run` already queued behind the last result starts before any step. No step runs
  // while a run is going (its host-call answers would wait); the run's end starts them again.
  #scheduleRefill(afterRun: boolean): void {
    if (afterRun) this.#yields = REFILL_YIELDS;
    if (this.#stepQueued || this.#closing) return;
    this.#stepQueued = true;
    this.#ticks.port2.postMessage(null);
  }

  async #refillStep(): Promise<void> {
    this.#stepQueued = false;
    if (this.#closing || this.#active) return;
    if (this.#yields > 0) {
      this.#yields--;
      return this.#scheduleRefill(false);
    }
    const target = this.#loaded;
    const engine = (await target?.ready.catch(() => undefined))?.engine;
    if (!engine || this.#closing || this.#active || this.#loaded !== target) return;
    // Once the spares are ready, the heap's garbage is collected if it grew enough (`_heap_trim.ts`).
    if (engine.refillStep()) this.#scheduleRefill(false);
    else {
      this.#heapTrim.step();
      this.#armCompaction();
    }
  }

  // Once idle for `#idleCompactMs` (no run arrived since the spares were made), the heap is compacted if it
  // grew (`HeapTrim.compact()`): runs that come back to back never pay for it.
  #armCompaction(): void {
    if (this.#compactTimer !== undefined || this.#closing) return;
    this.#compactTimer = setTimeout(() => {
      this.#compactTimer = undefined;
      if (!this.#active && !this.#closing) this.#heapTrim.compact();
    }, this.#idleCompactMs);
  }

  #cancelCompaction(): void {
    clearTimeout(this.#compactTimer);
    this.#compactTimer = undefined;
  }
}

interface LoadedEngine {
  engine: QuickJSEngine;
  wasmBytes(): number;
}

/**
 * Removes Node's `process` global, which Deno defines and nothing in the guest uses. Emscripten's loader
 * takes its Node.js path when it sees `process.versions.node`: it imports `node:module` and requires
 * `node:fs`, `node:path` and `node:url`, which loads Deno's Node compatibility layer for nothing (the WASM is
 * embedded in the module). Without it the QuickJS module loads in ~45 ms instead of ~75 ms and the process
 * holds ~9 MiB less (measured here). Sucrase, a CommonJS package loaded on the first TypeScript script, gets
 * its `process` from the CommonJS wrapper, not from this global.
 */
export function forgetNodeGlobals(): void {
  Reflect.deleteProperty(globalThis, "process");
}

/**
 * Runs the guest on this process's stdin and stdout until stdin closes, then exits. Revokes every
 * permission first.
 *
 * @returns Never normally: the process exits with 0 when the host closes stdin, 70 when the pipes break.
 */
export async function serveGuest(): Promise<void> {
  // Anything a script or QuickJS prints must not reach the host's frames: it goes to stderr.
  console.log = console.info = console.debug = console.error;
  forgetNodeGlobals();
  revokeAllPermissions();
  const { stdin, stdout } = Deno;
  const server = new GuestServer({
    read: (buffer) => stdin.read(buffer),
    readSync: (buffer) => stdin.readSync(buffer),
    writeSync: (bytes) => stdout.writeSync(bytes),
  });
  try {
    await server.serve();
  } catch (error) {
    console.error(`sandbox guest: ${error instanceof Error ? error.message : String(error)}`);
    Deno.exit(70);
  }
  Deno.exit(0);
}

if (import.meta.main) await serveGuest();
