/**
 * Step-up authorization (MCP 2025-11-25 "Scope challenge handling"): a `403` with
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` means the token lacks scopes. The
 * meta-server cannot open a browser, so it remembers the scopes asked for in the server's credential
 * file, and the next `mcp login` requests their union with the scopes already granted.
 *
 * @module
 */
import {
  type CredentialLockOptions,
  type CredentialTarget,
  loadCredentials,
  withCredentialLock,
  writeCredentials,
} from "./credentials.ts";
import { parseBearerChallenge } from "./_discovery.ts";

/** Most scopes remembered for one server (a hostile challenge cannot grow the file without bound). */
export const MAX_STEP_UP_SCOPES = 64;
/** Longest scope token kept, in UTF-16 code units. */
export const MAX_SCOPE_CHARS = 256;

/** The scope tokens of a space-separated `scope` value (RFC 6749 §3.3), deduplicated, in order. */
export function scopeTokens(scope: string | undefined): string[] {
  return [...new Set((scope ?? "").split(/\s+/).filter((s) => s !== "" && s.length <= MAX_SCOPE_CHARS))];
}

/**
 * The scopes a `WWW-Authenticate` value asks for when it is an `insufficient_scope` challenge,
 * else `undefined`.
 */
export function insufficientScopeOf(challenge: string | undefined): string[] | undefined {
  if (challenge === undefined) return undefined;
  const params = parseBearerChallenge(challenge);
  if (params.error !== "insufficient_scope") return undefined;
  const scopes = scopeTokens(params.scope);
  return scopes.length > 0 ? scopes : undefined;
}

/**
 * Adds `scopes` to the step-up scopes of `server`'s credential file (under the credential lock).
 * Nothing is written when the server has no credentials for its URL.
 *
 * @returns The step-up scopes now on file (empty when nothing was written).
 */
export async function recordStepUpScopes(
  configDir: string,
  server: CredentialTarget,
  scopes: readonly string[],
  lock?: CredentialLockOptions,
): Promise<string[]> {
  return await withCredentialLock(configDir, server.name, async () => {
    const record = await loadCredentials(configDir, server);
    if (record === undefined) return [];
    const merged = [...new Set([...(record.stepUpScopes ?? []), ...scopes])].slice(0, MAX_STEP_UP_SCOPES);
    if (merged.length !== (record.stepUpScopes ?? []).length) {
      await writeCredentials(configDir, { ...record, stepUpScopes: merged });
    }
    return merged;
  }, lock);
}

/**
 * The scope a new sign-in requests: `base` (the manifest's `scopes`, else the 401 challenge's); after
 * a step-up challenge, the union of `base`, the scopes granted before and those it asked for, in
 * that order. `undefined` when empty (the SDK then uses the protected-resource metadata's
 * `scopes_supported`).
 *
 * @returns The scope string, and the step-up scopes it adds beyond `base` and the granted ones.
 */
export function signInScope(
  base: readonly string[],
  granted: string | undefined,
  stepUp: readonly string[] | undefined,
): { scope: string | undefined; added: string[] } {
  if (!stepUp?.length) return { scope: base.length > 0 ? base.join(" ") : undefined, added: [] };
  const before = [...base, ...scopeTokens(granted)];
  const added = (stepUp ?? []).filter((s) => !before.includes(s));
  const all = [...new Set([...before, ...added])];
  return { scope: all.length > 0 ? all.join(" ") : undefined, added };
}
