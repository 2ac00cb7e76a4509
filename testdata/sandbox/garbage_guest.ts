// A sandbox guest that answers its first frame with bytes that are no frame at all (a length prefix whose
// body is not JSON), then keeps the pipe open.
const buffer = new Uint8Array(65536);
await Deno.stdin.read(buffer);
const body = new TextEncoder().encode("\x00\x01 not json {{{");
const frame = new Uint8Array(4 + body.length);
new DataView(frame.buffer).setUint32(0, body.length);
frame.set(body, 4);
Deno.stdout.writeSync(frame);
while ((await Deno.stdin.read(buffer)) !== null) { /* stay alive until killed */ }
