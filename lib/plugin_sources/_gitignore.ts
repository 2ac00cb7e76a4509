/**
 * Whether git would ignore a file, read without running git (git run in a cloned repository reads that
 * repository's configuration, which can name commands to run). The ignore files git reads, in its
 * order: `core.excludesFile` (default `$XDG_CONFIG_HOME/git/ignore`), `.git/info/exclude`, then the
 * `.gitignore` files from the repository's top folder (the nearest folder above the workspace holding
 * `.git`; the workspace root when there is none) down to the file. `core.excludesFile` and
 * `core.ignorecase` come from the git configuration files git reads (`$XDG_CONFIG_HOME/git/config`,
 * `~/.gitconfig`, `.git/config`; the last setting wins; `include` is not followed). Reading more of
 * them can only mark more files ignored, which a bare `trust` then skips. Covers the common pattern
 * forms: names, globs, a leading or inner `/` (anchored), a trailing `/` (folders), `**`, and `!`
 * negation (the last matching line wins).
 *
 * @module
 */
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { compileGlob } from "../glob.ts";
import type { FileSystem } from "../file_system.ts";

interface Rule {
  negated: boolean;
  dirOnly: boolean;
  anchored: boolean;
  segments: string[];
}

function parseRules(text: string): Rule[] {
  const rules: Rule[] = [];
  for (const raw of text.split(/\r?\n/).slice(0, 10_000)) {
    let line = raw.replace(/(?<!\\)\s+$/, "");
    if (line === "" || line.startsWith("#")) continue;
    const negated = line.startsWith("!");
    if (negated) line = line.slice(1);
    const dirOnly = line.endsWith("/");
    if (dirOnly) line = line.slice(0, -1);
    const anchored = line.includes("/");
    const segments = line.replace(/^\//, "").split("/").filter((s) => s !== "");
    if (segments.length > 0 && segments.every((s) => s.length <= 256)) {
      rules.push({ negated, dirOnly, anchored, segments });
    }
  }
  return rules;
}

function matchSegments(pattern: string[], path: string[]): boolean {
  if (pattern.length === 0) return path.length === 0;
  const [head, ...rest] = pattern;
  if (head === "**") {
    for (let i = 0; i <= path.length; i++) if (matchSegments(rest, path.slice(i))) return true;
    return false;
  }
  return path.length > 0 && compileGlob(head!, { classes: true }).test(path[0]!) &&
    matchSegments(rest, path.slice(1));
}

/** Whether `rule` matches the path `parts` (relative to the rule's folder); `isDir` for the last part. */
function ruleMatches(rule: Rule, parts: string[], isDir: boolean): boolean {
  if (rule.dirOnly && !isDir) return false;
  if (rule.anchored) return matchSegments(rule.segments, parts);
  return rule.segments.length === 1 && compileGlob(rule.segments[0]!, { classes: true }).test(parts.at(-1)!);
}

/** Where the git settings and the user's ignore files are: `env` (`XDG_CONFIG_HOME`, `HOME`) and the home folder. */
export interface GitIgnoreOptions {
  /** The environment (`XDG_CONFIG_HOME`). Default `{}`. */
  env?: Readonly<Record<string, string>> | undefined;
  /** The user's home folder (absolute); `""` skips `~/.gitconfig`. Default `""`. */
  homeDir?: string | undefined;
}

/** The git settings that change what is ignored. */
interface GitIgnoreSettings {
  excludesFile: string | undefined;
  ignoreCase: boolean;
}

/** Largest ignore or git configuration file read, in bytes; a larger one is not read. */
const MAX_GIT_FILE_BYTES = 1024 * 1024;

/**
 * `core.excludesFile` and `core.ignorecase` of one git configuration file (INI-like: `[core]`,
 * `key = value`, `#`/`;` comments, `"..."` quoting), over `into`.
 */
function readCoreSettings(text: string, into: GitIgnoreSettings, homeDir: string): void {
  let inCore = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const section = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]/.exec(line);
    if (section) {
      inCore = section[1]!.toLowerCase() === "core"; // A setting after `]` on the same line is not read.
      continue;
    }
    if (!inCore) continue;
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!kv) continue;
    const key = kv[1]!.toLowerCase();
    const value = gitValue(kv[2] ?? "true");
    if (key === "excludesfile") {
      into.excludesFile = value.startsWith("~/") && homeDir !== "" ? join(homeDir, value.slice(2)) : value;
    } else if (key === "ignorecase") {
      into.ignoreCase = /^(true|yes|on|1)$/i.test(value);
    }
  }
}

