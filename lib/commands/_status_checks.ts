/**
 * Two parts of `status` about what a server receives and where secrets are kept (private to
 * `lib/commands/`): the environment names of a stdio server, and problems with our private folders.
 *
 * @module
 */
import { join } from "node:path";
import type { EnvOrigin } from "../backends/mod.ts";
import { inspectPrivateDir, PrivateDirError } from "../secrets/mod.ts";

/** A private folder that cannot be used, as `status` lists problems. */
export interface FolderProblem {
  /** `PRIVATE_DIR_SYMLINK`, `PRIVATE_DIR_NOT_OWNED`, `PRIVATE_DIR_NOT_A_FOLDER`, `PRIVATE_DIR_UNUSABLE`. */
  code: string;
  message: string;
  hint: string | undefined;
  location: undefined;
}

/** Folders under the config dir that hold secrets or traces of them (see `lib/secrets/private_dir.ts`). */
export const PRIVATE_FOLDERS: readonly string[] = ["logs", "cache", "credentials"];

/**
 * Problems with our private folders, found without creating anything: a symbolic link, another
 * user's folder or a file where the folder should be (every command that writes there refuses it).
 */
export function privateFolderProblems(configDir: string): FolderProblem[] {
  const problems: FolderProblem[] = [];
  for (const name of PRIVATE_FOLDERS) {
    try {
      inspectPrivateDir(join(configDir, name));
    } catch (error) {
      if (!(error instanceof PrivateDirError)) throw error;
      problems.push({ code: error.code, message: error.message, hint: error.hint, location: undefined });
    }
  }
  return problems;
}

/** Longest list of names shown per origin in the text form (the JSON form has them all). */
const ENV_NAMES_SHOWN = 12;

/** `env: HOME, PATH (base); GITHUB_TOKEN (passthrough); LOG (manifest)`: names only, never values. */
export function envText(names: Record<EnvOrigin, string[]>, missing: string[]): string {
  const labels: [EnvOrigin, string][] = [
    ["base", "base"],
    ["inherited", "inherit-env"],
    ["passthrough", "env-passthrough"],
    ["manifest", "manifest env"],
  ];
  const groups = labels.filter(([origin]) => names[origin].length > 0).map(([origin, label]) => {
    const list = names[origin];
    const more = list.length > ENV_NAMES_SHOWN ? ` and ${list.length - ENV_NAMES_SHOWN} more` : "";
    return `${list.slice(0, ENV_NAMES_SHOWN).join(", ")}${more} (${label})`;
  });
  const unset = missing.length > 0 ? `; not set here, so not passed: ${missing.join(", ")}` : "";
  return `env: ${groups.join("; ") || "none"}${unset}`;
}
