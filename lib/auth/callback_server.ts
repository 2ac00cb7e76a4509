/**
 * The loopback listener that receives the browser's redirect at the end of an OAuth sign-in
 * (RFC 8252 §7.3): bound on `127.0.0.1` with a random port before the authorization URL is built,
 * answering only `GET /callback` with the expected `state` and the `Host` it is bound to (a
 * request naming another host, as a DNS-rebinding page would, is refused). The page the browser
 * lands on tells the truth: it is sent once the caller reports how the token exchange ended.
 *
 * @module
 */
import { IssuerMismatchError, validateAuthorizationResponseIssuer } from "@modelcontextprotocol/client";
import { UserError } from "../diagnostics.ts";
import { maskSecrets, processSecrets } from "../secrets/mod.ts";

/** How long a sign-in waits for the browser, in milliseconds (300 s). */
export const DEFAULT_CALLBACK_TIMEOUT_MS = 300_000;
/** The redirect path. */
export const CALLBACK_PATH = "/callback";
/** Longest wait of the browser's page for the outcome of the token exchange, in milliseconds. */
export const DEFAULT_OUTCOME_WAIT_MS = 60_000;

/** How the sign-in ended, as the browser's page reports it. */
export type SignInOutcome = { ok: true } | { ok: false; /** One sentence, no secret. */ reason: string };

/** What the authorization server sent back on success. */
export interface CallbackResult {
  /** The authorization code. Secret: never print it. */
  code: string;
  /** The RFC 9207 `iss` parameter, when present. */
  iss: string | undefined;
}

