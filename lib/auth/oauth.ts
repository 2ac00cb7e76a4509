/**
 * OAuth sign-in for remote MCP servers over the SDK v2 client (`auth()`, `OAuthClientProvider`,
 * `refreshAuthorization`), backed by the credential files of `credentials.ts`:
 *
 * - {@link signIn}: the interactive flow `mcp login` runs (RFC 9728 discovery seeded from the 401
 *   challenge, RFC 8414/OIDC metadata, RFC 7591 registration as a native public client or the
 *   manifest `client-id`, PKCE S256 required, RFC 8707 `resource` always sent, `state` and `iss`
 *   checked, loopback redirect);
 * - {@link createStoredAuthProvider}: what a connection uses: the stored bearer token, re-read on
 *   every request, refreshed shortly before expiry and on 401 under the credential lock;
 * - {@link signOut}: RFC 7009 revocation, then the file is deleted.
 *
 * Every request goes through the `fetch` the caller passes (the endpoint-policy guarded one in
 * production). No token, code or secret appears in a message.
 *
 * @module
 */
import {
  auth,
  type AuthProvider,
  buildDiscoveryUrls,
  checkResourceAllowed,
  discoverOAuthServerInfo,
  type FetchLike,
  IssuerMismatchError,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  OAuthError,
  refreshAuthorization,
  RegistrationRejectedError,
  resourceUrlFromServerUrl,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { UserError } from "../diagnostics.ts";
import { startCallbackServer } from "./callback_server.ts";
import {
  type CredentialLockOptions,
  type CredentialRecord,
  CREDENTIALS_FORMAT_VERSION,
  deleteCredentials,
  isTokenExpiring,
  loadCredentials,
  loginCommand,
  readCredentials,
  withCredentialLock,
  writeCredentials,
} from "./credentials.ts";

/** Refresh this long before the stated expiry, in milliseconds. */
export const DEFAULT_REFRESH_SKEW_MS = 60_000;
/** Longest wait for one request to the authorization server, in milliseconds. */
export const DEFAULT_AUTH_REQUEST_TIMEOUT_MS = 15_000;
/** `client_name` sent in dynamic client registration. */
export const CLIENT_NAME = "cargo-agents (Symposium)";

/** OAuth error codes after which a refresh token will never work again. */
const PERMANENT_REFRESH_ERRORS = new Set(["invalid_grant", "invalid_client", "unauthorized_client"]);

/** The narrow shape of a remote server this module needs (a subset of `HttpServerSpec`). */
export interface OAuthServer {
  /** Server name from the manifest. */
  name: string;
  /** The endpoint URL (expanded). */
  url: string;
  /** Manifest headers, sent with the unauthenticated probe. */
  headers?: Record<string, string> | undefined;
  /** Pre-registered client id (manifest `client-id`). */
  clientId?: string | undefined;
  /** Its secret (manifest `client-secret`, expanded). */
  clientSecret?: string | undefined;
  /** Scopes to request (manifest `scopes`). */
  scopes?: string[] | undefined;
}

/**
 * A remote server needs (a new) sign-in: there are no credentials for its URL, the server refused
 * them, or the authorization server refused the refresh token. Code `NEEDS_SIGN_IN`; the hint is
 * the exact login command.
 */
export class SignInRequiredError extends UserError {
  override name = "SignInRequiredError";
  /** Server name. */
  readonly server: string;
  constructor(server: string, reason: string, options: { cause?: unknown } = {}) {
    super("NEEDS_SIGN_IN", `Cannot use "${server}": ${reason}`, {
      hint: `run \`${loginCommand(server)}\` to sign in`,
      cause: options.cause,
    });
    this.server = server;
  }
}

/** Options of {@link signIn}. */
export interface SignInOptions {
  /** The config dir (credentials go to `<configDir>/credentials/`). */
  configDir: string;
  /** Every request of the flow goes through it (the endpoint-policy guarded fetch in production). */
  fetch: FetchLike;
  /**
   * Called once with the authorization URL, after the loopback listener is bound: print it and
   * open the browser. The URL holds no secret (PKCE sends only the challenge).
   */
  onAuthorizationUrl(url: string): void | Promise<void>;
  /** Longest wait for the browser, in milliseconds. @default 300_000 */
  timeoutMs?: number;
  /** Longest wait for one request to the authorization server, in milliseconds. @default DEFAULT_AUTH_REQUEST_TIMEOUT_MS */
  requestTimeoutMs?: number;
  /** Aborts the sign-in (Ctrl-C). */
  signal?: AbortSignal;
  /** Current time, milliseconds since the epoch. @default Date.now */
  now?: () => number;
  /** Credential lock timing. */
  lock?: CredentialLockOptions;
}

/** What {@link signIn} stored. */
export interface SignInResult {
  /** The authorization server's issuer. */
  issuer: string;
  /** When the access token expires, milliseconds since the epoch, if the server said. */
  expiresAtMs?: number;
  /** Whether a refresh token was issued (the sign-in then renews itself). */
  hasRefreshToken: boolean;
  /** The granted scope, if the server said. */
  scope?: string;
}

/**
 * Signs in to `server` interactively and stores the result in its credential file.
 *
 * Order: bind `127.0.0.1:0` → probe the server without a token for its `WWW-Authenticate`
 * challenge → discovery (RFC 9728, then RFC 8414 / OIDC) → refuse without PKCE S256 or without a
 * way to get a client → SDK `auth()` (registration, authorization URL with PKCE, `state`,
 * `resource`) → `onAuthorizationUrl` → wait for `/callback` → SDK `auth()` with the code (`iss`
 * checked, code exchanged with the verifier and `resource`) → file written under the lock.
 *
 * @throws {UserError} `LOGIN_NO_OAUTH` (no authorization-server metadata), `LOGIN_NO_PKCE`,
 *   `LOGIN_NO_REGISTRATION` (no RFC 7591 endpoint and no manifest `client-id`),
 *   `LOGIN_RESOURCE_MISMATCH`, `LOGIN_REGISTRATION_REJECTED`, `LOGIN_DENIED` (an `error=` redirect),
 *   `LOGIN_TIMEOUT`, `LOGIN_ISSUER_MISMATCH`, `LOGIN_FAILED` (other OAuth errors),
 *   `LOGIN_UNREACHABLE` (network); endpoint-policy errors from `fetch` pass through unchanged.
 */
export async function signIn(server: OAuthServer, options: SignInOptions): Promise<SignInResult> {
  const fetchFn = withTimeout(options.fetch, options.requestTimeoutMs ?? DEFAULT_AUTH_REQUEST_TIMEOUT_MS);
  const state = randomToken();
  await using callback = startCallbackServer({ expectedState: state, serverName: server.name });
  try {
    const challenge = await probeChallenge(server, fetchFn, options.signal);
    const discovery = await discover(server, challenge.resourceMetadataUrl, fetchFn);
    const provider = new SignInProvider(server, {
      configDir: options.configDir,
      redirectUrl: callback.redirectUrl,
      state,
      discovery,
      now: options.now ?? Date.now,
      onAuthorizationUrl: options.onAuthorizationUrl,
      ...(options.lock ? { lock: options.lock } : {}),
    });
    const scope = server.scopes?.length ? server.scopes.join(" ") : challenge.scope;
    const common = {
      serverUrl: server.url,
      fetchFn,
      ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
      ...(scope ? { scope } : {}),
    };
    const first = await auth(provider, common);
    if (first !== "REDIRECT" || !provider.authorizationUrlShown) {
      throw new UserError(
        "LOGIN_FAILED",
        `Cannot sign in to "${server.name}": the authorization flow did not start`,
      );
    }
    const { code, iss } = await callback.waitForCallback({
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const second = await auth(provider, { ...common, authorizationCode: code, ...(iss ? { iss } : {}) });
    const saved = provider.savedRecord;
    if (second !== "AUTHORIZED" || saved?.tokens === undefined) {
      throw new UserError("LOGIN_FAILED", `Cannot sign in to "${server.name}": no token was issued`);
    }
    return {
      issuer: saved.issuer ?? "",
      hasRefreshToken: saved.tokens.refresh_token !== undefined,
      ...(saved.expiresAtMs === undefined ? {} : { expiresAtMs: saved.expiresAtMs }),
      ...(saved.tokens.scope === undefined ? {} : { scope: saved.tokens.scope }),
    };
  } catch (error) {
    throw describeFlowError(server.name, error);
  }
}

interface Challenge {
  resourceMetadataUrl?: URL;
  scope?: string;
}

/** Sends `initialize` without a token to learn the server's `WWW-Authenticate` challenge. */
async function probeChallenge(
  server: OAuthServer,
  fetchFn: FetchLike,
  signal?: AbortSignal,
): Promise<Challenge> {
  const headers = new Headers(server.headers ?? {});
  headers.delete("authorization");
  headers.set("content-type", "application/json");
  headers.set("accept", "application/json, text/event-stream");
  const response = await fetchFn(server.url, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "symposium", version: "0" },
      },
    }),
    ...(signal ? { signal } : {}),
  });
  await response.body?.cancel().catch(() => {}); // Only the headers matter.
  if (response.status !== 401 && response.status !== 403) return {};
  const params = parseBearerChallenge(response.headers.get("www-authenticate") ?? "");
  const out: Challenge = {};
  if (params.resource_metadata) {
    try {
      out.resourceMetadataUrl = new URL(params.resource_metadata, server.url);
    } catch {
      // A malformed URL is ignored: the well-known locations are tried instead.
    }
  }
  if (params.scope) out.scope = params.scope;
  return out;
}

