/**
 * The whole sign-in, from the 401 to the stored tokens, against a scripted authorization server
 * behind the fetch seam; the browser is a real HTTP request to the loopback callback listener,
 * carrying what the authorization server would put in the redirect (`code`, `iss`, `error`).
 *
 * Covers the MCP 2026-07-28 authorization rules: the `resource` exactly as the protected-resource
 * metadata publishes it (RFC 8707, RFC 9728), the `iss` of the authorization response checked
 * before the code is redeemed (RFC 9207), and clients kept per issuer (never one issuer's client at
 * another).
 */
import assert from "node:assert/strict";
import type { FetchLike } from "@modelcontextprotocol/client";
import { signIn, type SignInResult } from "../../lib/auth/mod.ts";
import { type CredentialRecord, readCredentials, writeCredentials } from "../../lib/auth/credentials.ts";
import { UserError } from "../../lib/diagnostics.ts";

const ORIGIN = "https://mcp.example.com";
const MCP = `${ORIGIN}/mcp`;
const AS = "https://auth.example.com";
const AS2 = "https://login.other.example";

type Route = (request: Request) => Response | Promise<Response>;

interface Scripted {
  fetch: FetchLike;
  /** Every request, in order (bodies readable). */
  seen: Request[];
  /** Requests to a token endpoint. */
  tokenRequests(): Request[];
  /** Requests to a registration endpoint. */
  registrations(): Request[];
}

interface ScriptOptions {
  /** The issuer the protected-resource metadata names. @default AS */
  issuer?: string;
  /** Extra fields of the authorization-server metadata. */
  metadata?: Record<string, unknown>;
  /** The protected-resource metadata's `resource`. @default MCP */
  resource?: string;
  /** Where the protected-resource metadata is: the challenge's URL, or only the root well-known one. */
  prmAtRoot?: boolean;
  /** Answers the MCP endpoint instead of a 401 to every request. */
  mcp?: Route;
}

function metadataOf(issuer: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    response_types_supported: ["code"],
    code_challenge_methods_supported: ["S256"],
    ...extra,
  };
}

/** An MCP server and two authorization servers (`AS`, `AS2`); the metadata names `options.issuer`. */
function scripted(options: ScriptOptions = {}): Scripted {
  const issuer = options.issuer ?? AS;
  const prm = () => Response.json({ resource: options.resource ?? MCP, authorization_servers: [issuer] });
  const routes: Record<string, Route> = {
    [`POST ${MCP}`]: options.mcp ?? (() =>
      new Response("{}", {
        status: 401,
        headers: {
          "www-authenticate": options.prmAtRoot ? "Bearer" : `Bearer resource_metadata="${ORIGIN}/prm"`,
        },
      })),
    [`GET ${ORIGIN}${options.prmAtRoot ? "/.well-known/oauth-protected-resource" : "/prm"}`]: prm,
  };
  for (const as of [AS, AS2]) {
    routes[`GET ${as}/.well-known/oauth-authorization-server`] = () =>
      Response.json(metadataOf(as, options.metadata));
    routes[`POST ${as}/register`] = async (r) =>
      Response.json({ ...(await r.json()), client_id: `client-of-${new URL(as).hostname}` }, { status: 201 });
    routes[`POST ${as}/token`] = () =>
      Response.json({ access_token: `at-${crypto.randomUUID()}`, token_type: "Bearer", expires_in: 3600 });
  }
  const seen: Request[] = [];
  const fetch: FetchLike = (input, init) => {
    const request = new Request(input, init);
    seen.push(request.clone());
    const url = new URL(request.url);
    const route = routes[`${request.method} ${url.origin}${url.pathname}`];
    return Promise.resolve(route ? route(request) : new Response("not found", { status: 404 }));
  };
  return {
    fetch,
    seen,
    tokenRequests: () => seen.filter((r) => new URL(r.url).pathname === "/token"),
    registrations: () => seen.filter((r) => new URL(r.url).pathname === "/register"),
  };
}

/** What the browser brings back: `true` for the issuer the test expects, or explicit parameters. */
type Redirect = Record<string, string | undefined>;

interface FlowOutcome {
  result: { ok: true; value: SignInResult } | { ok: false; error: unknown };
  /** The authorization URL the sign-in showed. */
  authorize: URL;
  /** The page the browser landed on. */
  page: string;
}

