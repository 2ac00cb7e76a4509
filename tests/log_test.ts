import assert from "node:assert/strict";
import { createLogger, MAX_SESSION_LOGS } from "../lib/log.ts";

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
  logger.close();
  assert.deepEqual(logFiles(`${root}/logs`), []);
  await Deno.remove(root, { recursive: true });
});

Deno.test("createLogger() creates the session file with its first line", async () => {
  const root = await Deno.makeTempDir();
  const logger = createLogger({ logDir: `${root}/logs`, sessionName: "s.log", now: () => 0 });
  assert.equal(logger.filePath, `${root}/logs/s.log`);
  logger.child("fx").info("started");
  logger.close();
  assert.equal(await Deno.readTextFile(`${root}/logs/s.log`), "1970-01-01T00:00:00.000Z INFO [fx] started\n");
  await Deno.remove(root, { recursive: true });
});

Deno.test("createLogger() keeps the newest MAX_SESSION_LOGS session files when it creates one", async () => {
  const root = await Deno.makeTempDir();
  const dir = `${root}/logs`;
  await Deno.mkdir(dir);
  for (let i = 0; i < MAX_SESSION_LOGS + 5; i++) {
    const path = `${dir}/old-${String(i).padStart(2, "0")}.log`;
    await Deno.writeTextFile(path, "x\n");
    await Deno.utime(path, 1_000_000 + i, 1_000_000 + i); // old-00 is the oldest
  }
  await Deno.writeTextFile(`${dir}/notes.txt`, "not a log");
  const logger = createLogger({ logDir: dir, sessionName: "new.log" });
  assert.equal(logFiles(dir).length, MAX_SESSION_LOGS + 5, "nothing pruned before the first line");
  logger.info("hello");
  logger.close();
  const left = logFiles(dir);
  assert.equal(left.length, MAX_SESSION_LOGS);
  assert.ok(left.includes("new.log"));
  assert.ok(!left.includes("old-05.log") && left.includes("old-06.log"), left.join(" "));
  assert.ok(logFiles(dir).every((n) => n !== "notes.txt"));
  assert.ok(Deno.statSync(`${dir}/notes.txt`).isFile);
  await Deno.remove(root, { recursive: true });
});
