/**
 * Backing servers run as child processes speaking MCP over stdio. The child is spawned in its own
 * process group (so `npx` and the node it starts end together) with exactly the environment its
 * spec gives (nothing inherited), its stderr is drained all the time into a bounded tail and the
 * log through a bounded queue (a chatty server never blocks nor grows our memory; the tail shown in
 * messages is masked by the secret registry), non-JSON stdout lines are logged and skipped, a stdout
 * message over `[mcp] max-message-mb` is skipped unread and the request it answers fails as too
 * large (not as "did not answer"), and shutdown escalates: close stdin -> SIGTERM ->
 * SIGKILL to the whole group and to every descendant recorded while it ran (on Linux also those
 * that left the group; see `process_tree.ts`).
 *
 * @module
 */
import { deserializeMessage } from "./_wire_message.ts";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import type { StdioServerSpec } from "../plugins/mod.ts";
import type { Logger } from "../log.ts";
import { NULL_LOGGER } from "../log.ts";
import { maskSecrets, processSecrets } from "../secrets/mod.ts";
import {
  type DescendantScanSchedule,
  DescendantTracker,
  signalGroup,
  SYSTEM_SCAN_SCHEDULE,
} from "./process_tree.ts";
import {
  type BackendConnection,
  BackendError,
  type BackendPeer,
  openConnection,
  type ProtocolEra,
  type Root,
} from "./connection.ts";
import { type ChecksMessages, DEFAULT_MAX_MESSAGE_BYTES } from "../jsonrpc/mod.ts";
import {
  MAX_NOISE_WARNINGS,
  oversizeAnswer,
  pumpStderr,
  pumpStdout,
  sleep,
  StdinQueue,
  TailBuffer,
} from "./_stdio_streams.ts";

export {
  ANSWER_TOO_LARGE_CODE,
  LINE_SLICE_MS,
  MAX_NOISE_WARNINGS,
  MAX_NOTIFICATION_LINE_CHARS,
  STDERR_LINE_BYTES,
  STDERR_QUEUE_CHARS,
} from "./_stdio_streams.ts";

/** Bytes of stderr kept for error messages (the tail). */
export const STDERR_TAIL_BYTES = 64 * 1024;
/** Characters of the stderr tail appended to a start error. */
export const STDERR_TAIL_IN_ERRORS_CHARS = 400;

/** What to run: the subset of {@link StdioServerSpec} the transport needs. */
export interface ProcessSpec {
  command: string;
  args: string[];
  /** The complete environment of the child: nothing of the meta-server's own is inherited. */
  env: Record<string, string>;
  cwd: string;
}

/** Options of {@link StdioProcessTransport}. */
export interface StdioTransportOptions {
  /** Grace for the child to exit after stdin closes, then again after SIGTERM, in ms. @default 5000 */
  shutdownGraceMs?: number | undefined;
  /** @default NULL_LOGGER */
  logger?: Logger | undefined;
  /** Largest stdout message, bytes (`[mcp] max-message-mb`). @default DEFAULT_MAX_MESSAGE_BYTES */
  maxMessageBytes?: number | undefined;
  /** Server name for messages. Default: none. */
  server?: string | undefined;
  /** Told of each notification dropped unread (over {@link MAX_NOTIFICATION_LINE_CHARS}). */
  onDroppedNotification?: (() => void) | undefined;
  /** When the child's descendants are looked up (its process table too). @default SYSTEM_SCAN_SCHEDULE */
  scans?: DescendantScanSchedule | undefined;
}

/**
 * An SDK `Transport` over a child process (newline-delimited JSON-RPC on stdin/stdout).
 * `start()` spawns; `close()` ends the whole process group and resolves when the child is reaped.
 */
export class StdioProcessTransport implements Transport, ChecksMessages {
  readonly checksMessages = true; // every line handed to `onmessage` passed `deserializeMessage`
  readonly #onDroppedNotification: (() => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;

  readonly #spec: ProcessSpec;
  readonly #graceMs: number;
  readonly #logger: Logger;
  readonly #maxMessageBytes: number;
  readonly #server: string | undefined;
  #noiseLines = 0;
  readonly #stderr = new TailBuffer(STDERR_TAIL_BYTES);
  readonly #activity = new Set<() => void>();
  #child: Deno.ChildProcess | undefined;
  #stdin: StdinQueue | undefined;
  #status: Deno.CommandStatus | undefined;
  #closing: Promise<void> | undefined;
  #closed = false;
  #pumps: Promise<void>[] = [];
  readonly #scans: DescendantScanSchedule;
  #tree: DescendantTracker | undefined;
  #leaveScans: (() => Promise<void>) | undefined;
  #scansStopped: Promise<void> | undefined;
  #scanning: Promise<void> | undefined;