/**
 * Parses the `Bearer` challenge of a `WWW-Authenticate` value (RFC 9110 §11.6.1): several
 * challenges, quoted strings with `\` escapes, unquoted values (bare URLs too), any spacing.
 * Parameter names are lowercased.
 *
 * @returns The parameters of the first `Bearer` challenge (empty when there is none).
 * @example
 * ```ts
 * import { parseBearerChallenge } from "./oauth.ts";
 * parseBearerChallenge('Basic realm="x", Bearer scope="a b", resource_metadata="https://h/.well-known/oauth-protected-resource"');
 * // { scope: "a b", resource_metadata: "https://h/.well-known/oauth-protected-resource" }
 * ```
 */
export function parseBearerChallenge(header: string): Record<string, string> {
  let i = 0;
  const n = header.length;
  const skip = (chars: string) => {
    while (i < n && chars.includes(header[i]!)) i++;
  };
  const token = (): string => {
    const start = i;
    while (i < n && /[!#$%&'*+.^_`|~0-9A-Za-z-]/.test(header[i]!)) i++;
    return header.slice(start, i);
  };
  let current: Record<string, string> | undefined;
  let isBearer = false;
  while (i < n) {
    skip(" \t,");
    const name = token();
    if (name === "") {
      i++; // Not a token character: skip it.
      continue;
    }
    skip(" \t");
    if (header[i] === "=") {
      // A parameter (or token68 padding) of the current challenge.
      i++;
      skip(" \t");
      let value = "";
      if (header[i] === '"') {
        i++;
        while (i < n && header[i] !== '"') {
          if (header[i] === "\\" && i + 1 < n) i++;
          value += header[i];
          i++;
        }
        i++;
      } else {
        // Unquoted: a token by the RFC, but servers send bare URLs too, so read up to `,` or space.
        const start = i;
        while (i < n && !" \t,".includes(header[i]!)) i++;
        value = header.slice(start, i);
      }
      if (isBearer && current) current[name.toLowerCase()] ??= value;
      continue;
    }
    // A new auth-scheme.
    if (isBearer && current) return current;
    isBearer = name.toLowerCase() === "bearer";
    current = isBearer ? {} : undefined;
  }
  return current ?? {};
}

/** What discovery found: the SDK's state, plus the RFC 7009 endpoint the SDK's OIDC schema drops. */
interface Discovery {
  state: OAuthDiscoveryState;
  revocation: CredentialRecord["revocation"];
}

/** RFC 9728 + RFC 8414/OIDC discovery, with our refusals (no metadata, no PKCE S256). */
async function discover(
  server: OAuthServer,
  resourceMetadataUrl: URL | undefined,
  fetchFn: FetchLike,
): Promise<Discovery> {
  const info = await discoverOAuthServerInfo(server.url, {
    fetchFn,
    ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
  });
  const metadata = info.authorizationServerMetadata;
  if (!metadata) {
    throw new UserError(
      "LOGIN_NO_OAUTH",
      `Cannot sign in to "${server.name}": no OAuth authorization server metadata was found for ${
        displayOrigin(info.authorizationServerUrl)
      }`,
      { hint: "the server may not use OAuth; check its documentation for the authentication it expects" },
    );
  }
  if (!metadata.code_challenge_methods_supported?.includes("S256")) {
    throw new UserError(
      "LOGIN_NO_PKCE",
      `Cannot sign in to "${server.name}": its authorization server ${metadata.issuer} does not offer PKCE with S256`,
      {
        hint:
          "the MCP authorization specification requires PKCE S256; ask the server's operator to enable it",
      },
    );
  }
  if (!metadata.registration_endpoint && !server.clientId) {
    throw new UserError(
      "LOGIN_NO_REGISTRATION",
      `Cannot sign in to "${server.name}": its authorization server ${metadata.issuer} offers no dynamic client registration`,
      {
        hint:
          "register an OAuth client with that server and add `client-id` (and `client-secret`) to the manifest",
      },
    );
  }
  return {
    state: {
      authorizationServerUrl: info.authorizationServerUrl,
      authorizationServerMetadata: metadata,
      ...(info.resourceMetadata ? { resourceMetadata: info.resourceMetadata } : {}),
      ...(resourceMetadataUrl ? { resourceMetadataUrl: resourceMetadataUrl.href } : {}),
    },
    revocation: await findRevocationEndpoint(info.authorizationServerUrl, metadata.issuer, fetchFn),
  };
}

/**
 * The RFC 7009 revocation endpoint, read from the raw metadata document: the SDK's parsed OpenID
 * metadata drops fields it does not know, `revocation_endpoint` among them.
 */
async function findRevocationEndpoint(
  authorizationServerUrl: string,
  issuer: string,
  fetchFn: FetchLike,
): Promise<CredentialRecord["revocation"]> {
  for (const { url } of buildDiscoveryUrls(authorizationServerUrl)) {
    let document: Record<string, unknown>;
    try {
      const response = await fetchFn(url, { headers: { accept: "application/json" } });
      if (!response.ok) {
        await response.body?.cancel().catch(() => {}); // Try the next location.
        continue;
      }
      document = await response.json();
    } catch (error) {
      if (error instanceof UserError) throw error; // Endpoint policy: not something to skip.
      continue; // Not JSON, or unreachable: revocation is optional.
    }
    if (document.issuer !== issuer) continue;
    const endpoint = document.revocation_endpoint;
    if (typeof endpoint !== "string") return undefined;
    const methods = document.revocation_endpoint_auth_methods_supported;
    return {
      endpoint,
      ...(Array.isArray(methods)
        ? { authMethods: methods.filter((m): m is string => typeof m === "string") }
        : {}),
    };
  }
  return undefined;
}

interface SignInProviderOptions {
  configDir: string;
  redirectUrl: string;
  state: string;
  discovery: Discovery;
  now: () => number;
  onAuthorizationUrl(url: string): void | Promise<void>;
  lock?: CredentialLockOptions;
}

/** The `OAuthClientProvider` `mcp login` drives: state lives in memory until the tokens arrive. */
class SignInProvider implements OAuthClientProvider {
  readonly #server: OAuthServer;
  readonly #options: SignInProviderOptions;
  #client: StoredOAuthClientInformation | undefined;
  #codeVerifier: string | undefined;
  #discovery: OAuthDiscoveryState;
  #resource: string | undefined;
  /** Set once the authorization URL was handed over. */
  authorizationUrlShown = false;
  /** The record written by `saveTokens`. */
  savedRecord: CredentialRecord | undefined;

  constructor(server: OAuthServer, options: SignInProviderOptions) {
    this.#server = server;
    this.#options = options;
    this.#discovery = options.discovery.state;
    const issuer = options.discovery.state.authorizationServerMetadata?.issuer;
    if (server.clientId) {
      // The manifest client, stamped with the issuer so the SDK binds it without a warning.
      this.#client = {
        client_id: server.clientId,
        ...(server.clientSecret ? { client_secret: server.clientSecret } : {}),
        ...(issuer ? { issuer } : {}),
      };
    }
  }

  get redirectUrl(): string {
    return this.#options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: CLIENT_NAME,
      redirect_uris: [this.#options.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      application_type: "native",
    } as OAuthClientMetadata;
  }

  state(): string {
    return this.#options.state;
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    return this.#client;
  }

  saveClientInformation(info: StoredOAuthClientInformation): void {
    this.#client = info;
  }

  tokens(): StoredOAuthTokens | undefined {
    return undefined; // A sign-in always asks the user; it never refreshes old tokens.
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    const now = this.#options.now();
    const { configDir } = this.#options;
    const client = this.#server.clientId
      // The manifest's secret stays in the manifest.
      ? { client_id: this.#server.clientId, ...(this.#client?.issuer ? { issuer: this.#client.issuer } : {}) }
      : this.#client;
    const record: CredentialRecord = {
      version: CREDENTIALS_FORMAT_VERSION,
      server: this.#server.name,
      serverUrl: this.#server.url,
      issuer: tokens.issuer ?? this.#discovery.authorizationServerMetadata?.issuer,
      resource: this.#resource,
      client,
      tokens,
      receivedAtMs: now,
      expiresAtMs: tokens.expires_in === undefined ? undefined : now + tokens.expires_in * 1000,
      discovery: this.#discovery,
      revocation: this.#options.discovery.revocation,
    };
    await withCredentialLock(
      configDir,
      this.#server.name,
      () => writeCredentials(configDir, record),
      this.#options.lock,
    );
    this.savedRecord = record;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.authorizationUrlShown = true;
    await this.#options.onAuthorizationUrl(authorizationUrl.href);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#codeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.#codeVerifier === undefined) throw new Error("No PKCE code verifier was saved");
    return this.#codeVerifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState {
    return this.#discovery;
  }

  saveResourceUrl(resourceUrl: string): void {
    this.#resource = resourceUrl;
  }

  /**
   * RFC 8707: always send a resource (the SDK omits it without protected-resource metadata), and
   * accept the metadata's `resource` only when it designates this server (RFC 9728 §3.3).
   */
  validateResourceURL(serverUrl: string | URL, resource?: string): Promise<URL | undefined> {
    const requested = resourceUrlFromServerUrl(serverUrl);
    if (resource === undefined) return Promise.resolve(requested);
    if (!checkResourceAllowed({ requestedResource: requested, configuredResource: resource })) {
      throw new UserError(
        "LOGIN_RESOURCE_MISMATCH",
        `Cannot sign in to "${this.#server.name}": its metadata describes resource ${resource}, not ${requested.href}`,
      );
    }
    return Promise.resolve(new URL(resource));
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if ((scope === "all" || scope === "client") && !this.#server.clientId) this.#client = undefined;
    if (scope === "all" || scope === "verifier") this.#codeVerifier = undefined;
  }
}

/** Turns SDK and network failures of the interactive flow into `UserError`s without secrets. */
function describeFlowError(server: string, error: unknown): unknown {
  if (error instanceof UserError) return error;
  if (error instanceof RegistrationRejectedError) {
    let detail = `HTTP ${error.status}`;
    try {
      const body = JSON.parse(error.body) as { error?: string; error_description?: string };
      if (body.error) {
        detail += `: ${body.error}${body.error_description ? ` (${body.error_description})` : ""}`;
      }
    } catch {
      // Not an RFC 7591 error body: the status is all we show.
    }
    return new UserError(
      "LOGIN_REGISTRATION_REJECTED",
      `Cannot sign in to "${server}": the authorization server refused to register this client: ${detail}`,
      {
        hint: "if the server expects a pre-registered client, add `client-id` to the manifest",
        cause: error,
      },
    );
  }
  if (error instanceof IssuerMismatchError) {
    return new UserError(
      "LOGIN_ISSUER_MISMATCH",
      `Cannot sign in to "${server}": the authorization server's issuer does not match (expected ${
        error.expected ?? "unknown"
      })`,
      { cause: error },
    );
  }
  if (error instanceof OAuthError) {
    return new UserError(
      "LOGIN_FAILED",
      `Cannot sign in to "${server}": the authorization server answered ${error.code}: ${error.message}`,
      { cause: error },
    );
  }
  if (error instanceof TypeError || (error instanceof DOMException && error.name === "TimeoutError")) {
    return new UserError(
      "LOGIN_UNREACHABLE",
      `Cannot sign in to "${server}": a request of the sign-in failed: ${error.message}`,
      { cause: error },
    );
  }
  if (error instanceof Error) {
    return new UserError("LOGIN_FAILED", `Cannot sign in to "${server}": ${error.message}`, { cause: error });
  }
  return error;
}

/** Options of {@link createStoredAuthProvider} and {@link refreshCredentials}. */
export interface StoredAuthOptions {
  /** The config dir. */
  configDir: string;
  /** Requests to the authorization server go through it (the guarded fetch in production). */
  fetch: FetchLike;
  /** Refresh this long before the stated expiry, in milliseconds. @default DEFAULT_REFRESH_SKEW_MS */
  refreshSkewMs?: number;
  /** Longest wait for one token request, in milliseconds. @default DEFAULT_AUTH_REQUEST_TIMEOUT_MS */
  requestTimeoutMs?: number;
  /** Current time, milliseconds since the epoch. @default Date.now */
  now?: () => number;
  /** Credential lock timing. */
  lock?: CredentialLockOptions;
}

/**
 * The SDK `AuthProvider` a connection to `server` uses (pass it as the streamable HTTP transport's
 * `authProvider`). `token()` reads the credential file on every request (so a `mcp login` in a
 * terminal takes effect on the next request) and refreshes the token when it expires within
 * `refreshSkewMs`; `onUnauthorized()` (a 401) uses a newer token from the file if another process
 * wrote one, else refreshes; the transport then retries once.
 *
 * @throws {SignInRequiredError} from both methods when there is nothing usable: no credentials for
 *   this URL (on 401), an expired token without refresh token, a refresh token the authorization
 *   server refused for good (the tokens are then removed from the file).
 */
export function createStoredAuthProvider(server: OAuthServer, options: StoredAuthOptions): AuthProvider {
  const now = options.now ?? Date.now;
  const skewMs = options.refreshSkewMs ?? DEFAULT_REFRESH_SKEW_MS;
  let sent: string | undefined;
  return {
    async token(): Promise<string | undefined> {
      let record = await loadCredentials(options.configDir, server);
      if (record?.tokens === undefined) {
        sent = undefined;
        return undefined;
      }
      if (isTokenExpiring(record, now(), skewMs)) {
        if (!record.tokens.refresh_token) {
          if (isTokenExpiring(record, now())) {
            throw new SignInRequiredError(server.name, "its sign-in has expired");
          }
        } else {
          try {
            record = await refreshCredentials(server, options);
          } catch (error) {
            if (error instanceof SignInRequiredError) throw error;
            // A transient failure: send the current token; a 401 will try again.
          }
        }
      }
      sent = record.tokens?.access_token;
      return sent;
    },
    async onUnauthorized(): Promise<void> {
      const record = await loadCredentials(options.configDir, server);
      if (record?.tokens === undefined) {
        throw new SignInRequiredError(
          server.name,
          record?.rejected ? "the server refused its stored sign-in" : "it requires authorization",
        );
      }
      if (record.tokens.access_token !== sent) return; // A newer token is on disk: retry with it.
      if (!record.tokens.refresh_token) {
        throw new SignInRequiredError(
          server.name,
          "the server refused its token and there is no refresh token",
        );
      }
      await refreshCredentials(server, { ...options, staleAccessToken: record.tokens.access_token });
    },
  };
}

/**
 * Refreshes the stored tokens of `server` under the credential lock and persists the result
 * (keeping the old refresh token only when the server did not rotate it). After taking the lock
 * the file is read again: when another process already refreshed (the access token differs from
 * `staleAccessToken`, or is no longer expiring), its result is used and no request is made.
 *
 * @param options.staleAccessToken The token the server refused (a 401); without it, refreshes
 *   only a token that expires within `refreshSkewMs`.
 * @returns The record now on disk.
 * @throws {SignInRequiredError} No credentials for this URL, no refresh token, or the
 *   authorization server refused the refresh for good (`invalid_grant`, `invalid_client`,
 *   `unauthorized_client`): the tokens are then removed from the file and `rejected` is set.
 * @throws {UserError} `REFRESH_FAILED` for anything else (network, 5xx): the file is untouched.
 */
export function refreshCredentials(
  server: OAuthServer,
  options: StoredAuthOptions & { staleAccessToken?: string },
): Promise<CredentialRecord> {
  const now = options.now ?? Date.now;
  const skewMs = options.refreshSkewMs ?? DEFAULT_REFRESH_SKEW_MS;
  const fetchFn = withTimeout(options.fetch, options.requestTimeoutMs ?? DEFAULT_AUTH_REQUEST_TIMEOUT_MS);
  return withCredentialLock(options.configDir, server.name, async () => {
    const record = await loadCredentials(options.configDir, server);
    const tokens = record?.tokens;
    if (record === undefined || tokens === undefined) {
      throw new SignInRequiredError(server.name, "it is not signed in");
    }
    const stillFresh = options.staleAccessToken === undefined
      ? !isTokenExpiring(record, now(), skewMs)
      : tokens.access_token !== options.staleAccessToken;
    if (stillFresh) return record; // Someone else refreshed (or signed in) meanwhile.
    if (!tokens.refresh_token) throw new SignInRequiredError(server.name, "its sign-in has expired");
    const client = server.clientId
      ? { client_id: server.clientId, ...(server.clientSecret ? { client_secret: server.clientSecret } : {}) }
      : record.client;
    if (!client) throw new SignInRequiredError(server.name, "its stored sign-in has no client registration");
    const metadata = record.discovery?.authorizationServerMetadata;
    const authorizationServerUrl = record.discovery?.authorizationServerUrl ?? record.issuer;
    if (!authorizationServerUrl) {
      throw new SignInRequiredError(server.name, "its stored sign-in is incomplete");
    }
    let refreshed;
    try {
      refreshed = await refreshAuthorization(authorizationServerUrl, {
        ...(metadata ? { metadata } : {}),
        clientInformation: client,
        refreshToken: tokens.refresh_token,
        ...(record.resource ? { resource: record.resource } : {}),
        fetchFn,
      });
    } catch (error) {
      if (error instanceof OAuthError && PERMANENT_REFRESH_ERRORS.has(error.code)) {
        await writeCredentials(options.configDir, {
          ...record,
          tokens: undefined,
          receivedAtMs: undefined,
          expiresAtMs: undefined,
          rejected: error.code,
        });
        throw new SignInRequiredError(
          server.name,
          `the authorization server refused its refresh token (${error.code})`,
        );
      }
      const reason = error instanceof OAuthError ? `${error.code}: ${error.message}` : errorText(error);
      throw new UserError("REFRESH_FAILED", `Cannot refresh the sign-in of "${server.name}": ${reason}`, {
        cause: error,
      });
    }
    const at = now();
    const next: CredentialRecord = {
      ...record,
      tokens: { ...refreshed, ...(record.issuer ? { issuer: record.issuer } : {}) },
      receivedAtMs: at,
      expiresAtMs: refreshed.expires_in === undefined ? undefined : at + refreshed.expires_in * 1000,
      rejected: undefined,
    };
    await writeCredentials(options.configDir, next);
    return next;
  }, options.lock);
}

/** What {@link signOut} did. */
export interface SignOutResult {
  /** A credential file was there (and is now deleted). */
  existed: boolean;
  /** The authorization server confirmed the revocation (RFC 7009) of every stored token. */
  revoked: boolean;
  /** Why revocation did not happen or failed, when it did not succeed (never contains a token). */
  revocationNote?: string;
}

/**
 * Signs out of `server`: revokes its refresh and access tokens at the authorization server when it
 * offers RFC 7009 revocation (a failure there does not stop the sign-out), then deletes the file.
 * Running it again finds nothing and does nothing.
 *
 * @param server The server name, plus its manifest client (for client authentication) when known.
 */
export function signOut(
  configDir: string,
  server: Pick<OAuthServer, "name" | "clientId" | "clientSecret">,
  options: { fetch: FetchLike; requestTimeoutMs?: number; lock?: CredentialLockOptions },
): Promise<SignOutResult> {
  const fetchFn = withTimeout(options.fetch, options.requestTimeoutMs ?? DEFAULT_AUTH_REQUEST_TIMEOUT_MS);
  return withCredentialLock(configDir, server.name, async () => {
    const record = await readCredentials(configDir, server.name);
    let revoked = false;
    let revocationNote: string | undefined;
    const endpoint = record?.revocation?.endpoint;
    const tokens = record?.tokens;
    if (record && tokens) {
      if (!endpoint) {
        revocationNote = "the authorization server offers no token revocation";
      } else {
        const clientId = server.clientId ?? record.client?.client_id;
        const secret = server.clientId ? server.clientSecret : record.client?.client_secret;
        const methods = record.revocation?.authMethods;
        try {
          const pending: [string, string][] = [];
          if (tokens.refresh_token) pending.push([tokens.refresh_token, "refresh_token"]);
          pending.push([tokens.access_token, "access_token"]);
          for (const [token, hint] of pending) {
            const status = await revokeToken(fetchFn, endpoint, { token, hint, clientId, secret, methods });
            if (status !== 200) throw new Error(`HTTP ${status}`);
          }
          revoked = true;
        } catch (error) {
          revocationNote = `revocation failed: ${errorText(error)}`;
        }
      }
    }
    const existed = await deleteCredentials(configDir, server.name);
    return { existed, revoked, ...(revocationNote === undefined ? {} : { revocationNote }) };
  }, options.lock);
}

async function revokeToken(
  fetchFn: FetchLike,
  endpoint: string,
  o: {
    token: string;
    hint: string;
    clientId: string | undefined;
    secret: string | undefined;
    methods?: string[] | undefined;
  },
): Promise<number> {
  const body = new URLSearchParams({ token: o.token, token_type_hint: o.hint });
  const headers = new Headers({
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  });
  if (o.clientId !== undefined) {
    if (o.secret !== undefined && (o.methods === undefined || o.methods.includes("client_secret_basic"))) {
      headers.set(
        "authorization",
        `Basic ${btoa(`${encodeURIComponent(o.clientId)}:${encodeURIComponent(o.secret)}`)}`,
      );
    } else {
      body.set("client_id", o.clientId);
      if (o.secret !== undefined) body.set("client_secret", o.secret);
    }
  }
  const response = await fetchFn(endpoint, { method: "POST", headers, body });
  await response.body?.cancel().catch(() => {}); // The status is the answer.
  return response.status;
}

/** Wraps `fetchFn` so that each request fails after `timeoutMs` (headers; the caller's signal still applies). */
function withTimeout(fetchFn: FetchLike, timeoutMs: number): FetchLike {
  return async (url, init) => {
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError")),
      timeoutMs,
    );
    const signal = init?.signal ? AbortSignal.any([init.signal, controller.signal]) : controller.signal;
    try {
      return await fetchFn(url, { ...init, signal });
    } finally {
      clearTimeout(timer);
    }
  };
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function displayOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return JSON.stringify(url);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
