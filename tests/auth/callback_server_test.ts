import assert from "node:assert/strict";
import { startCallbackServer } from "../../lib/auth/callback_server.ts";
import { UserError } from "../../lib/diagnostics.ts";

const STATE = "expected-state";

async function get(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
}

Deno.test("startCallbackServer() binds 127.0.0.1 on a random port before anything is sent", async () => {
  await using server = startCallbackServer({ expectedState: STATE, serverName: "linear" });
  assert.match(server.redirectUrl, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  assert.notEqual(new URL(server.redirectUrl).port, "0");
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(server.redirectUrl).port) });
  conn.close();
});

Deno.test("waitForCallback() resolves with the code and iss; the page says signed in only after finish()", async () => {
  await using server = startCallbackServer({ expectedState: STATE, serverName: "linear" });
  const waiting = server.waitForCallback({ timeoutMs: 5_000 });
  let answered = false;
  const loading = get(`${server.redirectUrl}?code=c0de&state=${STATE}&iss=https%3A%2F%2Fas.example`).finally(
    () => (answered = true),
  );
  assert.deepEqual(await waiting, { code: "c0de", iss: "https://as.example" });
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(answered, false, "the page waits for the token exchange");
  server.finish({ ok: true });
  const page = await loading;
  assert.equal(page.status, 200);
  assert.match(page.text, /Signed in to linear\. You can close this tab and go back to the terminal\./);
});

Deno.test("the callback page says what failed, never signed in, when the token exchange fails", async () => {
  await using server = startCallbackServer({ expectedState: STATE, serverName: "linear" });
  const waiting = server.waitForCallback({ timeoutMs: 5_000 });
  const loading = get(`${server.redirectUrl}?code=c0de&state=${STATE}`);
  await waiting;
  server.finish({ ok: false, reason: "the authorization server answered invalid_grant: code expired" });
  const page = await loading;
  assert.doesNotMatch(page.text, /Signed in/);
  assert.match(page.text, /<h1>Sign-in failed<\/h1>/);
  assert.match(
    page.text,
    /Signing in to linear failed: the authorization server answered invalid_grant: code expired\. The terminal has the details\./,
  );
});

Deno.test("the callback page does not claim success when the outcome is late, or the sign-in stops", async () => {
  await using late = startCallbackServer({ expectedState: STATE, serverName: "linear", outcomeWaitMs: 100 });
  const waitingLate = late.waitForCallback({ timeoutMs: 5_000 });
  const latePage = await get(`${late.redirectUrl}?code=c0de&state=${STATE}`);
  await waitingLate;
  assert.match(latePage.text, /Still signing in/);
  assert.doesNotMatch(latePage.text, /Signed in/);
  const stopped = startCallbackServer({ expectedState: STATE, serverName: "linear" });
  const waitingStopped = stopped.waitForCallback({ timeoutMs: 5_000 });
  const loading = get(`${stopped.redirectUrl}?code=c0de&state=${STATE}`);
  await waitingStopped;
  await stopped.close();
  assert.match((await loading).text, /failed: the sign-in stopped before the token exchange finished/);
});