/** Runs a sign-in whose browser comes back with `redirect(authorize)` (plus the right `state`). */
async function signInThrough(
  dir: string,
  server: Scripted,
  redirect: (authorize: URL) => Redirect,
  manifest: { clientId?: string } = {},
): Promise<FlowOutcome> {
  let authorize: URL | undefined;
  let page: Promise<string> | undefined;
  const result = await signIn({ name: "svc", url: MCP, ...manifest }, {
    configDir: dir,
    fetch: server.fetch,
    timeoutMs: 10_000,
    onAuthorizationUrl(url) {
      authorize = new URL(url);
      const back = new URL(authorize.searchParams.get("redirect_uri")!);
      back.searchParams.set("state", authorize.searchParams.get("state")!);
      for (const [key, value] of Object.entries(redirect(authorize))) {
        if (value !== undefined) back.searchParams.set(key, value);
      }
      page = globalThis.fetch(back).then((r) => r.text());
    },
  }).then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));
  assert.ok(authorize, "the authorization URL was shown");
  return { result, authorize, page: await page! };
}

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "sign_in_flow_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function failedWith(outcome: FlowOutcome, code: string): UserError {
  assert.equal(outcome.result.ok, false, "the sign-in failed");
  const error = (outcome.result as { error: unknown }).error;
  assert.ok(error instanceof UserError, String(error));
  assert.equal(error.code, code, error.message);
  return error;
}

Deno.test("signIn() sends a pathless resource exactly as the protected-resource metadata publishes it", async () => {
  await withTempDir(async (dir) => {
    const server = scripted({ resource: ORIGIN, prmAtRoot: true });
    const outcome = await signInThrough(dir, server, () => ({ code: "c0de", iss: AS }));
    assert.equal(outcome.result.ok, true);
    assert.equal(outcome.authorize.searchParams.get("resource"), ORIGIN, "no '/' appended");
    const [token] = server.tokenRequests();
    assert.equal(new URLSearchParams(await token!.text()).get("resource"), ORIGIN);
    assert.equal((await readCredentials(dir, "svc"))?.resource, ORIGIN, "refreshes send the same");
  });
});

Deno.test("signIn() redeems the code when iss is the recorded issuer, or absent where not advertised", async () => {
  for (
    const [metadata, iss] of [
      [{ authorization_response_iss_parameter_supported: true }, AS],
      [{}, AS],
      [{}, undefined],
    ] as const
  ) {
    await withTempDir(async (dir) => {
      const server = scripted({ metadata });
      const outcome = await signInThrough(dir, server, () => ({ code: "c0de", iss }));
      assert.equal(outcome.result.ok, true, JSON.stringify({ metadata, iss }));
      assert.equal(server.tokenRequests().length, 1);
      assert.match(outcome.page, /Signed in to svc/);
    });
  }
});

Deno.test("signIn() never redeems a code whose iss is wrong, normalised, or missing where advertised", async () => {
  const supported = { authorization_response_iss_parameter_supported: true };
  for (
    const [metadata, iss, why] of [
      [supported, "https://evil.example", /names another issuer/],
      [{}, "https://evil.example", /names another issuer/],
      [supported, `${AS}/`, /names another issuer/],
      [supported, "HTTPS://AUTH.EXAMPLE.COM", /names another issuer/],
      [supported, undefined, /carries no `iss`/],
    ] as const
  ) {
    await withTempDir(async (dir) => {
      const server = scripted({ metadata });
      const outcome = await signInThrough(dir, server, () => ({ code: "c0de-never-redeemed", iss }));
      const error = failedWith(outcome, "LOGIN_ISSUER_MISMATCH");
      assert.match(error.message, why);
      assert.match(error.message, new RegExp(`expected ${AS}`));
      assert.equal(server.tokenRequests().length, 0, `no token request (iss ${iss})`);
      assert.match(outcome.page, /<h1>Sign-in refused<\/h1>/);
      assert.ok(!outcome.page.includes("c0de-never-redeemed"));
      assert.equal(await readCredentials(dir, "svc"), undefined, "nothing stored");
    });
  }
});

