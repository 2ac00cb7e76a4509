/**
 * Credential files: one per remote server, `<config>/credentials/<file>.json`, holding what an OAuth
 * sign-in produced (client registration, tokens, discovery results). Written atomically with owner-only
 * permissions in a private folder (refused when it is a link or another user's), bound to the server's
 * URL, and guarded by a lock file so that two processes refreshing at once never lose a rotated
 * refresh token. Every token and client secret read or written is registered with the secret
 * registry, so no sink ever prints one.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import type {
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { UserError } from "../diagnostics.ts";
import { ensurePrivateDir, processSecrets, writePrivateFile } from "../secrets/mod.ts";

/** Name of the folder under the config dir that holds credential files. */
export const CREDENTIALS_DIR_NAME = "credentials";
/**
 * Format version written into every credential file. Version 1 (one `client`, whatever its issuer)
 * is still read: its client is filed under the issuer it was registered with.
 */
export const CREDENTIALS_FORMAT_VERSION = 2;
/** A lock older than this is taken to be left behind by a dead process, in milliseconds. */
export const DEFAULT_LOCK_STALE_MS = 30_000;
/** Longest wait for another process's lock, in milliseconds. */
export const DEFAULT_LOCK_WAIT_MS = 35_000;

/** What a credential file holds. Every field but `version`, `server` and `serverUrl` is optional. */
export interface CredentialRecord {
  /** {@link CREDENTIALS_FORMAT_VERSION}. */
  version: number;
  /** Server name as declared in the manifest. */
  server: string;
  /** The server URL the sign-in was made for; a record for another URL is not used. */
  serverUrl: string;
  /** The `issuer` of the authorization server that issued `tokens`; they are used with its client only. */
  issuer?: string | undefined;
  /** RFC 8707 resource indicator sent with the sign-in (and with every refresh). */
  resource?: string | undefined;
  /**
   * OAuth clients by the `issuer` of the authorization server they were registered with (MCP
   * 2026-07-28 "Authorization Server Binding"): from dynamic registration, a Client ID Metadata
   * Document, or the manifest `client-id` (its secret is never stored). A client is only ever used
   * with its own issuer; see {@link clientFor}.
   */
  clients?: Record<string, StoredOAuthClientInformation> | undefined;
  /** The token response, with `refresh_token` kept across refreshes that do not rotate it. */
  tokens?: StoredOAuthTokens | undefined;
  /** When `tokens` were received, milliseconds since the epoch. */
  receivedAtMs?: number | undefined;
  /** When the access token expires, milliseconds since the epoch; absent when the server did not say. */
  expiresAtMs?: number | undefined;
  /** Protected-resource and authorization-server metadata found at sign-in (used for refresh and revocation). */
  discovery?: OAuthDiscoveryState | undefined;
  /** The RFC 7009 revocation endpoint found at sign-in, and the client authentication methods it takes. */
  revocation?: { endpoint: string; authMethods?: string[] } | undefined;
  /** Set when the authorization server refused the refresh token for good: the OAuth error code, e.g. `"invalid_grant"`. */
  rejected?: string | undefined;
  /**
   * Scopes a `403 insufficient_scope` challenge asked for since the last sign-in (RFC 6750 §3.1): the
   * next `mcp login` requests them together with the granted ones; cleared by that sign-in.
   */
  stepUpScopes?: string[] | undefined;
}

/** The narrow shape of a server this module needs. */
export interface CredentialTarget {
  /** Server name from the manifest. */
  name: string;
  /** The endpoint URL (expanded). */
  url: string;
}

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/;

/**
 * The file name (no folder) of a server's credentials. Names made of `a-z`, `0-9`, `-`, `_` (at most
 * 64 characters, not a reserved device name) are used as they are; any other name is reduced to
 * those characters and gets `.` plus 16 hex digits of its SHA-256, so the name can never leave the
 * folder, and two distinct names never share a file (also on case-insensitive file systems).
 *
 * @example
 * ```ts
 * import { credentialFileName } from "./credentials.ts";
 * credentialFileName("linear"); // "linear.json"
 * credentialFileName("../x");   // "___x.<16 hex>.json"
 * ```
 */
export function credentialFileName(server: string): string {
  if (/^[a-z0-9_-]{1,64}$/.test(server) && !WINDOWS_RESERVED.test(server)) return `${server}.json`;
  const base = server.toLowerCase().replace(/[^a-z0-9_-]/g, "_").slice(0, 64) || "_";
  const hash = createHash("sha256").update(server, "utf8").digest("hex").slice(0, 16);
  return `${base}.${hash}.json`;
}

