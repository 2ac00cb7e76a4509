// A sandbox guest that reads every frame and never answers: a sandbox that never starts.
const buffer = new Uint8Array(65536);
while ((await Deno.stdin.read(buffer)) !== null) { /* keep reading, say nothing */ }
