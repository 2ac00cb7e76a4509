// Child of tests/http_backend_netns_test.ts, run inside the test's client network namespace (whose
// only route is the veth to the test host): connects to https://mcp.test.example/mcp, the name
// resolved through the resolver seam to the test host's address, trusting only the test CA.
// Prints one JSON line with what it saw.
import { connectHttp } from "../../lib/backends/http.ts";
import { NULL_LOGGER } from "../../lib/log.ts";

const [address, caPath] = Deno.args;
const lookups: string[] = [];
const conn = await connectHttp({
  transport: "http",
  name: "tls-remote",
  plugin: "netns",
  location: { file: "SYMPOSIUM.toml", line: 1, column: 1 },
  startupTimeoutMs: 10_000,
  toolCallTimeoutMs: 10_000,
  url: "https://mcp.test.example/mcp",
  headers: {},
}, {
  resolver: { resolve: (host) => (lookups.push(host), Promise.resolve([address!])) },
  caCerts: [await Deno.readTextFile(caPath!)],
  logger: NULL_LOGGER,
  now: Date.now,
  shutdownGraceMs: 1_000,
});
const { tools } = await conn.listTools({ timeoutMs: 10_000 });
const echo = await conn.callTool("echo", { text: "over tls" }, { timeoutMs: 10_000 });
await conn.close();
console.log(JSON.stringify({ tools: tools.map((t) => t.name).sort(), echo: echo.content, lookups: [...new Set(lookups)] }));
