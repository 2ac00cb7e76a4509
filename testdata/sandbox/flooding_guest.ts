// A sandbox guest that ignores its own budgets (as a script that escaped QuickJS could): on its first run it
// sends 2,000 console lines of 1,000 characters and 500 tool calls, then a result; the host must keep only
// what the run's limits allow.
import { awaitFirstRun, writeFrame as frame } from "./_guest_frames.ts";

const buffer = new Uint8Array(65536);
const runId = await awaitFirstRun(buffer);
for (let i = 0; i < 2000; i++) frame({ type: "console", runId, line: "x".repeat(1000) });
for (let i = 0; i < 500; i++) {
  frame({ type: "call", runId, callId: i + 1, namespace: "srv", key: "x", argsJson: undefined });
}
await new Promise((resolve) => setTimeout(resolve, 500));
const outcome = { ok: true, valueJson: "1", originalBytes: 1, truncated: false, toolCalls: 0, poisoned: false };
frame({ type: "done", runId, outcome, wasmBytes: 0 });
while ((await Deno.stdin.read(buffer)) !== null) { /* until killed */ }
