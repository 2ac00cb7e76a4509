/**
 * Shared fakes and fixture helpers for the `sync` tests.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import type { FileSystem } from "../lib/file_system.ts";
import type { ConfigTarget, ServerCommand } from "../lib/sync/agents/mod.ts";
import { selectAgents } from "../lib/sync/agent_selection.ts";
import type { PathContext } from "../lib/sync/platform_paths.ts";

/** The repository root, from this file's URL. */
export const REPO_ROOT: string = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

/** Folder of the per-agent golden fixtures. */
export const AGENT_FIXTURES: string = `${REPO_ROOT}/testdata/sync/agents`;

/** The fixed program the unit tests register, so goldens do not depend on where the tests run. */
export const FIXED_SERVER: ServerCommand = {
  command: "/opt/cargo-agents/bin/cargo-agents",
  args: ["mcp-serve"],
};

/** The home directory the golden targets resolve under. */
export const FAKE_HOME = "/home/user";

/** A Linux path context with `homeDir` and `env`. */
export function linuxPaths(homeDir: string = FAKE_HOME, env: Record<string, string> = {}): PathContext {
  return { platform: "linux", homeDir, env, cwd: homeDir };
}

/** A read-only file system in which nothing exists, or only `existing` paths (as folders). */
export function fakeFs(existing: readonly string[] = [], files: Record<string, string> = {}): FileSystem {
  const isDir = (path: string) => existing.includes(path);
  return {
    readTextFile: (path) => {
      const text = files[path];
      return text === undefined ? Promise.reject(new Deno.errors.NotFound(path)) : Promise.resolve(text);
    },
    stat: (path) =>
      Promise.resolve(
        isDir(path)
          ? { isFile: false, isDirectory: true, mtimeMs: null }
          : files[path] !== undefined
          ? { isFile: true, isDirectory: false, mtimeMs: null }
          : null,
      ),
    readDir: (path) => Promise.reject(new Deno.errors.NotFound(path)),
    realPath: (path) => Promise.resolve(path),
  };
}

/**
 * The config target a golden case stands for: the case folder name is an agent id or alias
 * (`opencode-v2` forces OpenCode's V2 layout), resolved under {@link FAKE_HOME} with nothing installed.
 */
export async function goldenTarget(caseName: string): Promise<ConfigTarget> {
  const [selection] = selectAgents([caseName]);
  const targets = await selection!.agent.targets(
    linuxPaths(),
    fakeFs(),
    selection!.variant === undefined ? {} : { variant: selection!.variant },
  );
  return targets[0]!;
}

/** The golden case folders, sorted. */
export function goldenCases(): string[] {
  return [...Deno.readDirSync(AGENT_FIXTURES)].filter((e) => e.isDirectory).map((e) => e.name).sort();
}

/** The file extension a case uses (`json`, `toml` or `yaml`), from its `before.*` file. */
export function caseExtension(caseName: string): string {
  const before = [...Deno.readDirSync(`${AGENT_FIXTURES}/${caseName}`)].find((e) =>
    e.name.startsWith("before.")
  );
  if (before === undefined) throw new Error(`testdata/sync/agents/${caseName} has no before.* file`);
  return before.name.slice("before.".length);
}

/** Reads `testdata/sync/agents/<case>/<name>.<ext>`. */
export function readCaseFile(caseName: string, name: string): string {
  return Deno.readTextFileSync(`${AGENT_FIXTURES}/${caseName}/${name}.${caseExtension(caseName)}`);
}

/** Runs `fn` and returns what it threw. @throws {Error} when it did not throw. */
export function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error, but none was thrown");
}
