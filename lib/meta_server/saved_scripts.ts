/**
 * Saved scripts: scripts kept by name, one `.ts` file each, so work that ran once can run again by name
 * (`execute { run }`, `await scripts.name(input)`). The user's own live in `<config>/scripts/`; a team's are
 * committed in the workspace (`.symposium/scripts/`) and are usable only while the user trusts each file's
 * exact content (`cargo agents scripts trust`, recorded in `trusted.toml` like workspace manifests), so a
 * repository cannot put a script behind a name the agent calls. A user script and a workspace script of the
 * same name: the user's wins, and the workspace one is named under Problems.
 *
 * A file is the script as it ran, after a header comment the save writes:
 * ```ts ignore
 * /**
 *  * Files under a folder whose text mentions a word.
 *  * @servers filesystem
 *  *\/
 * type Input = { dir: string; word: string };
 * const listing = await filesystem.list_directory({ path: input.dir });
 * ```
 * The first doc comment is the description (its `@servers` line: the servers the script named when
 * saved); `type Input = ...;` (or `interface Input {...}`) at the top is the input's type, and the script reads
 * its input as `input`.
 *
 * This module is a face of its own (the CLI's `cargo agents scripts` loads it without the meta-server).
 *
 * @module
 */
import { basename, join } from "node:path";
import { denoFileSystem, describeFsError, type FileSystem } from "../file_system.ts";
import { UserError } from "../diagnostics.ts";
import { namespaceKey, type TrustState } from "../plugins/mod.ts";
import { readTrustStore, trustDetailOf, trustKeyOf } from "../plugin_sources/mod.ts";
import { ensurePrivateDir, writePrivateFile } from "../secrets/mod.ts";

/** The user's saved scripts' folder, under the configuration folder. */
export const USER_SCRIPTS_FOLDER = "scripts";
/** The workspace's saved scripts' folder, under the workspace root. */
export const WORKSPACE_SCRIPTS_FOLDER = ".symposium/scripts";
/** Largest saved script file, in UTF-8 bytes (256 KiB). */
export const MAX_SAVED_SCRIPT_BYTES = 256 * 1024;
/** Most saved scripts read from one folder; files past it are left out, said under Problems. */
export const MAX_SAVED_SCRIPTS = 200;
/** Longest script name, in characters. */
export const MAX_SCRIPT_NAME_CHARS = 64;
/** Longest description, in characters. */
export const MAX_DESCRIPTION_CHARS = 1_000;

/** Where a saved script comes from. */
export type SavedScriptSource = "user" | "workspace";

/** One saved script file, read. */
export interface SavedScript {
  /** The name it runs by: the file name without `.ts`, e.g. `"find_todos"`. */
  name: string;
  source: SavedScriptSource;
  /** Absolute path of the file. */
  file: string;
  /** The whole file (header comment included): what runs. */
  text: string;
  /** The header's text without `@` lines; `""` when the file has none. */
  description: string;
  /** The declared input type as written (`{ dir: string }`), or `undefined` when the script declares none. */
  inputType: string | undefined;
  /** The header's `@servers` list: the servers the script named when it was saved. */
  servers: string[];
  /** Workspace scripts only: whether the user trusts this exact content. */
  trust?: TrustState | undefined;
}

/** The saved scripts a session can see, and what is wrong with the rest. */
export interface SavedScriptSet {
  /** Runnable by name: the user's, then trusted workspace scripts not shadowed by a user script. */
  usable: SavedScript[];
  /** Workspace scripts not trusted (or changed since): listed by name under Problems only. */
  untrusted: SavedScript[];
  /** Trusted workspace scripts not used because a user script has the same name. */
  shadowed: SavedScript[];
  /** One line per file that could not be used, naming it, why and how to fix it. */
  problems: string[];
}

/** Where saved scripts are: the configuration folder and the workspace root (none outside a workspace). */
export interface SavedScriptPlaces {
  configDir: string;
  workspaceRoot: string | null;
}

/**
 * Why `name` cannot be a saved script's name, or `undefined` when it can: an identifier (letters, digits,
 * `_`, not starting with a digit) of at most {@link MAX_SCRIPT_NAME_CHARS} characters that is no reserved
 * word nor global a script relies on (`console`, `symposium`, `scripts`, ...), and not the global of a
 * server in scope (`servers`, their script globals).
 */
