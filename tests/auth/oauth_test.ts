import assert from "node:assert/strict";
import type { FetchLike } from "@modelcontextprotocol/client";
import {
  createStoredAuthProvider,
  parseBearerChallenge,
  refreshCredentials,
  signIn,
  SignInRequiredError,
  signOut,
} from "../../lib/auth/mod.ts";
import { type CredentialRecord, readCredentials, writeCredentials } from "../../lib/auth/credentials.ts";
import { UserError } from "../../lib/diagnostics.ts";

const MCP = "https://mcp.example.com/mcp";
const AS = "https://auth.example.com";

type Route = (request: Request) => Response | Promise<Response>;

/** A fetch answering from `routes` keyed `"METHOD url-without-query"`; records every request. */
function fakeFetch(routes: Record<string, Route>): FetchLike & { seen: Request[] } {
  const seen: Request[] = [];
  const fn = (input: string | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    seen.push(request.clone());
    const url = new URL(request.url);
    const key = `${request.method} ${url.origin}${url.pathname}`;
    const route = routes[key];
    return Promise.resolve(route ? route(request) : new Response("not found", { status: 404 }));
  };
  return Object.assign(fn, { seen });
}

function asMetadata(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    issuer: AS,
    authorization_endpoint: `${AS}/authorize`,
    token_endpoint: `${AS}/token`,
    registration_endpoint: `${AS}/register`,
    response_types_supported: ["code"],
    code_challenge_methods_supported: ["S256"],
    ...extra,
  };
}

function baseRoutes(metadata: Record<string, unknown> = asMetadata()): Record<string, Route> {
  return {
    [`POST ${MCP}`]: () =>
      new Response("{}", {
        status: 401,
        headers: {
          "www-authenticate": `Bearer resource_metadata="https://mcp.example.com/prm", scope="read"`,
        },
      }),
    ["GET https://mcp.example.com/prm"]: () => Response.json({ resource: MCP, authorization_servers: [AS] }),
    [`GET ${AS}/.well-known/oauth-authorization-server`]: () => Response.json(metadata),
    [`POST ${AS}/register`]: async (r) =>
      Response.json({ ...(await r.json()), client_id: "dyn-client" }, { status: 201 }),
  };
}

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "oauth_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function stored(overrides: Partial<CredentialRecord> = {}): CredentialRecord {
  return {
    version: 2,
    server: "svc",
    serverUrl: MCP,
    issuer: AS,
    resource: MCP,
    clients: { [AS]: { client_id: "dyn-client", issuer: AS } },
    tokens: { access_token: "at-1", token_type: "Bearer", refresh_token: "rt-1", expires_in: 3600 },
    receivedAtMs: Date.now(),
    expiresAtMs: Date.now() + 3_600_000,
    discovery: {
      authorizationServerUrl: AS,
      authorizationServerMetadata: asMetadata() as never,
    },
    revocation: { endpoint: `${AS}/revoke` },
    ...overrides,
  };
}

Deno.test("parseBearerChallenge() reads quoted, escaped and token parameters of the Bearer challenge", () => {
  assert.deepEqual(
    parseBearerChallenge(
      'Basic realm="a, b", Bearer error="invalid_token", scope="files:read \\"x\\"", resource_metadata=https://h/prm',
    ),
    { error: "invalid_token", scope: 'files:read "x"', resource_metadata: "https://h/prm" },
  );
});

Deno.test("parseBearerChallenge() stops at the next challenge and ignores other schemes", () => {
  assert.deepEqual(parseBearerChallenge('Bearer scope="a", DPoP scope="b", algs="ES256"'), { scope: "a" });
  assert.deepEqual(parseBearerChallenge('Negotiate abc==, Basic realm="x"'), {});
  assert.deepEqual(parseBearerChallenge(""), {});
  assert.deepEqual(parseBearerChallenge('bearer  Scope = read ,resource_metadata="u"'), {
    scope: "read",
    resource_metadata: "u",
  });
});

