/**
 * The https path for real: a TLS MCP server on a test host inside a network namespace this test
 * creates (root, `ip netns`, a veth pair), reached by name through the resolver seam from a
 * second namespace whose only route is that veth pair. No address outside the two namespaces is
 * ever used; the test host's address only has to look public to the endpoint policy.
 */
import assert from "node:assert/strict";
import { REPO } from "../_fakes_backends.ts";
import { requireProgram } from "../_prerequisites.ts";

const HOST_ADDRESS = "100.128.0.2"; // Just above 100.64.0.0/10: public to the policy, local to the veth pair.
const CLIENT_ADDRESS = "100.128.0.1";
const TLS_DIR = `${REPO}testdata/guarded_fetch`;

async function ip(...args: string[]): Promise<void> {
  requireProgram("ip");
  const out = await new Deno.Command("ip", { args, stdout: "piped", stderr: "piped" }).output();
  if (out.code !== 0) throw new Error(`ip ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
}

/** Two namespaces joined by a veth pair; `remove()` deletes both (and with them the pair). */
async function namespacePair(): Promise<{ server: string; client: string; remove(): Promise<void> }> {
  const id = `${Deno.pid % 100_000}`;
  const server = `cagt-srv-${id}`;
  const client = `cagt-cli-${id}`;
  const remove = async () => {
    for (const ns of [server, client]) await ip("netns", "del", ns).catch(() => {}); // May not exist yet.
  };
  try {
    await ip("netns", "add", server);
    await ip("netns", "add", client);
    await ip("link", "add", `cg${id}s`, "type", "veth", "peer", "name", `cg${id}c`);
    await ip("link", "set", `cg${id}s`, "netns", server);
    await ip("link", "set", `cg${id}c`, "netns", client);
    await ip("-n", server, "addr", "add", `${HOST_ADDRESS}/30`, "dev", `cg${id}s`);
    await ip("-n", client, "addr", "add", `${CLIENT_ADDRESS}/30`, "dev", `cg${id}c`);
    for (const [ns, dev] of [[server, `cg${id}s`], [client, `cg${id}c`]] as const) {
      await ip("-n", ns, "link", "set", dev, "up");
      await ip("-n", ns, "link", "set", "lo", "up");
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return { server, client, remove };
}

Deno.test("connectHttp() reaches a TLS MCP server by name on a test host in a network namespace", async () => {
  const ns = await namespacePair();
  const serverProcess = new Deno.Command("ip", {
    args: [
      "netns",
      "exec",
      ns.server,
      Deno.execPath(),
      "run",
      "--quiet",
      "--allow-net",
      "--allow-read",
      "--config",
      `${REPO}deno.json`,
      `${REPO}testdata/servers/http_server.ts`,
      `--hostname=${HOST_ADDRESS}`,
      "--port=443",
      `--tls-cert=${TLS_DIR}/mcp.test.example.pem`,
      `--tls-key=${TLS_DIR}/mcp.test.example.key`,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    const reader = serverProcess.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const first = await reader.read();
    assert.match(first.value ?? "", /^listening https:\/\/100\.128\.0\.2:443\/mcp/);
    reader.releaseLock();

    const client = await new Deno.Command("ip", {
      args: [
        "netns",
        "exec",
        ns.client,
        Deno.execPath(),
        "run",
        "--quiet",
        "-P",
        "--config",
        `${REPO}deno.json`,
        `${REPO}testdata/http_backend/netns_client.ts`,
        HOST_ADDRESS,
        `${TLS_DIR}/ca.pem`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(client.stderr);
    assert.equal(client.code, 0, stderr);
    const seen = JSON.parse(new TextDecoder().decode(client.stdout));
    assert.deepEqual(seen.tools, ["add", "echo", "slow"]);
    assert.deepEqual(seen.echo, [{ type: "text", text: "over tls" }]);
    assert.deepEqual(seen.lookups, ["mcp.test.example"]);
  } finally {
    serverProcess.kill("SIGKILL");
    await serverProcess.status;
    await serverProcess.stdout.cancel().catch(() => {}); // Already released or closed.
    await serverProcess.stderr.cancel();
    await ns.remove();
  }
});
