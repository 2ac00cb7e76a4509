// A sandbox guest that ignores its own budgets (as a script that escaped QuickJS could): on its first run it
// sends 2,000 console lines of 1,000 characters and 500 tool calls, then a result; the host must keep only
// what the run's limits allow.
const buffer = new Uint8Array(65536);
const frame = (message: unknown) => {
  const body = new TextEncoder().encode(JSON.stringify(message));
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length);
  out.set(body, 4);
  let offset = 0;
  while (offset < out.length) offset += Deno.stdout.writeSync(out.subarray(offset));
};
await Deno.stdin.read(buffer); // init
frame({ type: "ready" });
const read = await Deno.stdin.read(buffer); // run
const text = new TextDecoder().decode(buffer.subarray(4, read ?? 4));
const runId = (JSON.parse(text) as { runId: number }).runId;
for (let i = 0; i < 2000; i++) frame({ type: "console", runId, line: "x".repeat(1000) });
for (let i = 0; i < 500; i++) {
  frame({ type: "call", runId, callId: i + 1, namespace: "srv", key: "x", argsJson: undefined });
}
await new Promise((resolve) => setTimeout(resolve, 500));
const outcome = { ok: true, valueJson: "1", originalBytes: 1, truncated: false, toolCalls: 0, poisoned: false };
frame({ type: "done", runId, outcome, wasmBytes: 0 });
while ((await Deno.stdin.read(buffer)) !== null) { /* until killed */ }
