/**
 * Test helpers for the HTTP side: loopback servers that record what reached them, and resolvers
 * that answer what a test says (including a rebinding one).
 *
 * @module
 */
import type { Resolver } from "../lib/endpoint_policy.ts";

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