export function scriptNameProblem(name: string, servers: readonly string[] = []): string | undefined {
  if (name.length === 0 || name.length > MAX_SCRIPT_NAME_CHARS) {
    return `a script name has 1 to ${MAX_SCRIPT_NAME_CHARS} characters (got ${name.length})`;
  }
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    return "a script name is letters, digits and `_`, not starting with a digit (it is called as `scripts.<name>`)";
  }
  // `then` and `__proto__` are keys no namespace answers (the sandbox's UNREACHABLE_TOOL_KEYS):
  // `scripts.__proto__` is not a function, so such a script would be listed and never run.
  if (namespaceKey(name) !== name || ["input", "then", "__proto__", "toJSON", "constructor"].includes(name)) {
    return `\`${name}\` is a reserved word or a global of every script; choose another name`;
  }
  if (servers.some((s) => s === name || namespaceKey(s) === name)) {
    return `\`${name}\` is the name of a server in scope; choose another name`;
  }
  return undefined;
}

/**
 * Reads a saved script's header and input type (pure).
 *
 * @param text The file's text.
 * @returns Its description (the first doc comment's lines without `@` tags), its `@servers` list and its
 *   `type Input = ...` / `interface Input {...}` body, if declared at the top (after the header and comments).
 */
export function parseSavedScript(
  text: string,
): { description: string; servers: string[]; inputType: string | undefined } {
  let rest = text.replace(/^\uFEFF/, "").trimStart();
  let description = "";
  const servers: string[] = [];
  const header = /^\/\*\*([\s\S]*?)\*\//.exec(rest);
  if (header) {
    const lines = header[1]!.split("\n").map((l) => l.replace(/^\s*\*? ?/, "").trimEnd());
    const prose: string[] = [];
    for (const line of lines) {
      const tag = /^@servers\b(.*)$/.exec(line.trim());
      if (tag) servers.push(...tag[1]!.split(/[\s,]+/).filter((s) => s !== ""));
      else if (!line.trim().startsWith("@")) prose.push(line);
    }
    description = prose.join("\n").trim();
    rest = rest.slice(header[0].length);
  }
  // Comments between the header and the declaration.
  for (;;) {
    rest = rest.trimStart();
    if (rest.startsWith("//")) rest = rest.slice(rest.indexOf("\n") < 0 ? rest.length : rest.indexOf("\n"));
    else if (rest.startsWith("/*")) {
      rest = rest.slice(rest.indexOf("*/") < 0 ? rest.length : rest.indexOf("*/") + 2);
    } else break;
  }
  const declared = /^(?:export\s+)?(?:type\s+Input\s*=|interface\s+Input\s*(?=\{))\s*/.exec(rest);
  const inputType = declared ? typeBody(rest.slice(declared[0].length)) : undefined;
  return { description, servers, inputType };
}

/** The type expression at the start of `text`: up to a `;` (or a line break) outside brackets and strings. */
function typeBody(text: string): string | undefined {
  let depth = 0;
  for (let i = 0; i < text.length && i < 4_000; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'" || c === "`") {
      const end = text.indexOf(c, i + 1);
      if (end < 0) return undefined;
      i = end;
    } else if (c === "=" && text[i + 1] === ">") i++;
    else if ("{[(<".includes(c)) depth++;
    else if ("}])>".includes(c)) {
      depth--;
      const after = text.slice(i + 1);
      if (depth === 0 && c === "}" && /^[ \t]*(\n|;|$)/.test(after) && !/^[ \t;]*\n\s*[|&]/.test(after)) {
        return text.slice(0, i + 1).trim();
      }
    } else if (depth === 0 && (c === ";" || (c === "\n" && !/^\s*[|&]/.test(text.slice(i + 1))))) {
      const body = text.slice(0, i).trim();
      return body === "" ? undefined : body;
    }
  }
  return undefined;
}

/**
 * The file a save writes: a header comment with the description and the servers the script names, then
 * the script as it ran. A `*\/` in the description is written `*\\/` so the comment stays one comment.
 */
export function renderSavedScript(script: string, description: string, servers: readonly string[]): string {
  const lines = description.trim().replaceAll("*/", "*\\/").split("\n").map((l) => ` * ${l}`.trimEnd());
  if (servers.length > 0) lines.push(` * @servers ${servers.join(", ")}`);
  return `/**\n${lines.join("\n")}\n */\n${script.replace(/^\s*\n/, "")}${script.endsWith("\n") ? "" : "\n"}`;
}

/** Options of the functions that read saved scripts. */
export interface SavedScriptReadOptions {
  fs?: FileSystem | undefined;
}

/**
 * Reads every saved script: the user's folder, then the workspace's (each file's trust from
 * `trusted.toml`). Never throws for a file: a file that is not a script, too large, not UTF-8 or over
 * {@link MAX_SAVED_SCRIPTS} is a problem line.
 */
