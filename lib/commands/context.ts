/**
 * The effects a command receives from `main.ts`: the process environment
 * snapshot, the working directory and the output streams. Commands never
 * read `Deno.env`, `Deno.args` or print on their own.
 *
 * @module
 */

/** What every command gets from `main.ts`. */
export interface CommandContext {
  /** Snapshot of the process environment. */
  env: Readonly<Record<string, string>>;
  /** The working directory: the user's workspace. Absolute. */
  cwd: string;
  /** The user's home directory (absolute), or `""` when unknown. */
  homeDir: string;
  /** `--config-dir DIR` (absolute), which overrides `$SYMPOSIUM_HOME` and `$XDG_CONFIG_HOME`. */
  configDir?: string | undefined;
  /** Absolute path of the running program (the compiled binary or the `deno` executable). */
  execPath: string;
  /** The arguments with which this program re-runs itself, e.g. `["mcp-serve"]` is appended to these. */
  selfCommand: { command: string; args: string[] };
  /** `--verbose` was given. */
  verbose: boolean;
  /** Writes to stdout (for commands whose stdout is not a protocol channel). */
  writeOut(text: string): void;
  /** Writes to stderr. */
  writeErr(text: string): void;
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal;
}
