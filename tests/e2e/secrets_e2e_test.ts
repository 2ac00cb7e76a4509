/**
 * End to end for secrets: the real `main.ts` processes (`mcp-serve` under a real SDK
 * client, `mcp tools`, `mcp exec`, `status`) with secret values in a header, a URL query and path,
 * a stdio server's manifest `env`, a passed-through variable and a backing server's stderr; every
 * output, MCP result, log and cache file is then searched for the values. The stdio servers write
 * the environment they received to files outside the config dir, where it is checked.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { startHttpFixture } from "../../testdata/servers/http_server.ts";
import { FIXTURE, REPO } from "../_fakes_backends.ts";
import { cargoLock, cargoToml } from "../_fakes_meta.ts";
import { runMain } from "../_fakes_foundation.ts";
import { sourceRunArgs } from "../../lib/self_command.ts";

const SECRETS = {
  E2E_HEADER_KEY: "hdr-Secret-4f1e2d",
  E2E_QUERY_KEY: "qry-Secret-7a9b3c",
  E2E_PATH_KEY: "pth-Secret-5d6e7f",
  E2E_BEARER: "brr-Secret-1a2b3c",
  E2E_ENV_SECRET: "env-Secret-9c8b7a",
  E2E_PASS_TOKEN: "pass-Secret-3e4f5a",
};
/** In the meta-server's environment, named by no manifest: only `inherit-env` may pass it on. */
const UNRELATED = { E2E_UNRELATED: "unrelated-Secret-6b5a4c" };
/**
 * A credential no one registered (it reaches the `inherit-env` server only, which prints
 * `TOKEN=<it>` on stderr): only its shape gives it away.
 */
const SHAPED = "abc123xyzShaped";
const ALL_VALUES = [...Object.values(SECRETS), ...Object.values(UNRELATED), SHAPED];

function fixtureEntry(name: string, flags: string[], extra: string): string {
  const args = ["run", "-A", "--quiet", "--config", `${REPO}deno.json`, FIXTURE, `--name=${name}`, ...flags];
  return `[[mcp_servers]]\nname = "${name}"\ncommand = ${JSON.stringify(Deno.execPath())}\nargs = ${
    JSON.stringify(args)
  }\n${extra}\n\n`;
}

async function filesUnder(dir: string): Promise<{ path: string; isDir: boolean; mode: number }[]> {
  const out: { path: string; isDir: boolean; mode: number }[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    const info = await Deno.lstat(path);
    out.push({ path, isDir: info.isDirectory, mode: info.mode! & 0o777 });
    if (info.isDirectory) out.push(...await filesUnder(path));
  }
  return out;
}

function textOf(result: unknown): string {
  return JSON.stringify(result);
}

