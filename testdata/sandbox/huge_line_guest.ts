// A sandbox guest that says `ready` as a real guest does, then answers its first run with a 1 GB line:
// a frame header announcing 1 GiB, then megabytes of "x" for as long as the host reads them.
const buffer = new Uint8Array(65536);
const frame = (message: unknown) => {
  const body = new TextEncoder().encode(JSON.stringify(message));
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length);
  out.set(body, 4);
  return out;
};
await Deno.stdin.read(buffer); // init
Deno.stdout.writeSync(frame({ type: "ready" }));
await Deno.stdin.read(buffer); // run
const header = new Uint8Array(4);
new DataView(header.buffer).setUint32(0, 1024 * 1024 * 1024);
Deno.stdout.writeSync(header);
const chunk = new TextEncoder().encode("x".repeat(1 << 20));
for (let i = 0; i < 1024; i++) {
  let offset = 0;
  while (offset < chunk.length) offset += Deno.stdout.writeSync(chunk.subarray(offset));
}
