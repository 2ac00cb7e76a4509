/**
 * Discovery for sign-in: the unauthenticated probe that reads the 401 `WWW-Authenticate` challenge
 * (RFC 6750 §3, RFC 9728), then protected-resource and authorization-server metadata (RFC 8414/OIDC).
 *
 * @module
 */
import {
  buildDiscoveryUrls,
  checkResourceAllowed,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  discoverOAuthServerInfo,
  type FetchLike,
  type OAuthDiscoveryState,
  PROTOCOL_VERSION_META_KEY,
  resourceUrlFromServerUrl,
} from "@modelcontextprotocol/client";
import { UserError } from "../diagnostics.ts";
import { type CredentialRecord } from "./credentials.ts";
import { displayOrigin, type OAuthServer } from "./_oauth_common.ts";

/** What a 401 challenge told us: RFC 9728 `resource_metadata` and the `scope` asked for. */
export interface Challenge {
  resourceMetadataUrl?: URL;
  scope?: string;
}

/** The two requests a connection may open with (MCP 2026-07-28 first, then 2025-11-25), unauthenticated. */
const PROBES = [
  {
    method: "server/discover",
    headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" },
    params: {
      _meta: {
        [PROTOCOL_VERSION_META_KEY]: "2026-07-28",
        [CLIENT_CAPABILITIES_META_KEY]: {},
        [CLIENT_INFO_META_KEY]: { name: "symposium", version: "0" },
      },
    },
  },
  {
    method: "initialize",
    headers: {},
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "symposium", version: "0" },
    },
  },
] as const;

/**
 * Learns the server's `WWW-Authenticate` challenge by sending, without a token, what a connection
 * opens with: a 2026-07-28 `server/discover`, and when that is not refused with 401/403, a
 * 2025-11-25 `initialize` (a server may let one era's opening request through unauthenticated).
 *
 * @returns The challenge's `resource_metadata` and `scope`; empty when neither request was refused.
 */
export async function probeChallenge(
  server: OAuthServer,
  fetchFn: FetchLike,
  signal?: AbortSignal,
): Promise<Challenge> {
  for (const probe of PROBES) {
    const headers = new Headers(server.headers ?? {});
    headers.delete("authorization");
    headers.set("content-type", "application/json");
    headers.set("accept", "application/json, text/event-stream");
    for (const [name, value] of Object.entries(probe.headers)) headers.set(name, value);
    const response = await fetchFn(server.url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: probe.method, params: probe.params }),
      ...(signal ? { signal } : {}),
    });
    await response.body?.cancel().catch(() => {}); // Only the headers matter.
    if (response.status === 401 || response.status === 403) return challengeOf(response, server.url);
  }
  return {};
}

function challengeOf(response: Response, serverUrl: string): Challenge {
  const params = parseBearerChallenge(response.headers.get("www-authenticate") ?? "");
  const out: Challenge = {};
  if (params.resource_metadata) {
    try {
      out.resourceMetadataUrl = new URL(params.resource_metadata, serverUrl);
    } catch {
      // A malformed URL is ignored: the well-known locations are tried instead.
    }
  }
  if (params.scope) out.scope = params.scope;
  return out;
}

/**
 * Parses the `Bearer` challenge of a `WWW-Authenticate` value (RFC 9110 §11.6.1): several
 * challenges, quoted strings with `\` escapes, unquoted values (bare URLs too), any spacing.
 * Parameter names are lowercased.
 *
 * @returns The parameters of the first `Bearer` challenge (empty when there is none).
 * @example
 * ```ts
 * import { parseBearerChallenge } from "./mod.ts";
 * parseBearerChallenge('Basic realm="x", Bearer scope="a b", resource_metadata="https://h/.well-known/oauth-protected-resource"');
 * // { scope: "a b", resource_metadata: "https://h/.well-known/oauth-protected-resource" }
 * ```
 */
