/**
 * Where agents keep their configuration on each platform: the base folders (XDG config home,
 * Electron's app-data folder, VS Code's user-data folder) computed from an environment snapshot
 * and the home directory, never from the live process, so every platform can be tested anywhere.
 *
 * @module
 */
import { posix, win32 } from "node:path";

/** The platforms agents distinguish. `Deno.build.os` values other than these count as `"linux"`. */
export type Platform = "linux" | "darwin" | "windows";

/** The facts path resolution needs. */
export interface PathContext {
  platform: Platform;
  /** The user's home directory, absolute. */
  homeDir: string;
  /** Environment snapshot: agents' own overrides (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, ...) and `PATH`. */
  env: Readonly<Record<string, string>>;
  /** Working directory, absolute: relative override values resolve against it. */
  cwd: string;
}

/** Maps `Deno.build.os` to a {@link Platform}. */
export function toPlatform(os: string): Platform {
  return os === "darwin" ? "darwin" : os === "windows" ? "windows" : "linux";
}

/** The `node:path` flavour of the platform (`win32` on Windows, else `posix`). */
export function pathApi(p: PathContext): typeof posix {
  return p.platform === "windows" ? win32 : posix;
}

/** Joins path segments with the platform's separator. */
export function joinPath(p: PathContext, ...parts: string[]): string {
  return pathApi(p).join(...parts);
}

/**
 * The value of an environment variable naming a folder or file, resolved against `cwd` when
 * relative; `undefined` when unset or empty.
 */
export function envPath(p: PathContext, name: string): string | undefined {
  const value = p.env[name];
  if (value === undefined || value === "") return undefined;
  return pathApi(p).resolve(p.cwd, value);
}

/** `$XDG_CONFIG_HOME` when set to an absolute path (the XDG spec ignores relative ones), else `~/.config`. */
export function xdgConfigHome(p: PathContext): string {
  const value = p.env.XDG_CONFIG_HOME;
  if (value !== undefined && pathApi(p).isAbsolute(value)) return value;
  return joinPath(p, p.homeDir, ".config");
}

/**
 * The folder Electron apps keep their data in: `$XDG_CONFIG_HOME` (or `~/.config`) on Linux,
 * `~/Library/Application Support` on macOS, `%APPDATA%` on Windows.
 */
export function appDataDir(p: PathContext): string {
  switch (p.platform) {
    case "darwin":
      return joinPath(p, p.homeDir, "Library", "Application Support");
    case "windows":
      return p.env.APPDATA ?? joinPath(p, p.homeDir, "AppData", "Roaming");
    default:
      return xdgConfigHome(p);
  }
}

/**
 * The user-data folder of a VS Code-family editor, as VS Code computes it: `$VSCODE_APPDATA/<product>`
 * when set, else `<app data>/<product>`.
 *
 * @param product Product folder name, e.g. `"Code"`, `"Code - Insiders"`, `"Cursor"`, `"VSCodium"`.
 */
export function vscodeUserDataDir(p: PathContext, product: string): string {
  return joinPath(p, envPath(p, "VSCODE_APPDATA") ?? appDataDir(p), product);
}

/** Replaces a leading home directory with `~` for display. */
export function displayPath(path: string, homeDir: string): string {
  if (homeDir === "" || !path.startsWith(homeDir)) return path;
  const rest = path.slice(homeDir.length);
  if (rest === "") return "~";
  return rest.startsWith("/") || rest.startsWith("\\") ? "~" + rest : path;
}