export async function readSavedScripts(
  places: SavedScriptPlaces,
  options: SavedScriptReadOptions = {},
): Promise<SavedScriptSet> {
  const fs = options.fs ?? denoFileSystem;
  const problems: string[] = [];
  const user = await readFolder(join(places.configDir, USER_SCRIPTS_FOLDER), "user", fs, problems);
  const workspace = places.workspaceRoot === null
    ? []
    : await readFolder(join(places.workspaceRoot, WORKSPACE_SCRIPTS_FOLDER), "workspace", fs, problems);
  const usable = [...user];
  const untrusted: SavedScript[] = [];
  const shadowed: SavedScript[] = [];
  if (workspace.length > 0) {
    const store = await readTrustStore(places.configDir, fs);
    for (const script of workspace) {
      const detail = await trustDetailOf(store, [{
        key: await trustKeyOf(script.file, fs),
        text: script.text,
      }]);
      script.trust = detail.state;
      if (detail.state !== "trusted") {
        untrusted.push(script);
        continue;
      }
      if (user.some((u) => u.name === script.name)) {
        problems.push(
          `saved script \`${script.name}\` of the workspace (${script.file}) is not used: your own ` +
            `script of that name (${
              join(places.configDir, USER_SCRIPTS_FOLDER, script.name)
            }.ts) wins; rename one`,
        );
        shadowed.push(script);
        continue;
      }
      usable.push(script);
    }
  }
  return { usable, untrusted, shadowed, problems };
}

/**
 * Why the user's scripts folder must not be believed (another user owns it, or others may write it: a
 * script there runs without trust), or `undefined`. Only the real disk is looked at (tests' in-memory
 * trees pass).
 */
export function unsafeScriptsFolder(dir: string): string | undefined {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(dir);
  } catch {
    return undefined; // Missing, or not on the real disk: nothing to refuse.
  }
  if (Deno.build.os === "windows") return undefined;
  if (info.uid !== null && info.uid !== Deno.uid()) return `${dir} belongs to another user`;
  if (info.mode !== null && (info.mode & 0o022) !== 0) {
    return `others may write ${dir} (mode ${(info.mode & 0o777).toString(8)}); run \`chmod go-w ${dir}\``;
  }
  return undefined;
}

async function readFolder(
  dir: string,
  source: SavedScriptSource,
  fs: FileSystem,
  problems: string[],
): Promise<SavedScript[]> {
  const unsafe = source === "user" ? unsafeScriptsFolder(dir) : undefined;
  if (unsafe !== undefined) {
    problems.push(`Cannot use the saved scripts in ${dir}: ${unsafe}`);
    return [];
  }
  let entries;
  try {
    entries = await fs.readDir(dir);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory)) {
      problems.push(`Cannot read the saved scripts in ${dir}: ${describeFsError(error)}`);
    }
    return [];
  }
  const names = entries.filter((e) => e.name.endsWith(".ts")).map((e) => e.name).sort();
  if (names.length > MAX_SAVED_SCRIPTS) {
    problems.push(
      `${dir} holds ${names.length} scripts; only the first ${MAX_SAVED_SCRIPTS} (by name) are used: remove some`,
    );
  }
  const scripts: SavedScript[] = [];
  for (const fileName of names.slice(0, MAX_SAVED_SCRIPTS)) {
    const read = await readScriptFile(join(dir, fileName), source, fs);
    if ("problem" in read) problems.push(read.problem);
    else if ("script" in read) scripts.push(read.script);
  }
  return scripts;
}

/**
 * Reads one saved script file.
 *
 * @returns The script, or a problem line (name not usable, larger than {@link MAX_SAVED_SCRIPT_BYTES},
 *   unreadable, not UTF-8). A missing file is `{ missing: true }`.
 */
