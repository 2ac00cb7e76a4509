import assert from "node:assert/strict";
import { DEFAULT_MCP_CONFIG, type McpConfig } from "../../lib/plugins/config_types.ts";
import { parseManifest } from "../../lib/plugins/manifest.ts";
import type { LoadedPlugin } from "../../lib/plugins/mod.ts";
import { loadResolution, resolveServers } from "../../lib/catalog/resolve.ts";
import type { HttpServerSpec, Refusal, StdioServerSpec } from "../../lib/plugins/server_spec.ts";
import { NO_WORKSPACE, type Workspace } from "../../lib/workspace/mod.ts";
import { memoryFileSystem } from "../_fakes_foundation.ts";
import { SecretRegistry } from "../../lib/secrets/mod.ts";

const WS: Workspace = {
  root: "/ws",
  lockfile: "/ws/Cargo.lock",
  manifests: ["/ws/Cargo.toml"],
  dependencies: [
    { name: "serde", version: "1.0.204", requirement: "1", kind: "normal", member: "app" },
    { name: "tokio", version: "1.38.1", requirement: "1.38", kind: "dev", member: "app" },
  ],
  problems: [],
};

function plugin(text: string): LoadedPlugin {
  const file = `/cfg/plugins/p/SYMPOSIUM.toml`;
  const manifest = parseManifest(text, file);
  return { name: manifest.name, dir: "/cfg/plugins/p", file, manifest };
}

function resolve(
  plugins: LoadedPlugin[],
  options: { workspace?: Workspace; config?: Partial<McpConfig>; env?: Record<string, string> } = {},
) {
  return resolveServers({
    plugins,
    refused: [],
    workspace: options.workspace ?? WS,
    config: { ...DEFAULT_MCP_CONFIG, ...options.config },
    env: options.env ?? {},
    cwd: "/somewhere/else",
  });
}

const stdio = (name: string, extra = "") =>
  `[[mcp_servers]]\nname = "${name}"\ncommand = "${name}-bin"\n${extra}\n`;

Deno.test("resolveServers() builds a stdio spec with the [mcp] timeouts and the workspace root as cwd", () => {
  const { servers, refused, dormant } = resolve([plugin(`name = "p"\ndepends-on = "serde"\n${stdio("fs")}`)]);
  assert.deepEqual(refused, []);
  assert.deepEqual(dormant, []);
  assert.deepEqual(servers, [
    {
      name: "fs",
      plugin: "p",
      location: { file: "/cfg/plugins/p/SYMPOSIUM.toml", line: 3, column: 1 },
      startupTimeoutMs: 30_000,
      toolCallTimeoutMs: 60_000,
      enabledTools: undefined,
      disabledTools: undefined,
      confirmTools: undefined,
      transport: "stdio",
      command: "fs-bin",
      args: [],
      env: {},
      envOrigins: {},
      missingPassthrough: [],
      cwd: "/ws",
    } satisfies StdioServerSpec,
  ]);
});

Deno.test("resolveServers() joins a relative cwd to the workspace root and keeps an absolute one", () => {
  const { servers } = resolve([
    plugin(
      `name = "p"\ndepends-on = "*"\n${stdio("a", 'cwd = "crates/app"')}${stdio("b", 'cwd = "/opt/b"')}`,
    ),
  ]);
  assert.deepEqual(servers.map((s) => (s as StdioServerSpec).cwd), ["/ws/crates/app", "/opt/b"]);
});

Deno.test("resolveServers() runs stdio servers in cwd outside a workspace", () => {
  const { servers } = resolve([plugin(`name = "p"\ndepends-on = "*"\n${stdio("a")}`)], {
    workspace: NO_WORKSPACE,
  });
  assert.equal((servers[0] as StdioServerSpec).cwd, "/somewhere/else");
});

