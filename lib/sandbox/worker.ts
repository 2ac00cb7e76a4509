/**
 * Entry point of the sandbox Workers (`deno compile --include lib/sandbox/worker.ts`): each owns a QuickJS
 * module and runs one script at a time, forwarding tool calls and console lines to the host. It may be
 * terminated at any moment and keeps no state worth saving.
 *
 * When the host gives it a reply channel (`_reply_channel.ts`) and this thread may block in `Atomics.wait`
 * (checked once, at init), a run that waits only on the host blocks on the channel's doorbell instead of
 * returning to the event loop; replies that came by message instead (too large for the ring, or the ring
 * full) are taken in the same order. Without the channel, replies come by message as they always did.
 *
 * @module
 */
import { type EngineIo, type EngineOutcome, type HostReply, QuickJSEngine } from "./engine.ts";
import { createTypeStripper } from "./normalize.ts";
import {
  decodeStopReason,
  type FromSandbox,
  type SandboxInit,
  STOP_REASON,
  STOP_RUN_ID,
  type ToSandbox,
} from "./_protocol.ts";
import { loadSandboxModule } from "./wasm_module.ts";
import { HeapTrim } from "./_heap_trim.ts";
import { type ChannelMessage, ChannelReader } from "./_reply_channel.ts";

/** The parts of the Worker global scope used here (typed locally so this file checks with the window lib). */
interface WorkerScope {
  onmessage: ((event: MessageEvent<SandboxInit | ToSandbox>) => void) | null;
  postMessage(message: FromSandbox): void;
  close(): void;
}

/** Empty macrotask hops (~0.03–0.1 ms each) between a run's end and the first step making spare vessels. */
const REFILL_YIELDS = 2;

