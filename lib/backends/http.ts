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
import {
  checkEndpointUrl,
  createGuardedFetch,
  EndpointPolicyError,
  type GuardedFetch,
  type Resolver,
} from "../net/mod.ts";
import { createStoredAuthProvider, recordStepUpScopes, SignInRequiredError } from "../auth/mod.ts";
import { AuthRequiredError } from "./auth_required.ts";
import {
  type BackendConnection,
  BackendError,
  type CallOptions,
  type CallToolResult,
  type ConnectionEnd,
  openConnection,
  type ReadResourceResult,
  type ToolListing,
} from "./connection.ts";
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
 * cut at {@link HTTP_ERROR_EXCERPT_CHARS} with `...`.
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
  return text.length > HTTP_ERROR_EXCERPT_CHARS ? `${text.slice(0, HTTP_ERROR_EXCERPT_CHARS)}\u2026` : text;
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
  const connection = new HttpConnection(spec, options, guarded);
  await connection.start();
  return connection;
}

/**
 * One HTTP server's connection across its sessions: the MCP session in use (re-initialized once when the
 * server forgets it), what the last requests told (401/403, 404 on a session, a network failure), and
 * whether it ended. The guarded fetch is closed when it ends, unless the caller passed its own.
 */
class HttpConnection implements BackendConnection {
  readonly server: string;
  readonly ended: Promise<ConnectionEnd>;
  connectedAtMs = 0;
  readonly #spec: HttpServerSpec;
  readonly #options: HttpConnectOptions;
  readonly #logger: HttpConnectOptions["logger"];
  readonly #guarded: GuardedFetch;
  readonly #authProvider: AuthProvider | undefined;
  readonly #endpoint: URL;
  /** The URL as the manifest writes it (`${VAR}` unexpanded): the expanded one may carry a key. */
  readonly #shownUrl: string;
  readonly #shownHost: string;
  readonly #exchange: Exchange = { isSessionGone: false };
  #isEstablished = false;
  #isClosing = false;
  #isClosed = false;
  /** Why the connection was lost, once the server became unreachable. */
  #lost: BackendError | undefined;
  #session!: Session;
  #currentTransport: StreamableHTTPClientTransport | undefined;
  #resolveEnded!: (end: ConnectionEnd) => void;

