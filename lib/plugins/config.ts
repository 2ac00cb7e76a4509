/**
 * Where the configuration lives and the validated `[mcp]` table of `config.toml`. A
 * misspelled key or a bad value is an error with file:line:col, never a silent fallback.
 *
 * @module
 */
import { join } from "node:path";
import { closestMatch, UserError } from "../diagnostics.ts";
import { CONFIRM_TOOLS_MODES, DEFAULT_MCP_CONFIG, type McpConfig } from "./config_types.ts";
import { denoFileSystem, describeFsError, type FileInfo, type FileSystem } from "../file_system.ts";
import { readDirectToolPatterns } from "./_direct_tool_patterns.ts";
import { isTable, parseTomlDocument, suggestKey, type TomlDocument, tomlTypeName } from "../toml_position.ts";

/** The `[mcp]` defaults and shape, here too: this module is a face of `plugins/` that loads alone. */
export { DEFAULT_MCP_CONFIG, type McpConfig };

/**
 * The configuration directory: the `--config-dir` flag, else `$SYMPOSIUM_HOME`, else
 * `$XDG_CONFIG_HOME/symposium`, else `<home>/.symposium`. Empty values count as unset.
 *
 * @param env The process environment.
 * @param homeDir The user's home directory (absolute).
 * @param flag The `--config-dir` value (absolute), when given. `sync` writes it into entries of
 *   agents that pass MCP servers only a short list of variables (Codex drops `SYMPOSIUM_HOME`).
 * @example
 * ```ts
 * import { resolveConfigDir } from "./config.ts";
 * resolveConfigDir({ XDG_CONFIG_HOME: "/x" }, "/home/me"); // "/x/symposium"
 * resolveConfigDir({ SYMPOSIUM_HOME: "/s" }, "/home/me", "/flag"); // "/flag"
 * ```
 */
export function resolveConfigDir(
  env: Readonly<Record<string, string>>,
  homeDir: string,
  flag?: string,
): string {
  if (flag) return flag;
  if (env.SYMPOSIUM_HOME) return env.SYMPOSIUM_HOME;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, "symposium");
  return defaultConfigDir(homeDir);
}

/** The configuration directory when nothing overrides it: `<home>/.symposium`. */
export function defaultConfigDir(homeDir: string): string {
  return join(homeDir, ".symposium");
}

/** The name of the configuration file inside the configuration directory. */
export const CONFIG_FILE_NAME = "config.toml";

/** How one `[mcp]` key is read: its field (`null`: accepted, not read), its TOML type and its range. */
export interface McpKeyRule {
  field: keyof McpConfig | null;
  kind: "integer" | "boolean" | "choice" | "patterns";
  /** The allowed strings of a `choice`. */
  choices?: readonly string[];
  min?: number;
  max?: number;
  unit?: string;
}

const DAY_SECS = 86_400;
const MIB = 1024 * 1024;

/**
 * Every `[mcp]` key, its field in {@link McpConfig} and its allowed range (inclusive). The table of
 * `docs/configuration.md`, "`[mcp]` in `config.toml`", is checked against it by `tests/docs_keys_test.ts`.
 */
