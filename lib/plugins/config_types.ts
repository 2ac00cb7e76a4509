/**
 * The validated `[mcp]` table of `config.toml` and its defaults (`docs/configuration.md`, "`[mcp]` in `config.toml`").
 * Types and defaults only; parsing lives in `config.ts`.
 *
 * @module
 */

/** `[mcp]` after validation. Names mirror the TOML keys in camelCase; units are in the names. */
export interface McpConfig {
  /** Wall-clock deadline of one `execute`, seconds. Default 120. */
  scriptTimeoutSecs: number;
  /** QuickJS heap limit, MiB. Default 64. */
  scriptMemoryLimitMb: number;
  /** QuickJS stack limit, KiB. Default 1024. */
  scriptStackLimitKb: number;
  /** Tool calls one `execute` may make. Default 100. */
  maxToolCalls: number;
  /** Cap on the serialized return value, bytes (UTF-8). Default 32768. */
  maxResultBytes: number;
  /** Cap on captured console output, bytes (UTF-8). Default 8192. */
  maxConsoleBytes: number;
  /** Spawn/connect + handshake ceiling, seconds. Default 30. */
  serverStartupTimeoutSecs: number;
  /** One `tools/call` ceiling, seconds; must be below `scriptTimeoutSecs`. Default 60. */
  toolCallTimeoutSecs: number;
  /** Restart attempts before a server is failed for the session. Default 5. */
  maxServerRestarts: number;
  /** A connection that lived this long resets the restart counter, seconds. Default 300. */
  restartStableResetSecs: number;
  /** Grace given to a backing server to exit before it is killed, seconds. Default 5. */
  shutdownGraceSecs: number;
  /** Tool calls in flight at once per backing server; more wait in order. Default 32. */
  maxCallsInFlightPerServer: number;
  /**
   * Scripts that run at once (one sandbox process each), read when the session starts; more wait their
   * turn in order, the wait counting toward their `scriptTimeoutSecs`. Default 2.
   */
  maxConcurrentScripts: number;
  /** Expose only tools annotated `readOnlyHint: true`. Default false. */
  readOnly: boolean;
  /**
   * Which tool calls made by scripts the user confirms first (through the agent's elicitation):
   * `"never"`, `"destructive"` (annotated `destructiveHint: true`, plus the manifest's
   * `confirm-tools`), `"writes"` (every tool not annotated `readOnlyHint: true`). Default `"never"`.
   */
  confirmTools: ConfirmToolsMode;
  /**
   * Largest single JSON-RPC message, MiB: a backing server's stdout line, an HTTP response body
   * or SSE event, and a line of the agent's stdin. Default 64.
   */
  maxMessageMb: number;
  /** Tool-call arguments in flight at once in one `execute`, MiB of JSON (UTF-16 code units). Default 64. */
  maxInFlightMb: number;
  /**
   * Learn the result shapes of tools without `outputSchema` from their answers and show them in
   * `list_tools` declarations (types only, never values). Default true.
   */
  observeResults: boolean;
  /**
   * `server.tool` patterns (`*` globs) of the tools the agent sees as its own tools beside `list_tools`
   * and `execute`, listed from the tool cache (`lib/meta_server/direct_tools.ts`). Default none.
   */
  directTools: readonly string[];
  /**
   * Budget of one agent session's `$session` store (`mcp-serve`'s memory), MiB: UTF-8 bytes of every key
   * and value JSON text together. Default 64.
   */
  sessionStoreMb: number;
}

/** The values of `[mcp] confirm-tools`. */
export type ConfirmToolsMode = "never" | "destructive" | "writes";

/** Every {@link ConfirmToolsMode}, in documentation order. */
export const CONFIRM_TOOLS_MODES: readonly ConfirmToolsMode[] = Object.freeze([
  "never",
  "destructive",
  "writes",
]);

/** Defaults of every `[mcp]` key (the table of `docs/configuration.md`, "`[mcp]` in `config.toml`", checked by `tests/docs_keys_test.ts`). */
export const DEFAULT_MCP_CONFIG: Readonly<McpConfig> = Object.freeze({
  scriptTimeoutSecs: 120,
  scriptMemoryLimitMb: 64,
  scriptStackLimitKb: 1024,
  maxToolCalls: 100,
  maxResultBytes: 32768,
  maxConsoleBytes: 8192,
  serverStartupTimeoutSecs: 30,
  toolCallTimeoutSecs: 60,
  maxServerRestarts: 5,
  restartStableResetSecs: 300,
  shutdownGraceSecs: 5,
  maxCallsInFlightPerServer: 32,
  maxConcurrentScripts: 2,
  readOnly: false,
  confirmTools: "never",
  maxMessageMb: 64,
  maxInFlightMb: 64,
  observeResults: true,
  directTools: Object.freeze([]) as readonly string[],
  sessionStoreMb: 64,
});
