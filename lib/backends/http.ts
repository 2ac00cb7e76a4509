/**
 * One remote backing server over streamable HTTP: the SDK v2 `StreamableHTTPClientTransport` on the
 * endpoint-policy guarded fetch, handed to `openConnection()` like any other transport. What the
 * SDK leaves to us is done here: manifest headers on every request to the endpoint (and only
 * there), the stored sign-in as bearer token, a 404 on a session request answered by a fresh
 * `initialize` (then the request is sent once more), `DELETE` of the session on close, 401/403
 * turned into {@link AuthRequiredError}, and an unreachable server ending the connection so the
 * pool restarts it with backoff. Header values are never logged.
 *
 * @module
 */
import { type AuthProvider, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { HttpServerSpec } from "../plugins/mod.ts";
import { checkEndpointUrl, EndpointPolicyError, type Resolver } from "../net/mod.ts";
import { createGuardedFetch, type GuardedFetch } from "../net/mod.ts";
import { createStoredAuthProvider, SignInRequiredError } from "../auth/mod.ts";
import { recordStepUpScopes } from "../auth/mod.ts";
import { AuthRequiredError } from "./auth_required.ts";
import { type BackendConnection, BackendError, type ConnectionEnd, openConnection } from "./connection.ts";
import { failOversizeEvents } from "./_http_oversize.ts";
import type { ConnectContext } from "./stdio.ts";
import type { ConnectFn } from "./pool.ts";

export { AuthRequiredError };

/** Longest wait for the session `DELETE` on close, in milliseconds. */
export const DEFAULT_TERMINATE_TIMEOUT_MS = 2_000;

/** Options of {@link connectHttp}: the pool's context plus what only remote servers need. */
export interface HttpConnectOptions extends ConnectContext {
  /** The config dir: stored sign-ins are read from `<configDir>/credentials/`. Default: none used. */
  configDir?: string | undefined;
  /** Looks host names up for the endpoint policy. @default SYSTEM_RESOLVER */
  resolver?: Resolver | undefined;
  /** PEM roots trusted instead of the system ones (tests with a private CA). Default: system roots. */
  caCerts?: string[] | undefined;
  /** Replaces the guarded fetch (a seam for tests; it must still enforce the policy). */
  fetch?: GuardedFetch | undefined;
  /** Replaces the stored-credentials auth provider. Default: {@link createStoredAuthProvider} with `configDir`. */
  authProvider?: AuthProvider | undefined;
  /** Longest wait for the session `DELETE` on close, in ms. @default DEFAULT_TERMINATE_TIMEOUT_MS */
  terminateTimeoutMs?: number | undefined;
}

/** What the wrapped fetch saw during the current operation. */
interface Exchange {
  /** The last 401/403 from the endpoint (cleared by a later success). */
  authFailure?: { status: number; challenge: string | undefined } | undefined;
  /** A request carrying a session id got 404: the session is gone. */
  isSessionGone: boolean;
  /** A request failed below HTTP (refused, reset, TLS): the server is unreachable. */
  networkError?: unknown;
}

interface Session {
  transport: StreamableHTTPClientTransport;
  connection: BackendConnection;
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e !== undefined && chain.length < 10; e = e instanceof Error ? e.cause : undefined) {
    chain.push(e);
  }
  return chain;
}

/** Longest excerpt of an HTTP error page shown in an error message, in characters. */
export const HTTP_ERROR_EXCERPT_CHARS = 160;
/** Characters of an HTTP error page looked at for the excerpt (the start of the page). */
export const HTTP_ERROR_SCAN_CHARS = 16 * 1024;

/**
 * One line of an HTTP error body, for a message: `<script>`/`<style>` blocks and tags dropped
 * (a 404 page is HTML), entities for spaces and angle brackets decoded, whitespace collapsed,
 * cut at {@link HTTP_ERROR_EXCERPT_CHARS} with `…`.
 */
export function httpBodyExcerpt(body: string): string {
  // The patterns are linear per match, but a lazy `[\s\S]*?` per `<script` is quadratic on a page of
  // many unclosed tags: look at the start of the page only (the excerpt is 160 characters anyway).
  const text = body.slice(0, HTTP_ERROR_SCAN_CHARS)
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/&nbsp;/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
  return text.length > HTTP_ERROR_EXCERPT_CHARS ? `${text.slice(0, HTTP_ERROR_EXCERPT_CHARS)}…` : text;
}

