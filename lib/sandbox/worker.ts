/**
 * Entry point of the sandbox's Workers (`deno compile --include lib/sandbox/worker.ts`). The first message
 * decides the role: the *spawner* creates and kills sandbox Workers for `SandboxPool` (so the host thread
 * never blocks in `new Worker()`); a *sandbox* owns a QuickJS module and runs one script at a time,
 * forwarding tool calls and console lines to the host over its port. Either may be terminated at any
 * moment; neither keeps state worth saving.
 *
 * @module
 */
import { type EngineIo, type HostReply, QuickJSEngine } from "./engine.ts";
import { createTypeStripper } from "./normalize.ts";
import {
  decodeStopReason,
  type FromSandbox,
  type FromSpawner,
  type SandboxInit,
  STOP_REASON,
  STOP_RUN_ID,
  type ToSandbox,
  type ToSpawner,
} from "./_protocol.ts";
import { loadSandboxModule } from "./wasm_module.ts";

/** The parts of the Worker global scope used here (typed locally so this file checks with the window lib). */
interface WorkerScope {
  onmessage: ((event: MessageEvent<ToSpawner | SandboxInit>) => void) | null;
  postMessage(message: FromSpawner): void;
  close(): void;
}

/** Creates and kills sandbox Workers on the host's request. */
function serveSpawner(scope: WorkerScope): void {
  const sandboxes = new Map<number, Worker>();
  scope.onmessage = (event) => {
    const message = event.data;
    if (message.type === "spawn") {
      const { slotId, init } = message;
      let worker: Worker;
      try {
        worker = new Worker(import.meta.url, { type: "module" });
      } catch (error) {
        scope.postMessage({ type: "died", slotId, message: String(error) });
        return;
      }
      sandboxes.set(slotId, worker);
      worker.onerror = (error: ErrorEvent) => {
        error.preventDefault();
        sandboxes.delete(slotId);
        worker.terminate();
        scope.postMessage({ type: "died", slotId, message: error.message });
      };
      worker.postMessage(init, [init.port]);
    } else if (message.type === "kill") {
      sandboxes.get(message.slotId)?.terminate();
      sandboxes.delete(message.slotId);
    }
  };
}

/** Runs scripts sent over `init.port` until terminated, or until its module is poisoned. */
function serveSandbox(scope: WorkerScope, init: SandboxInit): void {
  const { port } = init;
  const post = (message: FromSandbox) => port.postMessage(message);
  const stopFlags = new Int32Array(init.stopFlags);
  const stripper = createTypeStripper();
  type Loaded = { engine: QuickJSEngine; wasmBytes(): number };
  let loaded: { heapLimitBytes: number; ready: Promise<Loaded> } | undefined;
  let active:
    | { runId: number; replies: Map<number, (reply: HostReply) => void>; stop: AbortController }
    | undefined;
  let nextCallId = 1;

  /** The engine for a memory limit (the limit is the module's heap cap, so another limit needs a module). */
  const engineFor = (heapLimitBytes: number): Promise<Loaded> => {
    if (loaded?.heapLimitBytes !== heapLimitBytes) {
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
    active = { runId, replies, stop };
    const io: EngineIo = {
      hostCall: (namespace, key, argsJson) =>
        new Promise<HostReply>((resolve) => {
          const callId = nextCallId++;
          replies.set(callId, resolve);
          post({ type: "call", runId, callId, namespace, key, argsJson });
        }),
      onConsole: (line) => post({ type: "console", runId, line }),
      onConsoleDropped: () => post({ type: "consoleDropped", runId }),
      signal: stop.signal,
      pollStop: () =>
        Atomics.load(stopFlags, STOP_RUN_ID) === runId
          ? decodeStopReason(Atomics.load(stopFlags, STOP_REASON))
          : undefined,
    };
    const current = await engineFor(message.limits.memoryLimitBytes);
    const outcome = await current.engine.run(message, io);
    active = undefined;
    post({ type: "done", runId, outcome, wasmBytes: current.wasmBytes() });
    // A poisoned module must not run again; the host replaces this Worker.
    if (outcome.poisoned) scope.close();
  };

  port.onmessage = (event: MessageEvent<ToSandbox>) => {
    const message = event.data;
    switch (message.type) {
      case "run":
        run(message).catch((error: unknown) => post({ type: "fatal", message: String(error) }));
        break;
      case "reply":
        if (active?.runId === message.runId) {
          const resolve = active.replies.get(message.callId);
          active.replies.delete(message.callId);
          resolve?.(message.reply);
        }
        break;
      case "stop":
        if (active?.runId === message.runId) active.stop.abort(message.reason);
        break;
    }
  };
  engineFor(init.heapLimitBytes).then(
    () => {
      post({ type: "ready" });
      stripper.preload();
    },
    (error: unknown) => post({ type: "fatal", message: String(error) }),
  );
}

// Anything written to stdout would corrupt the MCP stdio channel of `mcp-serve`; these Workers have nothing
// to say there, so their console goes to stderr.
console.log = console.info = console.debug = console.error;
const scope = globalThis as unknown as WorkerScope;
scope.onmessage = (event) => {
  const message = event.data;
  if (message.type === "spawner") serveSpawner(scope);
  else if (message.type === "init") {
    scope.onmessage = null;
    serveSandbox(scope, message);
  }
};
