// Writes to a stdio server's stdin at shutdown and for abandoned calls (through real child processes):
// what the child has not read is dropped, never flushed before the grace starts.
import assert from "node:assert/strict";
import { StdioProcessTransport } from "../../lib/backends/stdio.ts";
import { isAlive } from "../_fakes_backends.ts";

const BIG = "x".repeat(7 * 1024 * 1024);

function request(id: number, payload = "") {
  return {
    jsonrpc: "2.0" as const,
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { message: payload } },
  };
}

Deno.test("close() gives a server that does not read stdin the grace, then kills it; queued writes are dropped", async () => {
  const transport = new StdioProcessTransport(
    { command: "sleep", args: ["300"], env: {}, cwd: "/" },
    { shutdownGraceMs: 600 },
  );
  await transport.start();
  const pid = transport.pid!;
  const sends = Array.from({ length: 20 }, (_, i) => transport.send(request(i + 1, BIG)));
  const settled = Promise.allSettled(sends);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const t0 = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const closed = await Promise.race([
    transport.close().then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 10_000))),
  ]);
  clearTimeout(timer);
  const took = Date.now() - t0;
  if (!closed) {
    Deno.kill(-pid, "SIGKILL"); // leave nothing behind when the fix is missing
    await transport.close();
  }
  assert.ok(closed, "close() still waiting after 10 s: the queued 7 MiB writes were being flushed");
  assert.ok(took < 3_000, `took ${took} ms (grace 600 ms)`);
  assert.equal(await isAlive(pid), false);
  const outcomes = await settled;
  const dropped = outcomes.filter((o) => o.status === "rejected");
  assert.ok(dropped.length >= 19, `${dropped.length} of 20 dropped`);
  assert.match(
    String((dropped.at(-1) as PromiseRejectedResult).reason),
    /being shut down: the message was not sent/,
  );
});

Deno.test("a request cancelled before it was written to stdin is not sent, nor its cancellation", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/stdin.jsonl`;
  // Reads nothing for 1.5 s (the pipe fills with request 1), then copies stdin to the file.
  const transport = new StdioProcessTransport(
    { command: "sh", args: ["-c", `sleep 1.5; cat > '${file}'`], env: {}, cwd: "/" },
    { shutdownGraceMs: 2_000 },
  );
  await transport.start();
  try {
    const first = transport.send(request(1, BIG));
    const second = transport.send(request(2, "abandoned"));
    const third = transport.send(request(3, "kept"));
    await transport.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 2, reason: "the script ended" },
    });
    await Promise.all([first, second, third]);
  } finally {
    await transport.close();
  }
  const written = (await Deno.readTextFile(file)).trim().split("\n").map((line) => JSON.parse(line));
  await Deno.remove(dir, { recursive: true });
  assert.deepEqual(written.map((m) => m.id ?? m.method), [1, 3]);
});
