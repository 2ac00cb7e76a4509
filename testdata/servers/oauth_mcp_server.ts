/**
 * Test fixture: a real OAuth 2.1 authorization server (`oidc-provider`, with dynamic client
 * registration, PKCE, resource indicators, refresh-token rotation and RFC 7009 revocation) in
 * front of a streamable HTTP MCP server (SDK v2 `createMcpHandler` on `Deno.serve`) that accepts
 * only access tokens issued for it.
 *
 * Both listen on 127.0.0.1 with random ports. Prints one JSON line on stdout once ready:
 * `{"issuer": "...", "mcpUrl": "...", "adminUrl": "..."}`. Stops on SIGTERM or when stdin closes.
 *
 * Flags: `--token-format opaque|jwt` (access tokens; default opaque), `--access-ttl-secs N`
 * (default 3600), `--no-registration` (no RFC 7591 endpoint; a client `preregistered` with
 * secret `preregistered-secret` exists instead).
 *
 * Admin endpoints (POST, on the MCP origin): `/admin/reject-current-tokens` (every access token
 * issued so far is refused from now on, as if it had expired), `/admin/stats` (GET: counters).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { errors } from "oidc-provider";
import { type AuthInfo, createMcpHandler, McpServer, requireBearerAuth } from "@modelcontextprotocol/server";
import { OAuthError, OAuthErrorCode } from "@modelcontextprotocol/server";
import { z } from "zod";

const args = Deno.args;
const tokenFormat = args.includes("--token-format") ? args[args.indexOf("--token-format") + 1] : "opaque";
const accessTtlSecs = args.includes("--access-ttl-secs")
  ? Number(args[args.indexOf("--access-ttl-secs") + 1])
  : 3600;
const hasRegistration = !args.includes("--no-registration");

// oidc-provider prints development warnings through console.info/warn; keep stdout for the ready line.
console.info = (...a: unknown[]) => console.error(...a);
console.warn = (...a: unknown[]) => console.error(...a);

const SCOPE = "mcp:tools";
const counters = { tokenRequests: 0, registrations: 0, revocations: 0, mcpRequests: 0, mcp401: 0 };
/** Access tokens the MCP server has accepted, and those it now refuses (`/admin/reject-current-tokens`). */
const seenTokens = new Set<string>();
const rejectedTokens = new Set<string>();

// 1. The authorization server, on node:http so oidc-provider's koa app can serve it.
const asServer = createServer();
await new Promise<void>((resolve) => asServer.listen(0, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${(asServer.address() as AddressInfo).port}`;

// 2. The MCP server's listener first, so its URL (the resource) is known to the AS.
let handle: (request: Request) => Promise<Response> = () => Promise.resolve(new Response(null, { status: 503 }));
const mcpServer = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  (request) => handle(request),
);
const mcpOrigin = `http://127.0.0.1:${mcpServer.addr.port}`;
const mcpUrl = `${mcpOrigin}/mcp`;
const prmUrl = `${mcpOrigin}/.well-known/oauth-protected-resource/mcp`;

const provider = new Provider(issuer, {
  clients: hasRegistration ? [] : [{
    client_id: "preregistered",
    client_secret: "preregistered-secret",
    redirect_uris: ["http://127.0.0.1/callback"],
    application_type: "native",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_basic",
  }],
  cookies: { keys: ["fixture-cookie-key-0123456789abcdef"] },
  scopes: ["openid", "offline_access", SCOPE],
  claims: { openid: ["sub"] },
  findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: hasRegistration },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf ?? mcpUrl,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx: unknown, resourceIndicator: string) => {
        if (resourceIndicator !== mcpUrl) throw new errors.InvalidTarget();
        return {
          scope: SCOPE,
          audience: mcpUrl,
          accessTokenTTL: accessTtlSecs,
          accessTokenFormat: tokenFormat === "jwt" ? "jwt" : "opaque",
          ...(tokenFormat === "jwt" ? { jwt: { sign: { alg: "RS256" } } } : {}),
        };
      },
    },
  },
  ttl: { AccessToken: accessTtlSecs, RefreshToken: 86_400, Grant: 86_400, Session: 86_400, Interaction: 600 },
  issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }) =>
    client.grantTypeAllowed("refresh_token"),
});
provider.on("grant.success", () => counters.tokenRequests++);
provider.on("registration_create.success", () => counters.registrations++);
provider.use(async (ctx: { path: string; method: string; status: number }, next: () => Promise<void>) => {
  await next();
  if (ctx.path === "/token/revocation" && ctx.method === "POST" && ctx.status === 200) counters.revocations++;
});
asServer.on("request", provider.callback());

