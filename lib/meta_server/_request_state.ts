/**
 * The `requestState` of an `execute` that waits for the agent's answer (MCP 2026-07-28 multi round-trip
 * requests): it names the suspended run and is integrity-protected, because the agent hands it back and
 * may alter it. `base64url(payload JSON) "." base64url(HMAC-SHA256(key, payload))`, the key random per
 * process (never stored, never sent). The payload holds only identifiers and a time: the session, the run,
 * a digest of the request it answers (tool and script) and the expiry; no secret is in it.
 *
 * @module
 */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";

/** Longest `requestState` read, UTF-16 code units (1 KiB; ours are 279): a longer one is refused unread. */
export const MAX_REQUEST_STATE_CHARS = 1024;

/** What a `requestState` carries (JSON keys kept short: it crosses the wire on every round). */
export interface RequestStateClaims {
  /** The session (one agent connection) that issued it. */
  session: string;
  /** The suspended run it names. */
  run: string;
  /** Digest of the request it answers (see {@link requestDigest}). */
  request: string;
  /** Wall-clock expiry, ms since the epoch (`Date.now()`): the run's deadline. */
  expiresAtMs: number;
}

const encoder = new TextEncoder();

function toBase64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return undefined; // not base64: the caller refuses the state
  }
}

/**
 * A digest of the request a state answers, hex SHA-256 of the tool name and its script: a state presented
 * with another script is refused (the spec's "identifier for the originating request").
 */
export async function requestDigest(tool: string, script: string): Promise<string> {
  const bytes = await crypto.subtle.digest("SHA-256", encoder.encode(`${tool}\u0000${script}`));
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

function invalid(reason: string, hint: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot resume execute: ${reason}; ${hint}`);
}

/** Issues and checks `requestState`s with one random HMAC key (one codec per process). */
export class RequestStateCodec {
  /** Made at first use (not on the cold-start path of `mcp-serve`), then kept. */
  #key: Promise<CryptoKey> | undefined;

  /** The HMAC key: 32 random bytes, not extractable. */
  #hmacKey(): Promise<CryptoKey> {
    return this.#key ??= crypto.subtle.importKey(
      "raw",
      crypto.getRandomValues(new Uint8Array(32)),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
  }

  /** The state for `claims`, e.g. `eyJz...In0.Qm9n...` (279 characters for ours). */
  async issue(claims: RequestStateClaims): Promise<string> {
    const payload = encoder.encode(
      JSON.stringify({ s: claims.session, r: claims.run, d: claims.request, e: claims.expiresAtMs }),
    );
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await this.#hmacKey(), payload));
    return `${toBase64Url(payload)}.${toBase64Url(mac)}`;
  }

  /**
   * The run a state names, once its signature, session, request and expiry are checked.
   *
   * @param expected.session The session presenting it.
   * @param expected.request The digest of the request presenting it ({@link requestDigest}).
   * @param expected.nowMs Wall clock, ms since the epoch. @default Date.now()
   * @throws {ProtocolError} `-32602` saying which check failed: not issued here or altered (tampered),
   *   another session's, another request's, or expired.
   */
  async open(
    state: unknown,
    expected: { session: string; request: string; nowMs?: number },
  ): Promise<string> {
    const retry = "run the script again without requestState";
    if (typeof state !== "string" || state.length > MAX_REQUEST_STATE_CHARS) {
      throw invalid(
        `requestState is not one this server issued (not a string of at most ${MAX_REQUEST_STATE_CHARS} characters)`,
        retry,
      );
    }
    const [payloadText, macText, ...rest] = state.split(".");
    const payload = fromBase64Url(payloadText ?? "");
    const mac = fromBase64Url(macText ?? "");
    const genuine = payload !== undefined && mac !== undefined && rest.length === 0 &&
      await crypto.subtle.verify("HMAC", await this.#hmacKey(), mac, payload);
    if (!genuine) {
      throw invalid(
        "requestState was not issued by this server process or was altered",
        `send it back exactly as received, or ${retry}`,
      );
    }
    const claims = JSON.parse(new TextDecoder().decode(payload)) as {
      s: string;
      r: string;
      d: string;
      e: number;
    };
    if (claims.s !== expected.session) {
      throw invalid("requestState belongs to another session of this server", retry);
    }
    if (claims.d !== expected.request) {
      throw invalid(
        "requestState was issued for another request (its tool or script differs)",
        `send the same script with it, or ${retry}`,
      );
    }
    if ((expected.nowMs ?? Date.now()) > claims.e) {
      throw invalid(
        `requestState expired at ${new Date(claims.e).toISOString()} (the script's deadline; the run ended)`,
        retry,
      );
    }
    return claims.r;
  }
}

/** The codec of this process: its key is made at its first use and never leaves memory. */
export const PROCESS_REQUEST_STATE_CODEC: RequestStateCodec = new RequestStateCodec();