export const MCP_KEY_RULES: Readonly<Record<string, McpKeyRule>> = {
  "script-timeout-secs": { field: "scriptTimeoutSecs", kind: "integer", min: 2, max: DAY_SECS, unit: "s" },
  "script-memory-limit-mb": { field: "scriptMemoryLimitMb", kind: "integer", min: 1, max: 4096, unit: "MiB" },
  "script-stack-limit-kb": { field: "scriptStackLimitKb", kind: "integer", min: 32, max: 65536, unit: "KiB" },
  "max-tool-calls": { field: "maxToolCalls", kind: "integer", min: 0, max: 1_000_000 },
  "max-result-bytes": { field: "maxResultBytes", kind: "integer", min: 256, max: 64 * MIB, unit: "bytes" },
  "max-console-bytes": { field: "maxConsoleBytes", kind: "integer", min: 0, max: MIB, unit: "bytes" },
  "server-startup-timeout-secs": {
    field: "serverStartupTimeoutSecs",
    kind: "integer",
    min: 1,
    max: DAY_SECS,
    unit: "s",
  },
  "tool-call-timeout-secs": {
    field: "toolCallTimeoutSecs",
    kind: "integer",
    min: 1,
    max: DAY_SECS,
    unit: "s",
  },
  "max-server-restarts": { field: "maxServerRestarts", kind: "integer", min: 0, max: 1000 },
  "restart-stable-reset-secs": {
    field: "restartStableResetSecs",
    kind: "integer",
    min: 0,
    max: DAY_SECS,
    unit: "s",
  },
  "shutdown-grace-secs": { field: "shutdownGraceSecs", kind: "integer", min: 0, max: 600, unit: "s" },
  "max-calls-in-flight-per-server": {
    field: "maxCallsInFlightPerServer",
    kind: "integer",
    min: 1,
    max: 1024,
    unit: "calls",
  },
  "max-concurrent-scripts": {
    field: "maxConcurrentScripts",
    kind: "integer",
    min: 1,
    max: 64,
    unit: "scripts",
  },
  "read-only": { field: "readOnly", kind: "boolean" },
  "confirm-tools": { field: "confirmTools", kind: "choice", choices: CONFIRM_TOOLS_MODES },
  "max-message-mb": { field: "maxMessageMb", kind: "integer", min: 1, max: 1024, unit: "MiB" },
  "max-in-flight-mb": { field: "maxInFlightMb", kind: "integer", min: 1, max: 4096, unit: "MiB" },
  "observe-results": { field: "observeResults", kind: "boolean" },
  "direct-tools": { field: "directTools", kind: "patterns" },
  "session-store-mb": { field: "sessionStoreMb", kind: "integer", min: 1, max: 1024, unit: "MiB" },
  // Upstream's switch between one `symposium` entry and per-plugin entries in `sync`; accepted so
  // upstream config files load, but cargo-agents always registers the one entry.
  "enabled": { field: null, kind: "boolean" },
};

/** The `[mcp]` keys accepted in `config.toml`, in documentation order. */
export const MCP_CONFIG_KEYS: readonly string[] = Object.keys(MCP_KEY_RULES);

/**
 * What `config.toml` says once read leniently: the settings in effect, every problem (each costs
 * only its key, which keeps its default; a syntax error or a broken `[mcp]` table costs the file),
 * and the adjustments made on the user's behalf.
 */
export interface McpConfigReport {
  /** The effective settings: the file's valid keys over {@link DEFAULT_MCP_CONFIG}. */
  config: McpConfig;
  /** Problems in file order, each a {@link UserError} with its 1-based location. */
  problems: UserError[];
  /**
   * Adjustments that are not errors, one line each with `file:line:col`, e.g. `tool-call-timeout-secs`
   * lowered to stay below a lowered `script-timeout-secs`.
   */
  warnings: string[];
}

/**
 * Validates the `[mcp]` table of a `config.toml` text, strictly: the first problem is thrown.
 * Missing keys take their defaults ({@link DEFAULT_MCP_CONFIG}); other top-level tables (upstream's
 * `[defaults]`, `auto-sync`, `[[registry]]`...) are left to the rest of Symposium, except a near-miss
 * of `mcp` such as `[mpc]`. See {@link readMcpConfig} for the lenient form the meta-server uses.
 *
 * @param text The file's content.
 * @param file The path shown in diagnostics.
 * @returns The complete configuration.
 * @throws {UserError} `CONFIG_SYNTAX` for invalid TOML; `CONFIG_UNKNOWN_KEY` for an unknown key in
 *   `[mcp]` (hint: the closest key); `CONFIG_BAD_VALUE` for a wrong type, a value out of range, or
 *   an explicit `tool-call-timeout-secs` not below `script-timeout-secs`. Every error has a 1-based location.
 */
export function parseMcpConfig(text: string, file: string): McpConfig {
  const report = readMcpConfig(text, file);
  if (report.problems[0]) throw report.problems[0];
  return report.config;
}