export function parseBearerChallenge(header: string): Record<string, string> {
  let i = 0;
  const n = header.length;
  const skip = (chars: string) => {
    while (i < n && chars.includes(header[i]!)) i++;
  };
  const token = (): string => {
    const start = i;
    while (i < n && /[!#$%&'*+.^_`|~0-9A-Za-z-]/.test(header[i]!)) i++;
    return header.slice(start, i);
  };
  let current: Record<string, string> | undefined;
  let isBearer = false;
  while (i < n) {
    skip(" \t,");
    const name = token();
    if (name === "") {
      i++; // Not a token character: skip it.
      continue;
    }
    skip(" \t");
    if (header[i] === "=") {
      // A parameter (or token68 padding) of the current challenge.
      i++;
      skip(" \t");
      let value = "";
      if (header[i] === '"') {
        i++;
        while (i < n && header[i] !== '"') {
          if (header[i] === "\\" && i + 1 < n) i++;
          value += header[i];
          i++;
        }
        i++;
      } else {
        // Unquoted: a token by the RFC, but servers send bare URLs too, so read up to `,` or space.
        const start = i;
        while (i < n && !" \t,".includes(header[i]!)) i++;
        value = header.slice(start, i);
      }
      if (isBearer && current) current[name.toLowerCase()] ??= value;
      continue;
    }
    // A new auth-scheme.
    if (isBearer && current) return current;
    isBearer = name.toLowerCase() === "bearer";
    current = isBearer ? {} : undefined;
  }
  return current ?? {};
}

/** What discovery found: the SDK's state, plus the RFC 7009 endpoint the SDK's OIDC schema drops. */
export interface Discovery {
  state: OAuthDiscoveryState;
  revocation: CredentialRecord["revocation"];
}

/**
 * RFC 9728 + RFC 8414/OIDC discovery, with our refusals (no metadata, no PKCE S256, no way to get a
 * client). A server with neither protected-resource nor authorization-server metadata is a
 * 2025-03-26 server: its origin is the authorization server, with the default endpoints
 * `/authorize`, `/token` and `/register` (MCP 2025-03-26 "Fallbacks for servers without metadata
 * discovery"); every request still goes through `fetchFn`, so the endpoint policy holds for them too.
 */
export async function discover(
  server: OAuthServer,
  resourceMetadataUrl: URL | undefined,
  fetchFn: FetchLike,
): Promise<Discovery> {
  const info = await discoverOAuthServerInfo(server.url, {
    fetchFn,
    ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
  });
  const metadata = info.authorizationServerMetadata;
  if (!metadata && !info.resourceMetadata) {
    return { state: { authorizationServerUrl: info.authorizationServerUrl }, revocation: undefined };
  }
  if (!metadata) {
    throw new UserError(
      "LOGIN_NO_OAUTH",
      `Cannot sign in to "${server.name}": no OAuth authorization server metadata was found for ${
        displayOrigin(info.authorizationServerUrl)
      }`,
      { hint: "the server may not use OAuth; check its documentation for the authentication it expects" },
    );
  }
  if (!metadata.code_challenge_methods_supported?.includes("S256")) {
    throw new UserError(
      "LOGIN_NO_PKCE",
      `Cannot sign in to "${server.name}": its authorization server ${metadata.issuer} does not offer PKCE with S256`,
      {
        hint:
          "the MCP authorization specification requires PKCE S256; ask the server's operator to enable it",
      },
    );
  }
  checkResource(server, info.resourceMetadata?.resource);
  const hasCimd = metadata.client_id_metadata_document_supported === true && !!server.clientMetadataUrl;
  if (!metadata.registration_endpoint && !server.clientId && !hasCimd) {
    throw new UserError(
      "LOGIN_NO_REGISTRATION",
      `Cannot sign in to "${server.name}": its authorization server ${metadata.issuer} offers no dynamic client registration`,
      {
        hint: metadata.client_id_metadata_document_supported === true
          ? "it accepts Client ID Metadata Documents: publish one and set `client-metadata-url` in the manifest, or add `client-id`"
          : "register an OAuth client with that server and add `client-id` (and `client-secret`) to the manifest",
      },
    );
  }
  return {
    state: {
      authorizationServerUrl: info.authorizationServerUrl,
      authorizationServerMetadata: metadata,
      ...(info.resourceMetadata ? { resourceMetadata: info.resourceMetadata } : {}),
      ...(resourceMetadataUrl ? { resourceMetadataUrl: resourceMetadataUrl.href } : {}),
    },
    revocation: await findRevocationEndpoint(info.authorizationServerUrl, metadata.issuer, fetchFn),
  };
}

/**
 * RFC 9728 §3.3 / RFC 8707: the protected-resource metadata's `resource` must designate this server
 * (same origin, and its path a prefix of the server's path, as the SDK's `checkResourceAllowed`);
 * it is then sent verbatim as the `resource` of the authorization and token requests.
 *
 * @throws {UserError} `LOGIN_RESOURCE_MISMATCH` when it designates another server.
 */
function checkResource(server: OAuthServer, resource: string | undefined): void {
  if (resource === undefined) return;
  const requested = resourceUrlFromServerUrl(server.url);
  let allowed = false;
  try {
    allowed = checkResourceAllowed({ requestedResource: requested, configuredResource: resource });
  } catch {
    // Not a URL: refused below.
  }
  if (!allowed) {
    throw new UserError(
      "LOGIN_RESOURCE_MISMATCH",
      `Cannot sign in to "${server.name}": its metadata describes resource ${
        JSON.stringify(resource.slice(0, 200))
      }, not ${requested.href}`,
      {
        hint:
          "check the server URL in the manifest; the server's protected-resource metadata names another resource",
      },
    );
  }
}

/**
 * The RFC 7009 revocation endpoint, read from the raw metadata document: the SDK's parsed OpenID
 * metadata drops fields it does not know, `revocation_endpoint` among them.
 */
export async function findRevocationEndpoint(
  authorizationServerUrl: string,
  issuer: string,
  fetchFn: FetchLike,
): Promise<CredentialRecord["revocation"]> {
  for (const { url } of buildDiscoveryUrls(authorizationServerUrl)) {
    let document: Record<string, unknown>;
    try {
      const response = await fetchFn(url, { headers: { accept: "application/json" } });
      if (!response.ok) {
        await response.body?.cancel().catch(() => {}); // Try the next location.
        continue;
      }
      document = await response.json();
    } catch (error) {
      if (error instanceof UserError) throw error; // Endpoint policy: not something to skip.
      continue; // Not JSON, or unreachable: revocation is optional.
    }
    if (document.issuer !== issuer) continue;
    const endpoint = document.revocation_endpoint;
    if (typeof endpoint !== "string") return undefined;
    const methods = document.revocation_endpoint_auth_methods_supported;
    return {
      endpoint,
      ...(Array.isArray(methods)
        ? { authMethods: methods.filter((m): m is string => typeof m === "string") }
        : {}),
    };
  }
  return undefined;
}