Deno.test("signIn() refuses an authorization server that does not offer PKCE S256", async () => {
  await withTempDir(async (dir) => {
    for (const methods of [undefined, ["plain"]]) {
      const fetch = fakeFetch(baseRoutes(asMetadata({ code_challenge_methods_supported: methods })));
      let shown = false;
      await assert.rejects(
        signIn({ name: "svc", url: MCP }, {
          configDir: dir,
          fetch,
          onAuthorizationUrl: () => void (shown = true),
        }),
        (e: unknown) => {
          assert.ok(e instanceof UserError);
          assert.equal(e.code, "LOGIN_NO_PKCE");
          assert.match(e.message, /does not offer PKCE with S256/);
          return true;
        },
      );
      assert.equal(shown, false, "no URL is shown");
    }
  });
});

Deno.test("signIn() refuses a server without registration endpoint unless the manifest gives a client-id", async () => {
  await withTempDir(async (dir) => {
    const fetch = fakeFetch(baseRoutes(asMetadata({ registration_endpoint: undefined })));
    await assert.rejects(
      signIn({ name: "svc", url: MCP }, { configDir: dir, fetch, onAuthorizationUrl: () => {} }),
      (e: unknown) =>
        e instanceof UserError && e.code === "LOGIN_NO_REGISTRATION" && /client-id/.test(e.hint ?? ""),
    );
  });
});

Deno.test("signIn() reports LOGIN_NO_OAUTH when protected-resource metadata names a server without metadata", async () => {
  await withTempDir(async (dir) => {
    const routes = baseRoutes();
    delete routes[`GET ${AS}/.well-known/oauth-authorization-server`];
    await assert.rejects(
      signIn({ name: "svc", url: MCP }, {
        configDir: dir,
        fetch: fakeFetch(routes),
        onAuthorizationUrl: () => {},
      }),
      (e: unknown) => e instanceof UserError && e.code === "LOGIN_NO_OAUTH",
    );
  });
});

/** Runs a sign-in up to the authorization URL, then stops it. */
async function urlShownBy(
  server: Parameters<typeof signIn>[0],
  dir: string,
  fetch: FetchLike,
  onStepUpScopes?: (scopes: string[]) => void,
): Promise<URL> {
  const controller = new AbortController();
  let shown: URL | undefined;
  await assert.rejects(
    signIn(server, {
      configDir: dir,
      fetch,
      signal: controller.signal,
      ...(onStepUpScopes ? { onStepUpScopes } : {}),
      onAuthorizationUrl(url) {
        shown = new URL(url);
        controller.abort(new Error("stop"));
      },
    }),
    /stop/,
  );
  assert.ok(shown);
  return shown;
}

Deno.test("signIn() falls back to /authorize, /token and /register of a 2025-03-26 server without metadata", async () => {
  await withTempDir(async (dir) => {
    const origin = "https://mcp.example.com";
    const fetch = fakeFetch({
      [`POST ${MCP}`]: () => new Response("", { status: 401 }),
      [`POST ${origin}/register`]: async (r) =>
        Response.json({ ...(await r.json()), client_id: "fallback-client" }, { status: 201 }),
    });
    const shown = await urlShownBy({ name: "svc", url: MCP }, dir, fetch);
    assert.equal(shown.origin + shown.pathname, `${origin}/authorize`);
    assert.equal(shown.searchParams.get("client_id"), "fallback-client");
    assert.equal(shown.searchParams.get("code_challenge_method"), "S256");
    assert.ok(fetch.seen.some((r) => r.url === `${origin}/register`), "registered at the default endpoint");
  });
});

