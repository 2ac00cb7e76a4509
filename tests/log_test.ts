import assert from "node:assert/strict";
import { createLogger, MAX_SESSION_LOGS, pruneSessionLogs, SESSION_LOG_NAME } from "../lib/log.ts";
import { processSecrets } from "../lib/secrets/mod.ts";

function logFiles(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".log")).sort();
  } catch {
    return [];
  }
}

Deno.test("createLogger() leaves no file when the session logs nothing", async () => {
  const root = await Deno.makeTempDir();
  const logger = createLogger({ logDir: `${root}/logs`, sessionName: "quiet.log" });
  await logger.close();
  assert.deepEqual(logFiles(`${root}/logs`), []);
  await Deno.remove(root, { recursive: true });
});

Deno.test("createLogger() creates the session file with its first line", async () => {
  const root = await Deno.makeTempDir();
  const logger = createLogger({ logDir: `${root}/logs`, sessionName: "s.log", now: () => 0 });
  assert.equal(logger.filePath, `${root}/logs/s.log`);
  logger.child("fx").info("started");
  await logger.close();
  assert.equal(await Deno.readTextFile(`${root}/logs/s.log`), "1970-01-01T00:00:00.000Z INFO [fx] started\n");
  await Deno.remove(root, { recursive: true });
});

/** A session file name as the logger makes them, `i` seconds into 2025. */
function sessionName(i: number): string {
  const stamp = new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString().replace(/[:.]/g, "-");
  return `${stamp}-${1000 + i}.log`;
}

Deno.test("createLogger() keeps the newest MAX_SESSION_LOGS session files when it creates one", async () => {
  const root = await Deno.makeTempDir();
  const dir = `${root}/logs`;
  await Deno.mkdir(dir);
  for (let i = 0; i < MAX_SESSION_LOGS + 5; i++) {
    const path = `${dir}/${sessionName(i)}`;
    await Deno.writeTextFile(path, "x\n");
    await Deno.utime(path, 1_000_000 + i, 1_000_000 + i); // the first is the oldest
  }
  await Deno.writeTextFile(`${dir}/notes.txt`, "not a log");
  await Deno.writeTextFile(`${dir}/mine.log`, "a log the user keeps here");
  await Deno.utime(`${dir}/mine.log`, 1, 1);
  const logger = createLogger({ logDir: dir, sessionName: sessionName(99) });
  assert.equal(logFiles(dir).length, MAX_SESSION_LOGS + 6, "nothing pruned before the first line");
  logger.info("hello");
  await logger.close();
  const left = logFiles(dir).filter((n) => SESSION_LOG_NAME.test(n));
  assert.equal(left.length, MAX_SESSION_LOGS);
  assert.ok(left.includes(sessionName(99)));
  assert.ok(!left.includes(sessionName(5)) && left.includes(sessionName(6)), left.join(" "));
  assert.ok(Deno.statSync(`${dir}/notes.txt`).isFile);
  assert.ok(Deno.statSync(`${dir}/mine.log`).isFile, "a file we did not name is never pruned");
  await Deno.remove(root, { recursive: true });
});