/**
 * The start failure for an endpoint that answered an HTTP error (e.g. 404): the status and a
 * short single-line excerpt of the body instead of the whole page. `undefined` when `error`
 * carries no HTTP status.
 */
function httpStatusError(server: string, shownUrl: string, error: unknown): BackendError | undefined {
  const http = causes(error).find((
    e,
  ): e is Error & { status: number; statusText?: unknown; data?: unknown } =>
    e instanceof Error && typeof (e as { status?: unknown }).status === "number"
  );
  if (!http) return undefined;
  const data = (typeof http.data === "object" && http.data !== null ? http.data : {}) as Record<
    string,
    unknown
  >;
  const statusText = typeof http.statusText === "string" ? ` ${http.statusText}` : "";
  const excerpt = typeof data.text === "string" ? httpBodyExcerpt(data.text) : "";
  return new BackendError(
    "START_FAILED",
    server,
    `${server} failed to start: ${shownUrl} answered HTTP ${http.status}${statusText}${
      excerpt ? `: ${excerpt}` : ""
    }`,
    {
      cause: error,
      hint: http.status === 404 ? `check \`url\` of ${server} in its plugin manifest` : undefined,
    },
  );
}

function checkHeaders(spec: HttpServerSpec): void {
  for (const [name, value] of Object.entries(spec.headers)) {
    const fail = (what: string) =>
      new BackendError("START_FAILED", spec.name, `${spec.name} failed to start: ${what}`, {
        hint: `fix \`headers\` of server "${spec.name}" in its plugin manifest`,
      });
    try {
      new Headers([[name, "x"]]);
    } catch {
      throw fail(`"${name}" is not a valid header name`);
    }
    try {
      new Headers([[name, value]]);
    } catch {
      throw fail(`the value for header "${name}" is not valid`); // The value itself is never shown.
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Connects to a remote server and completes the MCP handshake under `spec.startupTimeoutMs`.
 * Nothing is sent before this is called (the pool calls it on first use).
 *
 * @returns A connection whose `callTool`/`listTools` re-initialize once on an expired session and
 *   whose `close()` deletes the session.
 * @throws {AuthRequiredError} `NEEDS_SIGN_IN` on 401/403 (or no usable stored sign-in).
 * @throws {BackendError} `START_FAILED` (endpoint policy refusal, with its message and hint and the
 *   {@link EndpointPolicyError} as `cause`; invalid header; HTTP or network failure),
 *   `STARTUP_TIMEOUT`, `CANCELLED`. From calls: also `CONNECTION_LOST` when the server became
 *   unreachable (the connection then ends, and the pool restarts it with backoff).
 * @example
 * ```ts ignore
 * const conn = await connectHttp(spec, { configDir, logger, now: Date.now, shutdownGraceMs: 5_000 });
 * const { tools } = await conn.listTools({ timeoutMs: 10_000 });
 * await conn.close();
 * ```
 */
export async function connectHttp(
  spec: HttpServerSpec,
  options: HttpConnectOptions,
): Promise<BackendConnection> {
  const server = spec.name;
  const logger = options.logger;
  checkHeaders(spec);
  try {
    // The configured text itself: the transport hands the fetch a parsed URL, in which an odd
    // spelling such as `0x7f.1` is already normalized and no longer visible.
    checkEndpointUrl(spec.url, { server, displayAs: spec.urlTemplate });
  } catch (error) {
    if (!(error instanceof EndpointPolicyError)) throw error;
    throw new BackendError("START_FAILED", server, error.message, { hint: error.hint, cause: error });
  }
  const guarded = options.fetch ?? createGuardedFetch({
    server,
    resolver: options.resolver,
    caCerts: options.caCerts,
    maxMessageBytes: options.maxMessageBytes,
  });
  const hasHeaderAuth = Object.keys(spec.headers).some((k) => k.toLowerCase() === "authorization");
  const authProvider = options.authProvider ??
    (options.configDir !== undefined && !hasHeaderAuth
      ? createStoredAuthProvider(spec, { configDir: options.configDir, fetch: guarded })
      : undefined);
  const endpoint = new URL(spec.url);
  // Messages and logs show the URL as the manifest writes it (`${VAR}` unexpanded): the expanded
  // one may carry a key in its path or query.
  const shownUrl = spec.urlTemplate ?? spec.url;
  const shownHost = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(shownUrl)?.[1]?.replace(/^.*@/, "") ??
    endpoint.host;
  const exchange: Exchange = { isSessionGone: false };
  let isEstablished = false;
  let isClosing = false;
  let isClosed = false;
  let lost: BackendError | undefined;

  // Every request of this server: manifest headers only to the MCP endpoint itself (never to an
  // authorization server), the transport's own headers winning; outcomes noted for the mapping below.
  const trackingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input);
    const isEndpoint = url.origin === endpoint.origin && url.pathname === endpoint.pathname;
    const headers = new Headers(isEndpoint ? spec.headers : undefined);
    new Headers(init?.headers).forEach((value, name) => headers.set(name, value));
    const hasSession = headers.has("mcp-session-id");
    let response: Response;
    try {
      response = await guarded(input, { ...init, headers });
    } catch (error) {
      if (!(error instanceof EndpointPolicyError) && !init?.signal?.aborted) {
        exchange.networkError = error;
        // Once connected, any request failing below HTTP (a call, the background GET stream's
        // reconnect) means the server is gone: end now, so pending calls fail fast.
        if (isEstablished && !isClosing) markUnreachable(error);
      }
      throw error;
    }
    logger.debug(`${init?.method ?? "GET"} ${isEndpoint ? shownUrl : url.origin} → ${response.status}`);
    response = failOversizeEvents(response, init?.body, (message) => currentTransport?.onmessage?.(message));
    if (isEndpoint) {
      if (response.status === 401 || response.status === 403) {
        exchange.authFailure = {
          status: response.status,
          challenge: response.headers.get("www-authenticate") ?? undefined,
        };
      } else if (response.ok) exchange.authFailure = undefined;
      if (response.status === 404 && hasSession) exchange.isSessionGone = true;
    }
    return response;
  };

  function resetExchange(): void {
    exchange.authFailure = undefined;
    exchange.isSessionGone = false;
    exchange.networkError = undefined;
  }

  /** Turns a failure into the error the caller should see, or `undefined` to keep the original. */
  function authOrPolicyError(error: unknown): BackendError | undefined {
    const chain = causes(error);
    const signIn = chain.find((e): e is SignInRequiredError => e instanceof SignInRequiredError);
    if (signIn || exchange.authFailure) {
      const reason = signIn?.message.replace(/^Cannot use "[^"]*": /, "");
      return new AuthRequiredError(server, { ...exchange.authFailure, reason }, { cause: error });
    }
    const policy = chain.find((e): e is EndpointPolicyError => e instanceof EndpointPolicyError);
    if (policy) {
      return new BackendError("START_FAILED", server, policy.message, { hint: policy.hint, cause: policy });
    }
    return undefined;
  }

  /** Remembers the scopes of a step-up challenge for the next `mcp login` (best effort). */
  async function notedStepUp(error: AuthRequiredError): Promise<AuthRequiredError> {
    if (error.requiredScopes && options.configDir !== undefined) {
      await recordStepUpScopes(options.configDir, spec, error.requiredScopes).catch((writeError) =>
        logger.warn(`cannot remember the scopes ${spec.name} asked for: ${String(writeError)}`)
      );
    }
    return error;
  }

  let currentTransport: StreamableHTTPClientTransport | undefined;
  async function openSession(): Promise<Session> {
    const transport = new StreamableHTTPClientTransport(endpoint, {
      fetch: trackingFetch,
      ...(authProvider ? { authProvider } : {}),
    });
    currentTransport = transport;
    resetExchange();
    try {
      const connection = await openConnection(transport, {
        server,
        startupTimeoutMs: spec.startupTimeoutMs,
        roots: options.roots,
        onToolListChanged: options.onToolListChanged,
        peer: options.peer,
        signal: options.signal,
        logger,
        now: options.now,
      });
      return { transport, connection };
    } catch (error) {
      const mapped = authOrPolicyError(error);
      if (mapped instanceof AuthRequiredError) throw await notedStepUp(mapped);
      throw mapped ?? httpStatusError(server, shownUrl, error) ?? error;
    }
  }

  let session: Session;
  try {
    session = await openSession();
  } catch (error) {
    if (!options.fetch) guarded.close();
    throw error;
  }
  isEstablished = true;
  const connectedAtMs = session.connection.connectedAtMs;
  let resolveEnded!: (end: ConnectionEnd) => void;
  const ended = new Promise<ConnectionEnd>((resolve) => (resolveEnded = resolve));

  function finish(end: ConnectionEnd): void {
    if (isClosed) return;
    isClosed = true;
    if (!options.fetch) guarded.close();
    resolveEnded(end);
  }
  function watch(current: Session): void {
    void current.connection.ended.then((end) => {
      if (session === current && !end.isExpected) finish(end);
    });
  }
  watch(session);

  function markUnreachable(error: unknown): BackendError {
    if (lost || isClosed) {
      return lost ?? new BackendError("CONNECTION_LOST", server, `${server}: connection lost`);
    }
    const why = error instanceof Error ? error.message : String(error);
    const reason = `${shownHost} is unreachable: ${why}`;
    logger.warn(`connection ended: ${reason}`);
    lost = new BackendError("CONNECTION_LOST", server, `${server}: connection lost: ${reason}`, {
      cause: error,
    });
    finish({ reason, isExpected: false });
    void session.connection.close(); // Pending requests fail now with CONNECTION_LOST.
    return lost;
  }

  /** Runs one request; a gone session is re-initialized once, then the request is sent again. */
  async function run<T>(op: (connection: BackendConnection) => Promise<T>): Promise<T> {
    for (let attempt = 1;; attempt++) {
      if (isClosed) throw lost ?? new BackendError("CONNECTION_LOST", server, `${server}: connection lost`);
      resetExchange();
      try {
        return await op(session.connection);
      } catch (error) {
        if (error instanceof BackendError && error.code === "CANCELLED") throw error;
        if (lost) throw lost;
        if (error instanceof BackendError && error.code === "CALL_TIMEOUT") throw error;
        const mapped = authOrPolicyError(error);
        if (mapped instanceof AuthRequiredError) throw await notedStepUp(mapped);
        if (exchange.isSessionGone && attempt === 1) {
          logger.info("session expired (404); initializing a new one");
          const old = session;
          try {
            session = await openSession();
          } catch (startError) {
            session = old;
            await old.connection.close();
            finish({ reason: "the session expired and a new one could not be started", isExpected: false });
            throw startError;
          }
          watch(session);
          await old.connection.close(); // No DELETE: the server already forgot it.
          continue;
        }
        if (exchange.networkError !== undefined) throw markUnreachable(exchange.networkError);
        throw error;
      }
    }
  }

  return {
    server,
    connectedAtMs,
    get serverInfo() {
      return session.connection.serverInfo;
    },
    get serverCapabilities() {
      return session.connection.serverCapabilities;
    },
    ended,
    get isClosed() {
      return isClosed;
    },
    listTools: (listOptions) => run((c) => c.listTools(listOptions)),
    callTool: (tool, args, callOptions) => run((c) => c.callTool(tool, args, callOptions)),
    listResources: (listOptions) => run((c) => c.listResources(listOptions)),
    readResource: (uri, readOptions) => run((c) => c.readResource(uri, readOptions)),
    async close() {
      if (isClosed || isClosing) return;
      isClosing = true;
      const current = session;
      try {
        await withTimeout(
          current.transport.terminateSession(),
          options.terminateTimeoutMs ?? DEFAULT_TERMINATE_TIMEOUT_MS,
        );
      } catch (error) {
        // The server may be gone or refuse DELETE; the session ends on our side either way.
        logger.debug(`session DELETE failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      await current.connection.close();
      finish({ reason: "closed by us", isExpected: true });
    },
  };
}

/** Options of {@link withHttpConnector}. */
export interface HttpConnectorOptions {
  /** The config dir (stored sign-ins). */
  configDir?: string | undefined;
  /** @default SYSTEM_RESOLVER */
  resolver?: Resolver | undefined;
  /** PEM roots instead of the system ones (tests). */
  caCerts?: string[] | undefined;
}

/**
 * Registers the http backend with the pool: the returned connector sends `transport: "http"`
 * specs to {@link connectHttp} and every other spec to `base`.
 *
 * @example
 * ```ts ignore
 * const catalog = await Catalog.open({ ..., connect: withHttpConnector(connectBySpec, { configDir }) });
 * ```
 */
export function withHttpConnector(base: ConnectFn, options: HttpConnectorOptions = {}): ConnectFn {
  return (spec, ctx) =>
    spec.transport === "http" ? connectHttp(spec, { ...ctx, ...options }) : base(spec, ctx);
}
