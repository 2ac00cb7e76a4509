/**
 * The floor of `bench/peers.ts`: the official MCP SDK client (`@modelcontextprotocol/client`, the repository's
 * own dependency) calling the backing server directly, one `tools/call` per echo. `return1` has no meaning
 * here (there is no script) and answers an error.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { backingServer, serveDriver } from "./_driver.mjs";

await serveDriver(async () => {
  const client = new Client({ name: "direct-agent", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ ...backingServer(), stderr: "ignore" }));
  const echo = async () => {
    const result = await client.callTool({ name: "echo", arguments: { message: "x" } });
    return result.content[0].text;
  };
  return {
    run: async (kind) => {
      if (kind === "echo") return await echo();
      if (kind === "seq200") {
        let n = 0;
        for (let i = 0; i < 200; i++) if (await echo() === "Echo: x") n++;
        return n;
      }
      throw new Error(`the direct client has no ${kind}`);
    },
    close: () => client.close(),
  };
});
