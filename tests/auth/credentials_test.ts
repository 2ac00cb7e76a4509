import assert from "node:assert/strict";
import { join } from "node:path";
import {
  credentialFileName,
  credentialPath,
  type CredentialRecord,
  credentialsDir,
  credentialsFingerprint,
  deleteCredentials,
  describeSignIn,
  loadCredentials,
  loginCommand,
  readCredentials,
  withCredentialLock,
  writeCredentials,
} from "../../lib/auth/credentials.ts";
import { UserError } from "../../lib/diagnostics.ts";
import { maskSecrets } from "../../lib/secrets/mod.ts";
import { PrivateDirError } from "../../lib/secrets/private_dir.ts";

const URL_A = "https://mcp.example.com/mcp";

function record(overrides: Partial<CredentialRecord> = {}): CredentialRecord {
  return {
    version: 2,
    server: "linear",
    serverUrl: URL_A,
    issuer: "https://auth.example.com",
    tokens: { access_token: "at-secret-1", token_type: "Bearer", refresh_token: "rt-0", expires_in: 3600 },
    receivedAtMs: 1_000,
    expiresAtMs: 3_601_000,
    ...overrides,
  };
}

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "creds_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("credentialFileName() keeps simple lowercase names as they are", () => {
  assert.equal(credentialFileName("linear"), "linear.json");
  assert.equal(credentialFileName("my-server_2"), "my-server_2.json");
});

Deno.test("credentialFileName() never leaves the folder whatever the name", () => {
  for (
    const name of ["../../etc/passwd", "..", ".", "", "a/b", "a\\b", "/abs", "C:\\x", "\u0000", "nul", "CON"]
  ) {
    const file = credentialFileName(name);
    assert.match(file, /^[a-z0-9_-]+\.[0-9a-f]{16}\.json$/, `for ${JSON.stringify(name)}: ${file}`);
    assert.ok(!file.includes("/") && !file.includes("\\") && !file.startsWith("."));
  }
});

Deno.test("credentialFileName() gives distinct names distinct files also when they sanitize alike", () => {
  const names = [
    "a.b",
    "a_b",
    "a b",
    "A_B",
    "GitHub",
    "github",
    "a/b",
    "a\\b",
    "x".repeat(80),
    "x".repeat(81),
  ];
  const files = names.map(credentialFileName);
  assert.equal(new Set(files.map((f) => f.toLowerCase())).size, names.length, files.join(", "));
});

Deno.test("writeCredentials() creates the folder 0700 and the file 0600 even under a permissive umask", async () => {
  if (Deno.build.os === "windows") return;
  await withTempDir(async (dir) => {
    const previous = Deno.umask(0o000);
    try {
      await writeCredentials(dir, record());
    } finally {
      Deno.umask(previous);
    }
    assert.equal((await Deno.stat(credentialsDir(dir))).mode! & 0o777, 0o700);
    assert.equal((await Deno.stat(credentialPath(dir, "linear"))).mode! & 0o777, 0o600);
  });
});

Deno.test("writeCredentials() writes 0600 into an existing folder and never chmods a folder it did not create", async () => {
  if (Deno.build.os === "windows") return;
  await withTempDir(async (dir) => {
    await Deno.mkdir(credentialsDir(dir), { mode: 0o755 });
    await Deno.chmod(credentialsDir(dir), 0o755);
    await writeCredentials(dir, record());
    assert.equal((await Deno.stat(credentialsDir(dir))).mode! & 0o777, 0o755);
    assert.equal((await Deno.stat(credentialPath(dir, "linear"))).mode! & 0o777, 0o600);
  });
});

Deno.test("writeCredentials() refuses a credentials/ that is a symbolic link and leaves its target alone", async () => {
  if (Deno.build.os === "windows") return;
  await withTempDir(async (dir) => {
    const target = `${dir}/elsewhere`;
    await Deno.mkdir(target, { mode: 0o755 });
    await Deno.chmod(target, 0o755);
    await Deno.symlink(target, credentialsDir(dir));
    await assert.rejects(
      () => writeCredentials(dir, record()),
      (e: unknown) =>
        e instanceof PrivateDirError && e.code === "PRIVATE_DIR_SYMLINK" &&
        e.message.includes(`"${credentialsDir(dir)}": it is a symbolic link`),
    );
    assert.equal((await Deno.stat(target)).mode! & 0o777, 0o755, "the target is not chmod'ed");
    assert.deepEqual([...Deno.readDirSync(target)], [], "nothing written through the link");
  });
});

