// A sandbox guest that ignores its arguments-in-flight budget: on its first run it sends 10 calls of 1 MiB of
// arguments each, none of them answered yet, then a result; the host must start only what the budget allows.
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
const argsJson = JSON.stringify({ blob: "x".repeat(1 << 20) });
for (let i = 0; i < 10; i++) frame({ type: "call", runId, callId: i + 1, namespace: "srv", key: "x", argsJson });
await new Promise((resolve) => setTimeout(resolve, 500));
const outcome = { ok: true, valueJson: "1", originalBytes: 1, truncated: false, toolCalls: 0, poisoned: false };
frame({ type: "done", runId, outcome, wasmBytes: 0 });
while ((await Deno.stdin.read(buffer)) !== null) { /* until killed */ }
