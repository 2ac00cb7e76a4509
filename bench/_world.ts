/**
 * A throwaway world for the demo and the benchmarks: a `SYMPOSIUM_HOME` whose example plugin runs
 * `@modelcontextprotocol/server-filesystem` on a generated folder of files (plus memory and
 * everything for the definition-size comparison), a Cargo workspace that depends on serde, and an
 * SDK client connected to `cargo-agents mcp-serve` that counts the bytes it receives.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/client";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { DENO_RUN_FLAGS, sourceRunArgs } from "../lib/self_command.ts";

/** Repository root, with a trailing slash. */
export const REPO = new URL("../", import.meta.url).pathname;
const NM = `${REPO}node_modules/@modelcontextprotocol`;

/** Paths of the world; `remove()` deletes it. */
export interface World {
  root: string;
  home: string;
  ws: string;
  data: string;
  /** Names of the generated files that mention TODO. */
  todoFiles: string[];
  remove(): Promise<void>;
}

/** Path of an npm server's entry point (installed by `deno install` from the pinned imports). */
export function npmServer(pkg: "server-filesystem" | "server-memory" | "server-everything"): string {
  return `${NM}/${pkg}/dist/index.js`;
}

/**
 * Creates the world with `fileCount` files of about `fileBytes` bytes, every 7th mentioning TODO.
 *
 * @throws {Error} when the npm servers are not installed (run `deno install`).
 */
export async function makeWorld(fileCount = 200, fileBytes = 2_000): Promise<World> {
  try {
    await Deno.stat(npmServer("server-filesystem"));
  } catch {
    throw new Error("the npm MCP servers are not installed; run `deno install` in the repository first");
  }
  const root = await Deno.makeTempDir({ prefix: "cargo-agents-demo-" });
  const home = `${root}/home`;
  const ws = `${root}/workspace`;
  const data = `${root}/data`;
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.mkdir(data, { recursive: true });
  await Deno.writeTextFile(
    `${ws}/Cargo.toml`,
    `[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nserde = "1"\n`,
  );
  await Deno.writeTextFile(
    `${ws}/Cargo.lock`,
    `version = 3\n\n[[package]]\nname = "demo"\nversion = "0.1.0"\n\n[[package]]\nname = "serde"\nversion = "1.0.219"\n`,
  );
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  const todoFiles: string[] = [];
  const filler = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(
    Math.ceil(fileBytes / 57),
  );
  for (let i = 0; i < fileCount; i++) {
    const name = `file_${String(i).padStart(3, "0")}.md`;
    const todo = i % 7 === 3;
    if (todo) todoFiles.push(name);
    const body = filler.slice(0, fileBytes);
    await Deno.writeTextFile(
      `${data}/${name}`,
      todo ? `${body.slice(0, 500)}\nTODO: revisit\n${body.slice(500)}` : body,
    );
  }
  // The seed's script makes one call per file; allow more than the default 100 per execute.
  await Deno.mkdir(home, { recursive: true });
  await Deno.writeTextFile(
    `${home}/config.toml`,
    `[mcp]\nmax-tool-calls = ${Math.max(2_000, fileCount * 2)}\n`,
  );
  const plugin = async (name: string, body: string) => {
    await Deno.mkdir(`${home}/plugins/${name}`, { recursive: true });
    await Deno.writeTextFile(
      `${home}/plugins/${name}/SYMPOSIUM.toml`,
      `name = "${name}"\ndepends-on = "*"\n\n${body}`,
    );
  };
  await plugin(
    "fs-tools",
    `[[mcp_servers]]\nname = "filesystem"\ndepends-on = ["serde"]\ncommand = "node"\nargs = ${
      JSON.stringify([npmServer("server-filesystem"), data])
    }\n`,
  );
  await plugin(
    "memory",
    `[[mcp_servers]]\nname = "memory"\ncommand = "node"\nargs = ${
      JSON.stringify([npmServer("server-memory")])
    }\n` +
      `env = { MEMORY_FILE_PATH = "${root}/memory.jsonl" }\n`,
  );
  await plugin(
    "everything",
    `[[mcp_servers]]\nname = "everything"\ncommand = "node"\nargs = ${
      JSON.stringify([npmServer("server-everything"), "stdio"])
    }\n`,
  );
  return { root, home, ws, data, todoFiles, remove: () => Deno.remove(root, { recursive: true }) };
}

/**
 * A transport wrapper that counts the bytes of every message received (as serialized JSON) and the
 * `notifications/progress` among them (to tell whether every report sent reached the client's handler).
 */