Deno.test("signIn() neither acts on nor shows an error response from another issuer", async () => {
  await withTempDir(async (dir) => {
    const server = scripted({ metadata: { authorization_response_iss_parameter_supported: true } });
    const outcome = await signInThrough(dir, server, () => ({
      error: "access_denied",
      error_description: "Visit https://evil.example/fix to continue",
      iss: "https://evil.example",
    }));
    const error = failedWith(outcome, "LOGIN_ISSUER_MISMATCH");
    for (const text of [error.message, error.hint ?? "", outcome.page]) {
      assert.ok(!text.includes("evil.example"), text);
      assert.ok(!text.includes("access_denied"), text);
    }
  });
});

Deno.test("signIn() still reports an error response that carries the recorded issuer", async () => {
  await withTempDir(async (dir) => {
    const server = scripted({ metadata: { authorization_response_iss_parameter_supported: true } });
    const outcome = await signInThrough(dir, server, () => ({ error: "access_denied", iss: AS }));
    assert.match(failedWith(outcome, "LOGIN_DENIED").message, /access_denied/);
  });
});

/** The client ids the authorization and token requests of `server` presented, and where. */
async function clientIdsSeen(server: Scripted): Promise<string[]> {
  const ids: string[] = [];
  for (const request of server.seen) {
    const url = new URL(request.url);
    if (url.pathname === "/token") {
      ids.push(`${url.origin} ${new URLSearchParams(await request.text()).get("client_id")}`);
    }
  }
  return ids;
}

Deno.test("signIn() files its client under the issuer and uses it again with that issuer only", async () => {
  await withTempDir(async (dir) => {
    const first = scripted();
    const one = await signInThrough(dir, first, () => ({ code: "c1", iss: AS }));
    assert.equal(one.result.ok, true);
    const afterFirst = await readCredentials(dir, "svc");
    assert.equal(afterFirst?.version, 2);
    assert.deepEqual(Object.keys(afterFirst?.clients ?? {}), [AS]);
    assert.equal(afterFirst?.clients?.[AS]?.client_id, "client-of-auth.example.com");

    // The same authorization server again: its client is used, nothing is registered.
    const again = scripted();
    const two = await signInThrough(dir, again, () => ({ code: "c2", iss: AS }));
    assert.equal(two.result.ok, true);
    assert.equal(again.registrations().length, 0, "no second registration with the same issuer");
    assert.equal(two.authorize.searchParams.get("client_id"), "client-of-auth.example.com");
    assert.equal(
      two.authorize.searchParams.get("redirect_uri"),
      one.authorize.searchParams.get("redirect_uri"),
    );

    // The protected-resource metadata now names another authorization server: register there.
    const moved = scripted({ issuer: AS2 });
    const three = await signInThrough(dir, moved, () => ({ code: "c3", iss: AS2 }));
    assert.equal(three.result.ok, true);
    assert.deepEqual(moved.registrations().map((r) => new URL(r.url).origin), [AS2]);
    assert.equal(three.authorize.searchParams.get("client_id"), "client-of-login.other.example");
    assert.deepEqual(await clientIdsSeen(moved), [`${AS2} client-of-login.other.example`]);
    const record = await readCredentials(dir, "svc");
    assert.equal(record?.issuer, AS2);
    assert.deepEqual(
      Object.keys(record?.clients ?? {}).sort(),
      [AS, AS2].sort(),
      "each client under its issuer",
    );
  });
});

Deno.test("signIn() registers again when the stored client's redirect port is taken", async () => {
  await withTempDir(async (dir) => {
    const one = await signInThrough(dir, scripted(), () => ({ code: "c1", iss: AS }));
    const port = Number(new URL(one.authorize.searchParams.get("redirect_uri")!).port);
    using _busy = Deno.listen({ hostname: "127.0.0.1", port });
    const again = scripted();
    const two = await signInThrough(dir, again, () => ({ code: "c2", iss: AS }));
    assert.equal(two.result.ok, true);
    assert.equal(again.registrations().length, 1, "a new redirect URI, so a new registration");
  });
});

Deno.test("signIn() stops offering a stored client that did not carry a sign-in through", async () => {
  await withTempDir(async (dir) => {
    await signInThrough(dir, scripted(), () => ({ code: "c1", iss: AS }));
    const denied = await signInThrough(dir, scripted(), () => ({ error: "unauthorized_client", iss: AS }));
    failedWith(denied, "LOGIN_DENIED");
    assert.deepEqual((await readCredentials(dir, "svc"))?.clients, {});
    const again = scripted();
    assert.equal((await signInThrough(dir, again, () => ({ code: "c3", iss: AS }))).result.ok, true);
    assert.equal(again.registrations().length, 1);
  });
});

