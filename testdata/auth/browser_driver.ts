/**
 * Test helper: headless Chromium (Debian's `/usr/bin/chromium`) driven by playwright-core, in a
 * process of its own (playwright reads `/proc` paths that Deno grants only with `-A`, which the
 * test process under `-P` does not have).
 *
 * Reads one JSON command per line on stdin, answers one JSON line per command on stdout:
 * - `{"op":"login","url":…}`: opens the URL, fills oidc-provider's development login form, accepts
 *   the consent page, waits for the `/callback` redirect → `{"ok":true,"body":<page text>}`;
 * - `{"op":"cancel","url":…}`: opens the URL and clicks "[ Cancel ]" (→ `error=access_denied`);
 * - `{"op":"blocked"}`: → `{"ok":true,"blocked":[urls the page tried to reach off 127.0.0.1]}`
 *   (oidc-provider's development pages link a web font: that request is aborted).
 * Any failure → `{"ok":false,"error":…}`. Closes the browser and exits when stdin ends.
 *
 * Chromium may reach 127.0.0.1 only: host names do not resolve (`--host-resolver-rules`), and every
 * request of the page to another host is aborted and recorded.
 */
import { chromium, type Page } from "playwright-core";

const browser = await chromium.launch({
  executablePath: Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--headless",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--no-proxy-server",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
});
const context = await browser.newContext();
const blocked: string[] = [];
await context.route("**/*", (route) => {
  if (new URL(route.request().url()).hostname === "127.0.0.1") return route.continue();
  blocked.push(route.request().url());
  return route.abort();
});
const page: Page = await context.newPage();
console.log(JSON.stringify({ ok: true, ready: true }));

async function run(command: { op: string; url?: string }): Promise<Record<string, unknown>> {
  if (command.op === "blocked") return { ok: true, blocked };
  await page.goto(command.url!);
  if (command.op === "cancel") {
    await page.click("text=[ Cancel ]");
  } else {
    // The login form appears unless the browser already has a session; the consent page always does.
    for (let step = 0; step < 4 && !page.url().includes("/callback?"); step++) {
      if (await page.locator("input[name=login]").count() > 0) {
        await page.fill("input[name=login]", "alice");
        await page.fill("input[name=password]", "any");
        await page.click("button[type=submit]");
      } else if (await page.locator("text=Continue").count() > 0) {
        await page.click("button[type=submit]");
      }
      await page.waitForLoadState();
    }
  }
  await page.waitForURL(/\/callback\?/);
  return { ok: true, body: (await page.textContent("body")) ?? "" };
}

let buffer = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffer += chunk;
  let newline;
  while ((newline = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    let answer: Record<string, unknown>;
    try {
      answer = await run(JSON.parse(line));
    } catch (error) {
      answer = { ok: false, error: String(error) };
    }
    console.log(JSON.stringify(answer));
  }
}
await browser.close();