Deno.test("resolveServers() takes per-server timeouts and clamps the call timeout below the script deadline", () => {
  const { servers } = resolve(
    [plugin(
      `name = "p"\ndepends-on = "*"\n${stdio("a", "startup-timeout-secs = 5\ntool-call-timeout-secs = 500")}`,
    )],
    { config: { scriptTimeoutSecs: 100, toolCallTimeoutSecs: 50, serverStartupTimeoutSecs: 9 } },
  );
  assert.equal(servers[0]!.startupTimeoutMs, 5_000);
  assert.equal(servers[0]!.toolCallTimeoutMs, 99_000);
});

Deno.test("resolveServers() takes [mcp] server-startup-timeout-secs and tool-call-timeout-secs", () => {
  const { servers } = resolve([plugin(`name = "p"\ndepends-on = "*"\n${stdio("a")}`)], {
    config: { serverStartupTimeoutSecs: 7, toolCallTimeoutSecs: 11 },
  });
  assert.deepEqual([servers[0]!.startupTimeoutMs, servers[0]!.toolCallTimeoutMs], [7_000, 11_000]);
});

Deno.test("resolveServers() sorts servers by name across plugins", () => {
  const { servers } = resolve([
    plugin(`name = "p1"\ndepends-on = "*"\n${stdio("zeta")}${stdio("alpha")}`),
    plugin(`name = "p2"\ndepends-on = "*"\n${stdio("mid")}`),
  ]);
  assert.deepEqual(servers.map((s) => s.name), ["alpha", "mid", "zeta"]);
});

Deno.test("resolveServers() makes a server dormant when the plugin gate does not hold", () => {
  const { servers, dormant } = resolve([plugin(`name = "p"\ndepends-on = "axum"\n${stdio("a")}`)]);
  assert.deepEqual(servers, []);
  assert.deepEqual(dormant, [{
    server: "a",
    plugin: "p",
    reason: "plugin needs one of: axum (not a dependency here)",
  }]);
});

Deno.test("resolveServers() needs both the plugin and the server gate to hold", () => {
  const { servers, dormant } = resolve([
    plugin(
      `name = "p"\ndepends-on = "serde"\n${stdio("yes", 'depends-on = "tokio>=1.38"')}${
        stdio("no", 'depends-on = "tokio>=2"')
      }`,
    ),
  ]);
  assert.deepEqual(servers.map((s) => s.name), ["yes"]);
  assert.deepEqual(dormant, [{
    server: "no",
    plugin: "p",
    reason: "needs one of: tokio>=2 (workspace has tokio 1.38.1)",
  }]);
});

Deno.test("resolveServers() applies * servers outside a workspace and no others", () => {
  const { servers, dormant } = resolve(
    [plugin(`name = "p"\n${stdio("any", 'depends-on = "*"')}${stdio("serde-only", 'depends-on = "serde"')}`)],
    { workspace: NO_WORKSPACE },
  );
  assert.deepEqual(servers.map((s) => s.name), ["any"]);
  assert.deepEqual(dormant.map((d) => d.reason), ["needs one of: serde (not in a Cargo workspace)"]);
});

Deno.test("resolveServers() refuses the reserved names", () => {
  const { servers, refused } = resolve([
    plugin(`name = "p"\ndepends-on = "*"\n${stdio("execute")}${stdio("list-tools")}${stdio("ok")}`),
  ]);
  assert.deepEqual(servers.map((s) => s.name), ["ok"]);
  assert.deepEqual(refused.map((r) => [r.server, r.code, r.reason]), [
    ["execute", "SERVER_RESERVED_NAME", 'server name "execute" is reserved by the meta-server'],
    ["list-tools", "SERVER_RESERVED_NAME", 'server name "list-tools" is reserved by the meta-server'],
  ]);
});

Deno.test("resolveServers() refuses the same name in a second plugin, naming both, and keeps the first", () => {
  const { servers, refused } = resolve([
    plugin(`name = "alpha"\ndepends-on = "*"\n${stdio("github")}`),
    plugin(`name = "beta"\ndepends-on = "*"\n${stdio("github")}`),
  ]);
  assert.deepEqual(servers.map((s) => [s.name, s.plugin]), [["github", "alpha"]]);
  assert.equal(refused.length, 1);
  assert.deepEqual([refused[0]!.code, refused[0]!.plugin, refused[0]!.reason], [
    "SERVER_DUPLICATE",
    "beta",
    'server "github" is declared by both plugin "alpha" and plugin "beta"',
  ]);
});