export class CountingTransport implements Transport {
  bytesReceived = 0;
  /** `notifications/progress` received, by progress token. */
  readonly progressReceived = new Map<string | number, number>();
  /** The progress token of the last request sent with one. */
  lastProgressToken: string | number | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;
  constructor(readonly inner: Transport) {
    inner.onmessage = (m) => {
      this.bytesReceived += new TextEncoder().encode(JSON.stringify(m)).length + 1;
      if ("method" in m && m.method === "notifications/progress") {
        const token = (m.params as { progressToken: string | number }).progressToken;
        this.progressReceived.set(token, (this.progressReceived.get(token) ?? 0) + 1);
      }
      this.onmessage?.(m);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e) => this.onerror?.(e);
  }
  start(): Promise<void> {
    return this.inner.start();
  }
  send(message: JSONRPCMessage): Promise<void> {
    const token = "params" in message
      ? (message.params as { _meta?: { progressToken?: string | number } } | undefined)?._meta?.progressToken
      : undefined;
    if (token !== undefined) this.lastProgressToken = token;
    return this.inner.send(message);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/**
 * An SDK client connected to `cargo-agents mcp-serve` running from source in the world's workspace.
 *
 * @param checkout The checkout whose `main.ts` serves, with a trailing `/`. @default this one (`REPO`)
 */
export async function connectMetaServer(
  world: World,
  checkout: string = REPO,
): Promise<{ client: Client; counter: CountingTransport; pid: number }> {
  const stdio = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...sourceRunArgs(checkout), "mcp-serve"],
    env: { ...Deno.env.toObject(), SYMPOSIUM_HOME: world.home },
    cwd: world.ws,
    stderr: "ignore",
  });
  const counter = new CountingTransport(stdio);
  // `BENCH_ERA=modern`: the agent speaks MCP 2026-07-28 (`server/discover`, `_meta` on every request).
  const modern = Deno.env.get("BENCH_ERA") === "modern";
  const client = new Client(
    { name: "demo-agent", version: "1.0.0" },
    modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  await client.connect(counter);
  return { client, counter, pid: stdio.pid ?? 0 };
}

/**
 * An SDK client connected to `bench/_noop_server.ts` (one tool that does nothing, served by the same SDK
 * over stdio and run with the same Deno flags as `mcp-serve`): the fixed-cost floor of the benchmarks.
 */
export function connectNoop(): Promise<{ client: Client; pid: number }> {
  return connectBenchServer("bench/_noop_server.ts");
}

/**
 * An SDK client connected to a Deno MCP server of the benchmarks, run over stdio with the same Deno flags as
 * `mcp-serve` (`DENO_RUN_FLAGS`) and this checkout's `deno.json`.
 *
 * @param script Path of the server's module from the repository root, e.g. `"bench/_noop_server.ts"`.
 * @param args Arguments of the server after its module. Default: none.
 */
export async function connectBenchServer(
  script: string,
  args: readonly string[] = [],
): Promise<{ client: Client; pid: number }> {
  const stdio = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", ...DENO_RUN_FLAGS, "--config", `${REPO}deno.json`, `${REPO}${script}`, ...args],
    env: Deno.env.toObject(),
    stderr: "ignore",
  });
  const client = new Client({ name: "bench-agent", version: "1.0.0" });
  await client.connect(stdio);
  return { client, pid: stdio.pid ?? 0 };
}

/** An SDK client connected straight to one npm server (what an agent would do without the meta-server). */
export async function connectDirect(
  pkg: "server-filesystem" | "server-memory" | "server-everything",
  args: string[],
  env: Record<string, string> = {},
): Promise<{ client: Client; counter: CountingTransport; pid: number }> {
  const stdio = new StdioClientTransport({
    command: "node",
    args: [npmServer(pkg), ...args],
    env: { ...Deno.env.toObject(), ...env },
    stderr: "ignore",
  });
  const counter = new CountingTransport(stdio);
  const client = new Client({ name: "direct-agent", version: "1.0.0" });
  await client.connect(counter);
  return { client, counter, pid: stdio.pid ?? 0 };
}

/** The seed's script: which files under `dir` mention TODO. */
export function todoScript(dir: string): string {
  return `
const listing = await filesystem.list_directory({ path: ${JSON.stringify(dir)} });
const names = listing.content
  .split("\\n")
  .filter((line) => line.startsWith("[FILE] "))
  .map((line) => line.slice("[FILE] ".length));

const hits = [];
for (const name of names) {
  const file = await filesystem.read_text_file({ path: \`${dir}/\${name}\` });
  if (file.content.includes("TODO")) hits.push(name);
}
return hits;`;
}

/**
 * Bytes an agent would receive doing the TODO task one tool call at a time against the
 * filesystem server directly: the listing plus every file's contents.
 */
export async function oneCallAtATimeBytes(world: World): Promise<number> {
  const { client, counter } = await connectDirect("server-filesystem", [world.data]);
  const before = counter.bytesReceived;
  const listing = await client.callTool({ name: "list_directory", arguments: { path: world.data } });
  const text = (listing.content as { type: string; text: string }[])[0]!.text;
  for (const line of text.split("\n").filter((l) => l.startsWith("[FILE] "))) {
    await client.callTool({ name: "read_text_file", arguments: { path: `${world.data}/${line.slice(7)}` } });
  }
  const bytes = counter.bytesReceived - before;
  await client.close();
  return bytes;
}