/** What a bad `confirm-tools` value falls back to: the strictest mode (a safety setting fails closed). */
const CONFIRM_TOOLS_STRICTEST = "writes";

/** Whether `key` is a near miss of `confirm-tools` (`confirm_tools`, `confirmTools`, any key with `confirm`). */
function isConfirmToolsLike(key: string): boolean {
  const letters = key.toLowerCase().replace(/[^a-z]/g, "");
  return key !== "confirm-tools" && (letters === "confirmtools" || letters.includes("confirm"));
}

/**
 * Reads the `[mcp]` table of a `config.toml` text leniently: a bad key costs only that key (it keeps its
 * default, except `confirm-tools`, which falls back to the strictest mode, `"writes"`).
 * When `tool-call-timeout-secs` is not below `script-timeout-secs` and was not written, it follows:
 * `script-timeout-secs - 1` (upstream's clamp), with a warning. Written explicitly and not below, it is
 * one problem of that key saying what applies instead: its default when that is below the script
 * timeout, else `script-timeout-secs - 1` (no warning beside it).
 *
 * @param text The file's content.
 * @param file The path shown in diagnostics.
 * @returns Never throws for the file's content; problems are in the report (codes as
 *   {@link parseMcpConfig} throws them).
 * @example
 * ```ts
 * import { readMcpConfig } from "./config.ts";
 * const report = readMcpConfig("[mcp]\nscript-timeout-secs = 5\nmax-tool-calls = -1\n", "config.toml");
 * report.config.scriptTimeoutSecs; // 5
 * report.config.toolCallTimeoutSecs; // 4, with a warning
 * report.problems[0]?.code; // "CONFIG_BAD_VALUE" (max-tool-calls keeps its default)
 * ```
 */