/** `<configDir>/credentials`. */
export function credentialsDir(configDir: string): string {
  return join(configDir, CREDENTIALS_DIR_NAME);
}

/** Absolute path of a server's credential file (which may not exist). */
export function credentialPath(configDir: string, server: string): string {
  return join(credentialsDir(configDir), credentialFileName(server));
}

function parseRecord(text: string, server: string): CredentialRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined; // An unreadable file counts as absent; the next sign-in rewrites it.
  }
  if (typeof value !== "object" || value === null) return undefined;
  const r = (value as { version?: unknown }).version === 1
    ? migrateVersion1(value as Partial<CredentialRecord> & { client?: StoredOAuthClientInformation })
    : value as Partial<CredentialRecord>;
  if (r.version !== CREDENTIALS_FORMAT_VERSION || r.server !== server || typeof r.serverUrl !== "string") {
    return undefined;
  }
  registerRecordSecrets(r);
  return r as CredentialRecord;
}

/**
 * A version 1 record as version 2: its one `client` filed under the issuer it was registered with
 * (its own `issuer` stamp, else the record's, else the authorization server URL of its discovery);
 * a client whose issuer cannot be told is dropped (the next sign-in registers again).
 */
function migrateVersion1(
  old: Partial<CredentialRecord> & { client?: StoredOAuthClientInformation },
): Partial<CredentialRecord> {
  const { client, ...rest } = old;
  const issuer = client?.issuer ?? old.issuer ?? old.discovery?.authorizationServerUrl;
  return {
    ...rest,
    version: CREDENTIALS_FORMAT_VERSION,
    ...(client && issuer ? { clients: { [issuer]: { ...client, issuer } } } : {}),
  };
}

/**
 * The client `record` holds for the authorization server `issuer`, if any: never one registered
 * with another issuer (its key and its own `issuer` stamp must both be `issuer`).
 */
export function clientFor(
  record: Pick<CredentialRecord, "clients"> | undefined,
  issuer: string | undefined,
): StoredOAuthClientInformation | undefined {
  if (issuer === undefined || !Object.hasOwn(record?.clients ?? {}, issuer)) return undefined;
  const client = record!.clients![issuer]!;
  return client.issuer === undefined || client.issuer === issuer ? client : undefined;
}

/** Registers the tokens and client secret of a record (read or about to be written) as secrets. */
function registerRecordSecrets(record: Partial<CredentialRecord>): void {
  const tokens = record.tokens as Record<string, unknown> | undefined;
  for (const key of ["access_token", "refresh_token", "id_token"]) {
    const value = tokens?.[key];
    if (typeof value === "string") processSecrets.register(value);
  }
  for (const client of Object.values(record.clients ?? {})) {
    const secret = (client as Record<string, unknown> | undefined)?.client_secret;
    if (typeof secret === "string") processSecrets.register(secret);
  }
}

/**
 * Reads a server's credential file whatever URL it was made for.
 *
 * @returns The record, or `undefined` when there is none or it is unreadable (bad JSON, another
 *   format version, or written for another server name).
 * @throws Only for file-system failures other than "not found" (e.g. permission denied).
 */
export async function readCredentials(
  configDir: string,
  server: string,
): Promise<CredentialRecord | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(credentialPath(configDir, server));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  return parseRecord(text, server);
}

/**
 * Reads the credentials of `target` if they were made for its current URL.
 *
 * @returns The record, or `undefined` when absent, unreadable, or bound to another URL.
 */
export async function loadCredentials(
  configDir: string,
  target: CredentialTarget,
): Promise<CredentialRecord | undefined> {
  const record = await readCredentials(configDir, target.name);
  return record && record.serverUrl === target.url ? record : undefined;
}

/**
 * Writes a record atomically: a temporary file in the same folder, created with mode 0600 and
 * `O_EXCL` (never through a link), synced, then renamed over the target. The folder is private
 * (see `ensurePrivateDir()`: created 0700, refused when it is a link or another user's; an
 * existing folder's mode is left as it is). On Windows modes are not applied.
 *
 * @throws {PrivateDirError} when `credentials/` cannot be used safely.
 * @throws Whatever the file system throws; the temporary file is removed on failure.
 */