  constructor(spec: ProcessSpec, options: StdioTransportOptions = {}) {
    this.#spec = spec;
    this.#graceMs = options.shutdownGraceMs ?? 5_000;
    this.#logger = options.logger ?? NULL_LOGGER;
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#server = options.server;
    this.#onDroppedNotification = options.onDroppedNotification;
    this.#scans = options.scans ?? SYSTEM_SCAN_SCHEDULE;
  }

  /**
   * Always `null` (stderr is drained into {@link stderrTail} and the log). With {@link pid} it marks this
   * transport as a stdio one to the SDK's version negotiation: a `server/discover` probe left unanswered
   * then means a legacy server (fall back to `initialize`), not an outage.
   */
  get stderr(): null {
    return null;
  }

  /** Process id of the child (= its process group id), once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /**
   * The last `chars` characters (at most) the child wrote to stderr, from the start of a line,
   * with registered secrets and credential shapes masked (it goes into messages for the agent). Masked
   * before it is cut: a long secret the cut would split (one long line) is masked whole, not shown in part.
   */
  stderrTail(chars = STDERR_TAIL_IN_ERRORS_CHARS): string {
    const masked = new TailBuffer(chars + processSecrets.longestChars);
    masked.push(maskSecrets(this.#stderr.tail(chars + processSecrets.longestChars)));
    return masked.tail(chars);
  }

  /** The descendants recorded so far (empty where the process table cannot be read), for tests. */
  trackedDescendants(): number[] {
    return this.#tree?.recorded() ?? [];
  }

  /** How the child ended (`exited with code 1`, `killed by SIGKILL`), or `undefined` while it runs. */
  exitDescription(): string | undefined {
    const s = this.#status;
    if (s === undefined) return undefined;
    return s.signal ? `killed by ${s.signal}` : `exited with code ${s.code}`;
  }

  /** Registers a listener called on every stderr chunk; returns the unsubscribe function. */
  onActivity(listener: () => void): () => void {
    this.#activity.add(listener);
    return () => this.#activity.delete(listener);
  }

  // deno-lint-ignore require-await
  async start(): Promise<void> {
    if (this.#child) throw new Error("StdioProcessTransport already started");
    const child = new Deno.Command(this.#spec.command, {
      args: this.#spec.args,
      env: this.#spec.env,
      clearEnv: true, // Only what the spec says: no token meant for another server leaks in.
      cwd: this.#spec.cwd,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true, // own session and process group: the whole tree can be signalled at once
    }).spawn();
    this.#child = child;
    this.#stdin = new StdinQueue(child.stdin.getWriter(), this.#logger);
    this.#logger.debug(`spawned pid ${child.pid}: ${this.#spec.command} ${this.#spec.args.join(" ")}`);
    const tree = new DescendantTracker(child.pid, this.#scans.table);
    if (tree.isSupported) {
      this.#tree = tree;
      this.#leaveScans = this.#scans.join(tree); // the first look within 2 s, shared with every server
    }
    const stdout = pumpStdout(child.stdout, {
      maxMessageBytes: this.#maxMessageBytes,
      onLine: (line) => this.#onStdoutLine(line),
      onDroppedNotification: this.#onDroppedNotification,
      onOversize: (event) => {
        const answer = oversizeAnswer(event, { server: this.#server, maxBytes: this.#maxMessageBytes });
        this.#logger.warn(answer.logLine);
        if (answer.message) this.#deliver(answer.message);
      },
      logger: this.#logger,
    }).then(() => {
      if (this.#noiseLines > MAX_NOISE_WARNINGS) {
        this.#logger.warn(`${this.#noiseLines - MAX_NOISE_WARNINGS} more non-JSON stdout line(s) skipped`);
      }
    });
    const stderr = pumpStderr(child.stderr, {
      onChunk: (text) => {
        this.#stderr.push(text);
        for (const listener of this.#activity) listener();
        // A child announcing itself (npx starting node, a daemon forking) is a good moment to look.
        if (this.#tree) this.#scans.scanSoon();
      },
      logger: this.#logger,
    });
    this.#pumps = [stdout, stderr];
    void this.#watchExit(child);
  }

  /**
   * Records the child's current descendants from a fresh read of the process table, outside the shared
   * schedule (at shutdown; one look at a time). Resolves when the look is done.
   */
  #scanNow(): Promise<void> {
    const tree = this.#tree;
    if (!tree || this.#status !== undefined) return Promise.resolve();
    this.#scanning ??= tree.refresh({ fresh: true }).then(() => {
      this.#scanning = undefined;
    });
    return this.#scanning;
  }

  /** Leaves the shared schedule (once); resolves once the look under way then is done. */
  #stopScans(): Promise<void> {
    this.#scansStopped ??= this.#leaveScans?.() ?? Promise.resolve();
    return this.#scansStopped;
  }

  /**
   * Sends `signal` to the child's process group and to every recorded descendant still alive
   * (those that left the group too). `false` when there was nothing left to signal.
   */
  async #signalTree(pgid: number, signal: Deno.Signal): Promise<boolean> {
    const group = signalGroup(pgid, signal);
    const others = (await this.#tree?.signal(signal)) ?? 0;
    return group || others > 0;
  }

  async #watchExit(child: Deno.ChildProcess): Promise<void> {
    this.#status = await child.status;
    this.#tree?.rootExited(); // reaped: its pid may be another process's from now on
    const scansStopped = this.#stopScans();
    if (this.#closing !== undefined) return; // shutdown() reports the end
    this.#logger.debug(`pid ${child.pid} ${this.exitDescription()}`);
    // The leader is gone; anything it left (in its group, holding our pipes maybe, or in a session
    // of its own) goes too.
    if (await this.#signalTree(child.pid, "SIGTERM")) {
      await sleep(Math.min(this.#graceMs, 500));
      await this.#signalTree(child.pid, "SIGKILL");
    }
    await Promise.all([...this.#pumps, this.#scanning, scansStopped]); // no look at the process table outlives us
    if (this.#closing === undefined) this.#finish();
  }

  #onStdoutLine(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch {
      this.#noiseLines++;
      if (this.#noiseLines <= MAX_NOISE_WARNINGS) {
        const shown = line.length > 200 ? `${line.slice(0, 200)}\u2026` : line;
        this.#logger.warn(`stdout line is not JSON-RPC, skipped: ${shown}`);
      }
      return;
    }
    this.#deliver(message);
  }

  #deliver(message: JSONRPCMessage): void {
    if (this.#tree) this.#scans.noteActivity(); // a server at work may start a helper process
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#stdin || this.#closed || this.#status) throw new Error("the server process is not running");
    if (this.#tree) this.#scans.noteActivity();
    await this.#stdin.send(message);
  }

  /**
   * Ends the process tree: close stdin, wait the grace, SIGTERM the group and the recorded
   * descendants, wait, SIGKILL them; once the child is gone, whatever of its tree is left gets
   * SIGTERM, then SIGKILL.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    const child = this.#child;
    if (!child) return this.#finish();
    await this.#scanNow(); // The latest picture of the tree before it comes apart.
    const half = Math.max(1, Math.floor(this.#graceMs / 2));
    await this.#stdin?.end(half); // unread writes are dropped, not flushed: the grace starts now
    const exited = child.status.then(() => true);
    const waitExit = (ms: number) => Promise.race([exited, sleep(ms).then(() => false)]);
    if (!this.#status && !(await waitExit(half))) {
      this.#logger.debug(`pid ${child.pid} still running after stdin closed; SIGTERM to its tree`);
      await this.#scanNow();
      await this.#signalTree(child.pid, "SIGTERM");
      if (!(await waitExit(half))) {
        this.#logger.warn(`pid ${child.pid} ignored SIGTERM; SIGKILL to its tree`);
        await this.#signalTree(child.pid, "SIGKILL");
      }
    }
    await child.status;
    if (await this.#signalTree(child.pid, "SIGTERM")) {
      await sleep(Math.min(this.#graceMs, 300));
      await this.#signalTree(child.pid, "SIGKILL");
    }
    await Promise.all([...this.#pumps, this.#scanning, this.#stopScans()]); // no look at the process table outlives us
    this.#finish();
  }

  #finish(): void {
    void this.#stopScans(); // Already left, or never joined: nothing under way to wait for.
    this.#tree = undefined;
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}

/**
 * The roots we announce to a stdio server: the workspace root, plus every absolute directory the
 * manifest passes in its arguments. Roots never narrow what the manifest granted (the filesystem
 * server replaces its allowed directories with the client's roots).
 *
 * @param isDirectory Seam for tests. @default a `Deno.statSync` check
 */
export function rootsForStdio(
  spec: ProcessSpec,
  workspaceRoot: string | undefined,
  isDirectory: (path: string) => boolean = (p) => {
    try {
      return Deno.statSync(p).isDirectory;
    } catch {
      return false; // Not there or not readable: not a root.
    }
  },
): Root[] {
  const paths = new Set<string>();
  if (workspaceRoot) paths.add(workspaceRoot);
  for (const arg of spec.args) {
    if (arg.startsWith("/") && isDirectory(arg)) paths.add(arg.replace(/\/+$/, "") || "/");
  }
  return [...paths].map((p) => ({ uri: `file://${encodeURI(p)}`, name: p.split("/").pop() || p }));
}

/** What the pool hands every connector (transport-neutral; `http.ts` takes the same). */
export interface ConnectContext {
  /** Roots to announce; `undefined` = no roots capability. */
  roots?: (() => Root[]) | undefined;
  /** The era the server spoke last time (`openConnection`'s `priorEra`). Default: probe. */
  priorEra?: ProtocolEra | undefined;
  /** Called on `notifications/tools/list_changed`. */
  onToolListChanged?: (() => void) | undefined;
  /** Elicitation, sampling and logging relayed to the agent; `undefined` = none offered. */
  peer?: BackendPeer | undefined;
  /** Grace for shutdown, in ms. */
  shutdownGraceMs: number;
  /** Largest message from the server, bytes (`[mcp] max-message-mb`). @default DEFAULT_MAX_MESSAGE_BYTES */
  maxMessageBytes?: number | undefined;
  /** Aborts the start. */
  signal?: AbortSignal | undefined;
  /** Logger scoped to the server. */
  logger: Logger;
  /** Clock, ms since the epoch. */
  now: () => number;
}

/**
 * Spawns a stdio server and completes the handshake under `spec.startupTimeoutMs` (stderr output
 * during startup pushes the deadline back, up to 4×). Start errors end with the stderr tail.
 *
 * @throws {BackendError} `START_FAILED`, `STARTUP_TIMEOUT`, `CANCELLED`.
 */
export async function connectStdio(spec: StdioServerSpec, ctx: ConnectContext): Promise<BackendConnection> {
  const transport = new StdioProcessTransport(spec, {
    shutdownGraceMs: ctx.shutdownGraceMs,
    logger: ctx.logger,
    maxMessageBytes: ctx.maxMessageBytes,
    server: spec.name,
    onDroppedNotification: () => ctx.peer?.droppedLog?.(),
  });
  const describe = (prefix: string | undefined) => {
    const tail = transport.stderrTail().trim();
    const parts = [prefix, tail ? `stderr: ${tail}` : undefined].filter((p): p is string => !!p);
    return parts.join("; ");
  };
  try {
    return await openStdioConnection(spec, ctx, transport, describe);
  } catch (error) {
    throw explainStartFailure(spec, transport, error);
  }
}

async function openStdioConnection(
  spec: StdioServerSpec,
  ctx: ConnectContext,
  transport: StdioProcessTransport,
  describe: (prefix: string | undefined) => string,
): Promise<BackendConnection> {
  return await openConnection(transport, {
    server: spec.name,
    startupTimeoutMs: spec.startupTimeoutMs,
    onStartupActivity: (listener) => transport.onActivity(listener),
    roots: ctx.roots,
    onToolListChanged: ctx.onToolListChanged,
    peer: ctx.peer,
    priorEra: ctx.priorEra,
    describeFailure: () => describe(transport.exitDescription()),
    describeEnd: () => describe(transport.exitDescription()) || undefined,
    signal: ctx.signal,
    logger: ctx.logger,
    now: ctx.now,
  });
}

/**
 * Rewrites a start failure so it leads with what the user can act on: a command that is not
 * there (install it or give an absolute path, with the manifest location), or a child that exited
 * before answering `initialize` (exit code, then the stderr tail) instead of the broken pipe that
 * followed. Other errors pass through unchanged.
 */
function explainStartFailure(
  spec: StdioServerSpec,
  transport: StdioProcessTransport,
  error: unknown,
): unknown {
  if (!(error instanceof BackendError) || error.code !== "START_FAILED") return error;
  const at = `${spec.location.file}:${spec.location.line}`;
  if (error.cause instanceof Deno.errors.NotFound) {
    const where = spec.command.includes("/") ? "does not exist" : "was not found on PATH";
    return new BackendError(
      "START_FAILED",
      spec.name,
      `${spec.name} failed to start: command \`${spec.command}\` ${where} (${at}): install it, or set ` +
        "`command` to its absolute path",
      { cause: error.cause, hint: `check \`command\` of ${spec.name} in ${at}` },
    );
  }
  const exit = transport.exitDescription();
  if (exit === undefined) return error;
  const tail = transport.stderrTail().trim();
  return new BackendError(
    "START_FAILED",
    spec.name,
    `${spec.name} failed to start: ${exit} before answering initialize${tail ? `; stderr: ${tail}` : ""}`,
    { cause: error.cause ?? error },
  );
}
