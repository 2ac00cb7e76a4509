/**
 * The interactive sign-in `mcp login` runs: RFC 9728 discovery seeded from the 401 challenge,
 * RFC 8414/OIDC metadata, RFC 7591 registration or the manifest client, PKCE S256, RFC 8707
 * `resource`, `state` checked, `iss` checked before the code is used (RFC 9207), loopback redirect;
 * the tokens are stored by `credentials.ts`.
 *
 * @module
 */
import {
  auth,
  type FetchLike,
  IssuerMismatchError,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  OAuthError,
  RegistrationRejectedError,
  resourceUrlFromServerUrl,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { UserError } from "../diagnostics.ts";
import { processSecrets } from "../secrets/mod.ts";
import { startCallbackServer } from "./callback_server.ts";
import {
  type CredentialLockOptions,
  type CredentialRecord,
  CREDENTIALS_FORMAT_VERSION,
  loadCredentials,
  withCredentialLock,
  writeCredentials,
} from "./credentials.ts";
import { checkEndpointUrl } from "../net/mod.ts";
import { scopeTokens, signInScope } from "./step_up.ts";
import {
  CLIENT_NAME,
  DEFAULT_AUTH_REQUEST_TIMEOUT_MS,
  type OAuthServer,
  randomToken,
  withTimeout,
} from "./_oauth_common.ts";
import { discover, type Discovery, parseBearerChallenge, probeChallenge } from "./_discovery.ts";
export { parseBearerChallenge };

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
  /**
   * Called before the browser step when the sign-in asks for scopes a `403 insufficient_scope`
   * challenge requested since the last sign-in (see `step_up.ts`), with those scopes.
   */
  onStepUpScopes?: (scopes: string[]) => void;
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
 * checked, code exchanged with the verifier and `resource`) → file written under the lock → the
 * browser's page says "Signed in" (on any failure it says what failed and that the terminal has
 * the details).
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
    // RFC 9207: the issuer recorded with the state and verifier, checked on the redirect before the code is used.
    const asMetadata = discovery.state.authorizationServerMetadata;
    callback.expectIssuer(
      asMetadata?.issuer,
      asMetadata?.authorization_response_iss_parameter_supported === true,
    );
    const provider = new SignInProvider(server, {
      configDir: options.configDir,
      redirectUrl: callback.redirectUrl,
      state,
      discovery,
      now: options.now ?? Date.now,
      onAuthorizationUrl: options.onAuthorizationUrl,
      ...(options.lock ? { lock: options.lock } : {}),
    });
    // After a step-up challenge, the union of what is asked now, what was granted and what the server asked for.
    const previous = await loadCredentials(options.configDir, server);
    const base = server.scopes?.length ? server.scopes : scopeTokens(challenge.scope);
    const { scope, added } = signInScope(base, previous?.tokens?.scope, previous?.stepUpScopes);
    if (added.length > 0) options.onStepUpScopes?.(added);
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
    callback.finish({ ok: true }); // Only now, with the tokens stored, does the browser say "Signed in".
    return {
      issuer: saved.issuer ?? "",
      hasRefreshToken: saved.tokens.refresh_token !== undefined,
      ...(saved.expiresAtMs === undefined ? {} : { expiresAtMs: saved.expiresAtMs }),
      ...(saved.tokens.scope === undefined ? {} : { scope: saved.tokens.scope }),
    };
  } catch (error) {
    const described = describeFlowError(server.name, error);
    const reason = described instanceof Error
      ? described.message.replace(/^Cannot sign in to "[^"]*": /, "")
      : "";
    callback.finish({ ok: false, reason: reason || "the sign-in failed" });
    throw described;
  }
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
  /** The manifest's Client ID Metadata Document URL: the SDK uses it as `client_id` where the AS supports it. */
  clientMetadataUrl?: string;
  /** The record written by `saveTokens`. */
  savedRecord: CredentialRecord | undefined;

  constructor(server: OAuthServer, options: SignInProviderOptions) {
    this.#server = server;
    this.#options = options;
    this.#discovery = options.discovery.state;
    if (server.clientMetadataUrl) this.clientMetadataUrl = server.clientMetadataUrl;
    if (!options.discovery.state.resourceMetadata) {
      this.validateResourceURL = (serverUrl) => Promise.resolve(resourceUrlFromServerUrl(serverUrl));
    }
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
    // The browser goes there, not our fetch: the endpoint policy's URL rules are checked here (https, or
    // plain http to an explicit loopback; no userinfo), for metadata-given and 2025-03-26 default endpoints alike.
    checkEndpointUrl(authorizationUrl.href, { server: this.#server.name });
    this.authorizationUrlShown = true;
    await this.#options.onAuthorizationUrl(authorizationUrl.href);
  }

  saveCodeVerifier(codeVerifier: string): void {
    processSecrets.register(codeVerifier); // Proof of the sign-in: never printed.
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
   * RFC 8707 without protected-resource metadata: the SDK would send no `resource`, so this sends the
   * server's own URL (without fragment). Set only then: with metadata, `discover()` has checked the
   * metadata's `resource` designates this server (RFC 9728 §3.3) and the SDK sends it verbatim, as
   * published (a pathless `https://h` stays without the `/` a URL parser would add).
   */
  validateResourceURL?: (serverUrl: string | URL, resource?: string) => Promise<URL | undefined>;

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
