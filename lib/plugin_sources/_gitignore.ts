/**
 * Whether git would ignore a file, read from the `.gitignore` files between the workspace root and
 * the file and `.git/info/exclude`, without running git (git run in a cloned repository reads that
 * repository's configuration). Covers the common forms: names, globs, a leading or inner `/`
 * (anchored), a trailing `/` (folders), `**`, and `!` negation (the last matching line wins).
 *
 * @module
 */
import { join, relative, sep } from "node:path";
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

/**
 * Whether `file` (inside `root`) is ignored by the repository's ignore files. Only `root` and the
 * folders down to the file are looked at; a folder that is ignored ignores everything in it.
 */
export async function isGitIgnored(file: string, root: string, fs: FileSystem): Promise<boolean> {
  const rel = relative(root, file);
  if (rel.startsWith("..")) return false;
  const parts = rel.split(sep);
  const read = async (path: string) => {
    try {
      return parseRules(await fs.readTextFile(path));
    } catch {
      return []; // No such ignore file.
    }
  };
  const layers: { base: number; rules: Rule[] }[] = [{
    base: 0,
    rules: await read(join(root, ".git", "info", "exclude")),
  }];
  for (let i = 0; i < parts.length; i++) {
    layers.push({ base: i, rules: await read(join(root, ...parts.slice(0, i), ".gitignore")) });
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
