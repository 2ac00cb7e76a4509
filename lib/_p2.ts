import { SandboxPool } from "./sandbox/mod.ts";
const limits = {
  timeoutMs: 30000,
  memoryLimitBytes: 64 * 1024 * 1024,
  stackLimitBytes: 256 * 1024,
  maxConsoleBytes: 8192,
  maxResultBytes: 32768,
  maxToolCalls: 1000,
};
const pool = new SandboxPool({ size: 2 });
await pool.run({ script: "return 1", namespaces: [], limits, hostCall: async () => 1 });
const d: number[] = [];
for (let i = 0; i < 100; i++) {
  await new Promise((r) => setTimeout(r, 5));
  const t = performance.now();
  await pool.run({ script: "return 1", namespaces: [], limits, hostCall: async () => 1 });
  d.push(performance.now() - t);
}
d.sort((a, b) => a - b);
const e: number[] = [];
for (let i = 0; i < 100; i++) {
  await new Promise((r) => setTimeout(r, 5));
  const t = performance.now();
  await pool.run({
    script: "return await srv.echo(1)",
    namespaces: ["srv"],
    limits,
    hostCall: async (r) => r.args,
  });
  e.push(performance.now() - t);
}
e.sort((a, b) => a - b);
const per: number[] = [];
for (let k = 0; k < 8; k++) {
  const t = performance.now();
  await pool.run({
    script: "let s=0; for (let i=0;i<200;i++) s += await srv.echo(i); return s",
    namespaces: ["srv"],
    limits,
    hostCall: async (req) => req.args,
  });
  per.push((performance.now() - t) / 200);
}
per.sort((a, b) => a - b);
console.log(
  `return1 min ${d[0]!.toFixed(2)} p25 ${d[25]!.toFixed(2)} med ${d[50]!.toFixed(2)} | echo min ${
    e[0]!.toFixed(2)
  } p25 ${e[25]!.toFixed(2)} med ${e[50]!.toFixed(2)} | per-call min ${per[0]!.toFixed(3)} med ${
    per[4]!.toFixed(3)
  }`,
);
await pool.close();
