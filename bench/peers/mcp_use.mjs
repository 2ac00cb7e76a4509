/**
 * mcp-use (npm `mcp-use`, its `mcp-use/client` entry: the main entry needs the optional LangChain peers) in
 * code mode with its default executor (`node:vm`, in the host process, no
 * isolation), its MCP client connected to the backing server over stdio. Telemetry is off
 * (`MCP_USE_ANONYMIZED_TELEMETRY=false`, set by the harness).
 *
 * @module
 */
import { backingServer, importPeer, serveDriver } from "./_driver.mjs";

const SCRIPTS = {
  return1: "return 1",
  echo: "return await everything.echo({ message: 'x' })",
  seq200:
    "let n = 0; for (let i = 0; i < 200; i++) { if (await everything.echo({ message: 'x' }) === 'Echo: x') n++ } return n",
};

await serveDriver(async () => {
  const { MCPClient } = await importPeer("mcp-use", "./client");
  const client = new MCPClient({ mcpServers: { everything: backingServer() } }, { codeMode: true });
  await client.createAllSessions();
  return {
    run: async (kind) => {
      const out = await client.executeCode(SCRIPTS[kind]);
      if (out.error) throw new Error(`mcp-use executeCode: ${out.error}`);
      return out.result;
    },
    close: () => client.closeAllSessions(),
  };
});
