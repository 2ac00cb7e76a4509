/**
 * A `fetch` that holds every request to the endpoint policy: the URL is checked, its host is
 * resolved once, the connection goes only to the checked addresses (no second lookup), and any
 * 3xx is refused instead of followed. MCP traffic and OAuth discovery, registration, token and
 * revocation requests all go through one of these.
 *
 * Pinning: the default {@link Connector} sends each request with `node:http`/`node:https` and a
 * `lookup` that answers only the checked addresses, so TLS still verifies the certificate and SNI
 * against the host name while the socket goes to an address that was checked. Measured on Deno
 * 2.9.6 (tests pin it): the custom lookup is the only lookup (a name with no DNS record connects;
 * a trap server where the system resolver points gets nothing); `Deno.createHttpClient` with
 * `proxy: { transport: "tcp" }` pins too, but only for plain http (https through it is sent as
 * plaintext), so it is not used. The `net.deny` list of `deno.json` (cloud metadata, link-local) is
 * enforced by Deno on the pinned address itself, before any packet, as a backstop.
 *
 * @module
 */
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { Readable } from "node:stream";
import { checkEndpoint, checkEndpointUrl, displayUrl, EndpointPolicyError } from "./endpoint_policy.ts";
import type { Resolver } from "./endpoint_policy.ts";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../jsonrpc/mod.ts";
import { budgetedBody } from "./_body_budget.ts";

/** The shape of `fetch` that HTTP clients (the MCP SDK, OAuth helpers) accept. */
export type FetchLike = (input: Request | URL | string, init?: RequestInit) => Promise<Response>;

/** A {@link FetchLike} that owns connections: call `close()` once when done with it. */
export type GuardedFetch = FetchLike & {
  /** Closes idle and open connections. Later calls fail. Idempotent. */
  close(): void;
};

/** One request, already checked, to be sent to exactly these addresses. */
export interface PinnedRequest {
  /** The request URL (its host is the TLS name and the `Host` header). */
  url: URL;
  /** The checked addresses: the only ones a connection may go to. Never empty. */
  addresses: string[];
  method: string;
  headers: Headers;
  /** The whole request body, or `null`. */
  body: Uint8Array | null;
  signal?: AbortSignal | undefined;
}

/** Sends pinned requests: the seam between the policy and the wire. */
export interface Connector {
  /**
   * @returns The response as received (3xx included; redirects are never followed here).
   * @throws {TypeError} `fetch failed: <reason>` when the exchange fails; the signal's reason when aborted.
   */
  send(request: PinnedRequest): Promise<Response>;
  /** Destroys kept-alive and open connections. Idempotent. */
  close(): void;
}

/** Options of {@link createNodeConnector}. */
export interface NodeConnectorOptions {
  /**
   * PEM certificates trusted for https *instead of* the system roots (tests with a private CA).
   * Default: the system roots.
   */
  caCerts?: string[] | undefined;
}

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

function pinnedLookup(addresses: string[]): LookupFunction {
  const entries = addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  return (_host, options, callback) => {
    const family = options.family === 4 || options.family === "IPv4"
      ? 4
      : options.family === 6 || options.family === "IPv6"
      ? 6
      : 0;
    const usable = family === 0 ? entries : entries.filter((e) => e.family === family);
    // Answer asynchronously: Deno's node:net throws permission errors out of a synchronous callback.
    setTimeout(() => {
      const first = usable[0];
      if (!first) {
        callback(Object.assign(new Error("no checked address of this family"), { code: "ENOTFOUND" }), []);
      } else if (options.all) callback(null, usable);
      else callback(null, first.address, first.family);
    }, 0);
  };
}

function fetchFailed(cause: unknown): TypeError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new TypeError(`fetch failed: ${why}`, { cause });
}

/**
 * One request/response over node:http(s). A request that meets a keep-alive socket the server has
 * just closed is re-sent on a fresh connection by Deno's node:http itself (pinned by a test).
 */