export async function writeCredentials(configDir: string, record: CredentialRecord): Promise<void> {
  registerRecordSecrets(record);
  const dir = ensureCredentialsDir(configDir);
  const bytes = new TextEncoder().encode(JSON.stringify(record, null, 2) + "\n");
  await writePrivateFile(dir, credentialFileName(record.server), bytes);
}

/**
 * Deletes a server's credential file.
 *
 * @returns `true` when a file was there.
 */
export async function deleteCredentials(configDir: string, server: string): Promise<boolean> {
  try {
    await Deno.remove(credentialPath(configDir, server));
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

function ensureCredentialsDir(configDir: string): string {
  const dir = credentialsDir(configDir);
  ensurePrivateDir(dir);
  return dir;
}

/**
 * A cheap fingerprint of a server's credential file (modification time, size, inode), or `"absent"`.
 * It changes whenever the file is written or deleted: a connector that marked a server "needs
 * sign-in" retries when the fingerprint differs from the one it saw then.
 */
export function credentialsFingerprint(configDir: string, server: string): string {
  try {
    const info = Deno.statSync(credentialPath(configDir, server));
    return `${info.mtime?.getTime() ?? 0}:${info.size}:${info.ino ?? 0}`;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "absent";
    throw error;
  }
}

/** Options of {@link withCredentialLock}. */
export interface CredentialLockOptions {
  /** A lock file older than this is removed as left behind, in milliseconds. @default DEFAULT_LOCK_STALE_MS */
  staleMs?: number;
  /** Longest wait for the lock, in milliseconds. @default DEFAULT_LOCK_WAIT_MS */
  waitMs?: number;
  /** Pause between attempts, in milliseconds. @default 20 */
  pollMs?: number;
  /** Stops waiting. */
  signal?: AbortSignal;
}

/**
 * Runs `fn` while holding the server's credential lock (`<file>.lock`, created with `O_EXCL`). Use it
 * around every read-modify-write of a credential file (refresh, sign-in, logout), and re-read the
 * file inside `fn`: another process may have changed it while this one waited.
 *
 * @throws {UserError} `CREDENTIALS_LOCKED` when the lock stays taken for `waitMs`.
 */
export async function withCredentialLock<T>(
  configDir: string,
  server: string,
  fn: () => Promise<T>,
  options: CredentialLockOptions = {},
): Promise<T> {
  const staleMs = options.staleMs ?? DEFAULT_LOCK_STALE_MS;
  const waitMs = options.waitMs ?? DEFAULT_LOCK_WAIT_MS;
  const pollMs = options.pollMs ?? 20;
  const lockPath = `${join(ensureCredentialsDir(configDir), credentialFileName(server))}.lock`;
  const owner = `${Deno.pid}:${crypto.randomUUID()}`;
  const started = Date.now();
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      const file = await Deno.open(lockPath, { createNew: true, write: true, mode: 0o600 });
      try {
        await file.write(new TextEncoder().encode(owner));
      } finally {
        file.close();
      }
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
    await breakStaleLock(lockPath, staleMs);
    if (Date.now() - started > waitMs) {
      throw new UserError(
        "CREDENTIALS_LOCKED",
        `Cannot update the sign-in of "${server}": another process holds ${lockPath}`,
        { hint: `if no other cargo-agents process is running, delete ${lockPath}` },
      );
    }
    await sleep(pollMs + Math.floor(Math.random() * pollMs), options.signal);
  }
  try {
    return await fn();
  } finally {
    await releaseLock(lockPath, owner);
  }
}

async function breakStaleLock(lockPath: string, staleMs: number): Promise<void> {
  let info: Deno.FileInfo;
  let owner: string;
  try {
    info = await Deno.stat(lockPath);
    owner = await Deno.readTextFile(lockPath);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  if (Date.now() - (info.mtime?.getTime() ?? Date.now()) <= staleMs) return;
  // Move it aside first, then check that what was moved is the stale lock we judged: a waiter that
  // broke it a moment earlier may already hold a fresh one under the same name.
  const aside = `${lockPath}.stale-${crypto.randomUUID().slice(0, 8)}`;
  try {
    await Deno.rename(lockPath, aside);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  const moved = await Deno.readTextFile(aside).catch(() => "");
  if (moved !== owner) {
    // A live lock was moved: put it back unless someone took the name meanwhile.
    await Deno.link(aside, lockPath).catch(() => {}); // Name taken: that holder's lock stands.
  }
  await Deno.remove(aside).catch(() => {}); // Best effort: a leftover aside file is harmless.
}

async function releaseLock(lockPath: string, owner: string): Promise<void> {
  const current = await Deno.readTextFile(lockPath).catch(() => undefined);
  if (current === owner) await Deno.remove(lockPath).catch(() => {}); // Gone already: nothing to release.
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Whether the access token of `record` is expired, or expires within `skewMs`.
 *
 * @param nowMs Current time, milliseconds since the epoch.
 * @param skewMs Margin before the stated expiry, in milliseconds. Default `0`.
 */
export function isTokenExpiring(record: CredentialRecord, nowMs: number, skewMs = 0): boolean {
  return record.expiresAtMs !== undefined && record.expiresAtMs - skewMs <= nowMs;
}

/** The sign-in state of one remote server, as `status` shows it. Holds no secret. */
export interface SignInDescription {
  /**
   * `signed-in`: a token that has not expired (or whose expiry is unknown);
   * `expired-refreshable`: expired, but a refresh token will renew it on next use;
   * `expired`: expired and not renewable (or refused by the server): sign in again;
   * `header-auth`: the manifest sets an `Authorization` header, OAuth is not used;
   * `not-signed-in`: no usable credentials.
   */
  state: "signed-in" | "expired-refreshable" | "expired" | "header-auth" | "not-signed-in";
  /** When the access token expires (or expired), milliseconds since the epoch. */
  expiresAt?: number;
  /** One line for the user, e.g. ``run `cargo agents mcp login linear` to sign in``. */
  hint?: string;
}

/**
 * The exact command that signs in to `server`, quoted for a POSIX shell when needed.
 *
 * @example
 * ```ts
 * import { loginCommand } from "./credentials.ts";
 * loginCommand("linear"); // "cargo agents mcp login linear"
 * ```
 */
export function loginCommand(server: string): string {
  const arg = /^[A-Za-z0-9_.\-]+$/.test(server) ? server : `'${server.replace(/'/g, `'\\''`)}'`;
  return `cargo agents mcp login ${arg}`;
}

/** The server a sign-in is described for: name, URL and manifest headers. */
export type SignInTarget = CredentialTarget & { headers?: Record<string, string> | undefined };

/**
 * Describes whether a remote server is signed in, without any network access (synchronous: reads
 * one small file). The description carries no token.
 *
 * @param configDir The config dir.
 * @param spec The server: its `name`, `url` and `headers` (an `Authorization` header, any case, means header auth).
 * @param options.nowMs Current time, milliseconds since the epoch. Default `Date.now()`.
 */
export function describeSignIn(
  configDir: string,
  spec: SignInTarget,
  options: { nowMs?: number } = {},
): SignInDescription {
  let text: string | null = null;
  try {
    text = Deno.readTextFileSync(credentialPath(configDir, spec.name));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      return {
        state: "not-signed-in",
        hint: `cannot read its credentials file; run \`${loginCommand(spec.name)}\``,
      };
    }
  }
  return describeSignInText(text, spec, options);
}

/**
 * {@link describeSignIn} on the content of the server's credential file (read by the caller, e.g.
 * through a `FileSystem` seam at {@link credentialPath}), or `null` when there is no file.
 */
export function describeSignInText(
  text: string | null,
  spec: SignInTarget,
  options: { nowMs?: number } = {},
): SignInDescription {
  if (Object.keys(spec.headers ?? {}).some((k) => k.toLowerCase() === "authorization")) {
    return { state: "header-auth" };
  }
  const login = loginCommand(spec.name);
  const record = text === null ? undefined : parseRecord(text, spec.name);
  if (record === undefined || record.tokens === undefined) {
    const why = record?.rejected ? "the server refused the stored sign-in; " : "";
    return { state: "not-signed-in", hint: `${why}run \`${login}\` if it requires authorization` };
  }
  if (record.serverUrl !== spec.url) {
    return {
      state: "not-signed-in",
      hint: `signed in for another URL (${record.serverUrl}); run \`${login}\``,
    };
  }
  const expiresAt = record.expiresAtMs;
  const withExpiry = expiresAt === undefined ? {} : { expiresAt };
  if (!isTokenExpiring(record, options.nowMs ?? Date.now())) return { state: "signed-in", ...withExpiry };
  if (record.tokens.refresh_token) return { state: "expired-refreshable", ...withExpiry };
  return { state: "expired", ...withExpiry, hint: `run \`${login}\` to sign in again` };
}