Deno.test("signIn() holds fallback endpoints to the endpoint policy (no plain http off this machine)", async () => {
  await withTempDir(async (dir) => {
    const url = "http://mcp.example.com/mcp";
    const fetch = fakeFetch({
      [`POST ${url}`]: () => new Response("", { status: 401 }),
      ["POST http://mcp.example.com/register"]: async (r) =>
        Response.json({ ...(await r.json()), client_id: "c" }, { status: 201 }),
    });
    let shown = false;
    await assert.rejects(
      signIn({ name: "svc", url }, { configDir: dir, fetch, onAuthorizationUrl: () => void (shown = true) }),
      (e: unknown) => e instanceof UserError && e.code === "ENDPOINT_INSECURE_HTTP",
    );
    assert.equal(shown, false);
  });
});

Deno.test("signIn() uses the Client ID Metadata Document URL as client_id where the server supports it", async () => {
  await withTempDir(async (dir) => {
    const cimd = "https://cargo-agents.example/oauth/client.json";
    const routes = baseRoutes(
      asMetadata({ client_id_metadata_document_supported: true, registration_endpoint: undefined }),
    );
    const fetch = fakeFetch(routes);
    const shown = await urlShownBy({ name: "svc", url: MCP, clientMetadataUrl: cimd }, dir, fetch);
    assert.equal(shown.searchParams.get("client_id"), cimd);
    assert.ok(!fetch.seen.some((r) => r.url.endsWith("/register")), "no registration");
  });
});

Deno.test("signIn() asks for the union of granted and step-up scopes after a 403 insufficient_scope", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(
      dir,
      stored({ tokens: { ...stored().tokens!, scope: "read" }, stepUpScopes: ["write", "read"] }),
    );
    let added: string[] = [];
    const shown = await urlShownBy(
      { name: "svc", url: MCP },
      dir,
      fakeFetch(baseRoutes()),
      (s) => (added = s),
    );
    assert.equal(shown.searchParams.get("scope"), "read write");
    assert.deepEqual(added, ["write"]);
  });
});

Deno.test("signIn() seeds discovery from the challenge and sends resource, scope, state and PKCE", async () => {
  await withTempDir(async (dir) => {
    const fetch = fakeFetch(baseRoutes());
    const controller = new AbortController();
    let shown: URL | undefined;
    const run = signIn({ name: "svc", url: MCP }, {
      configDir: dir,
      fetch,
      signal: controller.signal,
      onAuthorizationUrl(url) {
        shown = new URL(url);
        controller.abort(new Error("stop here"));
      },
    });
    await assert.rejects(run, /stop here/);
    assert.ok(shown);
    assert.equal(shown.origin + shown.pathname, `${AS}/authorize`);
    assert.equal(shown.searchParams.get("resource"), MCP);
    assert.equal(shown.searchParams.get("scope"), "read");
    assert.equal(shown.searchParams.get("code_challenge_method"), "S256");
    assert.equal(shown.searchParams.get("client_id"), "dyn-client");
    assert.match(shown.searchParams.get("redirect_uri") ?? "", /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.ok(fetch.seen.some((r) => r.url === "https://mcp.example.com/prm"), "PRM from the challenge");
    const registration = fetch.seen.find((r) => r.url === `${AS}/register`)!;
    const body = await registration.json();
    assert.equal(body.token_endpoint_auth_method, "none");
    assert.equal(body.application_type, "native");
    assert.deepEqual(body.grant_types, ["authorization_code", "refresh_token"]);
  });
});

Deno.test("signIn() sends the resource even when the server publishes no protected-resource metadata", async () => {
  await withTempDir(async (dir) => {
    const routes = baseRoutes();
    routes[`POST ${MCP}`] = () =>
      new Response("", { status: 401, headers: { "www-authenticate": "Bearer" } });
    routes[`GET https://mcp.example.com/.well-known/oauth-authorization-server`] = () =>
      Response.json(asMetadata({ issuer: "https://mcp.example.com/" }));
    const fetch = fakeFetch(routes);
    const controller = new AbortController();
    let shown: URL | undefined;
    await assert.rejects(
      signIn({ name: "svc", url: MCP }, {
        configDir: dir,
        fetch,
        signal: controller.signal,
        onAuthorizationUrl(url) {
          shown = new URL(url);
          controller.abort(new Error("stop"));
        },
      }),
      /stop/,
    );
    assert.equal(shown?.searchParams.get("resource"), MCP);
  });
});

Deno.test("signIn() refuses metadata whose resource designates another server", async () => {
  await withTempDir(async (dir) => {
    const routes = baseRoutes();
    routes["GET https://mcp.example.com/prm"] = () =>
      Response.json({ resource: "https://other.example.com/mcp", authorization_servers: [AS] });
    await assert.rejects(
      signIn({ name: "svc", url: MCP }, {
        configDir: dir,
        fetch: fakeFetch(routes),
        onAuthorizationUrl: () => {},
      }),
      (e: unknown) => e instanceof UserError && e.code === "LOGIN_RESOURCE_MISMATCH",
    );
  });
});

Deno.test("refreshCredentials() keeps the file and fails with REFRESH_FAILED on a server error", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, stored());
    const fetch = fakeFetch({ [`POST ${AS}/token`]: () => new Response("oops", { status: 503 }) });
    await assert.rejects(
      refreshCredentials({ name: "svc", url: MCP }, { configDir: dir, fetch, staleAccessToken: "at-1" }),
      (e: unknown) => e instanceof UserError && e.code === "REFRESH_FAILED" && !e.message.includes("rt-1"),
    );
    assert.equal((await readCredentials(dir, "svc"))?.tokens?.refresh_token, "rt-1");
  });
});