export function readMcpConfig(text: string, file: string): McpConfigReport {
  const config: McpConfig = { ...DEFAULT_MCP_CONFIG };
  const problems: UserError[] = [];
  const warnings: string[] = [];
  let doc: TomlDocument;
  try {
    doc = parseTomlDocument(text, file, { code: "CONFIG_SYNTAX", what: "config file" });
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    return { config, problems: [error], warnings };
  }
  const at = (path: (string | number)[]) => ({ file, ...doc.index.locate(path) });
  /** A near miss of `confirm-tools` (in [mcp] or a misspelled table) means the strictest mode, said so. */
  let nearMissOfConfirm = false;
  const failClosed = (path: string[]) => {
    nearMissOfConfirm = true;
    const where = path.length > 1 ? `"${path.at(-1)}" in [${path[0]}]` : `"${path[0]}"`;
    problems.push(
      new UserError(
        "CONFIG_UNKNOWN_KEY",
        `Cannot apply ${where}: it is not [mcp] confirm-tools, but looks like it, so confirm-tools = "${CONFIRM_TOOLS_STRICTEST}" applies until it is fixed`,
        { hint: 'write confirm-tools = "\u2026" in the [mcp] table', location: at(path) },
      ),
    );
  };
  for (const key of Object.keys(doc.value)) {
    if (key !== "mcp" && closestMatch(key, ["mcp"]) === "mcp" && key.length > 1) {
      const table = doc.value[key];
      const confirmLike = isTable(table)
        ? Object.keys(table).filter((k) => k === "confirm-tools" || isConfirmToolsLike(k))
        : [];
      for (const inner of confirmLike) failClosed([key, inner]);
      if (confirmLike.length > 0) continue;
      problems.push(
        new UserError(
          "CONFIG_UNKNOWN_KEY",
          `Cannot apply table "${key}": it is not [mcp], so it is ignored`,
          {
            hint: 'did you mean "mcp"?',
            location: at([key]),
          },
        ),
      );
    } else if (key !== "mcp" && (key === "confirm-tools" || isConfirmToolsLike(key))) failClosed([key]);
  }
  const mcp = doc.value.mcp;
  if (nearMissOfConfirm) config.confirmTools = CONFIRM_TOOLS_STRICTEST;
  if (mcp === undefined) return { config, problems, warnings };
  if (!isTable(mcp)) {
    problems.push(
      new UserError("CONFIG_BAD_VALUE", `Cannot load config file: "mcp" is a ${tomlTypeName(mcp)}`, {
        hint: "write it as a table: [mcp]",
        location: at(["mcp"]),
      }),
    );
    return { config, problems, warnings };
  }
  const accepted = new Set<string>();
  for (const [key, value] of Object.entries(mcp)) {
    const rule = MCP_KEY_RULES[key];
    if (!rule && isConfirmToolsLike(key)) {
      failClosed(["mcp", key]);
      continue;
    }
    if (!rule) {
      const near = suggestKey(key, MCP_CONFIG_KEYS);
      problems.push(
        new UserError(
          "CONFIG_UNKNOWN_KEY",
          `Cannot apply "${key}" in [mcp]: it is not a known key (ignored; every other key applies)`,
          {
            hint: near ? `did you mean "${near}"?` : `known keys: ${MCP_CONFIG_KEYS.join(", ")}`,
            location: at(["mcp", key]),
          },
        ),
      );
      continue;
    }
    if (rule.kind === "patterns") {
      // Each bad pattern costs only itself (`_direct_tool_patterns.ts`).
      const read = readDirectToolPatterns(value, doc, file);
      problems.push(...read.problems);
      config.directTools = read.patterns;
      continue;
    }
    const problem = checkValue(key, value, rule, doc, file);
    if (problem) {
      if (key === "confirm-tools") {
        // A safety setting fails closed: a misspelled mode must not turn confirmation off.
        config.confirmTools = CONFIRM_TOOLS_STRICTEST;
        problems.push(
          new UserError(
            problem.code,
            `${problem.message}; until it is fixed, "${CONFIRM_TOOLS_STRICTEST}" applies`,
            {
              ...(problem.hint !== undefined ? { hint: problem.hint } : {}),
              ...(problem.location !== undefined ? { location: problem.location } : {}),
            },
          ),
        );
        continue;
      }
      // Only this key is dropped: the message says what applies instead.
      const fallback = rule.field
        ? (DEFAULT_MCP_CONFIG as unknown as Record<string, unknown>)[rule.field]
        : undefined;
      problems.push(
        fallback === undefined ? problem : new UserError(
          problem.code,
          `${problem.message}; until it is fixed, its default (${JSON.stringify(fallback)}) applies`,
          {
            ...(problem.hint !== undefined ? { hint: problem.hint } : {}),
            ...(problem.location !== undefined ? { location: problem.location } : {}),
          },
        ),
      );
      continue;
    }
    accepted.add(key);
    if (rule.field) (config as unknown as Record<string, unknown>)[rule.field] = value;
  }
  // Whatever confirm-tools itself says: which of the two the user meant is not known, so the strictest.
  if (nearMissOfConfirm) config.confirmTools = CONFIRM_TOOLS_STRICTEST;
  if (config.toolCallTimeoutSecs >= config.scriptTimeoutSecs) {
    // One notice either way, saying the value that applies: a call's timeout must end before its script's.
    const written = config.toolCallTimeoutSecs;
    const script = config.scriptTimeoutSecs;
    const fallback = DEFAULT_MCP_CONFIG.toolCallTimeoutSecs;
    const applied = fallback < script ? fallback : Math.max(1, script - 1);
    config.toolCallTimeoutSecs = applied;
    if (accepted.has("tool-call-timeout-secs")) {
      problems.push(
        new UserError(
          "CONFIG_BAD_VALUE",
          `Cannot apply [mcp] tool-call-timeout-secs = ${written}: it must be less than script-timeout-secs ` +
            `(${script}), so ${applied} s applies until it is fixed`,
          {
            hint: `set tool-call-timeout-secs below ${script}, or script-timeout-secs above ${written}`,
            location: at(["mcp", "tool-call-timeout-secs"]),
          },
        ),
      );
    } else {
      const where = accepted.has("script-timeout-secs") ? at(["mcp", "script-timeout-secs"]) : { file };
      const position = "line" in where ? `${file}:${where.line}:${where.column}` : file;
      warnings.push(
        `${position}: [mcp] tool-call-timeout-secs is ${applied} s (not ${written} s) to ` +
          `stay below script-timeout-secs (${script} s); set tool-call-timeout-secs to choose another value`,
      );
    }
  }
  return { config, problems, warnings };
}

