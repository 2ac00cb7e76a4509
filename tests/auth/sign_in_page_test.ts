/**
 * The page the browser lands on after a sign-in tells the truth: it says "Signed in" only once the
 * code was exchanged and the tokens stored, and what failed otherwise. A scripted authorization
 * server behind the fetch seam; the browser is a real HTTP request to the loopback listener.
 */
import assert from "node:assert/strict";
import type { FetchLike } from "@modelcontextprotocol/client";
import { signIn } from "../../lib/auth/mod.ts";
import { credentialPath } from "../../lib/auth/credentials.ts";
import { UserError } from "../../lib/diagnostics.ts";

const MCP = "https://mcp.example.com/mcp";
const AS = "https://auth.example.com";

/** The authorization server and MCP endpoint, answering from a table; the token endpoint is `token`. */
function scriptedServer(token: (request: Request) => Response): FetchLike {
  const metadata = {
    issuer: AS,
    authorization_endpoint: `${AS}/authorize`,
    token_endpoint: `${AS}/token`,
    registration_endpoint: `${AS}/register`,
    response_types_supported: ["code"],
    code_challenge_methods_supported: ["S256"],
  };
  const routes: Record<string, (request: Request) => Response | Promise<Response>> = {
    [`POST ${MCP}`]: () =>
      new Response("{}", {
        status: 401,
        headers: { "www-authenticate": `Bearer resource_metadata="https://mcp.example.com/prm"` },
      }),
    ["GET https://mcp.example.com/prm"]: () => Response.json({ resource: MCP, authorization_servers: [AS] }),
    [`GET ${AS}/.well-known/oauth-authorization-server`]: () => Response.json(metadata),
    [`POST ${AS}/register`]: async (r) =>
      Response.json({ ...(await r.json()), client_id: "dyn" }, { status: 201 }),
    [`POST ${AS}/token`]: token,
  };
  return (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const route = routes[`${request.method} ${url.origin}${url.pathname}`];
    return Promise.resolve(route ? route(request) : new Response("not found", { status: 404 }));
  };
}

/** Runs a sign-in whose "browser" follows the redirect with a code; resolves the page it got. */
async function signInWithBrowser(configDir: string, fetch: FetchLike) {
  let page: Promise<string> | undefined;
  let storedWhenPageArrived: boolean | undefined;
  const outcome = signIn({ name: "svc", url: MCP }, {
    configDir,
    fetch,
    onAuthorizationUrl(url) {
      const authorize = new URL(url);
      const back = new URL(authorize.searchParams.get("redirect_uri")!);
      back.searchParams.set("code", "c0de-from-the-server");
      back.searchParams.set("state", authorize.searchParams.get("state")!);
      page = globalThis.fetch(back).then(async (r) => {
        const text = await r.text();
        storedWhenPageArrived = await Deno.stat(credentialPath(configDir, "svc")).then(
          () => true,
          () => false,
        );
        return text;
      });
    },
  }).then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));
  const result = await outcome;
  return { result, page: await page!, storedWhenPageArrived };
}

Deno.test("signIn() lets the browser's page say what failed when the token exchange fails", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fetch = scriptedServer(() =>
      Response.json({ error: "invalid_grant", error_description: "code expired" }, { status: 400 })
    );
    const { result, page } = await signInWithBrowser(dir, fetch);
    assert.equal(result.ok, false);
    assert.ok(!result.ok && result.error instanceof UserError && result.error.code === "LOGIN_FAILED");
    assert.doesNotMatch(page, /Signed in/);
    assert.match(page, /<h1>Sign-in failed<\/h1>/);
    assert.match(
      page,
      /Signing in to svc failed: the authorization server answered invalid_grant.*The terminal has the details\./,
    );
    assert.ok(!page.includes("c0de-from-the-server"), "the code is not echoed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("signIn() lets the browser's page say signed in only once the tokens are stored", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fetch = scriptedServer(() =>
      Response.json({ access_token: "at-page-test-1", token_type: "Bearer", expires_in: 3600 })
    );
    const { result, page, storedWhenPageArrived } = await signInWithBrowser(dir, fetch);
    assert.equal(result.ok, true);
    assert.match(page, /Signed in to svc\. You can close this tab and go back to the terminal\./);
    assert.equal(storedWhenPageArrived, true, "the page came after the credentials were written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
