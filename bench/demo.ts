/**
 * `deno task demo`: the seed's scenario, end to end. A bundled example plugin runs the real
 * `@modelcontextprotocol/server-filesystem` on a generated folder of 200 files; a real MCP client
 * starts `cargo-agents mcp-serve`, asks `execute` which files mention TODO, and prints the answer
 * and how many bytes reached the client compared with one tool call at a time.
 *
 * @module
 */
import { connectMetaServer, makeWorld, oneCallAtATimeBytes, todoScript } from "./_world.ts";

const FILES = 200;

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

const world = await makeWorld(FILES);
try {
  console.log(`Generated ${FILES} files in ${world.data} (${world.todoFiles.length} mention TODO).`);
  console.log(`Plugin: ${world.home}/plugins/fs-tools/SYMPOSIUM.toml (filesystem server, depends-on serde)`);
  console.log(`Config: ${world.home}/config.toml ([mcp] max-tool-calls raised for one call per file)`);
  console.log(`Workspace: ${world.ws} (depends on serde)\n`);
  const t0 = performance.now();
  const { client, counter } = await connectMetaServer(world);
  console.log(`cargo-agents mcp-serve answered initialize in ${(performance.now() - t0).toFixed(0)} ms`);
  const { tools } = await client.listTools();
  console.log(`The agent sees ${tools.length} tools: ${tools.map((t) => t.name).join(", ")}\n`);
  const beforeExecute = counter.bytesReceived;
  const t1 = performance.now();
  const result = await client.callTool({ name: "execute", arguments: { script: todoScript(world.data) } });
  const took = performance.now() - t1;
  const executeBytes = counter.bytesReceived - beforeExecute;
  const text = (result.content as { type: string; text: string }[])[0]!.text;
  console.log(
    `execute (${FILES + 1} filesystem calls inside the sandbox) took ${took.toFixed(0)} ms and answered:`,
  );
  console.log(`  ${text}\n`);
  await client.close();
  const answer = (result.structuredContent as { result: string[] }).result;
  const correct = JSON.stringify(answer) === JSON.stringify(world.todoFiles);
  const direct = await oneCallAtATimeBytes(world);
  console.log(`Bytes that reached the client for the task:`);
  console.log(`  through execute:        ${kb(executeBytes)}`);
  console.log(`  one call at a time:     ${kb(direct)}  (${(direct / executeBytes).toFixed(0)}x more)`);
  console.log(`\nAnswer ${correct ? "matches" : "DOES NOT match"} the files that mention TODO.`);
  if (!correct) Deno.exitCode = 1;
} finally {
  await world.remove();
}