Deno.test("credential files of format 1 still load, their client filed under its issuer", async () => {
  await withTempDir(async (dir) => {
    const v1 = {
      version: 1,
      server: "svc",
      serverUrl: MCP,
      issuer: AS,
      resource: MCP,
      client: { client_id: "old-client", client_secret: "old-secret-1234", issuer: AS },
      tokens: { access_token: "old-at", token_type: "Bearer", refresh_token: "old-rt" },
    };
    await Deno.mkdir(`${dir}/credentials`, { mode: 0o700 });
    await Deno.writeTextFile(`${dir}/credentials/svc.json`, JSON.stringify(v1), { mode: 0o600 });
    const record = await readCredentials(dir, "svc");
    assert.equal(record?.version, 2);
    assert.deepEqual(record?.clients, { [AS]: v1.client });
    assert.equal(record?.tokens?.refresh_token, "old-rt");
    assert.equal((record as unknown as { client?: unknown }).client, undefined);
    // A format-1 client without any issuer stamp is filed under the record's issuer.
    const { issuer: _, ...unstamped } = v1.client;
    await Deno.writeTextFile(`${dir}/credentials/svc.json`, JSON.stringify({ ...v1, client: unstamped }));
    assert.deepEqual((await readCredentials(dir, "svc"))?.clients, { [AS]: { ...unstamped, issuer: AS } });
  });
});

Deno.test("signIn() refuses to present the manifest client-id to an authorization server it was not used with", async () => {
  await withTempDir(async (dir) => {
    const record: CredentialRecord = {
      version: 2,
      server: "svc",
      serverUrl: MCP,
      issuer: AS,
      clients: { [AS]: { client_id: "pre-registered", issuer: AS } },
    };
    await writeCredentials(dir, record);
    const moved = scripted({ issuer: AS2 });
    await assert.rejects(
      signIn({ name: "svc", url: MCP, clientId: "pre-registered" }, {
        configDir: dir,
        fetch: moved.fetch,
        onAuthorizationUrl: () => assert.fail("no authorization URL"),
      }),
      (e: unknown) =>
        e instanceof UserError && e.code === "LOGIN_CLIENT_ISSUER_CHANGED" &&
        e.message.includes(AS2) && /mcp logout svc/.test(e.hint ?? ""),
    );
    assert.equal(moved.seen.filter((r) => r.url.startsWith(AS2) && !r.url.includes("well-known")).length, 0);
    // With the same issuer it signs in.
    const same = await signInThrough(dir, scripted(), () => ({ code: "c", iss: AS }), {
      clientId: "pre-registered",
    });
    assert.equal(same.result.ok, true);
  });
});

/** A server that refuses only requests with `method` (401 with a scope), and answers others 200 or 400. */
function refusing(method: string, other: number): Route {
  return async (request) => {
    const body = await request.json();
    if (body.method !== method) {
      return Response.json({ jsonrpc: "2.0", id: 0, result: {} }, { status: other });
    }
    return new Response("{}", {
      status: 401,
      headers: { "www-authenticate": `Bearer scope="from-${method}", resource_metadata="${ORIGIN}/prm"` },
    });
  };
}

Deno.test("signIn() takes the challenge from the request of either era the server refuses", async () => {
  for (
    const [mcp, scope] of [
      // 2026-07-28: `initialize` is let through; the modern opening request is refused.
      [refusing("server/discover", 200), "from-server/discover"],
      // 2025-11-25: `server/discover` is a bad request; `initialize` is refused.
      [refusing("initialize", 400), "from-initialize"],
    ] as const
  ) {
    await withTempDir(async (dir) => {
      const server = scripted({ mcp });
      const outcome = await signInThrough(dir, server, () => ({ code: "c", iss: AS }));
      assert.equal(outcome.result.ok, true);
      assert.equal(outcome.authorize.searchParams.get("scope"), scope);
      const [first] = server.seen;
      assert.equal(first!.headers.get("mcp-protocol-version"), "2026-07-28", "the modern request first");
      assert.equal(first!.headers.get("authorization"), null);
    });
  }
});
