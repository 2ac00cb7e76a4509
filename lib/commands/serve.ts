/**
 * `cargo-agents mcp-serve`: the meta-server on stdio until the agent closes stdin. The start path loads
 * only the MCP SDK, the stdin reader and the server shell, and reads `config.toml` for the message
 * budget, before it connects: `initialize` is answered first, then the catalog loads and resolves, the
 * servers an `execute` that already arrived names start, and only then the sandbox (its process) and the
 * rest of the meta-server load (imported here on demand, not at the top). `list_tools` with the
 * declarations, and the saved scripts, load at their first use (`meta_server/mod.ts`).
 *
 * @module
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import type { CommandContext } from "./context.ts";
import { maskDeep, maskSecrets } from "../secrets/mod.ts";
import { LineStdioServerTransport } from "../jsonrpc/mod.ts";
import { connectServerShell } from "../meta_server/shell.ts";
import { loadMcpConfigReport, resolveConfigDir } from "../plugins/config.ts";
import { DEFAULT_MCP_CONFIG } from "../plugins/config.ts";
import type { Logger } from "../log.ts";

/**
 * Serves MCP on stdin/stdout; logs go to stderr and `<config>/logs/`. Returns when stdin closes
 * (or on SIGINT/SIGTERM), after every backing server has been shut down. Stdin messages are read
 * under `[mcp] max-message-mb` (as the session started) with JSON-RPC 2.0 error answers for
 * oversize, unparseable and invalid ones.
 *
 * @returns Exit code 0.
 * @throws Only for unexpected file-system failures while resolving the workspace.
 */
export async function runServe(ctx: CommandContext): Promise<number> {
  // Stdout belongs to JSON-RPC: a library that prints would corrupt the stream, so console
  // output is sent to stderr for the whole session (masked, as every line we print).
  const toStderr = (...data: unknown[]) =>
    ctx.writeErr(`${data.map((d) => typeof d === "string" ? d : Deno.inspect(d)).join(" ")}\n`);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  console.warn = toStderr;
  console.error = toStderr;
  // The message budget as the session starts; a config.toml that cannot be read leaves the default
  // here and is reported by the session (stderr, log, list_tools Problems) as always.
  const config = await loadMcpConfigReport(resolveConfigDir(ctx.env, ctx.homeDir, ctx.configDir))
    .then((report) => report.config, () => DEFAULT_MCP_CONFIG);
  const agentLog = new LateLogger();
  // Our own reader in front of the SDK: a message over the budget, unparseable or invalid is
  // answered and the session goes on (the SDK's reader closed the session past 10 MiB).
  const transport = new LineStdioServerTransport({
    maxMessageBytes: config.maxMessageMb * 1024 * 1024,
    logger: agentLog,
  });
  const shell = await connectServerShell(maskOutgoing(transport), ctx.signal, {
    onError: (error) => agentLog.info(maskSecrets(error.message)),
  });
  let session;
  try {
    await shell.firstAnswered;
    // The catalog first, and the servers named by an `execute` that is already waiting start as soon as
    // it is resolved: their start is most of a first `execute`, and the sandbox and the rest of the
    // meta-server load meanwhile. A server no `execute` named stays unstarted.
    // A server started that early is offered what the agent declared (elicitation, sampling, logs)
    // as any other: the relay is the catalog's peer before.
    const [{ openSession }, { startNamedServers }, { AgentRelay }] = await Promise.all([
      import("./_session.ts"),
      import("../meta_server/named_servers.ts"),
      import("../meta_server/agent_relay.ts"),
    ]);
    let relay: InstanceType<typeof AgentRelay> | undefined;
    session = await openSession(ctx, {
      onCatalog: (catalog, logger) => {
        const early = new AgentRelay(shell.server, { logger });
        catalog.setPeer((spec) => early.peerFor(spec.name));
        relay = early;
        shell.onEarlyExecute((script, call) => {
          // A modern agent declares its capabilities per request: the servers it names are offered those.
          if (call.era === "modern") early.noteModernAgent(call.capabilities ?? {});
          startNamedServers(catalog, script);
        });
      },
    });
    const { serveMetaServer } = await import("../meta_server/mod.ts");
    agentLog.attach(session.logger.child("agent"));
    await serveMetaServer({
      shell,
      catalog: session.catalog,
      runner: session.runner,
      logger: session.logger,
      relay,
    });
  } catch (error) {
    shell.supply(Promise.reject(error)); // Requests waiting for the tools get this error, not a hang.
    await shell.server.close().catch(() => {}); // Closing is best effort; the error is what matters.
    throw error;
  } finally {
    await session?.close();
  }
  return 0;
}

/** The levels a {@link LateLogger} keeps lines of. */
type LineLevel = "debug" | "info" | "warn" | "error";

/** Lines kept for a {@link LateLogger} until it is attached; later ones are counted, not kept. */
const LATE_LINES_KEPT = 100;

/**
 * A logger for what is logged before the session's logger exists (the stdin reader starts first): it
 * keeps up to {@link LATE_LINES_KEPT} lines and writes them, and all later ones, once attached.
 */
class LateLogger implements Logger {
  #target: Logger | undefined;
  readonly #kept: [LineLevel, string][] = [];
  #dropped = 0;

  attach(target: Logger): void {
    this.#target = target;
    for (const [level, message] of this.#kept.splice(0)) target[level](message);
    if (this.#dropped > 0) target.warn(`${this.#dropped} earlier lines dropped before the log was open`);
  }
  #line(level: LineLevel, message: string): void {
    if (this.#target) this.#target[level](message);
    else if (this.#kept.length < LATE_LINES_KEPT) this.#kept.push([level, message]);
    else this.#dropped++;
  }
  debug(message: string): void {
    this.#line("debug", message);
  }
  info(message: string): void {
    this.#line("info", message);
  }
  warn(message: string): void {
    this.#line("warn", message);
  }
  error(message: string): void {
    this.#line("error", message);
  }
  child(scope: string): Logger {
    return {
      debug: (m) => this.debug(`[${scope}] ${m}`),
      info: (m) => this.info(`[${scope}] ${m}`),
      warn: (m) => this.warn(`[${scope}] ${m}`),
      error: (m) => this.error(`[${scope}] ${m}`),
      child: (inner) => this.child(`${scope}:${inner}`),
    };
  }
}

/**
 * Makes `transport` mask every message it sends to the agent: results, errors and notification
 * parameters pass `maskDeep()` (registered secret values and credential shapes; image and audio
 * payloads untouched). `jsonrpc`, `id` and `method` are protocol fields and stay as they are.
 */
export function maskOutgoing<T extends Transport>(transport: T): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(maskMessage(message), options);
  return transport;
}

function maskMessage(message: JSONRPCMessage): JSONRPCMessage {
  const m = message as Record<string, unknown>;
  const out: Record<string, unknown> = { ...m };
  for (const key of ["result", "params"]) if (key in m) out[key] = maskDeep(m[key]);
  if (typeof m.error === "object" && m.error !== null) {
    const error = m.error as Record<string, unknown>;
    out.error = {
      ...error,
      ...(typeof error.message === "string" ? { message: maskSecrets(error.message) } : {}),
      ...("data" in error ? { data: maskDeep(error.data) } : {}),
    };
  }
  return out as JSONRPCMessage;
}
