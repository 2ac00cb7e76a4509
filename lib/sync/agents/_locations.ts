/**
 * Where each agent keeps its configuration folder, per platform and honouring the agent's own
 * environment overrides. Private to the agent table in `lib/sync/agents/`.
 *
 * @module
 */
import type { FileSystem } from "../../file_system.ts";
import {
  appDataDir,
  envPath,
  joinPath,
  type PathContext,
  vscodeUserDataDir,
  xdgConfigHome,
} from "../platform_paths.ts";

/** Whether anything exists at `path`. */
export async function exists(fs: FileSystem, path: string): Promise<boolean> {
  return (await fs.stat(path)) !== null;
}

/** The first of `paths` that exists. */
export async function firstExisting(fs: FileSystem, paths: string[]): Promise<string | undefined> {
  for (const path of paths) if (await exists(fs, path)) return path;
  return undefined;
}

/** VS Code-family editors whose global storage may hold an extension's settings (Cline, Roo Code). */
export const EXTENSION_HOSTS = ["Code", "Code - Insiders", "Cursor", "Windsurf", "VSCodium"] as const;

/** An extension's global-storage folder inside a host editor's user-data folder. */
export function extensionStorage(p: PathContext, host: string, extensionId: string): string {
  return joinPath(p, vscodeUserDataDir(p, host), "User", "globalStorage", extensionId);
}

/** The Cline CLI folder: `$CLINE_DIR`, else `~/.cline`. */
export function clineCliDir(p: PathContext): string {
  return envPath(p, "CLINE_DIR") ?? joinPath(p, p.homeDir, ".cline");
}

/**
 * Claude Desktop's folder: the MSIX sandbox folder on Windows when one is installed (the default
 * since Feb 2026), else `<app data>/Claude`.
 */
export async function claudeDesktopDir(p: PathContext, fs: FileSystem): Promise<string> {
  if (p.platform === "windows" && p.env.LOCALAPPDATA !== undefined) {
    // MSIX installs (the default since Feb 2026) are sandboxed under Packages\Claude_<id>.
    const packages = joinPath(p, p.env.LOCALAPPDATA, "Packages");
    const entries = await fs.readDir(packages).catch(() => []);
    const pkg = entries.filter((e) =>
      e.isDirectory && e.name.startsWith("Claude_")
    ).map((e) => e.name).sort()[0];
    if (pkg !== undefined) return joinPath(p, packages, pkg, "LocalCache", "Roaming", "Claude");
  }
  return joinPath(p, appDataDir(p), "Claude");
}

/**
 * Zed's config folder: `~/.config/zed` on macOS, `$FLATPAK_XDG_CONFIG_HOME`/`$XDG_CONFIG_HOME`/`~/.config`
 * + `zed` on Linux, `%APPDATA%\Zed` on Windows (Zed's `paths::config_dir`).
 */
export function zedDir(p: PathContext): string {
  if (p.platform === "windows") return joinPath(p, appDataDir(p), "Zed");
  if (p.platform === "darwin") return joinPath(p, p.homeDir, ".config", "zed");
  return joinPath(p, envPath(p, "FLATPAK_XDG_CONFIG_HOME") ?? xdgConfigHome(p), "zed");
}

/** Goose's config folder: XDG on Linux and macOS, `%APPDATA%\Block\goose\config` on Windows. */
export function gooseDir(p: PathContext): string {
  if (p.platform === "windows") return joinPath(p, appDataDir(p), "Block", "goose", "config");
  return joinPath(p, xdgConfigHome(p), "goose");
}

/** Codex's home: `$CODEX_HOME`, else `~/.codex`. */
export function codexDir(p: PathContext): string {
  return envPath(p, "CODEX_HOME") ?? joinPath(p, p.homeDir, ".codex");
}

/** Claude Code's user file: `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`. */
export function claudeCodeFile(p: PathContext): string {
  const dir = envPath(p, "CLAUDE_CONFIG_DIR");
  return dir === undefined ? joinPath(p, p.homeDir, ".claude.json") : joinPath(p, dir, ".claude.json");
}

/** VS Code's user-data folder: stable, or Insiders when only Insiders is installed. */
export async function vscodeDir(p: PathContext, fs: FileSystem): Promise<string> {
  const stable = vscodeUserDataDir(p, "Code");
  const insiders = vscodeUserDataDir(p, "Code - Insiders");
  if (!(await exists(fs, joinPath(p, stable, "User"))) && (await exists(fs, joinPath(p, insiders, "User")))) {
    return insiders;
  }
  return stable;
}

/** GitHub Copilot CLI's folder: `$COPILOT_HOME`, else `~/.copilot` (docs.github.com, Copilot CLI reference). */
export function copilotDir(p: PathContext): string {
  return envPath(p, "COPILOT_HOME") ?? joinPath(p, p.homeDir, ".copilot");
}

/**
 * Pi's agent folder: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent` (`getAgentPath` of the pi-mcp-adapter
 * extension and Pi's own config loader read `mcp.json` there).
 */
export function piAgentDir(p: PathContext): string {
  return envPath(p, "PI_CODING_AGENT_DIR") ?? joinPath(p, p.homeDir, ".pi", "agent");
}

/** Kimi Code's folder: `$KIMI_CODE_HOME`, else `~/.kimi-code` (moonshotai.github.io/kimi-code). */
export function kimiCodeDir(p: PathContext): string {
  return envPath(p, "KIMI_CODE_HOME") ?? joinPath(p, p.homeDir, ".kimi-code");
}