/** Runs scripts the host sends until terminated, or until its module is poisoned. */
function serveSandbox(scope: WorkerScope, init: SandboxInit): void {
  const post = (message: FromSandbox) => scope.postMessage(message);
  const stopFlags = new Int32Array(init.stopFlags);
  const reader = channelReader(init.replyChannel);
  const stripper = createTypeStripper();
  type Loaded = { engine: QuickJSEngine; wasmBytes(): number };
  let loaded: { heapLimitBytes: number; ready: Promise<Loaded> } | undefined;
  let active:
    | {
      runId: number;
      /** The reply channel, when this run's messages come through it. */
      channel?: ChannelReader | undefined;
      /** Delivers every message of the channel that is here; `false` when the channel is corrupt. */
      pump(): boolean;
      replies: Map<number, (reply: HostReply) => void>;
      stop: AbortController;
      setDeadline?: ((remainingMs: number | null) => void) | undefined;
    }
    | undefined;
  let nextCallId = 1;
  let closing = false;
  const heapTrim = new HeapTrim();

  // The spare vessels of the current engine are made one step per macrotask, so that a `run` message that
  // arrives meanwhile waits at most one step (~1 ms) instead of the whole making. Steps follow one another
  // through a MessageChannel (setTimeout(0) waits 1–2 ms in Deno); after a run, REFILL_YIELDS empty hops
  // come first, so that a `run` message already queued behind the last result starts before any step. No
  // step runs while a run is going (its host-call answers would wait); the run's end starts them again.
  // They stop when the spares are full, the module is poisoned or the Worker is closing.
  const ticks = new MessageChannel();
  let stepQueued = false;
  let yields = 0;
  const scheduleRefill = (afterRun: boolean) => {
    if (afterRun) yields = REFILL_YIELDS;
    if (stepQueued || closing) return;
    stepQueued = true;
    ticks.port2.postMessage(null);
  };
  ticks.port1.onmessage = async () => {
    stepQueued = false;
    if (closing || active) return;
    if (yields > 0) {
      yields--;
      return scheduleRefill(false);
    }
    const target = loaded;
    const engine = (await target?.ready.catch(() => undefined))?.engine;
    if (!engine || closing || active || loaded !== target) return;
    // Once the spares are ready, the heap's garbage is collected if it grew enough (`_heap_trim.ts`).
    if (engine.refillStep()) scheduleRefill(false);
    else heapTrim.step();
  };

  /** The engine for a memory limit (the limit is the module's heap cap, so another limit needs a module). */
  const engineFor = (heapLimitBytes: number): Promise<Loaded> => {
    if (loaded?.heapLimitBytes !== heapLimitBytes) {
      // Another module: the old one's spares are freed, never used for it.
      loaded?.ready.then((old) => old.engine.dispose(), () => {});
      const ready = loadSandboxModule(heapLimitBytes).then((module) => ({
        engine: new QuickJSEngine(module, { stripTypes: stripper.strip }),
        wasmBytes: module.wasmBytes,
      }));
      loaded = { heapLimitBytes, ready };
    }
    return loaded.ready;
  };

  const run = async (message: Extract<ToSandbox, { type: "run" }>) => {
    const { runId } = message;
    const replies = new Map<number, (reply: HostReply) => void>();
    const stop = new AbortController();
    const channel = reader && message.channel ? reader : undefined;
    channel?.beginRun(runId, message.channel!);
    const deliver = (incoming: ChannelMessage) => {
      if (incoming.type === "deadline") return entry.setDeadline?.(incoming.remainingMs);
      const resolve = replies.get(incoming.callId);
      replies.delete(incoming.callId);
      resolve?.(incoming.reply);
    };
    /** Delivers what is here; says how many, and whether the next one comes by message. */
    const drain = (): { delivered: number; next: "empty" | "mailbox" | "corrupt" } => {
      let delivered = 0;
      for (;;) {
        const taken = channel!.take();
        if (taken.type === "message") {
          deliver(taken.message);
          delivered++;
        } else {
          if (taken.type === "corrupt") {
            // Only the host writes the channel: a bad record means this Worker cannot be trusted to go on.
            post({ type: "fatal", message: taken.why });
            closing = true;
            scope.close();
          }
          return { delivered, next: taken.type };
        }
      }
    };
    const entry: NonNullable<typeof active> = {
      runId,
      channel,
      pump: () => drain().next !== "corrupt",
      replies,
      stop,
    };
    active = entry;
    const pollStop = () =>
      Atomics.load(stopFlags, STOP_RUN_ID) === runId
        ? decodeStopReason(Atomics.load(stopFlags, STOP_REASON))
        : undefined;
    const waitForHost = (timeoutMs: number): "woken" | "timeout" | "event-loop" => {
      const until = performance.now() + timeoutMs;
      for (;;) {
        const seen = channel!.doorbell();
        const { delivered, next } = drain();
        if (delivered > 0 || pollStop()) return "woken";
        if (next !== "empty") return "event-loop";
        const left = until - performance.now();
        if (left <= 0) return "timeout";
        channel!.wait(seen, left);
      }
    };
    const io: EngineIo = {
      ...(channel ? { waitForHost } : {}),
      onDeadline: (set) => (entry.setDeadline = set),
      hostCall: (namespace, key, argsJson) =>
        new Promise<HostReply>((resolve) => {
          const callId = nextCallId++;
          replies.set(callId, resolve);
          post({ type: "call", runId, callId, namespace, key, argsJson, head: channel?.head });
        }),
      onConsole: (line) => post({ type: "console", runId, line }),
      onConsoleDropped: () => post({ type: "consoleDropped", runId }),
      signal: stop.signal,
      pollStop,
    };
    const current = await engineFor(message.limits.memoryLimitBytes);
    let posted = false;
    const done = (outcome: EngineOutcome) => {
      active = undefined;
      posted = true;
      post({ type: "done", runId, outcome, wasmBytes: current.wasmBytes() });
    };
    // The result is posted before the run's runtime is freed (~0.2 ms, kept here: freeing later would let the
    // next run start in a module whose freeing may still fail), and the next runs' vessels are made after,
    // one step per macrotask: both off the path of a result.
    const outcome = await current.engine.run(message, io, { onOutcome: done });
    if (!posted) done(outcome);
    else if (outcome.poisoned) {
      post({ type: "fatal", message: "QuickJS failed while freeing a finished run" });
    }
    // A poisoned module must not run again; the host replaces this Worker.
    if (outcome.poisoned) {
      closing = true;
      ticks.port1.close();
      scope.close();
    } else scheduleRefill(true);
  };

  scope.onmessage = (event) => {
    const message = event.data;
    if (message.type === "init") return;
    switch (message.type) {
      case "run":
        run(message).catch((error: unknown) => post({ type: "fatal", message: String(error) }));
        break;
      case "reply":
        if (active?.runId !== message.runId) break;
        if (active.channel && message.seq !== undefined) {
          const { runId, callId, reply } = message;
          active.channel.posted(message.seq, { type: "reply", runId, callId, reply });
          active.pump();
        } else {
          const resolve = active.replies.get(message.callId);
          active.replies.delete(message.callId);
          resolve?.(message.reply);
        }
        break;
      case "stop":
        if (active?.runId === message.runId) active.stop.abort(message.reason);
        break;
      case "deadline":
        if (active?.runId !== message.runId) break;
        if (active.channel && message.seq !== undefined) {
          const { runId, remainingMs } = message;
          active.channel.posted(message.seq, { type: "deadline", runId, remainingMs });
          active.pump();
        } else active.setDeadline?.(message.remainingMs);
        break;
    }
  };
  engineFor(init.heapLimitBytes).then(
    () => {
      post({ type: "ready", replyChannel: reader !== undefined });
      scheduleRefill(false);
      // The TypeScript stripper (sucrase, ~5 MB of heap) is loaded on the first script that needs it.
    },
    (error: unknown) => post({ type: "fatal", message: String(error) }),
  );
}

/**
 * The reader of the host's reply channel, if there is one and this thread may block in `Atomics.wait` (some
 * hosts forbid it on some threads); `undefined` means replies come by message.
 */
function channelReader(buffer: SharedArrayBuffer | undefined): ChannelReader | undefined {
  if (!buffer) return undefined;
  try {
    if (Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0) !== "not-equal") return undefined;
    return new ChannelReader(buffer);
  } catch {
    return undefined;
  }
}

// Anything written to stdout would corrupt the MCP stdio channel of `mcp-serve`; these Workers have nothing
// to say there, so their console goes to stderr.
console.log = console.info = console.debug = console.error;
const scope = globalThis as unknown as WorkerScope;
scope.onmessage = (event) => {
  const message = event.data;
  if (message.type === "init") serveSandbox(scope, message);
};