Deno.test("refreshCredentials() turns invalid_grant into needs sign-in and drops the tokens", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, stored());
    const fetch = fakeFetch({
      [`POST ${AS}/token`]: () =>
        Response.json({ error: "invalid_grant", error_description: "revoked" }, { status: 400 }),
    });
    await assert.rejects(
      refreshCredentials({ name: "svc", url: MCP }, { configDir: dir, fetch, staleAccessToken: "at-1" }),
      (e: unknown) => {
        assert.ok(e instanceof SignInRequiredError);
        assert.equal(e.code, "NEEDS_SIGN_IN");
        assert.equal(e.hint, "run `cargo agents mcp login svc` to sign in");
        return true;
      },
    );
    const after = await readCredentials(dir, "svc");
    assert.equal(after?.tokens, undefined);
    assert.equal(after?.rejected, "invalid_grant");
  });
});

Deno.test("refreshCredentials() sends resource and client_id and keeps a refresh token the server did not rotate", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, stored());
    const fetch = fakeFetch({
      [`POST ${AS}/token`]: () =>
        Response.json({ access_token: "at-2", token_type: "Bearer", expires_in: 60 }),
    });
    const record = await refreshCredentials({ name: "svc", url: MCP }, {
      configDir: dir,
      fetch,
      staleAccessToken: "at-1",
    });
    assert.equal(record.tokens?.access_token, "at-2");
    assert.equal(record.tokens?.refresh_token, "rt-1");
    const body = new URLSearchParams(await fetch.seen[0]!.text());
    assert.equal(body.get("grant_type"), "refresh_token");
    assert.equal(body.get("resource"), MCP);
    assert.equal(body.get("client_id"), "dyn-client");
    assert.equal((await readCredentials(dir, "svc"))?.tokens?.access_token, "at-2");
  });
});

Deno.test("refreshCredentials() makes no request when another process already refreshed", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(
      dir,
      stored({ tokens: { access_token: "at-newer", token_type: "Bearer", refresh_token: "rt-2" } }),
    );
    const fetch = fakeFetch({});
    const record = await refreshCredentials({ name: "svc", url: MCP }, {
      configDir: dir,
      fetch,
      staleAccessToken: "at-1",
    });
    assert.equal(record.tokens?.access_token, "at-newer");
    assert.equal(fetch.seen.length, 0);
  });
});