Deno.test("the callback refuses a Host other than the loopback address it is bound to", async () => {
  await using server = startCallbackServer({ expectedState: STATE, serverName: "linear" });
  const waiting = server.waitForCallback({ timeoutMs: 5_000 });
  const port = Number(new URL(server.redirectUrl).port);
  for (
    const host of [`attacker.example:${port}`, `localhost:${port}`, "127.0.0.1", `127.0.0.1:${port + 1}`]
  ) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(new TextEncoder().encode(
      `GET /callback?code=forged&state=${STATE} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    ));
    const reply = await new Response(conn.readable).text();
    assert.match(reply, /^HTTP\/1\.1 400 /, host);
    assert.match(reply, /Wrong host/);
  }
  const loading = get(`${server.redirectUrl}?code=real&state=${STATE}`);
  assert.equal((await waiting).code, "real", "the forged redirects were not taken");
  server.finish({ ok: true });
  await loading;
});

Deno.test("waitForCallback() ignores stray requests such as /favicon.ico with 404", async () => {
  await using server = startCallbackServer({ expectedState: STATE, serverName: "linear" });
  const waiting = server.waitForCallback({ timeoutMs: 5_000 });
  const origin = new URL(server.redirectUrl).origin;
  assert.equal((await get(`${origin}/favicon.ico`)).status, 404);
  assert.equal((await get(`${origin}/`)).status, 404);
  const post = await fetch(server.redirectUrl, { method: "POST", body: "x" });
  await post.body?.cancel();
  assert.equal(post.status, 405);
  const loading = get(`${server.redirectUrl}?code=late&state=${STATE}`);
  assert.equal((await waiting).code, "late");
  server.finish({ ok: true });
  await loading;
});

Deno.test("waitForCallback() refuses a redirect with the wrong state and keeps waiting", async () => {
  await using server = startCallbackServer({ expectedState: STATE, serverName: "linear" });
  const waiting = server.waitForCallback({ timeoutMs: 5_000 });
  assert.equal((await get(`${server.redirectUrl}?code=forged&state=other`)).status, 400);
  assert.equal((await get(`${server.redirectUrl}?code=forged`)).status, 400);
  assert.equal((await get(`${server.redirectUrl}?error=access_denied&state=other`)).status, 400);
  const loading = get(`${server.redirectUrl}?code=real&state=${STATE}`);
  assert.equal((await waiting).code, "real");
  server.finish({ ok: true });
  await loading;
});

Deno.test("waitForCallback() ends at once with LOGIN_DENIED on an error= redirect", async () => {
  await using server = startCallbackServer({ expectedState: STATE, serverName: "linear" });
  const started = Date.now();
  const denied = assert.rejects(server.waitForCallback({ timeoutMs: 60_000 }), (e: unknown) => {
    assert.ok(e instanceof UserError);
    assert.equal(e.code, "LOGIN_DENIED");
    assert.equal(
      e.message,
      'Cannot sign in to "linear": the authorization server answered access_denied (The user said no )',
    );
    return true;
  });
  const page = await get(
    `${server.redirectUrl}?error=access_denied&error_description=The%20user%20said%20no%0A&state=${STATE}`,
  );
  assert.equal(page.status, 200);
  assert.match(page.text, /Sign-in failed/);
  await denied;
  assert.ok(Date.now() - started < 2_000);
});

Deno.test("waitForCallback() fails with LOGIN_TIMEOUT and a clear message when the browser never comes back", async () => {
  await using server = startCallbackServer({ expectedState: STATE, serverName: "linear" });
  await assert.rejects(server.waitForCallback({ timeoutMs: 50 }), (e: unknown) => {
    assert.ok(e instanceof UserError);
    assert.equal(e.code, "LOGIN_TIMEOUT");
    assert.match(e.message, /the browser did not come back within 0 s/);
    assert.match(e.hint ?? "", /open the URL printed above/);
    return true;
  });
});

Deno.test("waitForCallback() rejects with the signal's reason when aborted", async () => {
  await using server = startCallbackServer({ expectedState: STATE, serverName: "linear" });
  const controller = new AbortController();
  const waiting = server.waitForCallback({ timeoutMs: 5_000, signal: controller.signal });
  controller.abort(new Error("interrupted"));
  await assert.rejects(waiting, /interrupted/);
});

Deno.test("close() stops listening and can be called twice", async () => {
  const server = startCallbackServer({ expectedState: STATE, serverName: "linear" });
  await server.close();
  await server.close();
  await assert.rejects(fetch(server.redirectUrl));
});

Deno.test("startCallbackServer() escapes HTML from the error description", async () => {
  await using server = startCallbackServer({ expectedState: STATE, serverName: "linear" });
  const waiting = server.waitForCallback({ timeoutMs: 5_000 }).catch((e) => e);
  const page = await get(
    `${server.redirectUrl}?error=x&error_description=%3Cscript%3Ealert(1)%3C%2Fscript%3E&state=${STATE}`,
  );
  assert.ok(!page.text.includes("<script>"));
  assert.ok((await waiting) instanceof UserError);
});