function exchange(
  transport: typeof http | typeof https,
  requestOptions: https.RequestOptions,
  body: Uint8Array | null,
  signal: AbortSignal | undefined,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    let settled = false;
    let response: http.IncomingMessage | undefined;
    const onAbort = () => {
      const reason = signal?.reason ?? new DOMException("The request was aborted", "AbortError");
      req.destroy(reason instanceof Error ? reason : new Error(String(reason)));
      response?.destroy(reason instanceof Error ? reason : new Error(String(reason)));
      if (!settled) {
        settled = true;
        reject(reason);
      }
    };
    const req = transport.request(requestOptions, (res) => {
      response = res;
      const headers = new Headers();
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
        headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
      }
      const status = res.statusCode ?? 502;
      const hasBody = requestOptions.method !== "HEAD" && !NULL_BODY_STATUSES.has(status);
      if (!hasBody) res.resume();
      res.on("close", () => signal?.removeEventListener("abort", onAbort));
      const stream = hasBody ? Readable.toWeb(res) as unknown as ReadableStream<Uint8Array> : null;
      settled = true;
      resolve(new Response(stream, { status, statusText: res.statusMessage ?? "", headers }));
    });
    req.on("error", (error) => {
      signal?.removeEventListener("abort", onAbort);
      if (settled) return;
      settled = true;
      reject(fetchFailed(error));
    });
    signal?.addEventListener("abort", onAbort, { once: true });
    req.end(body ?? undefined);
  });
}

/**
 * The real connector: `node:http`/`node:https` with a `lookup` that returns only the checked
 * addresses (a name is never looked up again), keep-alive pools per origin and address set.
 *
 * @example
 * ```ts ignore
 * const connector = createNodeConnector();
 * const res = await connector.send({ url: new URL("http://localhost:8080/mcp"), addresses: ["127.0.0.1"],
 *   method: "GET", headers: new Headers(), body: null });
 * connector.close();
 * ```
 */
export function createNodeConnector(options: NodeConnectorOptions = {}): Connector {
  const agents = new Map<string, http.Agent>();
  let isClosed = false;
  function agentFor(url: URL, addresses: string[]): http.Agent {
    const key = `${url.protocol}//${url.host}|${addresses.join(",")}`;
    let agent = agents.get(key);
    if (!agent) {
      const common = { keepAlive: true, lookup: pinnedLookup(addresses) };
      agent = url.protocol === "https:"
        ? new https.Agent({ ...common, ...(options.caCerts ? { ca: options.caCerts } : {}) })
        : new http.Agent(common);
      agents.set(key, agent);
    }
    return agent;
  }
  return {
    send(request) {
      if (isClosed) return Promise.reject(fetchFailed(new Error("the connector is closed")));
      const { url, addresses, method, signal } = request;
      if (signal?.aborted) return Promise.reject(signal.reason);
      const isHttps = url.protocol === "https:";
      const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => {
        if (name !== "host" && name !== "content-length") headers[name] = value;
      });
      if (request.body) headers["content-length"] = String(request.body.byteLength);
      const port = url.port === "" ? (isHttps ? 443 : 80) : Number(url.port);
      const requestOptions: https.RequestOptions = {
        host: hostname,
        port,
        path: `${url.pathname}${url.search}`,
        method,
        headers,
        agent: agentFor(url, addresses),
        lookup: pinnedLookup(addresses),
        ...(isHttps && options.caCerts ? { ca: options.caCerts } : {}),
      };
      return exchange(isHttps ? https : http, requestOptions, request.body, signal);
    },
    close() {
      isClosed = true;
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  };
}

