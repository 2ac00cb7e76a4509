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
 * The global of session state in every script: `$session.get(key)`, `.set(key, value)`, `.delete(key)`,
 * `.keys()`. Each is a host call under this namespace (key `get`, `set`, `delete` or `keys`, arguments
 * `{ key, value }`), counted like a tool call; the host keeps the values. A server cannot take this global
 * (`namespaceKey` prefixes it).
 */
export const SESSION_GLOBAL = "$session";

/** Largest value one `$session` key may hold: UTF-8 bytes of its JSON text (8 MiB). */
export const SESSION_VALUE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Room for the envelope around a value in `$session.set`'s arguments (`{"key":...,"value":...}`, a key of at
 * most 128 characters escaped), UTF-8 bytes: a `set` may carry {@link SESSION_VALUE_MAX_BYTES} plus this.
 */
export const SESSION_ENVELOPE_MAX_BYTES = 1024;

/**
 * Largest arguments JSON a host call under `namespace` may carry, UTF-8 bytes: `maxToolArgsBytes` for a
 * tool call, {@link SESSION_VALUE_MAX_BYTES} + {@link SESSION_ENVELOPE_MAX_BYTES} for `$session`.
 */
export function maxCallArgsBytes(namespace: string, maxToolArgsBytes: number): number {
  return namespace === SESSION_GLOBAL
    ? SESSION_VALUE_MAX_BYTES + SESSION_ENVELOPE_MAX_BYTES
    : maxToolArgsBytes;
}

/**
 * The message of a `$session.set` refused for its value's size, the same on both sides of the sandbox:
 * names the key, the value's size and the limit (bytes, UTF-8 of its JSON), and says the key kept its value.
 *
 * @param key The key as the script wrote it (cut at 128 characters here).
 * @param valueBytes UTF-8 bytes of the value's JSON text.
 * @param limitBytes The limit it passed, bytes.
 * @param what Which limit: `"one value"` or, for the store, a phrase naming `[mcp] session-store-mb`.
 */
export function sessionValueRefusal(
  key: string,
  valueBytes: number,
  limitBytes: number,
  what = "one value may hold",
): string {
  const count = (n: number) => n.toLocaleString("en-US");
  return `Cannot set $session key ${JSON.stringify(key.slice(0, 128))}: its value is ${
    count(valueBytes)
  } bytes of JSON, more than the ${count(limitBytes)} bytes ${what}; the key keeps its previous value`;
}

/**
 * The global of saved scripts (`await scripts.name(input)`). A call is a host call under this namespace
 * (counted like a tool call) whose answer is the saved script's JavaScript forms; the guest compiles the
 * first that parses in the run's own context and calls it, so it runs under the run's deadline and budgets.
 * A server cannot take this global (`namespaceKey` prefixes it).
 */
export const SCRIPTS_GLOBAL = "scripts";

/** Deepest chain of saved scripts calling saved scripts (`scripts.a` calling `scripts.b` is depth 2). */
export const MAX_SCRIPTS_DEPTH = 8;
