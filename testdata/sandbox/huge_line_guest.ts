// A sandbox guest that says `ready` as a real guest does, then answers its first run with a 1 GB line:
// a frame header announcing 1 GiB, then megabytes of "x" for as long as the host reads them.
import { awaitFirstRun } from "./_guest_frames.ts";

await awaitFirstRun(new Uint8Array(65536));
const header = new Uint8Array(4);
new DataView(header.buffer).setUint32(0, 1024 * 1024 * 1024);
Deno.stdout.writeSync(header);
const chunk = new TextEncoder().encode("x".repeat(1 << 20));
for (let i = 0; i < 1024; i++) {
  let offset = 0;
  while (offset < chunk.length) offset += Deno.stdout.writeSync(chunk.subarray(offset));
}