/** Options of {@link createGuardedFetch}. */
export interface GuardedFetchOptions {
  /** Server name for messages. Default: none. */
  server?: string | undefined;
  /** Looks host names up. @default SYSTEM_RESOLVER */
  resolver?: Resolver | undefined;
  /** Sends checked requests. @default createNodeConnector({ caCerts }) */
  connector?: Connector | undefined;
  /** Passed to the default connector. Default: system roots. */
  caCerts?: string[] | undefined;
  /**
   * Largest response body, bytes, counted per event for `text/event-stream` (`[mcp]
   * max-message-mb`); past it reading fails with `MessageTooLargeError` and the connection is
   * closed. @default DEFAULT_MAX_MESSAGE_BYTES
   */
  maxMessageBytes?: number | undefined;
}

function describeRedirectTarget(location: string, base: URL): string {
  let target: string;
  try {
    target = new URL(location, base).href;
  } catch {
    return `"${displayUrl(location)}" (not a valid URL)`;
  }
  try {
    checkEndpointUrl(target);
    return displayUrl(target);
  } catch (error) {
    // Only to say more in the message: the redirect is refused either way.
    if (!(error instanceof EndpointPolicyError)) throw error;
    return `${displayUrl(target)}, which the endpoint policy refuses too (${error.reason})`;
  }
}

/**
 * Builds the policy-enforcing fetch.
 *
 * Every call: checks the URL ({@link checkEndpointUrl}), resolves the host once and checks every
 * address, sends the request to those addresses only, refuses any 3xx, and counts the bytes of
 * the answer as they are read (see {@link GuardedFetchOptions.maxMessageBytes}).
 *
 * @returns A {@link GuardedFetch}; call `close()` when the owner (a server connection, a login) ends.
 * @throws (from the returned fetch) {EndpointPolicyError} any policy code, and `ENDPOINT_REDIRECT`
 *   naming the `Location` of a 3xx; {TypeError} `fetch failed: ...` when the exchange fails. Reading
 *   the body rejects with `MessageTooLargeError` (code `MESSAGE_TOO_LARGE`) past the budget.
 * @example
 * ```ts ignore
 * const guarded = createGuardedFetch({ server: "linear" });
 * const res = await guarded("https://mcp.linear.app/mcp", { method: "POST", body: "{}" });
 * guarded.close();
 * ```
 */
export function createGuardedFetch(options: GuardedFetchOptions = {}): GuardedFetch {
  const connector = options.connector ?? createNodeConnector({ caCerts: options.caCerts });
  const guarded = async (input: Request | URL | string, init?: RequestInit): Promise<Response> => {
    const rawUrl = input instanceof Request ? input.url : input instanceof URL ? input.href : input;
    const checked = await checkEndpoint(rawUrl, {
      server: options.server,
      resolver: options.resolver,
      signal: init?.signal ?? undefined,
    });
    const request = input instanceof Request
      ? new Request(input, { ...init, redirect: "manual" })
      : new Request(checked.url, { ...init, redirect: "manual" });
    const buffer = request.body === null ? null : new Uint8Array(await request.arrayBuffer());
    const response = await connector.send({
      url: checked.url,
      addresses: checked.addresses,
      method: request.method,
      headers: request.headers,
      body: buffer,
      signal: init?.signal ?? (input instanceof Request ? input.signal : undefined),
    });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => {}); // Free the connection; the redirect is refused anyway.
      const location = response.headers.get("location");
      const where = location === null
        ? "without a Location"
        : `to ${describeRedirectTarget(location, checked.url)}`;
      throw new EndpointPolicyError(
        "ENDPOINT_REDIRECT",
        { server: options.server, url: displayUrl(rawUrl) },
        `the server answered ${response.status} redirecting ${where}; redirects are never followed`,
        { hint: "configure the final URL (where the redirect points) directly, if you trust it" },
      );
    }
    if (response.body === null) return response;
    const contentType = response.headers.get("content-type") ?? "";
    const body = budgetedBody(response.body, {
      maxBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      isEventStream: /^\s*text\/event-stream\b/i.test(contentType),
      server: options.server,
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return Object.assign(guarded, { close: () => connector.close() });
}
