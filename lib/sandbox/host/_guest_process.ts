/**
 * One sandbox process behind `SandboxPool`, seen from the host: the child itself (`guest_launch.ts`), its
 * framed pipes, its start state, the run it is serving, and the kill that always works (SIGKILL; on
 * Windows TerminateProcess).
 *
 * @module
 */
import { FrameDecoder, FrameError } from "../protocol/frames.ts";
import {
  checkFromGuest,
  encodeToGuest,
  type FromGuest,
  type GuestInit,
  MAX_GUEST_FRAME_BYTES,
  type ToGuest,
} from "../protocol/messages.ts";
import type { GuestLaunch } from "./guest_launch.ts";

/** The run a process is serving, as the process sees it (`RunSession` implements it). */
export interface GuestSession {
  /** Handles a message of the run from the guest. */
  receive(message: FromGuest): void;
  /** Fails the run: the guest died or misbehaved (`reason` says how). */
  crash(reason: string): void;
}

/** Bytes read from a guest's stdout at a time (one reused buffer). */
export const STDOUT_READ_BYTES = 64 * 1024;

/** Bytes of a guest's stderr passed to the log, at most (the rest is read and counted, not kept). */
export const MAX_GUEST_STDERR_BYTES = 64 * 1024;

/** What a {@link GuestProcess} needs besides its launch. */
export interface GuestProcessOptions {
  /** Numbers the process in messages. */
  processId: number;
  /** Memory limit the guest loads QuickJS for first, bytes. */
  heapHintBytes: number;
  /** Longest wait for `ready`, milliseconds. */
  spawnTimeoutMs: number;
  /** Called when an idle process dies (one serving a run fails that run instead). */
  onDead(process: GuestProcess): void;
  /** Receives the guest's stderr text (QuickJS's own messages), at most {@link MAX_GUEST_STDERR_BYTES}. */
  onStderr(text: string): void;
}

/**
 * One sandbox process: spawned at construction (a fork and exec, ~1 ms of the host thread; the guest then
 * loads QuickJS on its own, ~100-200 ms of its own CPU), it answers `ready` and then serves one run at a
 * time. Nothing it sends is trusted: a frame past {@link MAX_GUEST_FRAME_BYTES}, or one that is not JSON,
 * kills it.
 */
export class GuestProcess {
  readonly processId: number;
  /** `true` once the guest loaded QuickJS, else why it could not. */
  readonly ready: Promise<true | string>;
  session: GuestSession | undefined;
  isReady = false;
  wasReady = false;
  isDead = false;
  readonly #options: GuestProcessOptions;
  readonly #finishSpawn: (value: true | string) => void;
  #child: Deno.ChildProcess | undefined;
  #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #killed = false;
  #exited = false;
  /** Frames posted and not written yet (see `post`), and their size in bytes. */
  #outbox: Uint8Array[] = [];
  #outboxBytes = 0;

  constructor(launch: GuestLaunch, options: GuestProcessOptions) {
    this.processId = options.processId;
    this.#options = options;
    let settleReady: (value: true | string) => void = () => {};
    this.ready = new Promise((resolve) => settleReady = resolve);
    const spawnTimer = setTimeout(
      () => this.#fail(`no answer within ${options.spawnTimeoutMs} ms`),
      options.spawnTimeoutMs,
    );
    this.#finishSpawn = (value) => {
      clearTimeout(spawnTimer);
      this.isReady = value === true && !this.isDead;
      if (this.isReady) this.wasReady = true;
      settleReady(value);
    };
    try {
      this.#child = new Deno.Command(launch.command, {
        args: launch.args,
        env: launch.env,
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (error) {
      queueMicrotask(() => this.died(`cannot start it: ${messageOf(error)}`));
      return;
    }
    const child = this.#child;
    this.#writer = child.stdin.getWriter();
    child.status.then((status) => {
      this.#exited = true;
      if (!this.#killed) {
        this.died(exitText(status));
      }
    });
    this.#readFrames(child.stdout);
    this.#readStderr(child.stderr);
    const init: GuestInit = { type: "init", heapLimitBytes: options.heapHintBytes };
    this.post(init);
  }

  /** The child's process id, while it runs. */
  get pid(): number | undefined {
    return this.#child && !this.#exited ? this.#child.pid : undefined;
  }