/** A running callback listener. */
export interface CallbackServer {
  /** `http://127.0.0.1:<port>/callback`. */
  readonly redirectUrl: string;
  /**
   * Resolves with the first redirect to `/callback` that carries the expected `state` and a `code`.
   *
   * @throws {UserError} `LOGIN_ISSUER_MISMATCH` for a redirect whose `iss` fails the check (see
   *   {@link CallbackServer.expectIssuer}); `LOGIN_DENIED` for an `error=` redirect (its code and
   *   description in the message); `LOGIN_TIMEOUT` when nothing arrives within `timeoutMs`; the signal's reason when aborted.
   */
  waitForCallback(options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<CallbackResult>;
  /**
   * Records the issuer the authorization request goes to (RFC 9207, MCP 2026-07-28 "Authorization
   * Response Validation"); call it before the authorization URL is shown. From then on every
   * redirect, `code` or `error`, is checked first: an `iss` present must equal `issuer` exactly (no
   * normalisation), and one absent is refused when `required` (the metadata's
   * `authorization_response_iss_parameter_supported: true`). A response that fails ends the wait
   * with `LOGIN_ISSUER_MISMATCH`; its code is never handed out and its `error` text never shown.
   * Without a call (or with `issuer` undefined: a server without metadata) nothing is checked.
   */
  expectIssuer(issuer: string | undefined, required: boolean): void;
  /**
   * Reports how the sign-in ended, after the code was exchanged (or failed to be): only now does
   * the browser's page say "Signed in" or what failed. Later calls are ignored.
   */
  finish(outcome: SignInOutcome): void;
  /**
   * Stops listening (idempotent); waits for in-flight answers to be sent. A page still waiting
   * for {@link finish} says the sign-in stopped and the terminal has the details.
   */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options of {@link startCallbackServer}. */
export interface CallbackServerOptions {
  /** The `state` sent in the authorization request; redirects with another `state` are refused (400). */
  expectedState: string;
  /** Server name, shown on the page the browser lands on. */
  serverName: string;
  /** Longest wait of the page for {@link CallbackServer.finish}, in ms. @default DEFAULT_OUTCOME_WAIT_MS */
  outcomeWaitMs?: number;
  /**
   * Listen on this port when it is free (the port of a stored client's registered redirect URI, so
   * that client can be used again); a random one otherwise. @default a random port
   */
  preferredPort?: number | undefined;
}

/**
 * Binds the listener on `127.0.0.1` at once (so the port is known before the authorization URL is
 * built; `preferredPort` if free, else a random one) and answers: a `Host` other than `127.0.0.1:<port>` with 400; `GET
 * /callback?state=<expected>&code=...` with the outcome the caller reports through
 * {@link CallbackServer.finish} ("Signed in", or what failed and that the terminal has details; if
 * none comes within `outcomeWaitMs`, that the outcome is not known yet); a redirect whose `iss` fails
 * the check {@link CallbackServer.expectIssuer} set up with a refusal that shows nothing of it (the
 * wait then ends with `LOGIN_ISSUER_MISMATCH`); `...&error=...` with a failure
 * page (the wait then ends with that error); any other path (a browser's `/favicon.ico`) with 404;
 * a wrong or missing `state` with 400; other methods with 405.
 */
export function startCallbackServer(options: CallbackServerOptions): CallbackServer {
  let settle:
    | ((outcome: { ok: true; value: CallbackResult } | { ok: false; error: UserError }) => void)
    | undefined;
  let early: { ok: true; value: CallbackResult } | { ok: false; error: UserError } | undefined;
  const deliver = (outcome: { ok: true; value: CallbackResult } | { ok: false; error: UserError }) => {
    if (early) return;
    early = outcome;
    settle?.(outcome);
  };

  let reportOutcome: ((outcome: SignInOutcome) => void) | undefined;
  const outcome = new Promise<SignInOutcome>((resolve) => (reportOutcome = resolve));
  const outcomeWaitMs = options.outcomeWaitMs ?? DEFAULT_OUTCOME_WAIT_MS;
  let expectedHost = "";
  let issuer: { expected: string | undefined; required: boolean } = { expected: undefined, required: false };

  const handler = async (request: Request): Promise<Response> => {
    if (request.headers.get("host") !== expectedHost) {
      return page(400, "Wrong host", "This page answers only at the address cargo-agents opened.");
    }
    const url = new URL(request.url);
    if (url.pathname !== CALLBACK_PATH) return page(404, "Not found", "Nothing here.");
    if (request.method !== "GET") return page(405, "Method not allowed", "Use GET.");
    if (early) {
      return page(410, "Already done", "This sign-in has already finished. Go back to the terminal.");
    }
    const params = url.searchParams;
    if (params.get("state") !== options.expectedState) {
      return page(400, "Unexpected sign-in response", "This is not the sign-in cargo-agents is waiting for.");
    }
    try {
      validateAuthorizationResponseIssuer({
        iss: params.get("iss") ?? undefined,
        expectedIssuer: issuer.expected,
        issParameterSupported: issuer.required,
      });
    } catch (mismatch) {
      if (!(mismatch instanceof IssuerMismatchError)) throw mismatch;
      deliver({ ok: false, error: issuerMismatchError(options.serverName, mismatch) });
      return page(
        200,
        "Sign-in refused",
        `This response did not come from the authorization server cargo-agents asked (${mismatch.expected}), so it was not used. Go back to the terminal.`,
      );
    }
    const error = params.get("error");
    if (error !== null) {
      const description = params.get("error_description");
      const shown = clean(error) + (description ? ` (${clean(description)})` : "");
      deliver({
        ok: false,
        error: new UserError(
          "LOGIN_DENIED",
          `Cannot sign in to "${options.serverName}": the authorization server answered ${shown}`,
          { hint: "run the command again to retry" },
        ),
      });
      return page(
        200,
        "Sign-in failed",
        `The authorization server answered: ${shown}. Go back to the terminal.`,
      );
    }
    const code = params.get("code");
    if (!code) {
      return page(400, "Unexpected sign-in response", "The response carries neither a code nor an error.");
    }
    processSecrets.register(code);
    deliver({ ok: true, value: { code, iss: params.get("iss") ?? undefined } });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((
      resolve,
    ) => (timer = setTimeout(() => resolve(undefined), outcomeWaitMs)));
    const ended = await Promise.race([outcome, late]).finally(() => clearTimeout(timer));
    if (ended === undefined) {
      return page(
        200,
        "Still signing in",
        `The token exchange with ${options.serverName} has not finished yet. Go back to the terminal to see how it ends.`,
      );
    }
    if (!ended.ok) {
      return page(
        200,
        "Sign-in failed",
        `Signing in to ${options.serverName} failed: ${
          clean(maskSecrets(ended.reason), 400)
        }. The terminal has the details.`,
      );
    }
    return page(
      200,
      "Signed in",
      `Signed in to ${options.serverName}. You can close this tab and go back to the terminal.`,
    );
  };
  const server = listen(options.preferredPort, handler);
  const redirectUrl = `http://127.0.0.1:${server.addr.port}${CALLBACK_PATH}`;
  expectedHost = `127.0.0.1:${server.addr.port}`;
  let closed: Promise<void> | undefined;
  const finish = (result: SignInOutcome) => reportOutcome?.(result);
  const close = (): Promise<void> => {
    finish({ ok: false, reason: "the sign-in stopped before the token exchange finished" });
    return (closed ??= server.shutdown());
  };

  return {
    redirectUrl,
    waitForCallback({ timeoutMs = DEFAULT_CALLBACK_TIMEOUT_MS, signal } = {}): Promise<CallbackResult> {
      return new Promise<CallbackResult>((resolve, reject) => {
        const finish = (outcome: { ok: true; value: CallbackResult } | { ok: false; error: unknown }) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          settle = undefined;
          if (outcome.ok) resolve(outcome.value);
          else reject(outcome.error);
        };
        const onAbort = () => finish({ ok: false, error: signal?.reason });
        const timer = setTimeout(() =>
          finish({
            ok: false,
            error: new UserError(
              "LOGIN_TIMEOUT",
              `Cannot sign in to "${options.serverName}": the browser did not come back within ${
                Math.round(timeoutMs / 1000)
              } s`,
              { hint: "open the URL printed above, finish signing in, or run the command again" },
            ),
          }), timeoutMs);
        if (early) return finish(early);
        if (signal?.aborted) return onAbort();
        signal?.addEventListener("abort", onAbort, { once: true });
        settle = finish;
      });
    },
    expectIssuer(expected, required) {
      issuer = { expected, required };
    },
    finish,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A response from another issuer (a mix-up attack, RFC 9207 §1): nothing of it is used or shown. */
function issuerMismatchError(serverName: string, mismatch: IssuerMismatchError): UserError {
  const what = mismatch.received === undefined ? "carries no `iss`" : "names another issuer";
  return new UserError(
    "LOGIN_ISSUER_MISMATCH",
    `Cannot sign in to "${serverName}": the authorization response ${what}; expected ${mismatch.expected} (RFC 9207), so its code was not used`,
    {
      hint: "the response may come from another authorization server (a mix-up attack); " +
        "if this repeats, tell the server's operator; run the command again to retry",
    },
  );
}

/** Serves `handler` on `127.0.0.1:<preferredPort>`, or on a random port when that one is taken or not given. */
function listen(
  preferredPort: number | undefined,
  handler: (request: Request) => Promise<Response>,
): Deno.HttpServer<Deno.NetAddr> {
  const serve = (port: number) => Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, handler);
  if (!preferredPort) return serve(0);
  try {
    return serve(preferredPort);
  } catch (error) {
    if (!(error instanceof Deno.errors.AddrInUse)) throw error;
    return serve(0); // Taken: a new port, so a new redirect URI (the caller registers again).
  }
}

/** Strips control characters and caps the length of text taken from a redirect or an error. */
function clean(text: string, maxChars = 200): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, " ").slice(0, maxChars);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(status: number, title: string, message: string): Response {
  const body = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
    `<body style="font-family: sans-serif; margin: 3em"><h1>${escapeHtml(title)}</h1><p id="message">${
      escapeHtml(message)
    }</p></body></html>`;
  return new Response(body, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    },
  });
}
