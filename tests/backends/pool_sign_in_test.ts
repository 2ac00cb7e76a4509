import assert from "node:assert/strict";
import { BackendError } from "../../lib/backends/connection.ts";
import type { ConnectFn } from "../../lib/backends/pool.ts";
import { ServerPool } from "../../lib/backends/pool.ts";
import { FakeConnection, fixtureSpec, ManualClock } from "../_fakes_backends.ts";

const SPEC = fixtureSpec("remote");

Deno.test("acquire() tries a server that needs sign-in again at once, without backoff or restart budget", async () => {
  const clock = new ManualClock();
  let signedIn = false;
  let attempts = 0;
  const connect: ConnectFn = (spec) => {
    attempts++;
    if (!signedIn) {
      return Promise.reject(
        new BackendError("NEEDS_SIGN_IN", spec.name, `${spec.name} requires authorization`),
      );
    }
    return Promise.resolve(new FakeConnection(spec.name, clock.now()));
  };
  const pool = new ServerPool({ connect, clock, maxRestarts: 2 });
  for (let i = 0; i < 5; i++) await assert.rejects(pool.acquire(SPEC), { code: "NEEDS_SIGN_IN" });
  assert.equal(attempts, 5, "every use asks the server again");
  assert.deepEqual(clock.sleeps, [], "no backoff wait");
  assert.equal(pool.state(SPEC).status, "idle");
  assert.equal(pool.state(SPEC).failures, 0);
  signedIn = true; // `mcp login` in a terminal
  assert.ok((await pool.acquire(SPEC)) instanceof FakeConnection);
  await pool.close();
});
