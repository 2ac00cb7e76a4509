/**
 * Test helper: one process of "two agent sessions refresh at once". Waits until the file
 * `<go>` exists (so both start together), then refreshes the stored sign-in of `<server>` as if
 * the server had refused `<staleAccessToken>`, and prints the refresh token now on disk.
 *
 * Usage: refresh_worker.ts <configDir> <server> <url> <staleAccessToken> <go>
 */
import { refreshCredentials } from "../../lib/auth/mod.ts";

const [configDir, name, url, stale, go] = Deno.args as [string, string, string, string, string];
while (!(await Deno.stat(go).then(() => true, () => false))) await new Promise((r) => setTimeout(r, 5));
const record = await refreshCredentials({ name, url }, {
  configDir,
  fetch: (input, init) => fetch(input, init),
  staleAccessToken: stale,
  lock: { pollMs: 5 },
});
console.log(record.tokens?.refresh_token ?? "");