Deno.test("createLogger() creates logs/ 0700 and the session file 0600 under a permissive umask", async () => {
  if (Deno.build.os === "windows") return;
  const root = await Deno.makeTempDir();
  const previous = Deno.umask(0o000);
  try {
    const logger = createLogger({ logDir: `${root}/logs` });
    logger.info("hello");
    await logger.close();
    assert.equal(Deno.statSync(`${root}/logs`).mode! & 0o777, 0o700);
    assert.equal(Deno.statSync(logger.filePath!).mode! & 0o777, 0o600);
    assert.match(logger.filePath!, /\/logs\/[^/]+$/);
    assert.ok(SESSION_LOG_NAME.test(logger.filePath!.split("/").pop()!), logger.filePath);
  } finally {
    Deno.umask(previous);
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("createLogger() refuses a logs/ that is a symbolic link, and prunes nothing behind it", async () => {
  if (Deno.build.os === "windows") return;
  const root = await Deno.makeTempDir();
  const elsewhere = `${root}/elsewhere`;
  await Deno.mkdir(elsewhere);
  for (let i = 0; i < 30; i++) await Deno.writeTextFile(`${elsewhere}/${sessionName(i)}`, "unrelated\n");
  await Deno.chmod(elsewhere, 0o755);
  await Deno.symlink(elsewhere, `${root}/logs`);
  const errors: string[] = [];
  const logger = createLogger({ logDir: `${root}/logs`, keepLogs: 2, writeErr: (t) => errors.push(t) });
  logger.info("hello");
  await logger.close();
  assert.equal(logger.filePath, undefined, "stderr only");
  assert.equal(logFiles(elsewhere).length, 30, "nothing deleted through the link");
  assert.equal(Deno.statSync(elsewhere).mode! & 0o777, 0o755, "the link's target is not chmod'ed");
  const warning = errors.join("");
  assert.match(warning, new RegExp(`Cannot use "${root}/logs": it is a symbolic link`));
  assert.match(warning, /logging to stderr only/);
  await Deno.remove(root, { recursive: true });
});

Deno.test("pruneSessionLogs() never removes a link or a folder, even with our file name", async () => {
  if (Deno.build.os === "windows") return;
  const root = await Deno.makeTempDir();
  const dir = `${root}/logs`;
  await Deno.mkdir(dir);
  await Deno.writeTextFile(`${root}/precious.txt`, "keep me");
  await Deno.symlink(`${root}/precious.txt`, `${dir}/${sessionName(1)}`);
  await Deno.mkdir(`${dir}/${sessionName(2)}`);
  await Deno.writeTextFile(`${dir}/${sessionName(3)}`, "old\n");
  pruneSessionLogs(dir, 0);
  assert.ok(Deno.lstatSync(`${dir}/${sessionName(1)}`).isSymlink);
  assert.ok(Deno.statSync(`${dir}/${sessionName(2)}`).isDirectory);
  assert.throws(() => Deno.statSync(`${dir}/${sessionName(3)}`), Deno.errors.NotFound);
  assert.equal(Deno.readTextFileSync(`${root}/precious.txt`), "keep me");
  await Deno.remove(root, { recursive: true });
});

Deno.test("createLogger() masks registered secrets and credential shapes in the file and on stderr", async () => {
  const root = await Deno.makeTempDir();
  processSecrets.register("zz-registered-9f8e7d");
  const errors: string[] = [];
  const logger = createLogger({
    logDir: `${root}/logs`,
    sessionName: "m.log",
    writeErr: (t) => errors.push(t),
  });
  logger.warn("header zz-registered-9f8e7d; Authorization: Basic dXNlcjpwYXNz; using token abc123def456");
  logger.warn("postgres://app:hunter22@db/x and PAT 0123456789abcdef; stderr: token=abc123");
  await logger.close();
  for (const text of [Deno.readTextFileSync(`${root}/logs/m.log`), errors.join("")]) {
    for (
      const secret of [
        "zz-registered-9f8e7d",
        "dXNlcjpwYXNz",
        "abc123def456",
        "hunter22",
        "0123456789abcdef",
        "abc123",
      ]
    ) {
      assert.ok(!text.includes(secret), `${secret} in ${text}`);
    }
    assert.match(text, /Authorization: Basic \*\*\*/);
    assert.match(text, /postgres:\/\/app:\*\*\*@db/);
  }
  await Deno.remove(root, { recursive: true });
});

Deno.test("createLogger() ends the session file with a marker at its byte budget", async () => {
  const root = await Deno.makeTempDir();
  const logger = createLogger({ logDir: `${root}/logs`, sessionName: "s.log", maxFileBytes: 4096 });
  for (let i = 0; i < 500; i++) logger.info(`line ${i} ${"x".repeat(40)}`);
  await logger.close();
  const text = await Deno.readTextFile(`${root}/logs/s.log`);
  assert.ok(new TextEncoder().encode(text).length <= 4096 + 200, `${text.length} bytes`);
  assert.match(text.trimEnd().split("\n").at(-1)!, /log cut at 4096 bytes .*later lines go to stderr only/);
  await Deno.remove(root, { recursive: true });
});

Deno.test("createLogger() drops lines past its buffer with a counted marker, never waiting for the disk", async () => {
  const root = await Deno.makeTempDir();
  const logger = createLogger({ logDir: `${root}/logs`, sessionName: "s.log", bufferBytes: 2048 });
  const started = performance.now();
  for (let i = 0; i < 2_000; i++) logger.debug(`stderr: ${"e".repeat(99)}`);
  const callerMs = performance.now() - started;
  assert.ok(logger.droppedLines > 0);
  await logger.close();
  const text = await Deno.readTextFile(`${root}/logs/s.log`);
  const marker = text.split("\n").find((l) => l.includes("dropped: the log could not keep up"));
  assert.ok(marker, "a drop marker");
  const count = Number(/… (\d+) log line/.exec(marker)![1]);
  const kept = text.split("\n").filter((l) => l.includes("stderr: ")).length;
  assert.equal(kept + logger.droppedLines, 2_000);
  assert.ok(count > 0 && count <= logger.droppedLines);
  assert.ok(callerMs < 5_000, `${callerMs} ms`);
  await Deno.remove(root, { recursive: true });
});

Deno.test("createLogger() keeps the log folder under its total budget when it creates a file", async () => {
  const root = await Deno.makeTempDir();
  const dir = `${root}/logs`;
  await Deno.mkdir(dir);
  for (let i = 0; i < 6; i++) {
    const path = `${dir}/2020-01-0${i + 1}T00-00-00-000Z-${100 + i}.log`;
    await Deno.writeTextFile(path, "x".repeat(1000));
    await Deno.utime(path, 1_000_000 + i, 1_000_000 + i); // the first is the oldest
  }
  const logger = createLogger({ logDir: dir, sessionName: "new.log", maxFileBytes: 1000, maxDirBytes: 4000 });
  logger.info("hello");
  await logger.close();
  // 4000 − 1000 (room for this session) leaves the 3 newest others.
  assert.deepEqual(logFiles(dir), [
    "2020-01-04T00-00-00-000Z-103.log",
    "2020-01-05T00-00-00-000Z-104.log",
    "2020-01-06T00-00-00-000Z-105.log",
    "new.log",
  ]);
  await Deno.remove(root, { recursive: true });
});

Deno.test("createLogger() masks secrets in a line longer than its cut", async () => {
  const lines: string[] = [];
  const secret = `budget-secret-${crypto.randomUUID()}`;
  processSecrets.register(secret);
  const logger = createLogger({ writeErr: (t) => void lines.push(t), maxLineChars: 64 });
  logger.info(`sent ${secret} ${"y".repeat(1_000_000)}`);
  await logger.close();
  assert.equal(lines.length, 1);
  assert.ok(!lines[0]!.includes(secret));
  assert.match(lines[0]!, /^\[info\] sent \*\*\* y+…\n$/);
  assert.ok(lines[0]!.length < 100);
});

Deno.test("createLogger() writes a burst of lines together after its wait, and flush() does not wait it out", async () => {
  const root = await Deno.makeTempDir();
  const logger = createLogger({ logDir: `${root}/logs`, sessionName: "s.log", coalesceMs: 60_000 });
  for (let i = 0; i < 3; i++) logger.info(`line ${i}`);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(await Deno.readTextFile(`${root}/logs/s.log`), "", "nothing is written during the wait");
  const started = performance.now();
  await logger.flush();
  assert.ok(performance.now() - started < 30_000, "flush() waited out the wait");
  assert.match(
    await Deno.readTextFile(`${root}/logs/s.log`),
    /INFO line 0\n.*INFO line 1\n.*INFO line 2\n$/s,
  );
  logger.info("after");
  await logger.close();
  assert.match(await Deno.readTextFile(`${root}/logs/s.log`), /INFO after\n$/);
  await Deno.remove(root, { recursive: true });
});

Deno.test("createLogger() formats a file-only line when it is written out: stamped when logged, masked with the secrets known by then, in order", async () => {
  const root = await Deno.makeTempDir();
  let nowMs = Date.UTC(2026, 0, 2, 3, 4, 5, 6);
  const logger = createLogger({
    logDir: `${root}/logs`,
    sessionName: "s.log",
    coalesceMs: 60_000,
    now: () => nowMs,
    writeErr: () => {},
  });
  const value = `late-secret-${crypto.randomUUID()}`;
  logger.debug("the first line");
  nowMs += 1_000;
  logger.info("a line stderr takes too");
  logger.debug(`tools/call got ${value}`);
  // Learned after the line was logged, before it went to the file (a server's token read later): masked.
  processSecrets.register(value);
  await logger.close();
  const text = await Deno.readTextFile(`${root}/logs/s.log`);
  assert.ok(!text.includes(value), text);
  assert.equal(
    text,
    "2026-01-02T03:04:05.006Z DEBUG the first line\n" +
      "2026-01-02T03:04:06.006Z INFO a line stderr takes too\n" +
      "2026-01-02T03:04:06.006Z DEBUG tools/call got ***\n",
  );
  await Deno.remove(root, { recursive: true });
});

Deno.test("createLogger() masks a long secret that straddles the line's cut (no prefix of it is written)", async () => {
  const root = await Deno.makeTempDir();
  const lines: string[] = [];
  // A long token (an OAuth access token, a JWT without its shape) read from `${VAR}`.
  const secret = Array.from({ length: 25 }, () => crypto.randomUUID().replaceAll("-", "")).join("");
  processSecrets.register(secret);
  const logger = createLogger({
    logDir: `${root}/logs`,
    sessionName: "s.log",
    writeErr: (t) => void lines.push(t),
    maxLineChars: 64,
  });
  logger.info(`sent ${secret} and more`);
  logger.debug(`sent ${secret} and more`);
  await logger.close();
  const text = await Deno.readTextFile(`${root}/logs/s.log`);
  const prefix = secret.slice(0, 12);
  assert.ok(!lines[0]!.includes(prefix), lines[0]);
  assert.ok(!text.includes(prefix), text);
  assert.match(lines[0]!, /^\[info\] sent \*\*\* and more\n$/);
  await Deno.remove(root, { recursive: true });
});

/** The live heap (MiB) of a process of its own, with V8's gc exposed, after `body` logged to a waiting file. */
async function liveHeapMiBAfter(body: string): Promise<number> {
  const script = `
    import { createLogger } from ${JSON.stringify(new URL("../lib/log.ts", import.meta.url).href)};
    const root = await Deno.makeTempDir();
    const logger = createLogger({ logDir: root + "/logs", sessionName: "s.log", coalesceMs: 60_000 });
    ${body}
    globalThis.gc();
    console.log(Math.round(Deno.memoryUsage().heapUsed / 1048576));
    await logger.close();
    await Deno.remove(root, { recursive: true });`;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--expose-gc", script],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.ok(output.success);
  return Number(new TextDecoder().decode(output.stdout).trim());
}

Deno.test("createLogger() holds only the cut head of a huge file-only line while it waits to be written", async () => {
  const heapMiB = await liveHeapMiBAfter(
    `for (let i = 0; i < 40; i++) logger.debug(i + "x".repeat(16 << 20));`,
  );
  // Each waiting line is cut at ~4.4 KB: the 640 MiB of messages are not all kept alive until the write.
  assert.ok(heapMiB < 200, `${heapMiB} MiB live while 40 lines waited`);
});

Deno.test("createLogger() bounds a burst of millions of short file-only lines waiting to be written", async () => {
  const heapMiB = await liveHeapMiBAfter(`for (let i = 0; i < 3_000_000; i++) logger.debug("");`);
  // Each waiting line counts its record against the 1 MiB buffer, not its text alone (0 units here).
  assert.ok(heapMiB < 100, `${heapMiB} MiB live while 3,000,000 empty lines waited`);
});
