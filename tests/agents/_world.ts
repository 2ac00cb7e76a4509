/**
 * One agent's world for `deno task test:agents`: a fake HOME, a config dir of its own holding the
 * README's worked plugin (the real `@modelcontextprotocol/server-filesystem` on a folder of files,
 * two of which mention TODO), a Cargo workspace that depends on serde, and helpers that run `cargo-agents sync` and the
 * agent's own binary there with a clean environment and a time bound.
 *
 * @module
 */
import { sourceRunArgs } from "../../lib/self_command.ts";
import type { CommandOutput } from "./_agents.ts";

/** Repository root, with a trailing slash. */
export const REPO = new URL("../../", import.meta.url).pathname;

/** Paths of one world; `remove()` deletes it. */
export interface AgentWorld {
  root: string;
  home: string;
  /**
   * The meta-server's config dir, not the default one: `sync` runs with `SYMPOSIUM_HOME` set to it
   * and the agents without, so the entry itself must carry it (as for a user with a custom dir).
   */
  configDir: string;
  ws: string;
  data: string;
  /** Names of the files that mention TODO, sorted; each contains {@link AgentWorld.token}. */
  todoFiles: string[];
  /** A random string found only in the TODO files' names, to count how often the agent shows them. */
  token: string;
  remove(): Promise<void>;
}

/** Default bound of one command, in ms. */
export const COMMAND_TIMEOUT_MS = 120_000;

/** The README's worked-plugin script (the `js` block that lists files mentioning TODO), for `dataDir`. */
export async function readmeTodoScript(dataDir: string): Promise<string> {
  const readme = await Deno.readTextFile(`${REPO}README.md`);
  const block = /```js\n(const listing = await filesystem\.list_directory[\s\S]*?)```/.exec(readme)?.[1];
  if (block === undefined || !block.includes("/tmp/data")) {
    throw new Error(
      "Cannot find the worked plugin's TODO script (a ```js block using /tmp/data) in README.md",
    );
  }
  return block.replaceAll("/tmp/data", dataDir);
}

/** The directory Deno caches modules in (`deno info --json`), shared into every fake HOME. */
export async function denoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  })
    .output();
  const dir = (JSON.parse(new TextDecoder().decode(out.stdout)) as { denoDir?: string }).denoDir;
  if (!dir) throw new Error("Cannot find DENO_DIR: `deno info --json` gave none");
  return dir;
}

/**
 * Creates a world under `parent` (never under /tmp: Codex refuses that).
 *
 * @param options.denoDir Linked as `<home>/.cache/deno` so the meta-server starts from a warm cache
 *   (agents such as Codex pass MCP servers only HOME and PATH, not `DENO_DIR`).
 */
export async function makeAgentWorld(
  parent: string,
  prefix: string,
  options: { denoDir: string },
): Promise<AgentWorld> {
  await Deno.mkdir(parent, { recursive: true });
  await removeOldWorlds(parent);
  const root = await Deno.makeTempDir({ dir: parent, prefix: `${prefix}-` });
  const home = `${root}/home`;
  const ws = `${root}/workspace`;
  const data = `${root}/data`;
  const configDir = `${root}/symposium`;
  const token = crypto.randomUUID().slice(0, 8);
  await Deno.mkdir(`${ws}/src`, { recursive: true });
  await Deno.mkdir(data, { recursive: true });
  await Deno.mkdir(`${home}/.cache`, { recursive: true });
  await Deno.mkdir(`${root}/tmp`, { recursive: true });
  await Deno.symlink(options.denoDir, `${home}/.cache/deno`);
  await Deno.writeTextFile(
    `${ws}/Cargo.toml`,
    `[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nserde = "1"\n`,
  );
  await Deno.writeTextFile(
    `${ws}/Cargo.lock`,
    `version = 3\n\n[[package]]\nname = "demo"\nversion = "0.1.0"\n\n[[package]]\nname = "serde"\nversion = "1.0.219"\n`,
  );
  await Deno.writeTextFile(`${ws}/src/lib.rs`, "");
  const todoFiles = [`fix-${token}.md`, `plan-${token}.md`];
  for (const name of todoFiles) await Deno.writeTextFile(`${data}/${name}`, `Notes.\nTODO: ${name}\n`);
  for (let i = 0; i < 6; i++) await Deno.writeTextFile(`${data}/done-${i}.md`, "Nothing left to do.\n");
  // The README's worked plugin, with the installed server instead of `npx -y` (no download).
  const server = `${REPO}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;
  await Deno.stat(server).catch(() => {
    throw new Error(`Cannot find ${server}: run \`deno install\` in the repository first`);
  });
  await Deno.mkdir(`${configDir}/plugins/fs-tools`, { recursive: true });
  await Deno.writeTextFile(
    `${configDir}/plugins/fs-tools/SYMPOSIUM.toml`,
    `name = "fs-tools"\ndepends-on = ["*"]\n\n[[mcp_servers]]\nname = "filesystem"\ndepends-on = ["serde"]\n` +
      `command = "node"\nargs = ${JSON.stringify([server, data])}\n`,
  );
  return {
    root,
    home,
    configDir,
    ws,
    data,
    todoFiles,
    token,
    remove: () => Deno.remove(root, { recursive: true }),
  };
}