Deno.test("readCredentials() registers the tokens and client secret it reads as secrets", async () => {
  await withTempDir(async (dir) => {
    const stored = record();
    stored.tokens = {
      access_token: "at-registered-0001",
      token_type: "Bearer",
      refresh_token: "rt-registered-0002",
    };
    stored.clients = {
      "https://auth.example.com": { client_id: "cid", client_secret: "cs-registered-0003" },
    };
    await Deno.mkdir(credentialsDir(dir), { recursive: true });
    await Deno.writeTextFile(credentialPath(dir, "linear"), JSON.stringify(stored));
    await readCredentials(dir, "linear");
    assert.equal(
      maskSecrets("at-registered-0001 rt-registered-0002 cs-registered-0003"),
      "*** *** ***",
    );
  });
});

Deno.test("writeCredentials() replaces the file atomically: a concurrent reader never sees a partial file", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, record());
    const path = credentialPath(dir, "linear");
    let writing = true;
    let reads = 0;
    const reader = (async () => {
      while (writing) {
        JSON.parse(await Deno.readTextFile(path)); // Throws on a torn write.
        reads++;
        await new Promise((r) => setTimeout(r, 0));
      }
    })();
    const big = "x".repeat(64 * 1024);
    for (let i = 0; i < 60; i++) {
      await writeCredentials(dir, record({ tokens: { access_token: `${big}-${i}`, token_type: "Bearer" } }));
    }
    writing = false;
    await reader;
    assert.ok(reads > 0);
    const left = [...Deno.readDirSync(credentialsDir(dir))].map((e) => e.name);
    assert.deepEqual(left, ["linear.json"], "no temporary files remain");
  });
});

Deno.test("readCredentials() treats a malformed or foreign file as absent", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(credentialsDir(dir), { recursive: true });
    await Deno.writeTextFile(credentialPath(dir, "linear"), "{not json");
    assert.equal(await readCredentials(dir, "linear"), undefined);
    await Deno.writeTextFile(credentialPath(dir, "linear"), JSON.stringify(record({ server: "other" })));
    assert.equal(await readCredentials(dir, "linear"), undefined);
    assert.equal(await readCredentials(dir, "missing"), undefined);
  });
});

Deno.test("loadCredentials() ignores credentials made for another URL", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, record());
    assert.equal(
      (await loadCredentials(dir, { name: "linear", url: URL_A }))?.tokens?.access_token,
      "at-secret-1",
    );
    assert.equal(
      await loadCredentials(dir, { name: "linear", url: "https://evil.example.com/mcp" }),
      undefined,
    );
  });
});

Deno.test("deleteCredentials() is idempotent", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, record());
    assert.equal(await deleteCredentials(dir, "linear"), true);
    assert.equal(await deleteCredentials(dir, "linear"), false);
  });
});

Deno.test("credentialsFingerprint() changes when the file is written or deleted", async () => {
  await withTempDir(async (dir) => {
    const absent = credentialsFingerprint(dir, "linear");
    assert.equal(absent, "absent");
    await writeCredentials(dir, record());
    const first = credentialsFingerprint(dir, "linear");
    assert.notEqual(first, absent);
    await writeCredentials(dir, record({ tokens: { access_token: "at-2-longer", token_type: "Bearer" } }));
    assert.notEqual(credentialsFingerprint(dir, "linear"), first);
    await deleteCredentials(dir, "linear");
    assert.equal(credentialsFingerprint(dir, "linear"), "absent");
  });
});

Deno.test("withCredentialLock() keeps every rotation of two real processes rotating at once", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(
      dir,
      record({ tokens: { access_token: "a", token_type: "Bearer", refresh_token: "rt-0" } }),
    );
    const worker = new URL("../../testdata/auth/lock_worker.ts", import.meta.url).pathname;
    const run = () =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-read", "--allow-write", "--allow-sys=uid", worker, dir, "linear", "15"],
        stdout: "null",
        stderr: "piped",
      }).output();
    const results = await Promise.all([run(), run()]);
    for (const r of results) assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
    const final = await readCredentials(dir, "linear");
    assert.equal(final?.tokens?.refresh_token, "rt-30", "no rotation was lost");
    assert.ok(!(await Deno.stat(`${credentialPath(dir, "linear")}.lock`).then(() => true, () => false)));
  });
});