Deno.test("resolveServers() does not count a dormant server as a duplicate", () => {
  const { servers, refused } = resolve([
    plugin(`name = "alpha"\ndepends-on = "axum"\n${stdio("github")}`),
    plugin(`name = "beta"\ndepends-on = "*"\n${stdio("github")}`),
  ]);
  assert.deepEqual(servers.map((s) => s.plugin), ["beta"]);
  assert.deepEqual(refused, []);
});

Deno.test("resolveServers() refuses two names that become the same script global", () => {
  const { servers, refused } = resolve([
    plugin(`name = "alpha"\ndepends-on = "*"\n${stdio("my-server")}`),
    plugin(`name = "beta"\ndepends-on = "*"\n${stdio("my_server")}`),
  ]);
  assert.deepEqual(servers.map((s) => s.name), ["my-server"]);
  assert.equal(refused[0]?.code, "SERVER_NAME_CLASH");
  assert.match(refused[0]!.reason, /"my_server" \(plugin "beta"\) and server "my-server" \(plugin "alpha"\)/);
});

const remote = (extra: string) => `name = "r"\ndepends-on = "*"\n[[mcp_servers]]\nname = "gh"\n${extra}\n`;

Deno.test("resolveServers() expands variables in the URL, header values and client secret", () => {
  const { servers } = resolve([
    plugin(remote(
      'url = "https://${HOST:-api.example.com}/mcp"\nheaders = { Authorization = "Bearer ${TOKEN}" }\nclient-id = "id"\nclient-secret = "${SECRET}"\nscopes = ["a"]',
    )),
  ], { env: { TOKEN: "t0k", SECRET: "s3c" } });
  const spec = servers[0] as HttpServerSpec;
  assert.equal(spec.transport, "http");
  assert.equal(spec.url, "https://api.example.com/mcp");
  assert.deepEqual(spec.headers, { Authorization: "Bearer t0k" });
  assert.deepEqual([spec.clientId, spec.clientSecret, spec.scopes], ["id", "s3c", ["a"]]);
});

Deno.test("resolveServers() registers every value a ${VAR} reference reads, not defaults or base variables", () => {
  const secrets = new SecretRegistry();
  resolveServers({
    plugins: [
      plugin(remote(
        'url = "https://${HOST:-api.example.com}/mcp/${PATH_KEY}?api_key=${QUERY_KEY}"\nheaders = { X-Token = "${HDR}", Accept = "${HOME}/x" }',
      )),
      plugin(
        `name = "s"\ndepends-on = "*"\n${
          stdio("local", 'env = { TOKEN = "${ENV_SECRET}", DIR = "${HOME}/data" }')
        }`,
      ),
    ],
    refused: [],
    workspace: WS,
    config: DEFAULT_MCP_CONFIG,
    env: {
      PATH_KEY: "path-secret-1",
      QUERY_KEY: "query-secret-2",
      HDR: "header-secret-3",
      ENV_SECRET: "env-secret-4",
      HOME: "/home/someone",
    },
    cwd: "/somewhere/else",
    secrets,
  });
  assert.equal(
    secrets.mask("path-secret-1 query-secret-2 header-secret-3 env-secret-4"),
    "*** *** *** ***",
  );
  assert.equal(secrets.mask("api.example.com /home/someone"), "api.example.com /home/someone");
});

Deno.test("resolveServers() registers literal credential header values and client secrets", () => {
  const secrets = new SecretRegistry();
  resolveServers({
    plugins: [plugin(remote(
      'url = "https://api.example.com/mcp"\nheaders = { Authorization = "Bearer literal-token-5", Accept = "application/json" }\nclient-id = "id"\nclient-secret = "literal-secret-6"',
    ))],
    refused: [],
    workspace: WS,
    config: DEFAULT_MCP_CONFIG,
    env: {},
    cwd: "/somewhere/else",
    secrets,
  });
  assert.equal(secrets.mask("literal-token-5 literal-secret-6 application/json"), "*** *** application/json");
});

