/**
 * End to end on loopback: a real OAuth authorization server (`oidc-provider`: dynamic registration,
 * PKCE, resource indicators, refresh-token rotation, revocation) in front of a streamable HTTP MCP
 * server that verifies bearer tokens (`testdata/servers/oauth_mcp_server.ts`); `main.ts mcp login`
 * runs as a real process, headless Chromium follows the URL it prints and completes the login and
 * consent pages (through `testdata/auth/browser_driver.ts`, see there why it is a process of its
 * own); tools are then called with the stored sign-in.
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createStoredAuthProvider, signIn, SignInRequiredError } from "../../lib/auth/mod.ts";
import {
  credentialPath,
  describeSignIn,
  readCredentials,
  writeCredentials,
} from "../../lib/auth/credentials.ts";
import { createGuardedFetch } from "../../lib/net/guarded_fetch.ts";
import type { CommandContext } from "../../lib/commands/context.ts";
import { UserError } from "../../lib/diagnostics.ts";
import { runLogin } from "../../lib/commands/login.ts";
import { runStatus } from "../../lib/commands/status.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";
import { requireProgram } from "../_prerequisites.ts";

const REPO = new URL("../../", import.meta.url).pathname;
const CHROMIUM = "/usr/bin/chromium";
const SERVER = "fx";

interface Fixture {
  issuer: string;
  mcpUrl: string;
  adminUrl: string;
  stop(): Promise<void>;
}

async function startFixture(flags: string[] = []): Promise<Fixture> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-P",
      "--config",
      `${REPO}deno.json`,
      `${REPO}testdata/servers/oauth_mcp_server.ts`,
      ...flags,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let line = "";
  while (!line.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("fixture exited before it was ready");
    line += value;
  }
  const info = JSON.parse(line.split("\n")[0]!);
  return {
    ...info,
    async stop() {
      await child.stdin.close();
      await reader.cancel();
      await child.status;
    },
  };
}

/**
 * A config dir with one plugin declaring the fixture as remote server `fx` (`fxLines` added to its
 * entry), a stdio server and a refused one, and a workspace dir.
 */
