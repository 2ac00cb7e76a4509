/**
 * What trust pins besides the manifest: the files inside the workspace that a server's `command` or
 * `args` name (`sh scripts/server.sh`, `node server.js`, `./bin/server`), each by SHA-256, so changing
 * the script a trusted manifest runs makes it `changed` like changing the manifest does. What cannot be
 * pinned (a runner that builds and runs the workspace's own code, a folder, a file over the cap) is
 * said, so the user knows before saying yes.
 *
 * @module
 */
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { PluginManifest } from "../plugins/mod.ts";

/** Largest file pinned, in bytes: one past it is named as not pinned (hashing it would stall trust and loading). */
export const MAX_PINNED_FILE_BYTES = 8 * 1024 * 1024;
/** Most files pinned for one manifest; the rest are named as not pinned. */
export const MAX_PINS_PER_MANIFEST = 32;

/**
 * Commands that build or run what the workspace's own files say (Cargo.toml and `.cargo/config.toml`
 * aliases, package.json scripts, a Makefile): what they end up running is not one file to pin.
 */
const RUNNERS: Readonly<Record<string, string>> = {
  cargo: "Cargo.toml, build scripts, `.cargo/config.toml` aliases",
  npm: "package.json scripts",
  npx: "package.json and node_modules",
  pnpm: "package.json scripts",
  yarn: "package.json scripts",
  bun: "package.json scripts",
  deno: "deno.json tasks and imports",
  make: "the Makefile",
  just: "the justfile",
  go: "go.mod and the package's sources",
  uv: "pyproject.toml",
  poetry: "pyproject.toml",
  gradle: "the build files",
  gradlew: "the build files",
  mvn: "pom.xml",
  rake: "the Rakefile",
  bundle: "the Gemfile",
};

/** What {@link findPins} found for one manifest. */
export interface PinPlan {
  /**
   * Absolute paths, as the servers name them (links along them not resolved), of files whose real path
   * is inside the workspace, sorted, at most {@link MAX_PINS_PER_MANIFEST}.
   */
  files: string[];
  /** Why something a server runs is not pinned, one sentence each (paths relative to the workspace root). */
  unpinned: string[];
}

/** The real path of `path`, or `undefined` when nothing is there. */
async function realOf(path: string): Promise<string | undefined> {
  try {
    return await Deno.realPath(path);
  } catch {
    return undefined; // Nothing there: the word is not a path (most arguments are not).
  }
}

/**
 * The files inside `root` that the stdio servers of `manifest` name in `command`, `args` or `env`
 * values (an argument `--flag=path` counts by its value; a word with spaces, `=`, `:`, `,` or `;`
 * by each part that is a file, as in `sh -c "sh x.sh"` or `LD_PRELOAD=./x.so`), resolved against each server's `cwd` (joined to the
 * root, as the server is started), and what cannot be pinned.
 *
 * @param root The workspace root (absolute).
 * @param pluginDir The folder of the manifest when it lies outside the workspace (a path or git crate's):
 *   files inside it are pinned too, as they are the plugin's own.
 */
export async function findPins(manifest: PluginManifest, root: string, pluginDir?: string): Promise<PinPlan> {
  const realRoot = await realOf(root) ?? root;
  const realPluginDir = pluginDir === undefined ? undefined : await realOf(pluginDir);
  const isInside = (real: string, dir: string | undefined) =>
    dir !== undefined && (real === dir || real.startsWith(dir + sep));
  const files = new Set<string>();
  const unpinned = new Set<string>();
  const shown = (real: string) => relative(realRoot, real) || ".";
  for (const server of manifest.mcpServers) {
    if (server.transport !== "stdio") continue;
    const cwd = server.cwd === undefined
      ? root
      : isAbsolute(server.cwd)
      ? server.cwd
      : join(root, server.cwd);
    const runner = RUNNERS[basename(server.command).replace(/\.(exe|cmd|bat)$/i, "")];
    if (runner !== undefined && !server.command.includes("/")) {
      unpinned.add(
        `server "${server.name}": \`${basename(server.command)}\` runs what the workspace's ${runner} say: ` +
          "that code is not pinned, only the manifest is",
      );
    }
    const whole = [server.command, ...server.args, ...Object.values(server.env)];
    const words = whole.map((w) => w.startsWith("-") ? w.split("=")[1] ?? "" : w);
    // Paths inside a longer word also run or load code: `sh -c "sh scripts/x.sh"`, an env value such as
    // `NODE_OPTIONS=--require ./x.js` or `LD_PRELOAD=./a.so:./b.so` (only parts that are files are pinned).
    const parts = whole.slice(1).flatMap((w) =>
      w.split(/[\s=:,;]+/).filter((part) => part !== "" && part !== w)
    )
      .filter((part) => !words.includes(part));
    for (const [i, word] of [...words, ...parts].entries()) {
      const isPart = i >= words.length;
      // A bare command is looked up on PATH, not in the folder: only a command with a "/" is a file here.
      if (word === "" || word.includes("://") || (i === 0 && !word.includes("/"))) continue;
      // Pinned by the path as the server names it, not its real path: a link along it (the file, or a
      // folder on the way) that a pull retargets changes what that path holds, so the pin sees it.
      const named = resolve(cwd, word);
      const real = await realOf(named);
      if (real === undefined) continue;
      const info = await Deno.stat(real);
      if (info.isDirectory && isPart) continue; // `.` in a PATH-like value: not what the server runs.
      if (!isInside(real, realRoot) && !isInside(real, realPluginDir)) {
        // A file of the machine's (`/usr/bin/node`) would make every upgrade a change: said, not pinned.
        if (i > 0 && info.isFile) {
          unpinned.add(
            `server "${server.name}": ${real} is outside the workspace: a change to it is not seen`,
          );
        }
        continue;
      }
      if (info.isDirectory) {
        unpinned.add(`server "${server.name}": ${shown(real)} is a folder: what runs from it is not pinned`);
      } else if (info.size > MAX_PINNED_FILE_BYTES) {
        unpinned.add(
          `server "${server.name}": ${shown(real)} is over ${MAX_PINNED_FILE_BYTES} bytes: not pinned`,
        );
      } else if (files.size >= MAX_PINS_PER_MANIFEST && !files.has(named)) {
        unpinned.add(
          `server "${server.name}": ${shown(real)} is past ${MAX_PINS_PER_MANIFEST} pinned files: not pinned`,
        );
      } else {
        files.add(named);
      }
    }
  }
  return { files: [...files].sort(), unpinned: [...unpinned] };
}

/**
 * SHA-256 (lowercase hex) of a pinned file's bytes, or `undefined` when it is gone, not a file, or
 * over {@link MAX_PINNED_FILE_BYTES} (each of which makes a pin not match).
 */
export async function hashPinnedFile(path: string): Promise<string | undefined> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile || info.size > MAX_PINNED_FILE_BYTES) return undefined;
    const bytes = await Deno.readFile(path);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  } catch {
    return undefined; // Gone or unreadable: the pin does not match, and the plugin is `changed`.
  }
}
