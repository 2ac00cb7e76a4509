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
import { type CallbackServer, startCallbackServer } from "./callback_server.ts";
import {
  clientFor,
  type CredentialLockOptions,
  type CredentialRecord,
  CREDENTIALS_FORMAT_VERSION,
  loadCredentials,
  loginCommand,
  readCredentials,
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
import {
  type Challenge,
  discover,
  type Discovery,
  parseBearerChallenge,
  probeChallenge,
} from "./_discovery.ts";
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
 * Order: bind `127.0.0.1:0` -> probe the server without a token for its `WWW-Authenticate`
 * challenge -> discovery (RFC 9728, then RFC 8414 / OIDC) -> refuse without PKCE S256 or without a
 * way to get a client -> SDK `auth()` (registration, authorization URL with PKCE, `state`,
 * `resource`) -> `onAuthorizationUrl` -> wait for `/callback` -> SDK `auth()` with the code (`iss`
 * checked, code exchanged with the verifier and `resource`) -> file written under the lock -> the
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
  let challenge: Challenge, discovery: Discovery, previous: CredentialRecord | undefined;
  try {
    challenge = await probeChallenge(server, fetchFn, options.signal);
    discovery = await discover(server, challenge.resourceMetadataUrl, fetchFn);
    previous = await loadCredentials(options.configDir, server);
  } catch (error) {
    throw describeFlowError(server.name, error);
  }
  const issuer = issuerOf(discovery);
  checkManifestClient(server, previous, issuer);
  // A client registered with this issuer before is used again if its redirect URI can be bound again.
  const stored = server.clientId ? undefined : clientFor(previous, issuer);
  const state = randomToken();
  await using callback = startCallbackServer({
    expectedState: state,
    serverName: server.name,
    preferredPort: redirectPortOf(stored),
  });
  const reused = stored && redirectUrisOf(stored).includes(callback.redirectUrl) ? stored : undefined;
  try {
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
      clients: previous?.clients ?? {},
      ...(reused ? { reused } : {}),
      now: options.now ?? Date.now,
      onAuthorizationUrl: options.onAuthorizationUrl,
      ...(options.lock ? { lock: options.lock } : {}),
    });
    // After a step-up challenge, the union of what is asked now, what was granted and what the server asked for.
    const base = server.scopes?.length ? server.scopes : scopeTokens(challenge.scope);
    const { scope, added } = signInScope(base, previous?.tokens?.scope, previous?.stepUpScopes);
    if (added.length > 0) options.onStepUpScopes?.(added);
    const common = {
      serverUrl: server.url,
      fetchFn,
      ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
      ...(scope ? { scope } : {}),
    };
    const saved = await runFlow(server.name, provider, callback, common, options);
    callback.finish({ ok: true }); // Only now, with the tokens stored, does the browser say "Signed in".
    return {
      issuer: saved.issuer ?? "",
      hasRefreshToken: saved.tokens!.refresh_token !== undefined,
      ...(saved.expiresAtMs === undefined ? {} : { expiresAtMs: saved.expiresAtMs }),
      ...(saved.tokens!.scope === undefined ? {} : { scope: saved.tokens!.scope }),
    };
  } catch (error) {
    const described = describeFlowError(server.name, error);
    const reason = described instanceof Error
      ? described.message.replace(/^Cannot sign in to "[^"]*": /, "")
      : "";
    callback.finish({ ok: false, reason: reason || "the sign-in failed" });
    // A stored client that did not carry a sign-in through is not offered again: the next one registers anew.
    if (reused) await forgetClient(options, server.name, issuer).catch(() => {}); // Best effort.
    throw described;
  }
}