Deno.test("no secret value reaches any output, MCP result or file under the config dir", async () => {
  const root = await Deno.makeTempDir({ prefix: "symposium-e2e-secrets-" });
  const home = `${root}/home`;
  const ws = `${root}/ws`;
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.writeTextFile(`${ws}/Cargo.toml`, cargoToml({ serde: "1" }));
  await Deno.writeTextFile(`${ws}/Cargo.lock`, cargoLock({ serde: "1.0.219" }));
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  const remote = startHttpFixture({ requireHeader: { name: "x-api-key", value: SECRETS.E2E_HEADER_KEY } });
  const locked = startHttpFixture({ unauthorized: { status: 401, challenge: 'Bearer realm="fixture"' } });
  await Deno.mkdir(`${home}/plugins/secrets`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/plugins/secrets/SYMPOSIUM.toml`,
    `name = "secrets"\ndepends-on = "*"\n\n` +
      `[[mcp_servers]]\nname = "remote"\nurl = "${remote.url}?api_key=\${E2E_QUERY_KEY}"\n` +
      `headers = { X-Api-Key = "\${E2E_HEADER_KEY}" }\n\n` +
      `[[mcp_servers]]\nname = "pathy"\nurl = "http://127.0.0.1:${remote.port}/mcp/\${E2E_PATH_KEY}"\n\n` +
      `[[mcp_servers]]\nname = "locked"\nurl = "${locked.url}"\n` +
      `headers = { Authorization = "Bearer \${E2E_BEARER}" }\n\n` +
      fixtureEntry(
        "envy",
        [`--env-file=${root}/envy.json`],
        'env = { API_TOKEN = "${E2E_ENV_SECRET}", MODE = "${E2E_MODE:-fast}" }',
      ) +
      fixtureEntry("passer", [`--env-file=${root}/passer.json`], 'env-passthrough = ["E2E_PASS_TOKEN"]') +
      fixtureEntry(
        "inheritor",
        [`--env-file=${root}/inheritor.json`, "--stderr-env=TOKEN"],
        "inherit-env = true",
      ) +
      fixtureEntry(
        "leaky",
        [
          "--stderr-env=API_TOKEN",
          "--fail-starts=1000",
          `--counter-file=${root}/leaky.count`,
        ],
        'env = { API_TOKEN = "${E2E_ENV_SECRET}" }',
      ),
  );
  const env = { SYMPOSIUM_HOME: home, ...SECRETS, ...UNRELATED, TOKEN: SHAPED };
  const outputs: string[] = [];
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...sourceRunArgs(REPO), "mcp-serve"],
    env: { ...Deno.env.toObject(), ...env },
    cwd: ws,
    stderr: "pipe",
  });
  const serveStderr: string[] = [];
  const stderr = transport.stderr as unknown as { on(event: "data", fn: (chunk: Uint8Array) => void): void };
  stderr.on("data", (chunk) => serveStderr.push(new TextDecoder().decode(chunk)));
  const client = new Client({ name: "e2e-secrets-agent", version: "1.0.0" });
  try {
    await client.connect(transport);
    const call = async (name: string, args: Record<string, unknown>) => {
      const text = textOf(await client.callTool({ name, arguments: args }));
      outputs.push(text);
      return text;
    };
    const run = (script: string) => call("execute", { script });

    outputs.push(textOf(await client.listTools()));
    assert.match(
      await run(`return await remote.echo({ text: "echo ${SECRETS.E2E_HEADER_KEY}" })`),
      /echo \*\*\*/,
    );
    assert.match(
      await run(`try { await pathy.echo({ text: "x" }) } catch (e) { return e.message }`),
      /pathy failed to start: http:\/\/127\.0\.0\.1:\d+\/mcp\/\$\{E2E_PATH_KEY\} answered HTTP 404/,
    );
    assert.match(
      await run(`try { await locked.echo({ text: "x" }) } catch (e) { return e.message }`),
      /locked requires authorization \(HTTP 401\)/,
    );
    assert.match(
      await run(`try { await leaky.echo({ message: "x" }) } catch (e) { return e.message }`),
      /leaky failed to start: exited with code 3 before answering initialize; stderr: .*API_TOKEN=\*\*\*/s,
    );
    assert.match(await run(`return (await envy.env()).env.API_TOKEN`), /\*\*\*/);
    await run(
      `try { await envy.say_stderr({ text: "token=${SHAPED} ${SECRETS.E2E_ENV_SECRET}" }) } catch (e) { return e.message }`,
    );
    await run(`return (await passer.env()).env.E2E_PASS_TOKEN`);
    await run(`return await inheritor.pid()`);
    await call("list_tools", {});
    await call("list_tools", { servers: ["remote", "pathy", "locked", "leaky"] });
    await call("list_tools", { servers: ["remote"], detail: "full" });
  } finally {
    await client.close();
  }
  outputs.push(serveStderr.join(""));
  assert.ok(serveStderr.join("").length > 0, "mcp-serve wrote to stderr");

  await Deno.writeTextFile(
    `${root}/script.js`,
    `try { await pathy.echo({ text: "x" }) } catch (e) { return e.message }`,
  );
  for (
    const args of [
      ["mcp", "tools"],
      ["mcp", "tools", "pathy", "leaky", "locked"],
      ["mcp", "exec", `${root}/script.js`],
      ["status"],
      ["status", "--json"],
    ]
  ) {
    const out = await runMain(args, { cwd: ws, env });
    outputs.push(out.stdout, out.stderr);
  }
  await remote.close();
  await locked.close();

  for (const [i, text] of outputs.entries()) {
    for (const value of ALL_VALUES) assert.ok(!text.includes(value), `output ${i} holds ${value}:\n${text}`);
  }
  const files = await filesUnder(home);
  assert.ok(files.some((f) => f.path.includes("/logs/") && !f.isDir), "a session log was written");
  assert.ok(
    files.some((f) => f.path.includes("/cache/tools/") && !f.isDir),
    "a tool cache entry was written",
  );
  for (const file of files) {
    if (file.isDir) {
      if (/\/(logs|cache|cache\/tools)$/.test(file.path)) assert.equal(file.mode, 0o700, file.path);
      continue;
    }
    const text = await Deno.readTextFile(file.path);
    for (const value of ALL_VALUES) assert.ok(!text.includes(value), `${file.path} holds ${value}`);
    if (/\/(logs|cache)\//.test(file.path)) assert.equal(file.mode, 0o600, file.path);
  }

  // What each stdio server received (written by the server itself, outside the config dir).
  const received = async (name: string) => JSON.parse(await Deno.readTextFile(`${root}/${name}.json`));
  const envy = await received("envy");
  assert.equal(envy.API_TOKEN, SECRETS.E2E_ENV_SECRET, "manifest env, ${VAR} expanded");
  assert.equal(envy.MODE, "fast", "${VAR:-default}");
  assert.equal(envy.PATH, Deno.env.get("PATH"));
  assert.equal(envy.HOME, Deno.env.get("HOME"));
  for (const name of ["E2E_UNRELATED", "E2E_PASS_TOKEN", "E2E_HEADER_KEY", "SYMPOSIUM_HOME"]) {
    assert.equal(envy[name], undefined, `${name} reached envy`);
  }
  const passer = await received("passer");
  assert.equal(passer.E2E_PASS_TOKEN, SECRETS.E2E_PASS_TOKEN, "env-passthrough");
  assert.equal(passer.E2E_UNRELATED, undefined);
  const inheritor = await received("inheritor");
  assert.equal(inheritor.E2E_UNRELATED, UNRELATED.E2E_UNRELATED, "inherit-env");
  const log = (await Promise.all(
    files.filter((f) => f.path.includes("/logs/")).map((f) => Deno.readTextFile(f.path).catch(() => "")),
  )).join("");
  assert.match(log, /auth failed with TOKEN=\*\*\*/, "the shaped credential was printed, and masked");
  await Deno.remove(root, { recursive: true });
});