/** A git config value: `"..."` parts unquoted (with `\\`, `\"`, `\n`, `\t`), a comment outside quotes dropped. */
function gitValue(raw: string): string {
  let out = "";
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === "\\" && i + 1 < raw.length) {
      const n = raw[++i]!;
      out += n === "n" ? "\n" : n === "t" ? "\t" : n;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (!quoted && (c === "#" || c === ";")) {
      break;
    } else {
      out += c;
    }
  }
  return out.trim();
}

/** The nearest folder at or above `root` holding `.git` (a folder), or `root` when there is none. */
async function gitTopOf(root: string, fs: FileSystem): Promise<{ top: string; gitDir: string | undefined }> {
  for (let dir = root;; dir = dirname(dir)) {
    if ((await fs.stat(join(dir, ".git")).catch(() => null))?.isDirectory) {
      return { top: dir, gitDir: join(dir, ".git") };
    }
    if (dirname(dir) === dir) return { top: root, gitDir: undefined };
  }
}

/**
 * Whether `file` (inside `root`) is ignored by git's ignore files (see the module's note for which
 * and in what order). A folder that is ignored ignores everything in it. A file that cannot be
 * read counts as empty.
 *
 * @param root The workspace root (absolute); the repository's top folder is searched from here up.
 */
export async function isGitIgnored(
  file: string,
  root: string,
  fs: FileSystem,
  options: GitIgnoreOptions = {},
): Promise<boolean> {
  const { top, gitDir } = await gitTopOf(root, fs);
  const rel = relative(top, file);
  if (rel.startsWith("..") || isAbsolute(rel)) return false;
  const readText = async (path: string) => {
    try {
      const info = await fs.stat(path);
      // Past the cap a file is not read (its rules do not apply): a bare `trust` still shows what it trusts.
      if (!info?.isFile || (info.size ?? 0) > MAX_GIT_FILE_BYTES) return "";
      return await fs.readTextFile(path);
    } catch {
      return ""; // Unreadable or not UTF-8: no rules, no settings.
    }
  };
  const env = options.env ?? {};
  const homeDir = options.homeDir ?? "";
  const xdg = env.XDG_CONFIG_HOME || (homeDir !== "" ? join(homeDir, ".config") : "");
  const settings: GitIgnoreSettings = { excludesFile: undefined, ignoreCase: false };
  for (
    const config of [
      xdg && join(xdg, "git", "config"),
      homeDir && join(homeDir, ".gitconfig"),
      gitDir && join(gitDir, "config"),
    ]
  ) {
    if (config) readCoreSettings(await readText(config), settings, homeDir);
  }
  const excludesFile = settings.excludesFile ?? (xdg ? join(xdg, "git", "ignore") : undefined);
  const fold = (s: string) => settings.ignoreCase ? s.toLowerCase() : s;
  const read = async (path: string) => parseRules(fold(await readText(path)));
  const parts = fold(rel).split(sep);
  const layers: { base: number; rules: Rule[] }[] = [];
  if (excludesFile !== undefined) {
    layers.push({
      base: 0,
      rules: await read(isAbsolute(excludesFile) ? excludesFile : join(top, excludesFile)),
    });
  }
  layers.push({ base: 0, rules: await read(join(gitDir ?? join(top, ".git"), "info", "exclude")) });
  const realParts = rel.split(sep);
  for (let i = 0; i < parts.length; i++) {
    layers.push({ base: i, rules: await read(join(top, ...realParts.slice(0, i), ".gitignore")) });
  }
  // Each prefix of the path (a folder, then the file) is judged by the rules of the folders above it.
  for (let end = 1; end <= parts.length; end++) {
    let ignored = false;
    for (const layer of layers) {
      if (layer.base >= end) continue;
      for (const rule of layer.rules) {
        if (ruleMatches(rule, parts.slice(layer.base, end), end < parts.length)) ignored = !rule.negated;
      }
    }
    if (ignored) return true;
  }
  return false;
}
