/**
 * The recording step shared by `record.ts` and `held_out/record.ts`: start one real MCP server over stdio
 * with a minimal environment, list its tools, make the scripted calls and write `<outDir><name>.json`
 * (`{ server, source, …stamp, tools, answers }`; a call that throws is reported on stderr and left out).
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

/** One scripted call: the tool and its arguments. */
export type Call = [tool: string, args: Record<string, unknown>];

/**
 * Records one server's listing and answers.
 *
 * @param options.env Added to the minimal environment (`PATH`, `HOME=/tmp`, `LANG`): server-everything's
 *   get-env answers it whole, and the recording is committed.
 * @param options.stamp Fields written after `source` (e.g. `{ recorded: "2026-12-01" }` or `{ heldOut: true }`).
 */
export async function recordServer(options: {
  name: string;
  command: string;
  args: string[];
  calls: Call[];
  source: string;
  outDir: string;
  env?: Record<string, string>;
  stamp: Record<string, unknown>;
}): Promise<void> {
  const { name, calls } = options;
  const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: "/tmp", LANG: "C.UTF-8", ...options.env };
  const transport = new StdioClientTransport({ command: options.command, args: options.args, env, stderr: "ignore" });
  const client = new Client({ name: "recorder", version: "1.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const answers: { tool: string; arguments: Record<string, unknown>; result: unknown }[] = [];
  for (const [tool, a] of calls) {
    try {
      const result = await client.callTool({ name: tool, arguments: a });
      answers.push({ tool, arguments: a, result });
    } catch (error) {
      console.error(`${name}.${tool}: ${error}`);
    }
  }
  await client.close();
  const recording = { server: name, source: options.source, ...options.stamp, tools, answers };
  await Deno.writeTextFile(`${options.outDir}${name}.json`, JSON.stringify(recording, null, 1) + "\n");
  console.log(`${name}: ${tools.length} tools, ${answers.length} answers`);
}
