/**
 * The pinned peers of `bench/peers.ts` and their install: each from the npm registry into its own folder
 * under a cache outside the repository (`npm install --prefix <cache>/<name>@<version>`), once. A finished
 * install is marked by a `.installed` file; installs go to a temporary sibling and are renamed into place,
 * so a run never sees half a package (the way `tests/agents/_install.ts` installs the agent CLIs).
 *
 * @module
 */

/** One peer to install: the folder it gets and the exact npm packages in it. */
export interface PeerInstall {
  /** Folder name under the cache, e.g. `"mcp-use@1.34.6"`. */
  dirName: string;
  /** Exact `name@version` specs given to one `npm install`. */
  packages: string[];
}

/**
 * Node.js 22 from npm (package `node`): the runtime of every driver. `isolated-vm` 6 (UTCP's sandbox) needs
 * Node ≥ 22 and ships prebuilt binaries only for it; the machine's own `node` runs the backing server.
 */
export const NODE_22: PeerInstall = { dirName: "node@22.23.3", packages: ["node@22.23.3"] };

/** mcp-use 1.34.6: code mode in `node:vm`, in the host process. */
export const MCP_USE: PeerInstall = { dirName: "mcp-use@1.34.6", packages: ["mcp-use@1.34.6"] };

/** UTCP code mode 1.2.12 (`isolated-vm`), with the MCP plugin and the SDK it plugs into, pinned. */
export const UTCP_CODE_MODE: PeerInstall = {
  dirName: "@utcp+code-mode@1.2.12",
  packages: ["@utcp/code-mode@1.2.12", "@utcp/mcp@1.1.3", "@utcp/sdk@1.1.2", "isolated-vm@6.2.0"],
};

/** Longest wait for one `npm install`, ms. */
export const NPM_INSTALL_TIMEOUT_MS = 6 * 60_000;

/**
 * The cache: `$CARGO_AGENTS_PEERS_CACHE`, else `$XDG_CACHE_HOME/cargo-agents/bench-peers`, else
 * `~/.cache/cargo-agents/bench-peers`.
 *
 * @throws {Error} when neither a cache variable nor `HOME` is set.
 */
export function peersCacheDir(env: Record<string, string | undefined>): string {
  if (env.CARGO_AGENTS_PEERS_CACHE) return env.CARGO_AGENTS_PEERS_CACHE;
  if (env.XDG_CACHE_HOME) return `${env.XDG_CACHE_HOME}/cargo-agents/bench-peers`;
  if (env.HOME) return `${env.HOME}/.cache/cargo-agents/bench-peers`;
  throw new Error("Cannot choose a cache folder for the bench peers: set HOME or CARGO_AGENTS_PEERS_CACHE");
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

async function npmInstall(prefix: string, packages: string[], nodeBinDir: string | undefined): Promise<void> {
  const path = nodeBinDir ? `${nodeBinDir}:${Deno.env.get("PATH") ?? ""}` : Deno.env.get("PATH") ?? "";
  const out = await new Deno.Command("npm", {
    args: [
      "install",
      "--prefix",
      prefix,
      "--no-audit",
      "--no-fund",
      "--no-update-notifier",
      "--loglevel=error",
      ...packages,
    ],
    env: { PATH: path },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(NPM_INSTALL_TIMEOUT_MS),
  }).output();
  if (!out.success) {
    const tail = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-8).join("\n");
    throw new Error(`Cannot install ${packages.join(" ")} from npm: exit ${out.code}\n${tail}`);
  }
}

/**
 * Installs `peer` under `cacheDir` unless already there.
 *
 * @param nodeBinDir Put first on `PATH` for npm and install scripts (native modules build for that Node).
 * @returns The install folder (its `node_modules/` holds the packages).
 * @throws {Error} naming the packages and npm's last output lines when `npm install` fails or takes
 *   longer than {@link NPM_INSTALL_TIMEOUT_MS}.
 */
export async function installPeer(peer: PeerInstall, cacheDir: string, nodeBinDir?: string): Promise<string> {
  const dir = `${cacheDir}/${peer.dirName}`;
  if (await exists(`${dir}/.installed`)) return dir;
  await Deno.mkdir(cacheDir, { recursive: true });
  const staging = await Deno.makeTempDir({ dir: cacheDir, prefix: `.${peer.dirName.replace("/", "+")}-` });
  try {
    await npmInstall(staging, peer.packages, nodeBinDir);
    await Deno.writeTextFile(`${staging}/.installed`, `${peer.packages.join("\n")}\n`);
    await Deno.remove(dir, { recursive: true }).catch(() => {}); // An unfinished earlier install, if any.
    await Deno.rename(staging, dir);
  } catch (error) {
    await Deno.remove(staging, { recursive: true }).catch(() => {}); // Best effort; the error matters.
    if (await exists(`${dir}/.installed`)) return dir; // Another run finished it meanwhile.
    throw error;
  }
  return dir;
}