// 3. Token verification: the resource server looks opaque tokens up in the AS's store (same process)
//    and checks JWT ones the same way through their jti.
const verifier = {
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    let found = await provider.AccessToken.find(token);
    if (!found && tokenFormat === "jwt") {
      // JWT access tokens are not stored; decode the payload (signature is the AS's own key).
      const payload = JSON.parse(atob(token.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")));
      found = payload.iss === issuer
        ? { aud: payload.aud, exp: payload.exp, iat: payload.iat, scope: payload.scope, clientId: payload.client_id, accountId: payload.sub } as never
        : undefined;
    }
    if (!found) throw new OAuthError(OAuthErrorCode.InvalidToken, "unknown or revoked token");
    const t = found as unknown as { aud: string; exp: number; iat: number; scope?: string; clientId: string; accountId: string };
    if (rejectedTokens.has(token)) throw new OAuthError(OAuthErrorCode.InvalidToken, "token expired");
    seenTokens.add(token);
    return {
      token,
      clientId: t.clientId,
      scopes: (t.scope ?? "").split(" ").filter(Boolean),
      expiresAt: t.exp,
      resource: new URL(Array.isArray(t.aud) ? t.aud[0] : t.aud),
      extra: { sub: t.accountId },
    };
  },
};
const gate = requireBearerAuth({ verifier, expectedResource: new URL(mcpUrl), resourceMetadataUrl: prmUrl });

const mcp = createMcpHandler((ctx) => {
  const server = new McpServer({ name: "oauth-fixture", version: "1.0.0" });
  server.registerTool(
    "whoami",
    { description: "Who the bearer token belongs to", inputSchema: z.object({}) },
    () => ({
      content: [{ type: "text", text: JSON.stringify({ sub: ctx.authInfo?.extra?.sub, scopes: ctx.authInfo?.scopes }) }],
    }),
  );
  server.registerTool(
    "add",
    { description: "Adds two numbers", inputSchema: z.object({ a: z.number(), b: z.number() }) },
    ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  return server;
});

handle = async (request: Request): Promise<Response> => {
  const { pathname } = new URL(request.url);
  if (pathname === "/.well-known/oauth-protected-resource/mcp") {
    return Response.json({
      resource: mcpUrl,
      authorization_servers: [issuer],
      scopes_supported: [SCOPE],
      bearer_methods_supported: ["header"],
    });
  }
  if (pathname === "/admin/reject-current-tokens" && request.method === "POST") {
    for (const t of seenTokens) rejectedTokens.add(t);
    return Response.json({ ok: true });
  }
  if (pathname === "/admin/stats") return Response.json(counters);
  if (pathname !== "/mcp") return new Response("not found", { status: 404 });
  counters.mcpRequests++;
  const auth = await gate(request);
  if (auth instanceof Response) {
    if (auth.status === 401) counters.mcp401++;
    return auth;
  }
  return mcp.fetch(request, { authInfo: auth });
};

console.log(JSON.stringify({ issuer, mcpUrl, adminUrl: mcpOrigin }));

const stop = async () => {
  await mcp.close();
  await mcpServer.shutdown();
  asServer.closeAllConnections();
  await new Promise<void>((resolve) => asServer.close(() => resolve()));
  Deno.exit(0);
};
Deno.addSignalListener("SIGTERM", () => void stop());
// Exit when the test that started us goes away.
(async () => {
  const buf = new Uint8Array(64);
  while ((await Deno.stdin.read(buf)) !== null) { /* ignore input */ }
  await stop();
})();
