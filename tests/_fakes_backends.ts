/**
 * Test helpers for the backends, catalog and meta-server tests: specs that run the fixture
 * server (`testdata/servers/fixture.ts`), in-memory SDK servers, a manual clock and a process
 * table probe.
 *
 * @module
 */
import { Server } from "@modelcontextprotocol/server";
import type { CallToolResult, Tool } from "@modelcontextprotocol/server";
import { InMemoryTransport } from "@modelcontextprotocol/client";
import type { StdioServerSpec } from "../lib/plugins/server_spec.ts";
import type { Clock } from "../lib/backends/pool.ts";
import type { BackendConnection, ConnectionEnd, ToolListing } from "../lib/backends/connection.ts";
import type { ScanTimers } from "../lib/backends/process_tree.ts";
import { childEnvironment } from "../lib/backends/child_env.ts";
import { requireProgram } from "./_prerequisites.ts";

/** Absolute path of the repository root (with a trailing slash). */
export const REPO = new URL("../", import.meta.url).pathname;
/** Absolute path of the fixture server. */
export const FIXTURE = `${REPO}testdata/servers/fixture.ts`;

/**
 * A stdio spec that runs the fixture server with `flags` (see the fixture's header), with the
 * environment a server gets by default: the base variables of this process's environment.
 */
export function fixtureSpec(
  name: string,
  flags: string[] = [],
  overrides: Partial<StdioServerSpec> = {},
): StdioServerSpec {
  return {
    transport: "stdio",
    name,
    plugin: "fixtures",
    location: { file: "plugins/fixtures/SYMPOSIUM.toml", line: 1, column: 1 },
    startupTimeoutMs: 15_000,
    toolCallTimeoutMs: 10_000,
    command: Deno.execPath(),
    args: ["run", "-A", "--quiet", "--config", `${REPO}deno.json`, FIXTURE, `--name=${name}`, ...flags],
    env: childEnvironment(Deno.env.toObject()).env,
    cwd: REPO,
    ...overrides,
  };
}

/** A clock whose `sleep` returns at once and moves time forward; `sleeps` records each wait. */
export class ManualClock implements Clock {
  nowMs = 1_000_000;
  sleeps: number[] = [];
  now(): number {
    return this.nowMs;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sleeps.push(ms);
    this.nowMs += ms;
    return Promise.resolve();
  }
}

/** Behaviour of an in-memory tool: return a `CallToolResult`-shaped value. */
export type FakeToolHandler = (
  args: Record<string, unknown>,
  extra: {
    progressToken?: string | number | undefined;
    notify: (n: { method: string; params: Record<string, unknown> }) => Promise<void>;
    listRoots: () => Promise<unknown>;
  },
) => unknown;

/** Options of {@link linkedServer}. */
export interface LinkedServerOptions {
  tools: Tool[];
  handlers?: Record<string, FakeToolHandler>;
  /** Answer every tools/list page with the same tools and this cursor. */
  endlessCursor?: string;
  /** Honest pagination, this many per page. */
  pageSize?: number;
}

/**
 * An SDK `Server` connected to one end of an in-memory pair; returns the client end and the server.
 */
export async function linkedServer(
  options: LinkedServerOptions,
): Promise<{ transport: InMemoryTransport; server: Server }> {
  const server = new Server({ name: "memory-fake", version: "0.0.1" }, {
    capabilities: { tools: { listChanged: true } },
  });
  server.setRequestHandler("tools/list", (request) => {
    if (options.endlessCursor) return { tools: options.tools, nextCursor: options.endlessCursor };
    if (options.pageSize) {
      const start = Number(request.params?.cursor ?? 0);
      const page = options.tools.slice(start, start + options.pageSize);
      const more = start + options.pageSize < options.tools.length;
      return more ? { tools: page, nextCursor: String(start + options.pageSize) } : { tools: page };
    }
    return { tools: options.tools };
  });
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const handler = options.handlers?.[request.params.name];
    if (!handler) {
      return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true };
    }
    const result = await handler((request.params.arguments ?? {}) as Record<string, unknown>, {
      progressToken: ctx.mcpReq._meta?.progressToken,
      notify: (n) => ctx.mcpReq.notify(n as never),
      listRoots: () => server.listRoots(),
    });
    return result as CallToolResult;
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  return { transport: clientSide, server };
}

