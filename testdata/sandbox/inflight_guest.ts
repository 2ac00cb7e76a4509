// A sandbox guest that ignores its arguments-in-flight budget: on its first run it sends 10 calls of 1 MiB of
// arguments each, none of them answered yet, then a result; the host must start only what the budget allows.
import { awaitFirstRun, writeFrame as frame } from "./_guest_frames.ts";

const buffer = new Uint8Array(65536);
const runId = await awaitFirstRun(buffer);
const argsJson = JSON.stringify({ blob: "x".repeat(1 << 20) });
for (let i = 0; i < 10; i++) frame({ type: "call", runId, callId: i + 1, namespace: "srv", key: "x", argsJson });
await new Promise((resolve) => setTimeout(resolve, 500));
const outcome = { ok: true, valueJson: "1", originalBytes: 1, truncated: false, toolCalls: 0, poisoned: false };
frame({ type: "done", runId, outcome, wasmBytes: 0 });
while ((await Deno.stdin.read(buffer)) !== null) { /* until killed */ }
