/**
 * Benchmarks of the meta-server against real backing servers (`deno task bench`):
 * warm `execute` with one call vs a direct `tools/call`; 1,000 sequential calls in one script vs
 * a direct client loop; 100 calls under `Promise.all` vs sequential; spawn → `initialize`
 * answered. Sizes and memory (definition bytes, TODO-task bytes, RSS after 10 and 1,000
 * executes) are printed once at load, since they are not timings.
 *
 * @module
 */
import type { Client } from "@modelcontextprotocol/client";
import {
  connectDirect,
  connectMetaServer,
  makeWorld,
  oneCallAtATimeBytes,
  todoScript,
  type World,
} from "./_world.ts";

const world: World = await makeWorld(200);
const meta = await connectMetaServer(world);
const direct = await connectDirect("server-everything", ["stdio"]);

async function execute(client: Client, script: string): Promise<string> {
  const result = await client.callTool({ name: "execute", arguments: { script } });
  const text = (result.content as { type: string; text: string }[])[0]!.text;
  if (result.isError) throw new Error(text);
  return text;
}

function rssMiB(pid: number): number {
  const out = new Deno.Command("ps", { args: ["-o", "rss=", "-p", String(pid)], stdout: "piped" })
    .outputSync();
  return Number(new TextDecoder().decode(out.stdout).trim()) / 1024;
}

// Warm everything up (the backing server starts on first use).
await execute(meta.client, "return await everything.echo({ message: 'warm' })");

// --- sizes and memory, printed once ---
{
  const metaTools = JSON.stringify((await meta.client.listTools()).tools).length;
  let directTools = 0;
  for (
    const [pkg, args, env] of [
      ["server-filesystem", [world.data], {}],
      ["server-memory", [], { MEMORY_FILE_PATH: `${world.root}/m.jsonl` }],
      ["server-everything", ["stdio"], {}],
    ] as const
  ) {
    const c = await connectDirect(pkg, [...args], env);
    directTools += JSON.stringify((await c.client.listTools()).tools).length;
    await c.client.close();
  }
  console.log(
    `definition bytes at session start: ours ${metaTools} B vs filesystem+memory+everything ${directTools} B`,
  );

  const before = meta.counter.bytesReceived;
  const hits = JSON.parse(await execute(meta.client, todoScript(world.data))) as string[];
  const ours = meta.counter.bytesReceived - before;
  const oneByOne = await oneCallAtATimeBytes(world);
  console.log(
    `TODO task over 200 files (${hits.length} hits): ours ${ours} B vs one call at a time ${oneByOne} B`,
  );

  for (let i = 0; i < 10; i++) await execute(meta.client, "return await everything.echo({ message: 'x' })");
  const rss10 = rssMiB(meta.pid);
  for (let i = 0; i < 990; i++) await execute(meta.client, "return await everything.echo({ message: 'x' })");
  console.log(
    `meta-server RSS: ${rss10.toFixed(1)} MiB after 10 executes, ${
      rssMiB(meta.pid).toFixed(1)
    } MiB after 1,000`,
  );
}

Deno.bench("warm execute with one call", { group: "one call", baseline: false }, async () => {
  await execute(meta.client, "return await everything.echo({ message: 'hi' })");
});

Deno.bench("direct SDK tools/call", { group: "one call", baseline: true }, async () => {
  await direct.client.callTool({ name: "echo", arguments: { message: "hi" } });
});

Deno.bench(
  "1,000 sequential awaited calls in one execute",
  { group: "1000 calls", n: 3, warmup: 1 },
  async () => {
    await execute(
      meta.client,
      "let n = 0; for (let i = 0; i < 1000; i++) { await everything.echo({ message: 'x' }); n++; } return n",
    );
  },
);

Deno.bench(
  "1,000 calls in a direct client loop",
  { group: "1000 calls", baseline: true, n: 3, warmup: 1 },
  async () => {
    for (let i = 0; i < 1000; i++) {
      await direct.client.callTool({
        name: "echo",
        arguments: { message: "x" },
      });
    }
  },
);

Deno.bench(
  "100 calls under Promise.all in one execute",
  { group: "100 calls", n: 10, warmup: 2 },
  async () => {
    await execute(
      meta.client,
      "return (await Promise.all(Array.from({ length: 100 }, (_, i) => everything.echo({ message: 'p' + i })))).length",
    );
  },
);

Deno.bench(
  "100 sequential calls in one execute",
  { group: "100 calls", baseline: true, n: 10, warmup: 2 },
  async () => {
    await execute(
      meta.client,
      "let n = 0; for (let i = 0; i < 100; i++) { await everything.echo({ message: 's' + i }); n++ } return n",
    );
  },
);

Deno.bench("mcp-serve start → initialize answered", { group: "startup", n: 5, warmup: 1 }, async () => {
  const { client } = await connectMetaServer(world);
  await client.close();
});

globalThis.addEventListener("unload", () => {
  // Best effort: the bench runner exits right after; children end when their stdin closes.
  void meta.client.close();
  void direct.client.close();
  try {
    Deno.removeSync(world.root, { recursive: true });
  } catch {
    // Already gone.
  }
});