/** Worlds kept for a look (a failed run, `STAND_IN_DUMP`) are removed once older than this, in ms. */
export const KEEP_WORLDS_MS = 24 * 3600_000;

async function removeOldWorlds(parent: string): Promise<void> {
  for await (const entry of Deno.readDir(parent)) {
    const path = `${parent}/${entry.name}`;
    const info = await Deno.stat(path).catch(() => undefined); // Removed meanwhile by another run.
    if (info?.mtime && Date.now() - info.mtime.getTime() > KEEP_WORLDS_MS) {
      await Deno.remove(path, { recursive: true }).catch(() => {}); // Another run may be removing it too.
    }
  }
}

/** ANSI colour and cursor sequences, which some agents print even when not on a terminal. */
// deno-lint-ignore no-control-regex -- ESC starts every ANSI sequence
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/** The variable every process an agent command starts inherits: how {@link endEverythingOf} finds them. */
const RUN_MARKER_VAR = "CARGO_AGENTS_AGENT_RUN";

/**
 * Ends every process `timeoutPid` (a `timeout` process, leader of its own process group) and its
 * command left behind: the process group first, then every process of this user whose environment holds
 * `RUN_MARKER_VAR=<marker>` (a daemon that left the group with `setsid`, like Cline CLI's hub daemon),
 * with SIGTERM and, 1 s later, SIGKILL. Best effort: a process gone meanwhile is no error.
 */
async function endEverythingOf(timeoutPid: number, marker: string): Promise<void> {
  const signal = (pid: number, sig: Deno.Signal) => {
    try {
      Deno.kill(pid, sig);
    } catch {
      // Gone already (or never there): nothing to end.
    }
  };
  signal(-timeoutPid, "SIGKILL");
  const marked = async (): Promise<number[]> => {
    // `ps e` appends each process's environment to its command (Linux and macOS, own processes).
    const out = await new Deno.Command("ps", {
      args: ["eww", "-eo", "pid=,command="],
      stdout: "piped",
      stderr: "null",
    })
      .output().catch(() => undefined);
    if (!out) return [];
    return new TextDecoder().decode(out.stdout).split("\n")
      .filter((line) => line.includes(`${RUN_MARKER_VAR}=${marker}`))
      .map((line) => Number.parseInt(line.trim(), 10))
      .filter((pid) => Number.isInteger(pid) && pid !== Deno.pid);
  };
  const left = await marked();
  if (left.length === 0) return;
  for (const pid of left) signal(pid, "SIGTERM");
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  for (const pid of await marked()) signal(pid, "SIGKILL");
}

/**
 * Runs `command args` in `cwd` with exactly `env` (nothing inherited), stdin closed, killed after
 * `timeoutMs` (`timeout -k 5`: SIGTERM, then SIGKILL 5 s later). When it ends, everything it started
 * ends too (its process group, and every process holding its run marker: see {@link endEverythingOf}).
 *
 * @returns Exit code (124 on time-out) and output with ANSI sequences removed.
 */
export async function runBounded(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<CommandOutput> {
  const seconds = Math.ceil((options.timeoutMs ?? COMMAND_TIMEOUT_MS) / 1000);
  const marker = crypto.randomUUID();
  const child = new Deno.Command("timeout", {
    args: ["-k", "5", String(seconds), command, ...args],
    cwd: options.cwd,
    env: { ...options.env, [RUN_MARKER_VAR]: marker },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Read while it runs (a full pipe would stall it); a daemon it started may hold the pipes open, so the
  // reads end only once everything it started has been ended after its exit.
  const read = (stream: ReadableStream<Uint8Array>) => new Response(stream).text();
  const stdout = read(child.stdout);
  const stderr = read(child.stderr);
  let status: Deno.CommandStatus;
  try {
    status = await child.status;
  } finally {
    await endEverythingOf(child.pid, marker);
  }
  const text = (t: string) => t.replace(ANSI, "");
  return { code: status.code, stdout: text(await stdout), stderr: text(await stderr) };
}

/**
 * `cargo-agents sync --agent <name>` from source, as a user runs it in the workspace, with
 * `SYMPOSIUM_HOME` naming the world's config dir.
 */
export function runSync(
  world: AgentWorld,
  agent: string,
  env: Record<string, string>,
): Promise<CommandOutput> {
  return runBounded(Deno.execPath(), [...sourceRunArgs(REPO), "sync", "--agent", agent], {
    cwd: world.ws,
    env: { ...env, SYMPOSIUM_HOME: world.configDir },
    timeoutMs: 60_000,
  });
}