Deno.test("resolveServers() gives a stdio server the base environment plus its expanded manifest env, nothing else", () => {
  const { servers, refused } = resolve(
    [plugin(
      `name = "p"\ndepends-on = "*"\n${
        stdio("a", 'env = { API = "${A_KEY}", MODE = "${MODE:-fast}", LIT = "x" }')
      }`,
    )],
    {
      env: {
        PATH: "/usr/bin",
        HOME: "/home/me",
        LC_ALL: "C",
        GITHUB_TOKEN: "ghp_unrelated",
        A_KEY: "key-1234567",
      },
    },
  );
  assert.deepEqual(refused, []);
  const spec = servers[0] as StdioServerSpec;
  assert.deepEqual(spec.env, {
    PATH: "/usr/bin",
    HOME: "/home/me",
    LC_ALL: "C",
    API: "key-1234567",
    MODE: "fast",
    LIT: "x",
  });
  assert.deepEqual(spec.envOrigins, {
    PATH: "base",
    HOME: "base",
    LC_ALL: "base",
    API: "manifest",
    MODE: "manifest",
    LIT: "manifest",
  });
});

Deno.test("resolveServers() passes env-passthrough names and, with inherit-env, the whole environment", () => {
  const secrets = new SecretRegistry();
  const env = { PATH: "/usr/bin", GITHUB_TOKEN: "ghp_passthrough_1234", AWS_KEY: "aws-unrelated-5678" };
  const { servers } = resolveServers({
    plugins: [plugin(
      `name = "p"\ndepends-on = "*"\n${stdio("gh", 'env-passthrough = ["GITHUB_TOKEN", "MISSING"]')}${
        stdio("old", "inherit-env = true")
      }`,
    )],
    refused: [],
    workspace: WS,
    config: DEFAULT_MCP_CONFIG,
    env,
    cwd: "/somewhere/else",
    secrets,
  });
  const [gh, old] = servers as StdioServerSpec[];
  assert.deepEqual(gh!.env, { PATH: "/usr/bin", GITHUB_TOKEN: "ghp_passthrough_1234" });
  assert.equal(gh!.envOrigins?.GITHUB_TOKEN, "passthrough");
  assert.deepEqual(gh!.missingPassthrough, ["MISSING"]);
  assert.deepEqual(old!.env, env);
  assert.equal(old!.envOrigins?.AWS_KEY, "inherited");
  assert.equal(secrets.mask("ghp_passthrough_1234"), "***", "a passed-through value is a secret");
});

Deno.test("resolveServers() refuses a stdio server whose env names an unset variable", () => {
  const { servers, refused } = resolve([
    plugin(`name = "p"\ndepends-on = "*"\n${stdio("a", 'env = { T = "${NOPE}" }')}`),
  ]);
  assert.deepEqual(servers, []);
  assert.equal(refused[0]?.code, "ENV_VAR_UNSET");
  assert.equal(refused[0]?.reason, 'references environment variable "NOPE", which is not set');
});

Deno.test("resolveServers() refuses a remote server that names an unset variable", () => {
  const { servers, refused } = resolve([
    plugin(
      remote('url = "https://api.example.com/mcp"\nheaders = { Authorization = "Bearer ${GITHUB_TOKEN}" }'),
    ),
  ]);
  assert.deepEqual(servers, []);
  assert.deepEqual(refused, [
    {
      server: "gh",
      plugin: "r",
      code: "ENV_VAR_UNSET",
      reason: 'references environment variable "GITHUB_TOKEN", which is not set',
      hint:
        "set GITHUB_TOKEN in the environment the agent starts cargo-agents from, or write ${GITHUB_TOKEN:-default}",
      location: { file: "/cfg/plugins/p/SYMPOSIUM.toml", line: 3, column: 1 },
    } satisfies Refusal,
  ]);
});

Deno.test("resolveServers() refuses the SSE transport with a pointer to streamable HTTP", () => {
  const { refused } = resolve([plugin(remote('url = "https://x.example/sse"\ntransport = "sse"'))]);
  assert.equal(refused[0]?.code, "SSE_DEPRECATED");
  assert.equal(
    refused[0]?.reason,
    "the SSE transport is deprecated; declare a streamable HTTP server with `url` instead",
  );
});

