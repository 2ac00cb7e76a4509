// A cloned repository must not run a command because an agent was opened in it: a workspace
// SYMPOSIUM.toml whose server would create a file is never started through mcp-serve (list_tools,
// execute), status, mcp tools or mcp exec until `cargo agents trust`, and is untrusted again once it
// changes.
import assert from "node:assert/strict";
import { RawServe } from "../../bench/_raw_serve.ts";
import { runMain } from "../_fakes_foundation.ts";
import { makeDirs } from "../_fakes_meta.ts";

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("an untrusted workspace plugin never starts: mcp-serve, list_tools, status, mcp tools, mcp exec", async () => {
  const dirs = await makeDirs();
  const marker = `${dirs.root}/started-by-untrusted-plugin`;
  const manifest = `${dirs.ws}/SYMPOSIUM.toml`;
  await Deno.writeTextFile(
    manifest,
    `name = "team"\n\n[[mcp_servers]]\nname = "evil"\ncommand = "touch"\nargs = [${
      JSON.stringify(marker)
    }]\n`,
  );
  const env = { SYMPOSIUM_HOME: dirs.home, SYMPOSIUM_RECOMMENDATIONS_URL: `${dirs.root}/no-such-registry` };
  try {
    const status = await runMain(["status"], { cwd: dirs.ws, env });
    assert.equal(status.code, 0, status.stderr);
    assert.match(
      status.stdout,
      /evil: untrusted - untrusted: .*SYMPOSIUM\.toml \(workspace plugin "team"\) is not trusted/,
    );
    assert.match(
      status.stdout,
      new RegExp(`to trust it: cargo agents trust ${manifest.replaceAll("/", "\\/")}`),
    );
    const json = JSON.parse((await runMain(["status", "--json"], { cwd: dirs.ws, env })).stdout);
    const evil = json.servers.find((s: { name: string }) => s.name === "evil");
    assert.equal(evil.state, "untrusted");
    assert.equal(evil.source, "workspace");
    assert.equal(evil.trustCommand, `cargo agents trust ${manifest}`);
    assert.equal(await exists(marker), false, "status started the untrusted server");

    const tools = await runMain(["mcp", "tools"], { cwd: dirs.ws, env });
    assert.match(
      tools.stdout,
      /evil: untrusted \(never started; ask the user to review .*SYMPOSIUM\.toml and, if they agree, to run `cargo agents trust .*` themselves in a terminal .*an agent must not run it\)/,
    );
    assert.doesNotMatch(tools.stdout, /read the file, then run/);
    assert.match(tools.stdout, /Problems:\n {2}`evil` \[workspace\]: untrusted: /);
    const exec = await Deno.makeTempFile({ dir: dirs.root, suffix: ".js" });
    await Deno.writeTextFile(exec, "return await evil.anything({})");
    const ran = await runMain(["mcp", "exec", exec], { cwd: dirs.ws, env });
    assert.equal(ran.code, 1);
    assert.match(ran.stdout, /`evil` \[workspace\]: untrusted: .*cargo agents trust /);
    assert.equal(await exists(marker), false, "mcp tools or mcp exec started the untrusted server");

    const serve = RawServe.start({
      home: dirs.home,
      cwd: dirs.ws,
      env: { SYMPOSIUM_RECOMMENDATIONS_URL: env.SYMPOSIUM_RECOMMENDATIONS_URL },
    });
    try {
      await serve.initialize();
      const listing = await serve.request("tools/call", { name: "list_tools", arguments: {} });
      assert.match(JSON.stringify(listing), /evil: untrusted/);
      const listedByName = await serve.request("tools/call", {
        name: "list_tools",
        arguments: { servers: ["evil"] },
      });
      assert.match(JSON.stringify(listedByName), /untrusted/);
      const answer = await serve.execute("return await evil.anything({})");
      assert.equal(answer.isError, true);
      assert.match(answer.text, /untrusted/);
    } finally {
      await serve.close();
    }
    assert.equal(await exists(marker), false, "mcp-serve started the untrusted server");

    // Without a person to confirm (an agent's shell: stdin is no terminal) trust refuses, after showing.
    const refused = await runMain(["trust"], { cwd: dirs.ws, env });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /TRUST_NEEDS_PERSON/);
    assert.match(refused.stdout, /server "evil" runs a command:\n {4}command: "touch"\n/);
    assert.equal(
      await exists(`${dirs.home}/trusted.toml`),
      false,
      "trust without a person wrote trusted.toml",
    );

    // Trusting shows what it would start, writes trusted.toml 0600, and then the server may start.
    const trust = await runMain(["trust", "--yes"], { cwd: dirs.ws, env });
    assert.equal(trust.code, 0, trust.stderr);
    assert.match(trust.stdout, new RegExp(`args: \\[${JSON.stringify(marker).replaceAll("/", "\\/")}\\]`));
    const info = await Deno.stat(`${dirs.home}/trusted.toml`);
    assert.equal(info.mode! & 0o777, 0o600);
    const trusted = await runMain(["status", "--json"], { cwd: dirs.ws, env });
    assert.equal(JSON.parse(trusted.stdout).servers[0].state, "applies");
    await runMain(["mcp", "exec", exec], { cwd: dirs.ws, env });
    assert.equal(await exists(marker), true, "a trusted server is started on use (the test can see a start)");
    await Deno.remove(marker);

    // A changed manifest is untrusted again.
    await Deno.writeTextFile(manifest, "\n# edited\n", { append: true });
    const changed = JSON.parse((await runMain(["status", "--json"], { cwd: dirs.ws, env })).stdout);
    assert.equal(changed.servers[0].state, "untrusted");
    assert.match(changed.servers[0].reason, /changed since you trusted it/);
    await runMain(["mcp", "exec", exec], { cwd: dirs.ws, env });
    assert.equal(await exists(marker), false, "a changed manifest's server started");

    // Mid-session: trusting the file brings its server in, and the agent is told (tools/list_changed).
    const session = RawServe.start({
      home: dirs.home,
      cwd: dirs.ws,
      env: { SYMPOSIUM_RECOMMENDATIONS_URL: env.SYMPOSIUM_RECOMMENDATIONS_URL },
    });
    try {
      await session.initialize();
      const first = await session.request("tools/call", { name: "list_tools", arguments: {} });
      assert.match(JSON.stringify(first), /evil: untrusted/);
      assert.equal((await runMain(["trust", "--yes"], { cwd: dirs.ws, env })).code, 0);
      const deadline = Date.now() + 15_000;
      while (
        !session.notifications.some((n) => n.method === "notifications/tools/list_changed") &&
        Date.now() < deadline
      ) {
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(session.notifications.some((n) => n.method === "notifications/tools/list_changed"));
      const tools = await session.request("tools/list", {});
      assert.match(JSON.stringify(tools), /evil/);
    } finally {
      await session.close();
    }
  } finally {
    await dirs.remove();
  }
});
