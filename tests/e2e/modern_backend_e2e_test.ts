/**
 * End to end: `mcp-serve` under a real SDK agent (legacy era, declaring form elicitation) with modern-only
 * 2026-07-28 backing servers built with SDK 2.4.0 (`testdata/servers/modern_server.ts`): one over stdio
 * (`serveStdio`, `legacy: "reject"`) and one over HTTP (`createMcpHandler`, `legacy: "reject"`). A script's
 * call that the server answers `input_required` (an elicitation, then `roots/list`) reaches the agent as an
 * elicitation, the roots are answered by us, and the call completes; the servers never see `initialize`; the
 * agent's trace context reaches the modern server's calls.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { REPO } from "../_fakes_backends.ts";
import { cargoLock, cargoToml } from "../_fakes_meta.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";
import { startModernHttp } from "../../testdata/servers/modern_server.ts";

const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

Deno.test("execute reaches modern-only stdio and HTTP servers; their input requests reach the agent, roots never do", async () => {
  const root = await Deno.makeTempDir({ prefix: "symposium-modern-e2e-" });
  const http = startModernHttp("reject");
  try {
    const home = `${root}/home`;
    const ws = `${root}/ws`;
    const wire = `${root}/stdio-wire.jsonl`;
    await Deno.mkdir(`${ws}/src`, { recursive: true });
    await Deno.writeTextFile(`${ws}/Cargo.toml`, cargoToml({ serde: "1" }));
    await Deno.writeTextFile(`${ws}/Cargo.lock`, cargoLock({ serde: "1.0.219" }));
    await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
    await Deno.mkdir(`${home}/plugins/modern`, { recursive: true });
    const args = [
      "run",
      "-A",
      "--quiet",
      "--config",
      `${REPO}deno.json`,
      `${REPO}testdata/servers/modern_server.ts`,
      "--stdio=modern",
      `--wire=${wire}`,
    ];
    await Deno.writeTextFile(
      `${home}/plugins/modern/SYMPOSIUM.toml`,
      `name = "modern"\ndepends-on = "*"\n\n[[mcp_servers]]\nname = "local"\ncommand = ${
        JSON.stringify(Deno.execPath())
      }\nargs = ${JSON.stringify(args)}\n\n[[mcp_servers]]\nname = "remote"\nurl = ${
        JSON.stringify(http.url)
      }\n`,
    );
    const asked: string[] = [];
    const agent = new Client({ name: "e2e-agent", version: "1.0.0" }, {
      capabilities: { elicitation: { form: {} } },
    });
    agent.setRequestHandler("elicitation/create", (request) => {
      asked.push(String(request.params.message));
      return { action: "accept", content: { value: "green" } };
    });
    await agent.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [...sourceRunArgs(REPO), "mcp-serve"],
        env: { ...Deno.env.toObject(), SYMPOSIUM_HOME: home },
        cwd: ws,
        stderr: "ignore",
      }),
    );
    try {
      const script = "const a = await local.ask({ question: 'stdio colour?' });" +
        " const b = await remote.ask({ question: 'http colour?' });" +
        " const e = await remote.echo({ text: 'hi' }); return [a, b, e];";
      const result = await agent.callTool({
        name: "execute",
        arguments: { script },
        _meta: { traceparent: TRACEPARENT, tracestate: "vendor=1" },
      });
      const text = (result.content as { type: string; text: string }[])[0]!.text;
      assert.ok(!result.isError, text);
      const wsUri = `file://${encodeURI(await Deno.realPath(ws))}`;
      assert.deepEqual(JSON.parse(text).result, [`green @ ${wsUri}`, `green @ ${wsUri}`, "hi"]);
      assert.equal(asked.length, 2);
      assert.match(asked[0]!, /stdio colour\?/);
      assert.match(asked[1]!, /http colour\?/);
    } finally {
      await agent.close();
    }
    const stdioLines = (await Deno.readTextFile(wire)).trim().split("\n").map((l) => JSON.parse(l));
    const stdioMethods = stdioLines.map((l) => l.method);
    // The agent's trace context reaches the modern server's tools/call (MCP's OpenTelemetry `_meta` keys).
    const calls = stdioLines.filter((l) => l.method === "tools/call");
    assert.ok(calls.length > 0);
    for (const c of calls) {
      assert.equal(c.params._meta?.traceparent, TRACEPARENT);
      assert.equal(c.params._meta?.tracestate, "vendor=1");
    }
    assert.equal(stdioMethods[0], "server/discover");
    assert.ok(!stdioMethods.includes("initialize"));
    const httpMethods = http.hits.filter((h) => h.method === "POST").map((h) => JSON.parse(h.body).method);
    assert.ok(!httpMethods.includes("initialize"));
    assert.ok(
      http.hits.every((h) => h.method !== "POST" || h.headers["mcp-method"]),
      "Mcp-Method on every POST",
    );
  } finally {
    await http.stop();
    await Deno.remove(root, { recursive: true });
  }
});