export async function readScriptFile(
  file: string,
  source: SavedScriptSource,
  fs: FileSystem = denoFileSystem,
): Promise<{ script: SavedScript } | { problem: string } | { missing: true }> {
  const name = basename(file, ".ts");
  const nameProblem = scriptNameProblem(name);
  if (nameProblem !== undefined) {
    return { problem: `Cannot use the saved script ${file}: ${nameProblem}; rename the file` };
  }
  const info = await fs.stat(file).catch(() => null);
  if (info === null) return { missing: true };
  if (!info.isFile) return { problem: `Cannot use the saved script ${file}: it is not a file` };
  if ((info.size ?? 0) > MAX_SAVED_SCRIPT_BYTES) {
    return {
      problem: `Cannot use the saved script ${file}: it is ${info.size} bytes, more than ` +
        `${MAX_SAVED_SCRIPT_BYTES}; make it smaller`,
    };
  }
  let text: string;
  try {
    text = await fs.readTextFile(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { missing: true };
    return {
      problem: `Cannot read the saved script ${file}: ${error instanceof Error ? error.message : error}`,
    };
  }
  return { script: { name, source, file, text, ...parseSavedScript(text) } };
}

/**
 * Finds the script `name` runs: the user's file, else a trusted workspace file of that name.
 *
 * @returns The script; a string saying why none runs by that name (missing, untrusted, unusable).
 */
export async function findSavedScript(
  places: SavedScriptPlaces,
  name: string,
  options: SavedScriptReadOptions = {},
): Promise<SavedScript | string> {
  const fs = options.fs ?? denoFileSystem;
  const problem = scriptNameProblem(name);
  if (problem !== undefined) {
    return `no saved script is named ${JSON.stringify(name.slice(0, 80))}: ${problem}`;
  }
  const userDir = join(places.configDir, USER_SCRIPTS_FOLDER);
  const unsafe = unsafeScriptsFolder(userDir);
  if (unsafe !== undefined) return `Cannot use the saved scripts in ${userDir}: ${unsafe}`;
  const user = await readScriptFile(join(userDir, `${name}.ts`), "user", fs);
  if ("script" in user) return user.script;
  if ("problem" in user) return user.problem;
  if (places.workspaceRoot !== null) {
    const file = join(places.workspaceRoot, WORKSPACE_SCRIPTS_FOLDER, `${name}.ts`);
    const found = await readScriptFile(file, "workspace", fs);
    if ("problem" in found) return found.problem;
    if ("script" in found) {
      const store = await readTrustStore(places.configDir, fs);
      const detail = await trustDetailOf(store, [{
        key: await trustKeyOf(file, fs),
        text: found.script.text,
      }]);
      if (detail.state === "trusted") return { ...found.script, trust: "trusted" };
      return `the workspace script ${file} is ${
        detail.state === "changed" ? "changed since it was trusted" : "not trusted"
      }: a person runs \`cargo agents scripts trust ${name}\` after reading it`;
    }
  }
  return `no saved script is named \`${name}\``;
}

/**
 * Writes a user script (`<config>/scripts/<name>.ts`, mode 0600 in a 0700 folder, replaced by rename so a
 * reader never sees half a file). Replaces a script of the same name.
 *
 * @throws {UserError} `SCRIPT_NAME_INVALID` for a name {@link scriptNameProblem} refuses;
 *   `SCRIPT_TOO_LARGE` past {@link MAX_SAVED_SCRIPT_BYTES}; `SCRIPT_LIMIT` when {@link MAX_SAVED_SCRIPTS}
 *   scripts are saved already; `SCRIPT_WRITE_FAILED` when the file cannot be written.
 */
export async function writeUserScript(configDir: string, name: string, text: string): Promise<string> {
  const problem = scriptNameProblem(name);
  if (problem !== undefined) {
    throw new UserError(
      "SCRIPT_NAME_INVALID",
      `Cannot save the script as ${JSON.stringify(name)}: ${problem}`,
    );
  }
  const bytes = new TextEncoder().encode(text);
  if (bytes.length > MAX_SAVED_SCRIPT_BYTES) {
    throw new UserError(
      "SCRIPT_TOO_LARGE",
      `Cannot save the script as \`${name}\`: it is ${bytes.length} bytes, more than ${MAX_SAVED_SCRIPT_BYTES}`,
      { hint: "save a shorter script (move data out of it into its input)" },
    );
  }
  const dir = join(configDir, USER_SCRIPTS_FOLDER);
  const file = join(dir, `${name}.ts`);
  try {
    await ensurePrivateDir(dir);
    const existing = (await Array.fromAsync(Deno.readDir(dir))).filter((e) => e.name.endsWith(".ts"));
    if (existing.length >= MAX_SAVED_SCRIPTS && !existing.some((e) => e.name === `${name}.ts`)) {
      throw new UserError(
        "SCRIPT_LIMIT",
        `Cannot save the script as \`${name}\`: ${existing.length} scripts are saved, the most there may be`,
        { hint: "remove one with `cargo agents scripts rm NAME`" },
      );
    }
    await writePrivateFile(dir, `${name}.ts`, bytes);
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError("SCRIPT_WRITE_FAILED", `Cannot write ${file}: ${describeFsError(error)}`, {
      hint: "make the configuration folder writable by your user",
      cause: error,
    });
  }
  return file;
}