  /**
   * Sends one message (queued in order behind earlier ones; dropped once the process is gone). Messages
   * posted in the same turn of the event loop (the answers to calls made under `Promise.all`) leave in one
   * write, a microtask later.
   */
  post(message: GuestInit | ToGuest): void {
    if (this.#killed || !this.#writer) return;
    this.#outbox.push(encodeToGuest(message));
    this.#outboxBytes += this.#outbox.at(-1)!.length;
    if (this.#outbox.length === 1) queueMicrotask(() => this.#flushOutbox());
  }

  /** Writes the messages posted since the last write, as one write. */
  #flushOutbox(): void {
    const frames = this.#outbox;
    let bytes = frames[0];
    if (frames.length > 1) {
      bytes = new Uint8Array(this.#outboxBytes);
      let at = 0;
      for (const frame of frames) {
        bytes.set(frame, at);
        at += frame.length;
      }
    }
    this.#outbox = [];
    this.#outboxBytes = 0;
    if (this.#killed || !this.#writer || bytes === undefined) return;
    this.#writer.write(bytes).catch(() => {
      // The pipe broke: the process is gone, and its exit is reported by `status`.
    });
  }

  /** The process cannot serve: fail its run (if any) and its start (if pending). */
  died(message: string): void {
    if (this.isDead) return;
    this.isDead = true;
    this.#finishSpawn(message);
    if (this.session) this.session.crash(message);
    else this.#options.onDead(this);
  }

  /**
   * Kills the process now (SIGKILL: a guest inside a native built-in stops all the same). Idempotent. The
   * process's pipes are closed and it is reaped by `status`.
   */
  terminate(): void {
    if (this.#killed) return;
    this.#killed = true;
    this.#finishSpawn("terminated");
    this.isDead = true;
    try {
      this.#child?.kill("SIGKILL");
    } catch {
      // Already exited: nothing to kill.
    }
    this.#writer?.close().catch(() => {
      // The pipe is already broken by the kill.
    });
  }

  /** Kills the process after a protocol fault and reports it. */
  #fail(reason: string): void {
    this.died(reason);
    this.terminate();
  }

  /**
   * Reads the guest's frames to EOF through a BYOB reader into one reused buffer of
   * {@link STDOUT_READ_BYTES} (the default reader allocates a fresh 64 KiB buffer per read, two reads per
   * tool call); the decoder copies what it keeps, so the buffer is free again at the next read.
   */
  async #readFrames(stdout: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new FrameDecoder(MAX_GUEST_FRAME_BYTES);
    const reader = stdout.getReader({ mode: "byob" });
    let buffer = new ArrayBuffer(STDOUT_READ_BYTES);
    try {
      for (;;) {
        const { value, done } = await reader.read(new Uint8Array(buffer));
        if (done || value === undefined) break;
        buffer = value.buffer as ArrayBuffer;
        if (this.#killed) continue; // drain until the pipe closes
        let messages: unknown[];
        try {
          messages = decoder.push(value);
        } catch (error) {
          this.#fail(`it sent ${error instanceof FrameError ? error.message : messageOf(error)}`);
          continue;
        }
        for (const message of messages) this.#receive(message);
      }
    } catch {
      // The pipe broke with the process; its exit is reported by `status`.
    } finally {
      reader.releaseLock();
    }
  }

  #receive(raw: unknown): void {
    if (this.#killed) return;
    const message = checkFromGuest(raw);
    if (typeof message === "string") return this.#fail(`it sent ${message}`);
    if (message.type === "ready") this.#finishSpawn(true);
    else if (message.type === "fatal") this.#fail(message.message);
    else this.session?.receive(message);
  }

  async #readStderr(stderr: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let passed = 0;
    try {
      for await (const chunk of stderr) {
        if (passed >= MAX_GUEST_STDERR_BYTES) continue;
        const part = chunk.subarray(0, MAX_GUEST_STDERR_BYTES - passed);
        passed += part.length;
        this.#options.onStderr(decoder.decode(part, { stream: true }));
      }
    } catch {
      // The pipe broke with the process.
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * How a guest that the host did not kill ended. SIGKILL from outside says so; SIGTRAP, SIGABRT and SIGSEGV
 * are what V8 and the runtime raise when an allocation fails (the OS memory cap) or the process crashes.
 */
function exitText(status: Deno.CommandStatus): string {
  if (!status.signal) return `it exited with code ${status.code}`;
  if (status.signal === "SIGTRAP" || status.signal === "SIGABRT" || status.signal === "SIGSEGV") {
    return `it was killed by ${status.signal}: it most likely ran out of memory (building a large result or ` +
      "string); return less data, or build it in parts";
  }
  return `it was killed by ${status.signal}`;
}