/** A tool definition with an object input schema. */
export function tool(name: string, extra: Partial<Tool> = {}): Tool {
  return { name, description: `${name} tool`, inputSchema: { type: "object", properties: {} }, ...extra };
}

/** A fake connection whose end the test controls. */
export class FakeConnection implements BackendConnection {
  readonly server: string;
  readonly connectedAtMs: number;
  readonly era = "legacy" as const;
  readonly protocolVersion = "2025-11-25";
  readonly serverInfo = { name: "fake", version: "1" };
  readonly serverCapabilities = { tools: {} };
  readonly ended: Promise<ConnectionEnd>;
  isClosed = false;
  closeCalls = 0;
  #resolve!: (end: ConnectionEnd) => void;
  constructor(
    server: string,
    connectedAtMs: number,
    readonly listing: ToolListing = { tools: [], warnings: [] },
  ) {
    this.server = server;
    this.connectedAtMs = connectedAtMs;
    this.ended = new Promise((r) => (this.#resolve = r));
  }
  listTools(): Promise<ToolListing> {
    return Promise.resolve(this.listing);
  }
  callTool(): Promise<never> {
    return Promise.reject(new Error("not used"));
  }
  listResources(): Promise<never> {
    return Promise.reject(new Error("not used"));
  }
  readResource(): Promise<never> {
    return Promise.reject(new Error("not used"));
  }
  /** Simulates a crash. */
  crash(reason = "exited with code 1"): void {
    this.isClosed = true;
    this.#resolve({ reason, isExpected: false });
  }
  close(): Promise<void> {
    this.closeCalls++;
    if (!this.isClosed) {
      this.isClosed = true;
      this.#resolve({ reason: "closed by us", isExpected: true });
    }
    return Promise.resolve();
  }
}

/** Live (non-zombie) processes whose process group is `pgid`. */
export async function liveProcessesInGroup(pgid: number): Promise<number[]> {
  requireProgram("ps");
  const out = await new Deno.Command("ps", { args: ["-e", "-o", "pid=,pgid=,stat="], stdout: "piped" })
    .output();
  return new TextDecoder().decode(out.stdout).split("\n").map((l) => l.trim().split(/\s+/)).filter((f) =>
    f.length === 3 && Number(f[1]) === pgid && !f[2]!.startsWith("Z")
  ).map((f) => Number(f[0]));
}

/** `true` while process `pid` exists and is not a zombie. */
export async function isAlive(pid: number): Promise<boolean> {
  requireProgram("ps");
  const out = await new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)], stdout: "piped" })
    .output();
  const stat = new TextDecoder().decode(out.stdout).trim();
  return stat !== "" && !stat.startsWith("Z");
}

/** Polls `predicate` every 50 ms up to `timeoutMs`; returns its last value. */
export async function waitFor(
  predicate: () => Promise<boolean> | boolean,
  timeoutMs = 5_000,
): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await predicate()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return await predicate();
}

/** Timers of the descendant scan schedule that run only when told: `fireNext()` moves time to the next one. */
export class ManualScanTimers implements ScanTimers {
  nowMs = 0;
  readonly pending = new Map<number, { atMs: number; callback: () => void }>();
  #nextId = 1;
  now(): number {
    return this.nowMs;
  }
  schedule(callback: () => void, delayMs: number): () => void {
    const id = this.#nextId++;
    this.pending.set(id, { atMs: this.nowMs + delayMs, callback });
    return () => this.pending.delete(id);
  }
  /**
   * Moves time to the earliest pending timer and runs it.
   *
   * @returns How far time moved, in ms.
   * @throws {Error} when no timer is pending.
   */
  fireNext(): number {
    const [id, next] = [...this.pending].sort(([, a], [, b]) => a.atMs - b.atMs)[0] ??
      (() => {
        throw new Error("no timer pending");
      })();
    this.pending.delete(id);
    const movedMs = next.atMs - this.nowMs;
    this.nowMs = next.atMs;
    next.callback();
    return movedMs;
  }
}
