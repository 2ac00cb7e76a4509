/**
 * Installs the pinned agent CLIs (and the Node.js some of them need) from npm into a cache
 * directory, once: `<cache>/<package>@<version>/node_modules/.bin/<bin>`. A finished install is
 * marked by a `.installed` file, so an interrupted one is redone; installs go to a temporary
 * sibling and are renamed into place, so two runs never see half a package.
 *
 * @module
 */

/** One npm package to install. */
export interface PinnedPackage {
  /** npm name, e.g. `"@openai/codex"`. */
  name: string;
  /** Exact version. */
  version: string;
}

/** Longest wait for one `npm install`, in ms (Cline's dependency tree takes about a minute). */
export const NPM_INSTALL_TIMEOUT_MS = 6 * 60_000;

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

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
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
  const dir = `${cacheDir}/${dirName}`;
  const binDir = `${dir}/node_modules/.bin`;
  if (await exists(`${dir}/.installed`)) return binDir;
  await Deno.mkdir(cacheDir, { recursive: true });
  const staging = await Deno.makeTempDir({ dir: cacheDir, prefix: `.${dirName}-` });
  try {
    const npm = new Deno.Command("npm", {
      args: [
        "install",
        "--prefix",
        staging,
        "--no-audit",
        "--no-fund",
        "--no-update-notifier",
        "--loglevel=error",
        `${pkg.name}@${pkg.version}`,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(NPM_INSTALL_TIMEOUT_MS),
    });
    const out = await npm.output();
    if (!out.success) {
      const tail = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-8).join("\n");
      throw new Error(`Cannot install ${pkg.name}@${pkg.version} from npm: exit ${out.code}\n${tail}`);
    }
    await Deno.writeTextFile(`${staging}/.installed`, `${pkg.name}@${pkg.version}\n`);
    await Deno.remove(dir, { recursive: true }).catch(() => {}); // An unfinished earlier install, if any.
    await Deno.rename(staging, dir);
  } catch (error) {
    await Deno.remove(staging, { recursive: true }).catch(() => {}); // Best effort; the error matters.
    if (await exists(`${dir}/.installed`)) return binDir; // Another run finished it meanwhile.
    throw error;
  }
  return binDir;
}