async function makeHome(
  mcpUrl: string,
  fxLines: string[] = [],
): Promise<{ home: string; cwd: string; env: Record<string, string> }> {
  const home = await Deno.makeTempDir({ prefix: "oauth_home_" });
  const cwd = await Deno.makeTempDir({ prefix: "oauth_ws_" });
  await Deno.mkdir(`${home}/plugins/fx`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/plugins/fx/SYMPOSIUM.toml`,
    [
      `name = "fx-plugin"`,
      `depends-on = "*"`,
      ``,
      `[[mcp_servers]]`,
      `name = "${SERVER}"`,
      `url = "\${FX_URL}"`,
      ...fxLines,
      ``,
      `[[mcp_servers]]`,
      `name = "local"`,
      `command = "echo"`,
      ``,
      `[[mcp_servers]]`,
      `name = "broken"`,
      `url = "\${FX_UNSET_VARIABLE}"`,
      ``,
    ].join("\n"),
  );
  const env = {
    SYMPOSIUM_HOME: home,
    FX_URL: mcpUrl,
    FX_SECRET: "preregistered-secret",
    SYMPOSIUM_BROWSER: "none",
    PATH: Deno.env.get("PATH") ?? "",
    HOME: home,
    NO_COLOR: "1",
  };
  return { home, cwd, env };
}

interface CliRun {
  /** Resolves with the authorization URL once printed. */
  url: Promise<string>;
  /** Resolves when the process exits. */
  done: Promise<{ code: number; stdout: string; stderr: string }>;
}

function runCli(args: string[], env: Record<string, string>, cwd: string): CliRun {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-P", "--config", `${REPO}deno.json`, `${REPO}main.ts`, ...args],
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stdout = "";
  let resolveUrl!: (url: string) => void;
  let rejectUrl!: (e: Error) => void;
  const url = new Promise<string>((res, rej) => [resolveUrl, rejectUrl] = [res, rej]);
  url.catch(() => {}); // Observed by callers that need it.
  const readOut = (async () => {
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      stdout += chunk;
      const m = stdout.match(/^ {2}(http:\/\/127\.0\.0\.1:\d+\/\S+)$/m);
      if (m) resolveUrl(m[1]!);
    }
  })();
  const readErr = new Response(child.stderr).text();
  const done = (async () => {
    const [status, stderr] = await Promise.all([child.status, readErr, readOut]).then(([s, e]) =>
      [s, e] as const
    );
    rejectUrl(new Error(`no URL printed; stdout: ${stdout}; stderr: ${stderr}`));
    return { code: status.code, stdout, stderr };
  })();
  return { url, done };
}

interface BrowserDriver {
  /** Completes oidc-provider's development login and consent pages, or cancels at the login page. */
  complete(url: string, options?: { cancel?: boolean }): Promise<string>;
  /** URLs the page tried to reach off 127.0.0.1. */
  blocked(): Promise<string[]>;
  close(): Promise<void>;
}

async function startBrowser(): Promise<BrowserDriver> {
  requireProgram("chromium");
  const child = new Deno.Command(Deno.execPath(), {
    // -A: playwright-core reads /proc paths that Deno grants only to -A (test helper, not product code).
    args: ["run", "-A", "--config", `${REPO}deno.json`, `${REPO}testdata/auth/browser_driver.ts`],
    env: { CHROMIUM_PATH: CHROMIUM },
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const next = async (): Promise<Record<string, unknown>> => {
    while (!buffer.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) throw new Error("browser driver exited");
      buffer += value;
    }
    const line = buffer.slice(0, buffer.indexOf("\n"));
    buffer = buffer.slice(buffer.indexOf("\n") + 1);
    return JSON.parse(line);
  };
  const ask = async (command: Record<string, unknown>): Promise<Record<string, unknown>> => {
    await writer.write(new TextEncoder().encode(JSON.stringify(command) + "\n"));
    const answer = await next();
    if (answer.ok !== true) throw new Error(`browser: ${answer.error}`);
    return answer;
  };
  await next(); // ready
  return {
    async complete(url, options = {}) {
      return (await ask({ op: options.cancel ? "cancel" : "login", url })).body as string;
    },
    async blocked() {
      return (await ask({ op: "blocked" })).blocked as string[];
    },
    async close() {
      await writer.close();
      await lines.cancel();
      await child.status;
    },
  };
}

async function connectClient(
  mcpUrl: string,
  configDir: string,
  client_: { clientId?: string; clientSecret?: string } = {},
): Promise<{ client: Client; close(): Promise<void> }> {
  const fetch = createGuardedFetch({ server: SERVER });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    fetch,
    authProvider: createStoredAuthProvider({ name: SERVER, url: mcpUrl, ...client_ }, { configDir, fetch }),
  });
  const client = new Client({ name: "oauth-login-test", version: "1" });
  await client.connect(transport);
  return {
    client,
    async close() {
      await client.close();
      fetch.close();
    },
  };
}

async function whoami(client: Client): Promise<string> {
  const result = await client.callTool({ name: "whoami", arguments: {} });
  return (result.content as { text: string }[])[0]!.text;
}

async function stats(fx: Fixture): Promise<Record<string, number>> {
  return await (await fetch(`${fx.adminUrl}/admin/stats`)).json();
}

Deno.test("mcp login signs in through a real browser and the stored sign-in serves, refreshes and signs out", async (t) => {
  requireProgram("chromium"); // Before the fixture starts: a missing browser fails at once, by name.
  const fx = await startFixture();
  const { home, cwd, env } = await makeHome(fx.mcpUrl);
  let browser: BrowserDriver | undefined;
  try {
    browser = await startBrowser();
    const page = browser;

    await t.step("mcp login prints the URL, the browser signs in, the tokens are stored 0600", async () => {
      const started = performance.now();
      const run = runCli(["mcp", "login", SERVER], env, cwd);
      const url = await run.url;
      const authorizeUrl = new URL(url);
      assert.equal(authorizeUrl.searchParams.get("code_challenge_method"), "S256");
      assert.equal(authorizeUrl.searchParams.get("resource"), fx.mcpUrl);
      assert.match(
        authorizeUrl.searchParams.get("redirect_uri") ?? "",
        /^http:\/\/127\.0\.0\.1:\d+\/callback$/,
      );
      assert.ok((authorizeUrl.searchParams.get("state") ?? "").length >= 32);
      const landing = await page.complete(url);
      assert.match(landing, /Signed in to fx\. You can close this tab and go back to the terminal\./);
      const { code, stdout, stderr } = await run.done;
      const elapsedMs = Math.round(performance.now() - started);
      assert.equal(code, 0, stderr);
      assert.match(stdout, /^fx: signed in; the token expires in 60 min and renews itself$/m);
      console.log(`    login round trip (process start to exit, browser included): ${elapsedMs} ms`);
      const record = await readCredentials(home, SERVER);
      assert.equal(record?.serverUrl, fx.mcpUrl);
      assert.equal(record?.issuer, fx.issuer);
      assert.equal(record?.resource, fx.mcpUrl);
      assert.ok(record?.tokens?.refresh_token);
      assert.ok(
        !stdout.includes(record!.tokens!.access_token) && !stderr.includes(record!.tokens!.access_token),
      );
      if (Deno.build.os !== "windows") {
        assert.equal((await Deno.stat(credentialPath(home, SERVER))).mode! & 0o777, 0o600);
        assert.equal((await Deno.stat(`${home}/credentials`)).mode! & 0o777, 0o700);
      }
      assert.equal(describeSignIn(home, { name: SERVER, url: fx.mcpUrl }).state, "signed-in");
      assert.equal((await stats(fx)).registrations, 1);
    });

    await t.step(
      "a second mcp login to the same authorization server uses its registered client again",
      async () => {
        const before = (await readCredentials(home, SERVER))!;
        const run = runCli(["mcp", "login", SERVER], env, cwd);
        const url = new URL(await run.url);
        assert.equal(url.searchParams.get("client_id"), before.clients![fx.issuer]!.client_id);
        assert.match(await page.complete(url.href), /Signed in to fx\./);
        assert.equal((await run.done).code, 0);
        assert.equal((await stats(fx)).registrations, 1, "no second registration with the same issuer");
        const after = (await readCredentials(home, SERVER))!;
        assert.notEqual(after.tokens!.access_token, before.tokens!.access_token);
        assert.deepEqual(Object.keys(after.clients!), [fx.issuer]);
      },
    );

    await t.step("a tool call sends the stored bearer token", async () => {
      const { client, close } = await connectClient(fx.mcpUrl, home);
      try {
        assert.equal(await whoami(client), '{"sub":"alice","scopes":["mcp:tools"]}');
      } finally {
        await close();
      }
    });

    await t.step(
      "a token about to expire is refreshed before the call and the rotated refresh token is kept",
      async () => {
        const before = (await readCredentials(home, SERVER))!;
        await writeCredentials(home, { ...before, expiresAtMs: Date.now() + 5_000 });
        const { client, close } = await connectClient(fx.mcpUrl, home);
        try {
          assert.match(await whoami(client), /alice/);
        } finally {
          await close();
        }
        const after = (await readCredentials(home, SERVER))!;
        assert.notEqual(after.tokens?.access_token, before.tokens?.access_token);
        assert.notEqual(after.tokens?.refresh_token, before.tokens?.refresh_token, "rotated");
        assert.ok(after.expiresAtMs! > Date.now() + 3_000_000);
      },
    );

    await t.step("a 401 for an expired token refreshes it and the call still succeeds", async () => {
      const { client, close } = await connectClient(fx.mcpUrl, home);
      try {
        const before = (await readCredentials(home, SERVER))!;
        await fetch(`${fx.adminUrl}/admin/reject-current-tokens`, { method: "POST" }).then((r) =>
          r.body?.cancel()
        );
        const refusedBefore = (await stats(fx)).mcp401!;
        assert.match(await whoami(client), /alice/);
        assert.ok((await stats(fx)).mcp401! > refusedBefore, "the server did refuse the old token");
        const after = (await readCredentials(home, SERVER))!;
        assert.notEqual(after.tokens?.refresh_token, before.tokens?.refresh_token);
      } finally {
        await close();
      }
    });

    await t.step("two processes refreshing at once both end with the one rotated refresh token", async () => {
      const before = (await readCredentials(home, SERVER))!;
      const go = `${home}/go`;
      const worker = (): Promise<Deno.CommandOutput> =>
        new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "-P",
            "--config",
            `${REPO}deno.json`,
            `${REPO}testdata/auth/refresh_worker.ts`,
            home,
            SERVER,
            fx.mcpUrl,
            before.tokens!.access_token,
            go,
          ],
          stdout: "piped",
          stderr: "piped",
        }).output();
      const both = Promise.all([worker(), worker()]);
      await new Promise((r) => setTimeout(r, 1_500)); // Both are loaded and polling for `go`.
      await Deno.writeTextFile(go, "");
      const outputs = await both;
      const printed = outputs.map((o) => {
        assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
        return new TextDecoder().decode(o.stdout).trim();
      });
      assert.equal(printed[0], printed[1], "both see the same refresh token");
      const after = (await readCredentials(home, SERVER))!;
      assert.equal(after.tokens?.refresh_token, printed[0]);
      // Reuse of a rotated refresh token would have revoked the grant: the sign-in still works.
      const { client, close } = await connectClient(fx.mcpUrl, home);
      try {
        assert.match(await whoami(client), /alice/);
      } finally {
        await close();
      }
    });

    await t.step("logout revokes at the server, deletes the file, and is idempotent", async () => {
      const record = (await readCredentials(home, SERVER))!;
      const revocationsBefore = (await stats(fx)).revocations!;
      const first = await runCli(["mcp", "logout", SERVER], env, cwd).done;
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout, "fx: signed out (tokens revoked at the server)\n");
      assert.equal(await readCredentials(home, SERVER), undefined);
      assert.ok((await stats(fx)).revocations! > revocationsBefore);
      const old = await fetch(fx.mcpUrl, {
        method: "POST",
        headers: {
          authorization: `Bearer ${record.tokens!.access_token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      await old.body?.cancel();
      assert.equal(old.status, 401, "the revoked access token is refused");
      const second = await runCli(["mcp", "logout", SERVER], env, cwd).done;
      assert.equal(second.code, 0);
      assert.equal(second.stdout, "fx: not signed in\n");
    });

    await t.step(
      "a running meta-server asks for sign-in, then uses a login made meanwhile without restarting",
      async () => {
        const transport = new StdioClientTransport({
          command: Deno.execPath(),
          args: [...sourceRunArgs(REPO), "mcp-serve"],
          env,
          cwd,
          stderr: "ignore",
        });
        const client = new Client({ name: "oauth-login-test-agent", version: "1" });
        await client.connect(transport);
        try {
          const execute = async () => {
            const result = await client.callTool({
              name: "execute",
              arguments: { script: "return await fx.whoami({})" },
            });
            return {
              isError: result.isError === true,
              text: (result.content as { text: string }[]).map((c) => c.text).join("\n"),
            };
          };
          const before = await execute();
          assert.equal(before.isError, true, before.text);
          assert.match(before.text, /cargo agents mcp login fx/);
          const run = runCli(["mcp", "login", SERVER], env, cwd);
          await page.complete(await run.url);
          assert.equal((await run.done).code, 0);
          const after = await execute();
          assert.equal(after.isError, false, after.text);
          assert.match(after.text, /"sub":"alice"/);
        } finally {
          await client.close();
        }
      },
    );

    await t.step(
      "a refresh token revoked at the server turns the server back into needs sign-in",
      async () => {
        const record = (await readCredentials(home, SERVER))!;
        const revoke = await fetch(`${fx.issuer}/token/revocation`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            token: record.tokens!.refresh_token!,
            token_type_hint: "refresh_token",
            client_id: record.clients![record.issuer!]!.client_id,
          }),
        });
        await revoke.body?.cancel();
        assert.equal(revoke.status, 200);
        await assert.rejects(connectClient(fx.mcpUrl, home), (e: unknown) => {
          assert.ok(e instanceof SignInRequiredError, String(e));
          assert.match(e.message, /refused its refresh token \(invalid_grant\)/);
          return true;
        });
        const after = (await readCredentials(home, SERVER))!;
        assert.equal(after.tokens, undefined);
        assert.equal(after.rejected, "invalid_grant");
        const described = describeSignIn(home, { name: SERVER, url: fx.mcpUrl });
        assert.equal(described.state, "not-signed-in");
        assert.match(described.hint ?? "", /refused/);
      },
    );

    await t.step("an error=access_denied redirect ends the login at once with that error", async () => {
      const started = performance.now();
      const run = runCli(["mcp", "login", SERVER], env, cwd);
      const landing = await page.complete(await run.url, { cancel: true });
      assert.match(landing, /Sign-in failed/);
      const { code, stderr } = await run.done;
      assert.equal(code, 1);
      assert.match(
        stderr,
        /error\[LOGIN_DENIED\]: Cannot sign in to "fx": the authorization server answered access_denied/,
      );
      assert.ok(performance.now() - started < 30_000);
    });

    for (const url of await browser.blocked()) {
      assert.notEqual(new URL(url).hostname, "127.0.0.1", "only requests off loopback were aborted");
    }
  } finally {
    await browser?.close();
    await fx.stop();
    await Deno.remove(home, { recursive: true });
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("mcp login uses the manifest client-id and client-secret when the server has no registration", async () => {
  requireProgram("chromium"); // Before the fixture starts: a missing browser fails at once, by name.
  const fx = await startFixture(["--no-registration"]);
  const { home, cwd, env } = await makeHome(fx.mcpUrl, [
    `client-id = "preregistered"`,
    `client-secret = "\${FX_SECRET}"`,
  ]);
  const browser = await startBrowser();
  try {
    // Without a client-id the same server is refused before any browser is involved.
    await assert.rejects(
      signIn({ name: SERVER, url: fx.mcpUrl }, {
        configDir: home,
        fetch: (input, init) => fetch(input, init),
        onAuthorizationUrl: () => assert.fail("no URL without a client"),
      }),
      (e: unknown) => e instanceof UserError && e.code === "LOGIN_NO_REGISTRATION",
    );
    const run = runCli(["mcp", "login", SERVER], env, cwd);
    const url = new URL(await run.url);
    assert.equal(url.searchParams.get("client_id"), "preregistered");
    await browser.complete(url.href);
    const { code, stderr } = await run.done;
    assert.equal(code, 0, stderr);
    const record = (await readCredentials(home, SERVER))!;
    assert.deepEqual(record.clients, { [fx.issuer]: { client_id: "preregistered", issuer: fx.issuer } });
    assert.ok(!(await Deno.readTextFile(credentialPath(home, SERVER))).includes("preregistered-secret"));
    // A refresh authenticates with the manifest secret.
    await writeCredentials(home, { ...record, expiresAtMs: Date.now() });
    const manifestClient = { clientId: "preregistered", clientSecret: "preregistered-secret" };
    const { client, close } = await connectClient(fx.mcpUrl, home, manifestClient);
    try {
      assert.match(await whoami(client), /alice/);
    } finally {
      await close();
    }
    const refreshed = (await readCredentials(home, SERVER))!;
    assert.notEqual(refreshed.tokens?.access_token, record.tokens?.access_token, "refreshed");
    assert.equal((await stats(fx)).registrations, 0);
    const out = await runCli(["mcp", "logout", SERVER], env, cwd).done;
    assert.equal(out.stdout, "fx: signed out (tokens revoked at the server)\n", out.stderr);
  } finally {
    await browser.close();
    await fx.stop();
    await Deno.remove(home, { recursive: true });
    await Deno.remove(cwd, { recursive: true });
  }
});

function commandContext(
  env: Record<string, string>,
  cwd: string,
): CommandContext & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    env,
    cwd,
    homeDir: env.HOME ?? "",
    execPath: Deno.execPath(),
    selfCommand: { command: Deno.execPath(), args: [] },
    verbose: false,
    writeOut: (t) => void out.push(t),
    writeErr: (t) => void err.push(t),
    signal: new AbortController().signal,
    out,
    err,
  };
}

