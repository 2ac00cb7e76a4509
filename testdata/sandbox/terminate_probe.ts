// Run as its own process by tests/sandbox/reply_channel_pool_test.ts: a SandboxPool whose one Worker blocks on
// its reply channel (a call that never answers) is closed; prints "ended after N ms" once no Worker thread is
// left (`ps -L`, as Deno lets no one but --allow-all read /proc/self), or "still running" after 5 s.
import { SandboxPool } from "../../lib/sandbox/mod.ts";
import { testLimits } from "../../tests/_fakes_sandbox.ts";

function workerThreads(): number {
  const listed = new Deno.Command("ps", { args: ["-L", "-o", "comm=", "-p", String(Deno.pid)] }).outputSync();
  return new TextDecoder().decode(listed.stdout).split("\n").filter((name) => name.startsWith("worker-")).length;
}

const pool = new SandboxPool({ size: 1 });
let called: () => void = () => {};
const calling = new Promise<void>((resolve) => called = resolve);
const running = pool.run({
  script: "await srv.never()",
  namespaces: ["srv"],
  limits: testLimits({ timeoutMs: 60_000 }),
  hostCall: () => {
    called();
    return new Promise(() => {});
  },
});
await calling;
await new Promise((resolve) => setTimeout(resolve, 50)); // the Worker blocks on its channel meanwhile
if (workerThreads() !== 1) throw new Error(`expected one Worker thread, found ${workerThreads()}`);
const closedAt = performance.now();
await pool.close();
const result = await running;
if (result.ok || result.failure.error !== "cancelled") throw new Error(`run: ${JSON.stringify(result)}`);
while (workerThreads() > 0 && performance.now() - closedAt < 5_000) {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
console.log(workerThreads() > 0 ? "still running" : `ended after ${Math.round(performance.now() - closedAt)} ms`);
Deno.exit(0);
