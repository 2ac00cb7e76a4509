/**
 * Test helper: simulates a process that rotates a refresh token `--rounds` times. Each round, under
 * the credential lock, reads the record, waits a little (a token request), and writes the next
 * token `rt-<n+1>`. Without the lock, two such processes lose rotations.
 *
 * Usage: lock_worker.ts <configDir> <server> <rounds> [--no-lock]
 */
import { readCredentials, withCredentialLock, writeCredentials } from "../../lib/auth/credentials.ts";

const [configDir, server, roundsText] = Deno.args;
const useLock = !Deno.args.includes("--no-lock");
const rounds = Number(roundsText);

async function rotate(): Promise<void> {
  const record = await readCredentials(configDir!, server!);
  if (!record?.tokens?.refresh_token) throw new Error("no record");
  const n = Number(record.tokens.refresh_token.slice(3));
  await new Promise((r) => setTimeout(r, 5 + Math.random() * 10));
  await writeCredentials(configDir!, { ...record, tokens: { ...record.tokens, refresh_token: `rt-${n + 1}` } });
}

for (let i = 0; i < rounds; i++) {
  if (useLock) await withCredentialLock(configDir!, server!, rotate, { pollMs: 5 });
  else await rotate();
}
