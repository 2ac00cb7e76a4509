/**
 * Sign-out: RFC 7009 revocation of the stored tokens where offered, then the credential file is deleted.
 *
 * @module
 */
import { type FetchLike } from "@modelcontextprotocol/client";
import {
  clientFor,
  type CredentialLockOptions,
  deleteCredentials,
  readCredentials,
  withCredentialLock,
} from "./credentials.ts";
import {
  DEFAULT_AUTH_REQUEST_TIMEOUT_MS,
  errorText,
  type OAuthServer,
  withTimeout,
} from "./_oauth_common.ts";

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
        const client = clientFor(record, record.issuer);
        const clientId = server.clientId ?? client?.client_id;
        const secret = server.clientId ? server.clientSecret : client?.client_secret;
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