function checkValue(
  key: string,
  value: unknown,
  rule: McpKeyRule,
  doc: TomlDocument,
  file: string,
): UserError | undefined {
  const location = { file, ...doc.index.locate(["mcp", key]) };
  if (rule.kind === "choice") {
    const choices = rule.choices ?? [];
    if (typeof value !== "string" || !choices.includes(value)) {
      const shown = typeof value === "string" ? JSON.stringify(value) : `a ${tomlTypeName(value)}`;
      const near = typeof value === "string" ? closestMatch(value, choices) : undefined;
      return new UserError(
        "CONFIG_BAD_VALUE",
        `Cannot apply [mcp] ${key}: it must be one of ${
          choices.map((c) => `"${c}"`).join(", ")
        }, not ${shown}`,
        { hint: near ? `did you mean "${near}"?` : `write ${key} = "${choices[0]}"`, location },
      );
    }
    return;
  }
  if (rule.kind === "boolean") {
    if (typeof value !== "boolean") {
      return new UserError(
        "CONFIG_BAD_VALUE",
        `Cannot apply [mcp] ${key}: it must be true or false, not a ${tomlTypeName(value)}`,
        { hint: `write ${key} = true or ${key} = false`, location },
      );
    }
    return undefined;
  }
  const min = rule.min ?? 0;
  const max = rule.max ?? Number.MAX_SAFE_INTEGER;
  const unit = rule.unit ? ` (${rule.unit})` : "";
  if (typeof value !== "number" || !Number.isInteger(value)) {
    return new UserError(
      "CONFIG_BAD_VALUE",
      `Cannot apply [mcp] ${key}: it must be an integer${unit}, not a ${tomlTypeName(value)}`,
      { hint: `write a whole number from ${min} to ${max}, without quotes`, location },
    );
  }
  if (value < min || value > max) {
    return new UserError(
      "CONFIG_BAD_VALUE",
      `Cannot apply [mcp] ${key} = ${value}: it is outside ${min}..${max}${unit}`,
      { hint: `write a whole number from ${min} to ${max}`, location },
    );
  }
  return undefined;
}

/**
 * Reads `<configDir>/config.toml` and validates its `[mcp]` table strictly (the first problem is
 * thrown; see {@link loadMcpConfigReport} for the lenient form).
 *
 * @param configDir From {@link resolveConfigDir}.
 * @param fs File access. Default {@link denoFileSystem}.
 * @returns The defaults when the file, the directory or its `[mcp]` table is missing.
 * @throws {UserError} As {@link parseMcpConfig}; the location's file is the absolute path.
 *   `CONFIG_DIR_NOT_A_FOLDER` when `configDir` (or a folder above it) is a file;
 *   `CONFIG_UNREADABLE` when `config.toml` is a folder or cannot be read.
 */
export async function loadMcpConfig(configDir: string, fs: FileSystem = denoFileSystem): Promise<McpConfig> {
  const report = await loadMcpConfigReport(configDir, fs);
  if (report.problems[0]) throw report.problems[0];
  return report.config;
}

/**
 * Reads `<configDir>/config.toml` leniently ({@link readMcpConfig}): the settings in effect with
 * every problem and adjustment.
 *
 * @param configDir From {@link resolveConfigDir}.
 * @param fs File access. Default {@link denoFileSystem}.
 * @returns The defaults (and no problem) when the file, the directory or its `[mcp]` table is missing.
 * @throws {UserError} Only when the file cannot be read at all: `CONFIG_DIR_NOT_A_FOLDER` when
 *   `configDir` (or a folder above it) is a file; `CONFIG_UNREADABLE` when `config.toml` is a
 *   folder, cannot be read, or is not UTF-8 (with the position).
 */
