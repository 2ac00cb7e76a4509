/**
 * UTCP code mode (npm `@utcp/code-mode`, scripts in an `isolated-vm` isolate in the host process) with the
 * MCP plugin (`@utcp/mcp`) connected to the backing server over stdio. Tool calls inside the isolate are
 * synchronous (`applySyncPromise`); the tool is `everything.everything_echo` (manual, server, tool).
 *
 * @module
 */
import { backingServer, importPeer, serveDriver } from "./_driver.mjs";

const SCRIPTS = {
  return1: "return 1",
  echo: "return everything.everything_echo({ message: 'x' })",
  seq200:
    "let n = 0; for (let i = 0; i < 200; i++) { if (everything.everything_echo({ message: 'x' }) === 'Echo: x') n++ } return n",
};

await serveDriver(async () => {
  const { CodeModeUtcpClient } = await importPeer("@utcp/code-mode");
  await importPeer("@utcp/mcp"); // Registers the `mcp` call template with the SDK.
  const client = await CodeModeUtcpClient.create(process.cwd(), null);
  const { success, errors } = await client.registerManual({
    name: "everything",
    call_template_type: "mcp",
    config: { mcpServers: { everything: { transport: "stdio", ...backingServer() } } },
  });
  if (success === false) throw new Error(`UTCP registerManual: ${JSON.stringify(errors)}`);
  return {
    run: async (kind) => {
      const out = await client.callToolChain(SCRIPTS[kind]);
      const failure = out.logs.find((line) => line.startsWith("[ERROR] Code execution failed"));
      if (failure) throw new Error(`UTCP callToolChain: ${failure}`);
      return out.result;
    },
    close: () => client.close(),
  };
});