/** The two legs of the SDK flow: the authorization URL, then the code exchanged; returns the stored record. */
async function runFlow(
  serverName: string,
  provider: SignInProvider,
  callback: CallbackServer,
  common: Parameters<typeof auth>[1],
  options: SignInOptions,
): Promise<CredentialRecord> {
  const first = await auth(provider, common);
  if (first !== "REDIRECT" || !provider.authorizationUrlShown) {
    throw new UserError(
      "LOGIN_FAILED",
      `Cannot sign in to "${serverName}": the authorization flow did not start`,
    );
  }
  const { code, iss } = await callback.waitForCallback({
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const second = await auth(provider, { ...common, authorizationCode: code, ...(iss ? { iss } : {}) });
  const saved = provider.savedRecord;
  if (second !== "AUTHORIZED" || saved?.tokens === undefined) {
    throw new UserError("LOGIN_FAILED", `Cannot sign in to "${serverName}": no token was issued`);
  }
  return saved;
}

/** The issuer the SDK binds clients and tokens to: the metadata's, else the authorization server URL. */
function issuerOf(discovery: Discovery): string {
  return discovery.state.authorizationServerMetadata?.issuer ??
    String(discovery.state.authorizationServerUrl);
}

function redirectUrisOf(client: StoredOAuthClientInformation): string[] {
  const uris = (client as { redirect_uris?: unknown }).redirect_uris;
  return Array.isArray(uris) ? uris.filter((u): u is string => typeof u === "string") : [];
}

/** The port of a stored client's loopback redirect URI (`http://127.0.0.1:<port>/callback`), if it has one. */
function redirectPortOf(client: StoredOAuthClientInformation | undefined): number | undefined {
  for (const uri of client ? redirectUrisOf(client) : []) {
    const match = /^http:\/\/127\.0\.0\.1:(\d+)\/callback$/.exec(uri);
    if (match) return Number(match[1]);
  }
  return undefined;
}

/**
 * MCP 2026-07-28 "Authorization Server Binding": a pre-registered client (manifest `client-id`) is
 * specific to the authorization server it was registered with. When the last sign-in used it with
 * another issuer than the one the server names now, say so rather than present it there.
 *
 * @throws {UserError} `LOGIN_CLIENT_ISSUER_CHANGED`.
 */
function checkManifestClient(
  server: OAuthServer,
  previous: CredentialRecord | undefined,
  issuer: string,
): void {
  if (!server.clientId || clientFor(previous, issuer)?.client_id === server.clientId) return;
  const before = Object.entries(previous?.clients ?? {}).find(([, c]) => c.client_id === server.clientId)
    ?.[0];
  if (before === undefined) return; // Never used: this is its first sign-in.
  throw new UserError(
    "LOGIN_CLIENT_ISSUER_CHANGED",
    `Cannot sign in to "${server.name}": its authorization server changed from ${before} to ${issuer}, and the manifest's client-id was registered with ${before}`,
    {
      hint:
        `register a client with ${issuer} and set it as \`client-id\` in the manifest; if the same client-id is valid there, run \`${
          loginCommand(server.name).replace(" login ", " logout ")
        }\` first`,
    },
  );
}

/** Removes the client filed under `issuer` from the server's credential file (under its lock). */
async function forgetClient(options: SignInOptions, serverName: string, issuer: string): Promise<void> {
  await withCredentialLock(options.configDir, serverName, async () => {
    const record = await readCredentials(options.configDir, serverName);
    if (!record?.clients || !Object.hasOwn(record.clients, issuer)) return;
    const { [issuer]: _dropped, ...rest } = record.clients;
    await writeCredentials(options.configDir, { ...record, clients: rest });
  }, options.lock);
}

interface SignInProviderOptions {
  configDir: string;
  redirectUrl: string;
  state: string;
  discovery: Discovery;
  /** The clients stored for this server, by issuer (kept, with this sign-in's added or replaced). */
  clients: Record<string, StoredOAuthClientInformation>;
  /** A stored client registered with this issuer, for this redirect URI: used instead of registering. */
  reused?: StoredOAuthClientInformation;
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
    } else if (options.reused) {
      this.#client = options.reused;
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
    const issuer = tokens.issuer ?? issuerOf({ ...this.#options.discovery, state: this.#discovery });
    const client = this.#server.clientId
      // The manifest's secret stays in the manifest.
      ? { client_id: this.#server.clientId, issuer }
      : this.#client && { ...this.#client, issuer };
    const record: CredentialRecord = {
      version: CREDENTIALS_FORMAT_VERSION,
      server: this.#server.name,
      serverUrl: this.#server.url,
      issuer,
      resource: this.#resource,
      // Clients of other issuers stay filed under theirs; this one under its own.
      clients: { ...this.#options.clients, ...(client ? { [issuer]: client } : {}) },
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
