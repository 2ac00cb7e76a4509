/**
 * The error of a remote server that answered 401 or 403: it needs a (new) sign-in, or (a 403
 * `insufficient_scope` challenge) a sign-in with more scopes.
 *
 * @module
 */
import { insufficientScopeOf, loginCommand } from "../auth/mod.ts";
import { BackendError } from "./connection.ts";

/**
 * A remote server answered 401 or 403: it needs a (new) sign-in. Code `NEEDS_SIGN_IN`; the message
 * and the hint name `cargo agents mcp login <server>`; {@link challenge} keeps the
 * `WWW-Authenticate` value for the login flow.
 */
export class AuthRequiredError extends BackendError {
  override name = "AuthRequiredError";
  /** The HTTP status that asked for it (401 or 403), when one did. */
  readonly status: number | undefined;
  /** The `WWW-Authenticate` header of that answer, when there was one (no secret: it is the server's). */
  readonly challenge: string | undefined;

  /** The scopes a `403 insufficient_scope` challenge asked for (step-up), else `undefined`. */
  readonly requiredScopes: string[] | undefined;

  constructor(
    server: string,
    details: { status?: number | undefined; challenge?: string | undefined; reason?: string | undefined },
    options: { cause?: unknown } = {},
  ) {
    const status = details.status === undefined ? undefined : `HTTP ${details.status}`;
    const reason = details.reason === "it requires authorization" ? undefined : details.reason;
    const why = [status, reason].filter((part) => part !== undefined).join(": ");
    const login = `run \`${loginCommand(server)}\``;
    const required = details.status === 403 ? insufficientScopeOf(details.challenge) : undefined;
    const message = required
      ? `${server} needs more permissions: it asked for the scopes "${required.join(" ")}" (HTTP 403 ` +
        `insufficient_scope); ${login}: the next sign-in asks for them`
      : `${server} requires authorization${why ? ` (${why})` : ""}; ${login}`;
    super("NEEDS_SIGN_IN", server, message, { hint: `${login} to sign in`, cause: options.cause });
    this.status = details.status;
    this.challenge = details.challenge;
    this.requiredScopes = required;
  }
}