Deno.test("resolveServers() refuses a URL that is not http(s) after expansion", () => {
  const { refused } = resolve([plugin(remote('url = "${SCHEME:-ftp}://x.example/mcp"'))]);
  assert.equal(refused[0]?.code, "SERVER_BAD_URL");
});

Deno.test("resolveServers() passes plugin refusals through", () => {
  const bad: Refusal = { server: "b", plugin: "b", code: "PLUGIN_INVALID", reason: "broken" };
  const resolution = resolveServers({
    plugins: [],
    refused: [bad],
    workspace: WS,
    config: DEFAULT_MCP_CONFIG,
    env: {},
    cwd: "/",
  });
  assert.deepEqual(resolution.refused, [bad]);
});

Deno.test("loadResolution() reads config, workspace and plugins from the files", async () => {
  const fs = memoryFileSystem({
    "/home/me/.symposium/config.toml": "[mcp]\nserver-startup-timeout-secs = 12\n",
    "/home/me/.symposium/plugins/p/SYMPOSIUM.toml": `name = "p"\ndepends-on = "serde"\n${stdio("fs")}`,
    "/code/app/Cargo.toml": '[package]\nname = "app"\n[dependencies]\nserde = "1"\n',
  });
  const loaded = await loadResolution({ cwd: "/code/app/src", env: {}, homeDir: "/home/me", fs });
  assert.equal(loaded.configDir, "/home/me/.symposium");
  assert.equal(loaded.configError, null);
  assert.equal(loaded.config.serverStartupTimeoutSecs, 12);
  assert.equal(loaded.workspace.root, "/code/app");
  assert.deepEqual(loaded.plugins.map((p) => p.name), ["p"]);
  assert.deepEqual(loaded.resolution.servers.map((s) => [s.name, s.startupTimeoutMs]), [["fs", 12_000]]);
});

Deno.test("loadResolution() reports a broken config.toml and uses the defaults", async () => {
  const fs = memoryFileSystem({
    "/cfg/config.toml": "[mcp]\nscript-timeout = 1\n",
    "/cfg/plugins/p/SYMPOSIUM.toml": `name = "p"\ndepends-on = "*"\n${stdio("fs")}`,
  });
  const loaded = await loadResolution({ cwd: "/", env: { SYMPOSIUM_HOME: "/cfg" }, homeDir: "/home/me", fs });
  assert.equal(loaded.configError?.code, "CONFIG_UNKNOWN_KEY");
  assert.deepEqual(loaded.config, DEFAULT_MCP_CONFIG);
  assert.deepEqual(loaded.resolution.servers.map((s) => s.name), ["fs"]);
});

Deno.test("loadResolution() reports a configuration directory or plugins path of the wrong type and uses the defaults", async () => {
  const dir = await Deno.makeTempDir();
  try {
    Deno.writeTextFileSync(`${dir}/file`, "");
    const asFile = await loadResolution({ cwd: dir, env: { SYMPOSIUM_HOME: `${dir}/file` }, homeDir: dir });
    assert.equal(asFile.configError?.code, "CONFIG_DIR_NOT_A_FOLDER");
    assert.deepEqual(asFile.config, DEFAULT_MCP_CONFIG);
    assert.deepEqual(asFile.resolution.refused, []); // configError already says it all
    Deno.mkdirSync(`${dir}/cfg/config.toml`, { recursive: true });
    Deno.writeTextFileSync(`${dir}/cfg/plugins`, "");
    const wrong = await loadResolution({ cwd: dir, env: { SYMPOSIUM_HOME: `${dir}/cfg` }, homeDir: dir });
    assert.equal(wrong.configError?.code, "CONFIG_UNREADABLE");
    assert.deepEqual(wrong.resolution.refused.map((r) => [r.code, r.reason]), [[
      "PLUGINS_DIR_INVALID",
      `Cannot load plugins from ${dir}/cfg/plugins: it is a file, not a folder`,
    ]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