Deno.test("runLogin() refuses a stdio server, an unknown name and a refused server with clear errors", async () => {
  const { home, cwd, env } = await makeHome("http://127.0.0.1:9/mcp");
  try {
    const cases: [string, string, RegExp, RegExp | undefined][] = [
      [
        "local",
        "LOGIN_LOCAL_SERVER",
        /it is a local \(stdio\) server; sign-in applies to remote servers only/,
        undefined,
      ],
      ["fy", "LOGIN_UNKNOWN_SERVER", /no MCP server of that name applies here/, /did you mean "fx"\?/],
      ["broken", "LOGIN_SERVER_REFUSED", /the server is refused: .*FX_UNSET_VARIABLE/, undefined],
    ];
    for (const [name, code, message, hint] of cases) {
      await assert.rejects(runLogin({ server: name }, commandContext(env, cwd)), (e: unknown) => {
        assert.ok(e instanceof UserError, String(e));
        assert.equal(e.code, code);
        assert.match(e.message, message);
        if (hint) assert.match(e.hint ?? "", hint);
        return true;
      });
    }
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("runStatus() shows each remote server's sign-in state and the exact login command", async () => {
  const { home, cwd, env } = await makeHome("http://127.0.0.1:9/mcp");
  try {
    const before = commandContext(env, cwd);
    await runStatus({ json: false }, before);
    assert.match(
      before.out.join(""),
      /no stored sign-in \(if the server asks for one: `cargo agents mcp login fx`\)/,
    );
    const expiresAt = Date.now() + 30 * 60_000;
    await writeCredentials(home, {
      version: 1,
      server: SERVER,
      serverUrl: "http://127.0.0.1:9/mcp",
      tokens: { access_token: "never-shown", token_type: "Bearer", refresh_token: "never-shown-either" },
      expiresAtMs: expiresAt,
    });
    const after = commandContext(env, cwd);
    await runStatus({ json: true }, after);
    const report = JSON.parse(after.out.join(""));
    const fx = report.servers.find((s: { name: string }) => s.name === SERVER);
    assert.equal(fx.auth, "signed-in");
    assert.equal(fx.authExpiresAt, expiresAt);
    assert.ok(!after.out.join("").includes("never-shown"));
    const text = commandContext(env, cwd);
    await runStatus({ json: false }, text);
    assert.match(text.out.join(""), /signed in \(token expires .*, in (29|30) min\)/);
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(cwd, { recursive: true });
  }
});
