/**
 * How the host starts a sandbox process: the command line (this same program: `Deno.execPath()` with the
 * hidden subcommand in a compiled binary, `deno run` of the guest module from source, with no permission
 * flag), an environment that holds nothing but what the runtime needs, and, where the platform has them, an
 * OS cap on the process's data memory as a second wall behind QuickJS's own and a parent-death signal, so
 * that a guest stuck in a native built-in dies with `mcp-serve` even when `mcp-serve` itself is killed.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { GUEST_SUBCOMMAND } from "../protocol/messages.ts";
import { isDenoRuntime } from "../../self_command.ts";

/** A process to spawn: program, arguments and the whole environment (nothing is inherited). */
export interface GuestLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * V8 flags of the guest from source (a compiled binary carries the host's, which are the same):
 * `--stack-size` in KiB (a deep parse inside QuickJS needs it, see `lib/self_command.ts`), the small young
 * generation and heap growth that keep its RSS near its live size, and `--expose-gc` for `HeapTrim`.
 */
export const GUEST_V8_FLAGS =
  "--v8-flags=--stack-size=1800,--max-semi-space-size=1,--initial-old-space-size=8,--heap-growing-percent=50,--expose-gc";

/**
 * Data-segment cap of a sandbox process, bytes, for a QuickJS heap limit: 1 GiB plus eight times the heap
 * limit (the WASM memory, V8's own heap, the TypeScript stripper and the copies a 16 MiB result makes on
 * its way out fit inside; a runaway native allocation does not). Applied with `prlimit --data` where that
 * program exists (Linux).
 *
 * @param heapLimitBytes The QuickJS heap limit the guest starts with, bytes.
 */
export function guestDataCapBytes(heapLimitBytes: number): number {
  return 1024 * 1024 * 1024 + 8 * Math.max(0, heapLimitBytes);
}

/** Where `prlimit` is looked for (util-linux); absent elsewhere, and then there is no OS cap. */
const PRLIMIT_PATHS = ["/usr/bin/prlimit", "/bin/prlimit"];
/** Where `setpriv` is looked for (util-linux): `--pdeathsig SIGKILL` ties the guest's life to its parent's. */
const SETPRIV_PATHS = ["/usr/bin/setpriv", "/bin/setpriv"];

/**
 * The launch of a guest for this program as it runs now.
 *
 * @param options.heapLimitBytes The heap limit the guest starts with, for its OS memory cap, bytes.
 * @param options.env The host's environment, read for the few variables the runtime itself needs
 *   (`DENO_DIR`, or `HOME`/`XDG_CACHE_HOME`/`LOCALAPPDATA` to find Deno's cache from source; `SystemRoot`
 *   on Windows). @default `Deno.env.toObject()`
 * @param options.execPath The runtime or binary. @default `Deno.execPath()`
 * @returns The command, arguments and environment; from source, `deno run -q --no-prompt --cached-only`
 *   of `lib/sandbox/guest/main.ts` with this checkout's `deno.json`; on Linux behind
 *   `prlimit --data=... -- setpriv --pdeathsig SIGKILL --` where those exist.
 */
export function guestLaunch(
  options: { heapLimitBytes: number; env?: Record<string, string>; execPath?: string },
): GuestLaunch {
  const env = options.env ?? Deno.env.toObject();
  const execPath = options.execPath ?? Deno.execPath();
  const childEnv: Record<string, string> = { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" };
  if (env.SystemRoot) childEnv.SystemRoot = env.SystemRoot;
  if (env.PROBE_TUNABLES) childEnv.GLIBC_TUNABLES = env.PROBE_TUNABLES;
  let command = execPath;
  let args: string[];
  if (isDenoRuntime(execPath)) {
    const guestModule = fileURLToPath(new URL("../guest/main.ts", import.meta.url));
    const denoJson = join(dirname(dirname(dirname(dirname(guestModule)))), "deno.json");
    const denoDir = denoCacheDir(env);
    if (denoDir) childEnv.DENO_DIR = denoDir;
    args = ["run", "-q", "--no-prompt", "--cached-only", GUEST_V8_FLAGS, "--config", denoJson, guestModule];
  } else {
    args = [GUEST_SUBCOMMAND];
  }
  // Each wrapper execs the next, so the guest keeps the pid the host spawned.
  const setpriv = Deno.build.os === "linux" ? SETPRIV_PATHS.find(isFile) : undefined;
  if (setpriv) {
    args = ["--pdeathsig", "SIGKILL", "--", command, ...args];
    command = setpriv;
  }
  const prlimit = Deno.build.os === "linux" ? PRLIMIT_PATHS.find(isFile) : undefined;
  if (prlimit) {
    args = [`--data=${guestDataCapBytes(options.heapLimitBytes)}`, "--", command, ...args];
    command = prlimit;
  }
  return { command, args, env: childEnv };
}

/**
 * Deno's cache folder as the runtime would find it (`DENO_DIR`, else the platform's cache folder), so that a
 * guest started with an empty environment finds the modules it was compiled from.
 */
function denoCacheDir(env: Record<string, string>): string | undefined {
  if (env.DENO_DIR) return env.DENO_DIR;
  if (Deno.build.os === "windows") return env.LOCALAPPDATA ? join(env.LOCALAPPDATA, "deno") : undefined;
  if (Deno.build.os === "darwin") return env.HOME ? join(env.HOME, "Library", "Caches", "deno") : undefined;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, "deno");
  return env.HOME ? join(env.HOME, ".cache", "deno") : undefined;
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    // Not there (or not readable): no OS cap from it.
    return false;
  }
}