  constructor(spec: HttpServerSpec, options: HttpConnectOptions, guarded: GuardedFetch) {
    this.ended = new Promise<ConnectionEnd>((resolve) => (this.#resolveEnded = resolve));
    [this.server, this.#spec, this.#options, this.#guarded] = [spec.name, spec, options, guarded];
    this.#logger = options.logger;
    const hasHeaderAuth = Object.keys(spec.headers).some((k) => k.toLowerCase() === "authorization");
    this.#authProvider = options.authProvider ??
      (options.configDir !== undefined && !hasHeaderAuth
        ? createStoredAuthProvider(spec, { configDir: options.configDir, fetch: guarded })
        : undefined);
    this.#endpoint = new URL(spec.url);
    this.#shownUrl = spec.urlTemplate ?? spec.url;
    this.#shownHost =
      /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(this.#shownUrl)?.[1]?.replace(/^.*@/, "") ??
        this.#endpoint.host;
  }

  /** Opens the first session; on failure the guarded fetch is closed and the error thrown. */
  async start(): Promise<void> {
    try {
      this.#session = await this.#openSession();
    } catch (error) {
      if (!this.#options.fetch) this.#guarded.close();
      throw error;
    }
    this.#isEstablished = true;
    this.connectedAtMs = this.#session.connection.connectedAtMs;
    this.#watch(this.#session);
  }

  get era(): BackendConnection["era"] {
    return this.#session.connection.era;
  }

  get toolListHints(): BackendConnection["toolListHints"] {
    return this.#session.connection.toolListHints;
  }

  get protocolVersion(): BackendConnection["protocolVersion"] {
    return this.#session.connection.protocolVersion;
  }

  get serverInfo(): BackendConnection["serverInfo"] {
    return this.#session.connection.serverInfo;
  }

  get serverCapabilities(): BackendConnection["serverCapabilities"] {
    return this.#session.connection.serverCapabilities;
  }

  get isClosed(): boolean {
    return this.#isClosed;
  }

  listTools(listOptions: Parameters<BackendConnection["listTools"]>[0]): Promise<ToolListing> {
    return this.#run((c) => c.listTools(listOptions));
  }

  callTool(tool: string, args: Record<string, unknown>, callOptions: CallOptions): Promise<CallToolResult> {
    return this.#run((c) => c.callTool(tool, args, callOptions));
  }

  listResources(
    listOptions: Parameters<BackendConnection["listResources"]>[0],
  ): ReturnType<BackendConnection["listResources"]> {
    return this.#run((c) => c.listResources(listOptions));
  }

  readResource(
    uri: string,
    readOptions: Parameters<BackendConnection["readResource"]>[1],
  ): Promise<ReadResourceResult> {
    return this.#run((c) => c.readResource(uri, readOptions));
  }

  async close(): Promise<void> {
    if (this.#isClosed || this.#isClosing) return;
    this.#isClosing = true;
    const current = this.#session;
    try {
      await withTimeout(
        current.transport.terminateSession(),
        this.#options.terminateTimeoutMs ?? DEFAULT_TERMINATE_TIMEOUT_MS,
      );
    } catch (error) {
      // The server may be gone or refuse DELETE; the session ends on our side either way.
      this.#logger.debug(`session DELETE failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    await current.connection.close();
    this.#finish({ reason: "closed by us", isExpected: true });
  }

  /**
   * Every request of this server: manifest headers only to the MCP endpoint itself (never to an
   * authorization server), the transport's own headers winning; outcomes noted in the exchange.
   */
  async #fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const url = new URL(input instanceof Request ? input.url : input);
    const endpoint = this.#endpoint;
    const isEndpoint = url.origin === endpoint.origin && url.pathname === endpoint.pathname;
    const headers = new Headers(isEndpoint ? this.#spec.headers : undefined);
    new Headers(init?.headers).forEach((value, name) => headers.set(name, value));
    const hasSession = headers.has("mcp-session-id");
    let response: Response;
    try {
      response = await this.#guarded(input, { ...init, headers });
    } catch (error) {
      if (!(error instanceof EndpointPolicyError) && !init?.signal?.aborted) {
        this.#exchange.networkError = error;
        // Once connected, any request failing below HTTP (a call, the background GET stream's
        // reconnect) means the server is gone: end now, so pending calls fail fast.
        if (this.#isEstablished && !this.#isClosing) this.#markUnreachable(error);
      }
      throw error;
    }
    this.#logger.debug(
      `${init?.method ?? "GET"} ${isEndpoint ? this.#shownUrl : url.origin} \u2192 ${response.status}`,
    );
    response = failOversizeEvents(
      response,
      init?.body,
      (message) => this.#currentTransport?.onmessage?.(message),
      MODERN_VERSIONS.has(headers.get("mcp-protocol-version") ?? ""),
    );
    if (isEndpoint) this.#noteEndpointAnswer(response, hasSession);
    return response;
  }

  #noteEndpointAnswer(response: Response, hasSession: boolean): void {
    if (response.status === 401 || response.status === 403) {
      this.#exchange.authFailure = {
        status: response.status,
        challenge: response.headers.get("www-authenticate") ?? undefined,
      };
    } else if (response.ok) this.#exchange.authFailure = undefined;
    if (response.status === 404 && hasSession) this.#exchange.isSessionGone = true;
  }

  #resetExchange(): void {
    this.#exchange.authFailure = undefined;
    this.#exchange.isSessionGone = false;
    this.#exchange.networkError = undefined;
  }

  /** Turns a failure into the error the caller should see, or `undefined` to keep the original. */
  #authOrPolicyError(error: unknown): BackendError | undefined {
    const chain = causes(error);
    const signIn = chain.find((e): e is SignInRequiredError => e instanceof SignInRequiredError);
    if (signIn || this.#exchange.authFailure) {
      const reason = signIn?.message.replace(/^Cannot use "[^"]*": /, "");
      return new AuthRequiredError(this.server, { ...this.#exchange.authFailure, reason }, { cause: error });
    }
    const policy = chain.find((e): e is EndpointPolicyError => e instanceof EndpointPolicyError);
    if (policy) {
      return new BackendError("START_FAILED", this.server, policy.message, {
        hint: policy.hint,
        cause: policy,
      });
    }
    return undefined;
  }

  /** Remembers the scopes of a step-up challenge for the next `mcp login` (best effort). */
  async #notedStepUp(error: AuthRequiredError): Promise<AuthRequiredError> {
    const configDir = this.#options.configDir;
    if (error.requiredScopes && configDir !== undefined) {
      await recordStepUpScopes(configDir, this.#spec, error.requiredScopes).catch((writeError) =>
        this.#logger.warn(`cannot remember the scopes ${this.#spec.name} asked for: ${String(writeError)}`)
      );
    }
    return error;
  }

  async #openSession(): Promise<Session> {
    const transport = new StreamableHTTPClientTransport(this.#endpoint, {
      fetch: (input, init) => this.#fetch(input, init),
      ...(this.#authProvider ? { authProvider: this.#authProvider } : {}),
    });
    this.#currentTransport = transport;
    this.#resetExchange();
    const options = this.#options;
    try {
      const connection = await openConnection(transport, {
        server: this.server,
        startupTimeoutMs: this.#spec.startupTimeoutMs,
        roots: options.roots,
        onToolListChanged: options.onToolListChanged,
        peer: options.peer,
        priorEra: options.priorEra,
        signal: options.signal,
        logger: this.#logger,
        now: options.now,
      });
      return { transport, connection };
    } catch (error) {
      const mapped = this.#authOrPolicyError(error);
      if (mapped instanceof AuthRequiredError) throw await this.#notedStepUp(mapped);
      throw mapped ?? httpStatusError(this.server, this.#shownUrl, error) ?? error;
    }
  }

  #finish(end: ConnectionEnd): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    if (!this.#options.fetch) this.#guarded.close();
    this.#resolveEnded(end);
  }

  #watch(current: Session): void {
    void current.connection.ended.then((end) => {
      if (this.#session === current && !end.isExpected) this.#finish(end);
    });
  }

  #connectionLost(): BackendError {
    return this.#lost ?? new BackendError("CONNECTION_LOST", this.server, `${this.server}: connection lost`);
  }

  #markUnreachable(error: unknown): BackendError {
    if (this.#lost || this.#isClosed) return this.#connectionLost();
    const why = error instanceof Error ? error.message : String(error);
    const reason = `${this.#shownHost} is unreachable: ${why}`;
    this.#logger.warn(`connection ended: ${reason}`);
    this.#lost = new BackendError(
      "CONNECTION_LOST",
      this.server,
      `${this.server}: connection lost: ${reason}`,
      {
        cause: error,
      },
    );
    this.#finish({ reason, isExpected: false });
    void this.#session.connection.close(); // Pending requests fail now with CONNECTION_LOST.
    return this.#lost;
  }

  /** Runs one request; a gone session is re-initialized once, then the request is sent again. */
  async #run<T>(op: (connection: BackendConnection) => Promise<T>): Promise<T> {
    for (let attempt = 1;; attempt++) {
      if (this.#isClosed) throw this.#connectionLost();
      this.#resetExchange();
      try {
        return await op(this.#session.connection);
      } catch (error) {
        if (error instanceof BackendError && error.code === "CANCELLED") throw error;
        if (this.#lost) throw this.#lost;
        if (error instanceof BackendError && error.code === "CALL_TIMEOUT") throw error;
        const mapped = this.#authOrPolicyError(error);
        if (mapped instanceof AuthRequiredError) throw await this.#notedStepUp(mapped);
        if (this.#exchange.isSessionGone && attempt === 1) {
          await this.#renewSession();
          continue;
        }
        if (this.#exchange.networkError !== undefined) {
          throw this.#markUnreachable(this.#exchange.networkError);
        }
        throw error;
      }
    }
  }

  /** Replaces a session the server forgot (404) with a new one; when that fails, the connection ends. */
  async #renewSession(): Promise<void> {
    this.#logger.info("session expired (404); initializing a new one");
    const old = this.#session;
    try {
      this.#session = await this.#openSession();
    } catch (startError) {
      this.#session = old;
      await old.connection.close();
      this.#finish({ reason: "the session expired and a new one could not be started", isExpected: false });
      throw startError;
    }
    this.#watch(this.#session);
    await old.connection.close(); // No DELETE: the server already forgot it.
  }
}

/** Protocol versions of the modern (2026-07-28) era: no stream resumption, a broken stream is reported. */
const MODERN_VERSIONS = new Set(["2026-07-28"]);

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
