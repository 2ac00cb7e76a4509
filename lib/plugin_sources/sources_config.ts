/**
 * The plugin sources `config.toml` names (upstream's `[[registry]]`, its retired spelling
 * `[[plugin-source]]`, and `[defaults]`): which registries exist, where their plugins are, and
 * whether they update themselves. Pure: reading the text starts nothing and fetches nothing.
 *
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import { closestMatch, type Location, UserError } from "../diagnostics.ts";
import { isTable, parseTomlDocument, type TomlDocument, tomlTypeName } from "../toml_position.ts";
import { USER_PLUGINS_SOURCE } from "../plugins/mod.ts";

/** The built-in registry of upstream's recommended plugins. */
export const RECOMMENDATIONS_SOURCE = "symposium-recommendations";
/** Where {@link RECOMMENDATIONS_SOURCE} is cloned from unless `[defaults] recommendations-url` or `SYMPOSIUM_RECOMMENDATIONS_URL` says otherwise. */
export const DEFAULT_RECOMMENDATIONS_URL = "https://github.com/symposium-dev/recommendations";
/** The environment variable that overrides the recommendations URL (it wins over the config file). */
export const RECOMMENDATIONS_URL_ENV = "SYMPOSIUM_RECOMMENDATIONS_URL";
/** Names a `[[registry]]` cannot take: the built-in sources' and the workspace's. */
export const RESERVED_SOURCE_NAMES: readonly string[] = [
  USER_PLUGINS_SOURCE,
  RECOMMENDATIONS_SOURCE,
  "workspace",
];

/** One registry: a folder on disk (`path`) or a git repository cloned into the cache (`git`). */
export interface RegistryConfig {
  /** `[[registry]] name`, or a built-in name. Safe as a folder name. */
  name: string;
  /** `"git"`: cloned into `<config>/cache/plugin-sources/<name>`; `"path"`: read in place. */
  kind: "git" | "path";
  /** Git: the URL as written. */
  git?: string | undefined;
  /** Path: the absolute folder (a relative `path` is joined to the configuration directory). */
  path?: string | undefined;
  /** Fetch at most daily in the background of `status` and `sync`, and in a bare `plugin sync`. Default `true`. */
  autoUpdate: boolean;
  /** Where the entry is written; absent for built-ins. */
  location?: Location | undefined;
}

/** What `config.toml` says about plugin sources. */
export interface SourcesConfig {
  /** `[defaults] user-plugins` (default `true`): whether `<config>/plugins` is a source. */
  userPlugins: boolean;
  /** Registries in effect order: the recommendations (unless disabled), then `[[registry]]` entries. */
  registries: RegistryConfig[];
  /** Each bad entry or key costs only itself. */
  problems: UserError[];
}

/**
 * Every `[defaults]` key this program reads, with its default. `docs/configuration.md` lists them
 * (checked by `tests/docs_keys_test.ts`).
 */
export const SOURCES_DEFAULTS: Readonly<
  { "user-plugins": boolean; "symposium-recommendations": boolean; "recommendations-url": string }
> = Object.freeze({
  "user-plugins": true,
  "symposium-recommendations": true,
  "recommendations-url": DEFAULT_RECOMMENDATIONS_URL,
});
/**
 * Every `[[registry]]` key, with its default (`undefined`: none; `name` and one of `git`, `path` are
 * required). `docs/configuration.md` lists them (checked by `tests/docs_keys_test.ts`).
 */
export const REGISTRY_DEFAULTS: Readonly<
  { name: undefined; git: undefined; path: undefined; "auto-update": boolean }
> = Object.freeze({ name: undefined, git: undefined, path: undefined, "auto-update": true });
const DEFAULTS_KEYS = Object.keys(SOURCES_DEFAULTS);
const REGISTRY_KEYS = Object.keys(REGISTRY_DEFAULTS);
const NAME_RULE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * A git URL we pass to `git clone`: scheme URLs (`https`, `http`, `ssh`, `git`, `file`), scp-like
 * `user@host:path`, or an absolute path. Never one starting with `-` (it would be an option) nor a
 * remote helper (`ext::`, `fd::`), which run commands.
 */
export function isAcceptableGitUrl(url: string): boolean {
  if (url.startsWith("-") || /^[A-Za-z][A-Za-z0-9+.-]*::/.test(url) || /[\0\n\r]/.test(url)) return false;
  if (/^(https?|ssh|git|file):\/\//i.test(url)) return true;
  if (isAbsolute(url)) return true;
  return /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/]/.test(url);
}