export async function loadMcpConfigReport(
  configDir: string,
  fs: FileSystem = denoFileSystem,
): Promise<McpConfigReport> {
  const none = (): McpConfigReport => ({ config: { ...DEFAULT_MCP_CONFIG }, problems: [], warnings: [] });
  const dir = await statConfigPath(fs, configDir, configDir);
  if (dir === null) return none();
  if (!dir.isDirectory) throw configDirNotAFolder(configDir);
  const file = join(configDir, CONFIG_FILE_NAME);
  const info = await statConfigPath(fs, file, configDir);
  if (info === null) return none();
  if (!info.isFile) {
    throw new UserError(
      "CONFIG_UNREADABLE",
      `Cannot load config file "${file}": it is ${
        info.isDirectory ? "a folder" : "not a regular file"
      }, not a file`,
      {
        hint: `remove or rename the folder "${file}"; the config file must be a TOML file`,
      },
    );
  }
  const unsafe = unsafeOwnerReason(file);
  if (unsafe !== undefined) return { ...none(), problems: [unsafeConfigProblem(file, unsafe)] };
  let text: string;
  try {
    text = await fs.readTextFile(file);
  } catch (error) {
    if (error instanceof UserError) throw error; // not UTF-8, with the position
    throw new UserError("CONFIG_UNREADABLE", `Cannot load config file "${file}": ${describeFsError(error)}`, {
      hint: "make the file readable by your user",
      cause: error,
    });
  }
  return readMcpConfig(text, file);
}

/**
 * Why a file or folder that can name a command (`config.toml`, an entry of `<config>/plugins/`) must not
 * be used: it belongs to another user, or anyone may write it (mode `o+w`), so someone else could have
 * put a command there. Links are followed (the target's owner and mode count: a linked dotfile is fine).
 * The same rule `trusted.toml` has, less group-writable (common under a per-user group and umask 002).
 *
 * @returns The reason, or `undefined` when it may be used, is not on the real disk (an in-memory tree in
 *   tests) or is gone, and on Windows (no owner or mode bits).
 */
export function unsafeOwnerReason(path: string): string | undefined {
  if (Deno.build.os === "windows") return undefined;
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch {
    return undefined; // Not on the real disk, or gone: whoever reads it next sees that.
  }
  if (info.uid !== null && info.uid !== Deno.uid()) return `it belongs to another user (uid ${info.uid})`;
  if (info.mode !== null && (info.mode & 0o002) !== 0) {
    return `anyone may write it (mode ${(info.mode & 0o777).toString(8)})`;
  }
  return undefined;
}

/** The problem of a `config.toml` that {@link unsafeOwnerReason} refuses: nothing of it is used. */
export function unsafeConfigProblem(file: string, reason: string): UserError {
  return new UserError(
    "CONFIG_UNSAFE",
    `Cannot use config file "${file}": ${reason}; none of its settings or registries are used (the defaults apply)`,
    { hint: `make it yours and writable only by you: \`chown "$USER" '${file}' && chmod 600 '${file}'\`` },
  );
}

/**
 * The error for a configuration directory that is not a folder (`SYMPOSIUM_HOME` pointing at a
 * file, or, when `cause` is given, a file where one of its parent folders should be).
 */
export function configDirNotAFolder(configDir: string, cause?: unknown): UserError {
  const what = cause === undefined ? "it is a file" : "a part of its path is a file";
  return new UserError(
    "CONFIG_DIR_NOT_A_FOLDER",
    `Cannot use configuration directory "${configDir}": ${what}, not a folder`,
    {
      hint: "point SYMPOSIUM_HOME (or XDG_CONFIG_HOME) at a folder, or move the file out of the way",
      cause,
    },
  );
}

/** `fs.stat`, with a file where a folder should be read as a configuration-directory error. */
async function statConfigPath(fs: FileSystem, path: string, configDir: string): Promise<FileInfo | null> {
  try {
    return await fs.stat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotADirectory) throw configDirNotAFolder(configDir, error);
    throw new UserError("CONFIG_UNREADABLE", `Cannot read "${path}": ${describeFsError(error)}`, {
      hint: "make the configuration directory readable by your user",
      cause: error,
    });
  }
}
