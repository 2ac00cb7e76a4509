// What every stand-in guest needs of the host's framing (a 4-byte length, then JSON, then maybe a NUL byte and
// a text tail: a `run` carries its script there): writing one frame whole to stdout, and reading the run id
// out of the `run` frame it was sent.

/** Writes `message` as one frame on stdout, all of it. */
export function writeFrame(message: unknown): void {
  const body = new TextEncoder().encode(JSON.stringify(message));
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length);
  out.set(body, 4);
  let offset = 0;
  while (offset < out.length) offset += Deno.stdout.writeSync(out.subarray(offset));
}

/** Answers `init` with `ready`, then reads the first `run` frame (small enough for one read) and returns its id. */
export async function awaitFirstRun(buffer: Uint8Array): Promise<number> {
  await Deno.stdin.read(buffer); // init
  writeFrame({ type: "ready" });
  const read = await Deno.stdin.read(buffer);
  const body = buffer.subarray(4, read ?? 4);
  const json = body.includes(0) ? body.subarray(0, body.indexOf(0)) : body;
  return (JSON.parse(new TextDecoder().decode(json)) as { runId: number }).runId;
}
