/**
 * The stored-token provider a connection uses: the bearer token re-read on every request, refreshed
 * shortly before expiry and on 401 under the credential lock; a permanent refusal means sign in again.
 *
 * @module
 */
import {
  type AuthProvider,
  type FetchLike,
  OAuthError,
  refreshAuthorization,
} from "@modelcontextprotocol/client";
import { UserError } from "../diagnostics.ts";
import {
  clientFor,
  type CredentialLockOptions,
  type CredentialRecord,
  isTokenExpiring,
  loadCredentials,
  withCredentialLock,
  writeCredentials,
} from "./credentials.ts";
import {
  DEFAULT_AUTH_REQUEST_TIMEOUT_MS,
  DEFAULT_REFRESH_SKEW_MS,
  errorText,
  type OAuthServer,
  SignInRequiredError,
  withTimeout,
} from "./_oauth_common.ts";

/** OAuth error codes after which a refresh token will never work again. */
const PERMANENT_REFRESH_ERRORS = new Set(["invalid_grant", "invalid_client", "unauthorized_client"]);

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
      : clientFor(record, record.issuer);
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