/**
 * Reads the sources of a `config.toml` text leniently: a bad entry is a problem and is left out,
 * the rest apply. A missing file (`text` `null`) means the defaults: the recommendations registry and
 * the user's plugins folder.
 *
 * @param text The file's content, or `null` when there is none.
 * @param file Path shown in problems.
 * @param options.configDir Folder relative `path`s start from.
 * @param options.env Where `SYMPOSIUM_RECOMMENDATIONS_URL` is read (checked as the file's URLs are:
 *   a bad one is a `REGISTRY_BAD_URL` problem, and the file's or the default URL is used).
 * @returns Never throws for the content. Problem codes: `CONFIG_SYNTAX` (the file is not TOML: the
 *   defaults apply), `CONFIG_UNKNOWN_KEY` (hint: the closest key), `CONFIG_BAD_VALUE`,
 *   `REGISTRY_DUPLICATE`, `REGISTRY_BAD_NAME`, `REGISTRY_BAD_URL`.
 * @example
 * ```ts
 * import { readSourcesConfig } from "./sources_config.ts";
 * const c = readSourcesConfig('[[registry]]\nname = "team"\npath = "team-plugins"\n', "config.toml", {
 *   configDir: "/cfg",
 *   env: { SYMPOSIUM_RECOMMENDATIONS_URL: "/srv/recs.git" },
 * });
 * c.registries.map((r) => r.name); // ["symposium-recommendations", "team"]
 * ```
 */
export function readSourcesConfig(
  text: string | null,
  file: string,
  options: { configDir: string; env: Readonly<Record<string, string>> },
): SourcesConfig {
  const problems: UserError[] = [];
  let doc: TomlDocument | undefined;
  if (text !== null) {
    try {
      doc = parseTomlDocument(text, file, { code: "CONFIG_SYNTAX", what: "config file" });
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      // config.toml's own reader reports the syntax error once; the defaults apply here.
    }
  }
  const top = doc?.value ?? {};
  const at = (path: (string | number)[]): Location =>
    ({ file, ...(doc?.index.locate(path) ?? {}) }) as Location;
  const bad = (code: string, path: (string | number)[], what: string, hint?: string) =>
    problems.push(new UserError(code, `Cannot load config file: ${what}`, { hint, location: at(path) }));
  let userPlugins = SOURCES_DEFAULTS["user-plugins"];
  let recommendations = SOURCES_DEFAULTS["symposium-recommendations"];
  let recommendationsUrl = SOURCES_DEFAULTS["recommendations-url"];
  const defaults = top.defaults;
  if (defaults !== undefined && !isTable(defaults)) {
    bad(
      "CONFIG_BAD_VALUE",
      ["defaults"],
      `"defaults" is a ${tomlTypeName(defaults)}`,
      "write it as a table: [defaults]",
    );
  } else if (isTable(defaults)) {
    for (const [key, value] of Object.entries(defaults)) {
      if (key === "user-plugins" || key === "symposium-recommendations") {
        if (typeof value !== "boolean") {
          bad(
            "CONFIG_BAD_VALUE",
            ["defaults", key],
            `[defaults] ${key} must be true or false`,
            `write ${key} = false`,
          );
        } else if (key === "user-plugins") userPlugins = value;
        else recommendations = value;
      } else if (key === "recommendations-url") {
        if (typeof value !== "string" || !isAcceptableGitUrl(value)) {
          bad(
            "REGISTRY_BAD_URL",
            ["defaults", key],
            `[defaults] recommendations-url must be a git URL (https://, ssh://, git://, file:// or a path)`,
          );
        } else recommendationsUrl = value;
      } else {
        // Other parts of Symposium keep their own [defaults]; only a near-miss of ours is reported.
        const near = closestMatch(key, DEFAULTS_KEYS);
        if (near !== undefined) {
          bad(
            "CONFIG_UNKNOWN_KEY",
            ["defaults", key],
            `unknown key "${key}" in [defaults]`,
            `did you mean "${near}"?`,
          );
        }
      }
    }
  }
  const fromEnv = options.env[RECOMMENDATIONS_URL_ENV];
  if (fromEnv !== undefined && fromEnv !== "") {
    // The same checks as the config file's URLs: never an option (`-...`) nor a remote helper (`ext::`).
    if (isAcceptableGitUrl(fromEnv)) recommendationsUrl = fromEnv;
    else {
      problems.push(
        new UserError(
          "REGISTRY_BAD_URL",
          `Cannot use ${RECOMMENDATIONS_URL_ENV}: it must be a git URL (https://, ssh://, git://, file://, user@host:path or a path); ${
            recommendationsUrl === DEFAULT_RECOMMENDATIONS_URL ? "the default" : "recommendations-url"
          } is used`,
          { hint: `unset ${RECOMMENDATIONS_URL_ENV}, or set it to a git URL` },
        ),
      );
    }
  }
  const registries: RegistryConfig[] = [];
  if (recommendations) {
    registries.push({ name: RECOMMENDATIONS_SOURCE, kind: "git", git: recommendationsUrl, autoUpdate: true });
  }
  for (const table of ["registry", "plugin-source"]) {
    const entries = top[table];
    if (entries === undefined) continue;
    if (!Array.isArray(entries) || !entries.every(isTable)) {
      bad(
        "CONFIG_BAD_VALUE",
        [table],
        `"${table}" must be an array of tables`,
        `declare each under its own [[${table}]] header`,
      );
      continue;
    }
    entries.forEach((entry, i) => {
      const registry = readRegistry(entry as Record<string, unknown>, [table, i], options.configDir, bad, at);
      if (registry === undefined) return;
      if (RESERVED_SOURCE_NAMES.includes(registry.name)) {
        bad(
          "REGISTRY_BAD_NAME",
          [table, i, "name"],
          `registry name "${registry.name}" is reserved`,
          "choose another name",
        );
      } else if (registries.some((r) => r.name === registry.name)) {
        bad(
          "REGISTRY_DUPLICATE",
          [table, i, "name"],
          `a registry named "${registry.name}" is declared twice`,
          "give each [[registry]] its own name; the first one is used",
        );
      } else registries.push(registry);
    });
  }
  return { userPlugins, registries, problems };
}

