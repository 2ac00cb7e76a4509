/**
 * Test helpers for the HTTP side: loopback servers that record what reached them, and resolvers
 * that answer what a test says (including a rebinding one).
 *
 * @module
 */
import type { Resolver } from "../lib/net/endpoint_policy.ts";

/** A request as a loopback test server saw it. */
export interface Hit {
  method: string;
  path: string;
  headers: Headers;
  body: string;
  /** The local address the connection arrived on (which of 127.0.0.x). */
  localAddress: string;
}

/** A running loopback server. */
export interface TestServer {
  port: number;
  hits: Hit[];
  close(): Promise<void>;
}

/** Options of {@link serveLoopback}. */
export interface ServeLoopbackOptions {
  /** @default "127.0.0.1" */
  hostname?: string;
  /** @default 0 (any free port) */
  port?: number;
  /** PEM certificate and key: serve https. */
  tls?: { cert: string; key: string };
}

/** Serves `handler` on a loopback address and records every request. */
export function serveLoopback(
  handler: (request: Request, hit: Hit) => Response | Promise<Response>,
  options: ServeLoopbackOptions = {},
): TestServer {
  const hits: Hit[] = [];
  const hostname = options.hostname ?? "127.0.0.1";
  const server = Deno.serve(
    { hostname, port: options.port ?? 0, onListen() {}, ...(options.tls ?? {}) },
    async (request) => {
      const hit: Hit = {
        method: request.method,
        path: new URL(request.url).pathname,
        headers: request.headers,
        body: request.body ? await request.text() : "",
        localAddress: hostname,
      };
      hits.push(hit);
      return handler(request, hit);
    },
  );
  return { port: server.addr.port, hits, close: () => server.shutdown() };
}

/** A resolver whose answers are scripted: the n-th lookup gets `answers[n]` (the last one repeats). */
export function scriptedResolver(...answers: string[][]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    resolve(host) {
      calls.push(host);
      return Promise.resolve(answers[Math.min(calls.length - 1, answers.length - 1)] ?? []);
    },
  };
}

const REPO = new URL("../", import.meta.url).pathname;

/** A running `@modelcontextprotocol/server-everything` in streamable HTTP mode. */
export interface EverythingServer {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Kills it and waits for it to exit. */
  close(): Promise<void>;
}

/**
 * Starts server-everything (`node dist/index.js streamableHttp`, installed by `deno install` from the
 * pin in deno.json) with `PORT=0`. It has no host option and would listen on every interface, so
 * the `testdata/servers/loopback_listen.mjs` preload binds it to 127.0.0.1; the test fails if it
 * reports any other address.
 */
export async function startServerEverything(): Promise<EverythingServer> {
  const entry = `${REPO}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
  try {
    await Deno.stat(entry);
  } catch {
    const out = await new Deno.Command(Deno.execPath(), { args: ["install", "--quiet"], cwd: REPO }).output();
    if (out.code !== 0) throw new Error(`deno install failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  const child = new Deno.Command("node", {
    args: ["--import", `${REPO}testdata/servers/loopback_listen.mjs`, entry, "streamableHttp"],
    env: { PORT: "0" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const { promise: listening, resolve, reject } = Promise.withResolvers<string>();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      const m = /LOOPBACK_LISTENING (\S+) (\d+)/.exec(text);
      if (m?.[1] === "127.0.0.1") resolve(m[2]!);
      else if (m) reject(new Error(`server-everything listens on ${m[1]}, not loopback only`));
    }
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  const exited = child.status.then((s) => reject(new Error(`server-everything exited (${s.code}): ${text}`)));
  const timer = setTimeout(
    () => reject(new Error(`server-everything did not listen within 15 s: ${text}`)),
    15_000,
  );
  const close = async () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already exited.
    }
    await child.status;
    await pumps;
    await exited.catch(() => {}); // Its rejection only matters while waiting for the port.
  };
  let port: string;
  try {
    port = await listening;
  } catch (error) {
    await close();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return { url: `http://127.0.0.1:${port}/mcp`, output: () => text, close };
}
