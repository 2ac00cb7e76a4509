/**
 * Installs the pinned agent CLIs (and the Node.js some of them need) from npm into a cache
 * directory, once: `<cache>/<package>@<version>/node_modules/.bin/<bin>`. A finished install is
 * marked by a `.installed` file, so an interrupted one is redone; installs go to a temporary
 * sibling and are renamed into place, so two runs never see half a package.
 *
 * @module
 */
import { installPeer } from "../../bench/_peers_install.ts";

/** One npm package to install. */
export interface PinnedPackage {
  /** npm name, e.g. `"@openai/codex"`. */
  name: string;
  /** Exact version. */
  version: string;
}

// The longest wait for one `npm install` (Cline's dependency tree takes about a minute).
export { NPM_INSTALL_TIMEOUT_MS } from "../../bench/_peers_install.ts";

/**
 * The cache directory: `$CARGO_AGENTS_AGENT_CACHE`, else `$XDG_CACHE_HOME/cargo-agents/agent-clis`,
 * else `~/.cache/cargo-agents/agent-clis`. Not under `/tmp`: Codex refuses to set up its helpers
 * there.
 *
 * @throws {Error} when neither a cache variable nor `HOME` is set.
 */
export function agentCacheDir(env: Record<string, string | undefined>): string {
  if (env.CARGO_AGENTS_AGENT_CACHE) return env.CARGO_AGENTS_AGENT_CACHE;
  if (env.XDG_CACHE_HOME) return `${env.XDG_CACHE_HOME}/cargo-agents/agent-clis`;
  if (env.HOME) return `${env.HOME}/.cache/cargo-agents/agent-clis`;
  throw new Error("Cannot choose a cache directory for the agent CLIs: HOME is not set");
}

/**
 * Installs `pkg` under `cacheDir` unless already there.
 *
 * @returns The package's `node_modules/.bin` directory.
 * @throws {Error} naming the package and npm's last output lines when `npm install` fails or
 *   takes longer than {@link NPM_INSTALL_TIMEOUT_MS}.
 */
export async function installPinned(pkg: PinnedPackage, cacheDir: string): Promise<string> {
  const dirName = `${pkg.name.replace("/", "+")}@${pkg.version}`;
  const dir = await installPeer({ dirName, packages: [`${pkg.name}@${pkg.version}`] }, cacheDir);
  return `${dir}/node_modules/.bin`;
}
