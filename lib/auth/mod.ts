/**
 * Area `auth/`: OAuth sign-in and stored tokens for remote servers. It never imports backends/ or the
 * catalog: every request goes through the `fetch` it is given (the guarded one in production).
 *
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
 * The face of the area, and its only one: these, the credential files (`credentials.ts`: paths, the
 * sign-in description `status` shows), step-up scopes (`step_up.ts`), the browser opener and the
 * loopback callback's timeout.
 *
 * @module
 */
export {
  CLIENT_NAME,
  DEFAULT_AUTH_REQUEST_TIMEOUT_MS,
  DEFAULT_REFRESH_SKEW_MS,
  type OAuthServer,
  SignInRequiredError,
} from "./_oauth_common.ts";
export { parseBearerChallenge, signIn, type SignInOptions, type SignInResult } from "./sign_in.ts";
export { createStoredAuthProvider, refreshCredentials, type StoredAuthOptions } from "./token_provider.ts";
export { signOut, type SignOutResult } from "./sign_out.ts";
export { openBrowser } from "./browser.ts";
export { DEFAULT_CALLBACK_TIMEOUT_MS } from "./callback_server.ts";
export { credentialPath, describeSignInText, loginCommand, type SignInDescription } from "./credentials.ts";
export { insufficientScopeOf, recordStepUpScopes } from "./step_up.ts";
