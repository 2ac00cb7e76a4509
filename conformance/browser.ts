/**
 * The non-interactive "browser" of the conformance client (`SYMPOSIUM_BROWSER` names a wrapper that runs
 * this): it opens the authorization URL `mcp login` hands it and follows the redirects a person's browser
 * would follow (at most {@link MAX_REDIRECTS}) until the loopback callback of `mcp login` has answered.
 * Loopback only: any other host is refused, so a scenario can never send it off this machine.
 *
 * @module
 */

/** Most redirects followed from the authorization URL to the callback. */
export const MAX_REDIRECTS = 5;

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

let url = new URL(Deno.args[0] ?? "");
for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
  if (!LOOPBACK.has(url.hostname)) {
    console.error(`conformance browser: refusing ${url.origin} (loopback only)`);
    Deno.exit(2);
  }
  const response = await fetch(url, { redirect: "manual" });
  await response.body?.cancel();
  const location = response.headers.get("location");
  if (response.status < 300 || response.status >= 400 || location === null) break;
  url = new URL(location, url);
}