Deno.test("createStoredAuthProvider() sends no token without credentials and asks for sign-in on 401", async () => {
  await withTempDir(async (dir) => {
    const provider = createStoredAuthProvider({ name: "svc", url: MCP }, {
      configDir: dir,
      fetch: fakeFetch({}),
    });
    assert.equal(await provider.token(), undefined);
    await assert.rejects(
      provider.onUnauthorized!({} as never),
      (e: unknown) => e instanceof SignInRequiredError && /requires authorization/.test(e.message),
    );
  });
});

Deno.test("createStoredAuthProvider() picks up a token written after it was created", async () => {
  await withTempDir(async (dir) => {
    const provider = createStoredAuthProvider({ name: "svc", url: MCP }, {
      configDir: dir,
      fetch: fakeFetch({}),
    });
    assert.equal(await provider.token(), undefined);
    await writeCredentials(dir, stored());
    assert.equal(await provider.token(), "at-1");
    await writeCredentials(dir, stored({ tokens: { access_token: "at-9", token_type: "Bearer" } }));
    await provider.onUnauthorized!({} as never); // at-1 was refused, at-9 is newer: retry without refreshing.
    assert.equal(await provider.token(), "at-9");
  });
});

Deno.test("createStoredAuthProvider() refuses an expired token without refresh token", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(
      dir,
      stored({ tokens: { access_token: "at-1", token_type: "Bearer" }, expiresAtMs: Date.now() - 1 }),
    );
    const provider = createStoredAuthProvider({ name: "svc", url: MCP }, {
      configDir: dir,
      fetch: fakeFetch({}),
    });
    await assert.rejects(
      provider.token(),
      (e: unknown) => e instanceof SignInRequiredError && /expired/.test(e.message),
    );
  });
});

Deno.test("signOut() revokes refresh and access tokens with the client id, then deletes the file", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, stored());
    const fetch = fakeFetch({ [`POST ${AS}/revoke`]: () => new Response(null, { status: 200 }) });
    assert.deepEqual(await signOut(dir, { name: "svc" }, { fetch }), { existed: true, revoked: true });
    const bodies = await Promise.all(fetch.seen.map(async (r) => new URLSearchParams(await r.text())));
    assert.deepEqual(bodies.map((b) => [b.get("token"), b.get("token_type_hint"), b.get("client_id")]), [
      ["rt-1", "refresh_token", "dyn-client"],
      ["at-1", "access_token", "dyn-client"],
    ]);
    assert.equal(await readCredentials(dir, "svc"), undefined);
    assert.deepEqual(await signOut(dir, { name: "svc" }, { fetch }), { existed: false, revoked: false });
  });
});

Deno.test("signOut() authenticates with the manifest secret using HTTP Basic", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, stored({ clients: { [AS]: { client_id: "pre", issuer: AS } } }));
    const fetch = fakeFetch({ [`POST ${AS}/revoke`]: () => new Response(null, { status: 200 }) });
    await signOut(dir, { name: "svc", clientId: "pre", clientSecret: "s3cret" }, { fetch });
    assert.equal(fetch.seen[0]!.headers.get("authorization"), `Basic ${btoa("pre:s3cret")}`);
  });
});

Deno.test("signOut() still deletes the file when revocation fails, and says why without the token", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, stored());
    const fetch = fakeFetch({ [`POST ${AS}/revoke`]: () => new Response(null, { status: 500 }) });
    const result = await signOut(dir, { name: "svc" }, { fetch });
    assert.deepEqual(result, {
      existed: true,
      revoked: false,
      revocationNote: "revocation failed: HTTP 500",
    });
    assert.equal(await readCredentials(dir, "svc"), undefined);
  });
});

Deno.test("signOut() notes when the server offers no revocation", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, stored({ revocation: undefined }));
    const result = await signOut(dir, { name: "svc" }, { fetch: fakeFetch({}) });
    assert.equal(result.revocationNote, "the authorization server offers no token revocation");
    assert.equal(result.existed, true);
  });
});