function readRegistry(
  entry: Record<string, unknown>,
  path: (string | number)[],
  configDir: string,
  bad: (code: string, path: (string | number)[], what: string, hint?: string) => void,
  at: (path: (string | number)[]) => Location,
): RegistryConfig | undefined {
  const table = `[[${path[0]}]]`;
  let ok = true;
  for (const key of Object.keys(entry)) {
    if (REGISTRY_KEYS.includes(key)) continue;
    const near = closestMatch(key, REGISTRY_KEYS);
    bad(
      "CONFIG_UNKNOWN_KEY",
      [...path, key],
      `unknown key "${key}" in ${table}`,
      near ? `did you mean "${near}"?` : `known keys: ${REGISTRY_KEYS.join(", ")}`,
    );
    ok = false;
  }
  const name = entry.name;
  if (typeof name !== "string" || !NAME_RULE.test(name)) {
    bad(
      "REGISTRY_BAD_NAME",
      "name" in entry ? [...path, "name"] : path,
      typeof name === "string" ? `registry name "${name}" is not a plain name` : `${table} needs a "name"`,
      'use letters, digits, ".", "_" and "-", e.g. name = "team-plugins"',
    );
    ok = false;
  }
  const hasGit = "git" in entry, hasPath = "path" in entry;
  if (hasGit === hasPath) {
    bad(
      "CONFIG_BAD_VALUE",
      path,
      `${table} "${String(name)}" must set exactly one of \`git\` and \`path\``,
      'write git = "https://\u2026" for a repository or path = "\u2026" for a folder',
    );
    ok = false;
  }
  if (hasGit && (typeof entry.git !== "string" || !isAcceptableGitUrl(entry.git))) {
    bad(
      "REGISTRY_BAD_URL",
      [...path, "git"],
      `${table} "${
        String(name)
      }": \`git\` must be a git URL (https://, ssh://, git://, file://, user@host:path or a path)`,
    );
    ok = false;
  }
  if (hasPath && (typeof entry.path !== "string" || entry.path.trim() === "")) {
    bad(
      "CONFIG_BAD_VALUE",
      [...path, "path"],
      `${table} "${String(name)}": \`path\` must be a non-empty string`,
    );
    ok = false;
  }
  const autoUpdate = entry["auto-update"] ?? REGISTRY_DEFAULTS["auto-update"];
  if (typeof autoUpdate !== "boolean") {
    bad(
      "CONFIG_BAD_VALUE",
      [...path, "auto-update"],
      `${table} "${String(name)}": \`auto-update\` must be true or false`,
    );
    ok = false;
  }
  if (!ok) return undefined;
  return {
    name: name as string,
    kind: hasGit ? "git" : "path",
    ...(hasGit ? { git: entry.git as string } : { path: resolve(configDir, entry.path as string) }),
    autoUpdate: autoUpdate as boolean,
    location: at(path),
  };
}
