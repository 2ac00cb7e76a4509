/**
 * Names both sides of the sandbox agree on: the globals and keys the guest's prelude defines or refuses,
 * which the host's declarations and helpers must match.
 *
 * @module
 */

/**
 * Tool names a script cannot call through its namespace object: `then` (a namespace must not be a thenable,
 * or `await github` would call a tool) and `__proto__`. Every other string key, `constructor`, `toString`,
 * `valueOf`, `toJSON`, `inspect`, `prototype`, `catch` and `finally` included, is a tool call when called.
 * Symbol keys are never tools. `$resources` is the server's resources (`list()`, `read({ uri })`), never a
 * tool: `$` is not allowed in MCP tool names.
 */
export const UNREACHABLE_TOOL_KEYS: readonly string[] = Object.freeze(["then", "__proto__"]);

/**
 * The global of the meta-server's own helpers in every script (`symposium.search(query, { limit })`).
 * Each helper is a host call under this namespace (counted like a tool call); what it means is the host's
 * business, so the sandbox knows no servers. A server cannot take this global (`namespaceKey` prefixes it).
 */
export const HELPER_GLOBAL = "symposium";

/**
 * The global of saved scripts (`await scripts.name(input)`). A call is a host call under this namespace
 * (counted like a tool call) whose answer is the saved script's JavaScript forms; the guest compiles the
 * first that parses in the run's own context and calls it, so it runs under the run's deadline and budgets.
 * A server cannot take this global (`namespaceKey` prefixes it).
 */
export const SCRIPTS_GLOBAL = "scripts";

/** Deepest chain of saved scripts calling saved scripts (`scripts.a` calling `scripts.b` is depth 2). */
export const MAX_SCRIPTS_DEPTH = 8;