Deno.test("withCredentialLock() removes a lock left behind by a dead process once it is stale", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(credentialsDir(dir), { recursive: true });
    const lock = `${credentialPath(dir, "linear")}.lock`;
    await Deno.writeTextFile(lock, "99999:dead");
    const old = new Date(Date.now() - 120_000);
    await Deno.utime(lock, old, old);
    const started = Date.now();
    const value = await withCredentialLock(dir, "linear", () => Promise.resolve(42), { staleMs: 30_000 });
    assert.equal(value, 42);
    assert.ok(Date.now() - started < 2_000);
    const left = [...Deno.readDirSync(credentialsDir(dir))].map((e) => e.name);
    assert.deepEqual(left, [], "stale lock and its aside copy are gone");
  });
});

Deno.test("withCredentialLock() fails with CREDENTIALS_LOCKED when a live lock stays taken", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(credentialsDir(dir), { recursive: true });
    const lock = `${credentialPath(dir, "linear")}.lock`;
    await Deno.writeTextFile(lock, "1:alive");
    await assert.rejects(
      withCredentialLock(dir, "linear", () => Promise.resolve(1), {
        waitMs: 150,
        staleMs: 60_000,
        pollMs: 10,
      }),
      (e: unknown) => {
        assert.ok(e instanceof UserError);
        assert.equal(e.code, "CREDENTIALS_LOCKED");
        assert.match(e.message, /another process holds/);
        return true;
      },
    );
    assert.equal(await Deno.readTextFile(lock), "1:alive", "someone else's lock is left alone");
  });
});

Deno.test("withCredentialLock() releases the lock when the function throws", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(withCredentialLock(dir, "linear", () => Promise.reject(new Error("boom"))), /boom/);
    assert.equal(
      await withCredentialLock(dir, "linear", () => Promise.resolve("again"), { waitMs: 100 }),
      "again",
    );
  });
});

Deno.test("describeSignIn() reports header auth when the manifest sets an Authorization header", async () => {
  await withTempDir((dir) => {
    const d = describeSignIn(dir, { name: "linear", url: URL_A, headers: { authorization: "Bearer x" } });
    assert.deepEqual(d, { state: "header-auth" });
    return Promise.resolve();
  });
});

Deno.test("describeSignIn() reports not-signed-in with the exact login command", async () => {
  await withTempDir((dir) => {
    const d = describeSignIn(dir, { name: "linear", url: URL_A });
    assert.equal(d.state, "not-signed-in");
    assert.match(d.hint ?? "", /`cargo agents mcp login linear`/);
    return Promise.resolve();
  });
});

Deno.test("describeSignIn() reports signed-in with the expiry and never a token", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, record());
    const d = describeSignIn(dir, { name: "linear", url: URL_A }, { nowMs: 2_000 });
    assert.deepEqual(d, { state: "signed-in", expiresAt: 3_601_000 });
    assert.ok(!JSON.stringify(d).includes("secret"));
  });
});

Deno.test("describeSignIn() tells refreshable from expired tokens", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, record());
    assert.equal(
      describeSignIn(dir, { name: "linear", url: URL_A }, { nowMs: 4_000_000 }).state,
      "expired-refreshable",
    );
    await writeCredentials(dir, record({ tokens: { access_token: "a", token_type: "Bearer" } }));
    const d = describeSignIn(dir, { name: "linear", url: URL_A }, { nowMs: 4_000_000 });
    assert.equal(d.state, "expired");
    assert.match(d.hint ?? "", /cargo agents mcp login linear/);
  });
});

Deno.test("describeSignIn() reports not-signed-in for credentials made for another URL or refused", async () => {
  await withTempDir(async (dir) => {
    await writeCredentials(dir, record());
    const moved = describeSignIn(dir, { name: "linear", url: "https://new.example.com/mcp" });
    assert.equal(moved.state, "not-signed-in");
    assert.match(moved.hint ?? "", /another URL/);
    await writeCredentials(dir, record({ tokens: undefined, rejected: "invalid_grant" }));
    const refused = describeSignIn(dir, { name: "linear", url: URL_A });
    assert.equal(refused.state, "not-signed-in");
    assert.match(refused.hint ?? "", /refused/);
  });
});

Deno.test("loginCommand() quotes names a shell would split", () => {
  assert.equal(loginCommand("linear"), "cargo agents mcp login linear");
  assert.equal(loginCommand("my server"), "cargo agents mcp login 'my server'");
  assert.equal(loginCommand("it's"), "cargo agents mcp login 'it'\\''s'");
});

Deno.test("credentialPath() is inside <config>/credentials", () => {
  assert.equal(credentialPath("/cfg", "linear"), join("/cfg", "credentials", "linear.json"));
});
