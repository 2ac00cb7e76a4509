/**
 * What the sign-in flow, the stored-token provider and sign-out share: the server shape, the
 * sign-in-required error, request timeouts and message helpers (private to `lib/auth/`).
 *
 * @module
 */
import { type FetchLike } from "@modelcontextprotocol/client";
import { UserError } from "../diagnostics.ts";
import { loginCommand } from "./credentials.ts";

/** Refresh this long before the stated expiry, in milliseconds. */
export const DEFAULT_REFRESH_SKEW_MS = 60_000;
/** Longest wait for one request to the authorization server, in milliseconds. */
export const DEFAULT_AUTH_REQUEST_TIMEOUT_MS = 15_000;
/** `client_name` sent in dynamic client registration. */
export const CLIENT_NAME = "cargo-agents (Symposium)";

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
  /** Client ID Metadata Document URL (manifest `client-metadata-url`), used as `client_id` where supported. */
  clientMetadataUrl?: string | undefined;
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

/** Wraps `fetchFn` so that each request fails after `timeoutMs` (headers; the caller's signal still applies). */
export function withTimeout(fetchFn: FetchLike, timeoutMs: number): FetchLike {
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

export function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function displayOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return JSON.stringify(url);
  }
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
