/**
 * Session state: the JSON values scripts keep between `execute`s with `$session.set(key, value)`, held in
 * `mcp-serve`'s memory for one agent session (never written to disk or to a log) and dropped when the
 * session ends or its workspace changes. One store per agent session, shared by its concurrent `execute`s.
 *
 * "The workspace changes" means: the Cargo workspace root the catalog resolves for `mcp-serve`'s folder (its
 * `Workspace.root`, `""` outside any Cargo project) is another one than when the values were kept. The
 * catalog looks at the workspace files every 2 s and on each request; every `$session` call and every
 * `list_tools` index checks the root first (`bindWorkspace`), so no value outlives its workspace. A changed
 * `Cargo.lock`, dependency, plugin or `config.toml` keeps the values.
 *
 * @module
 */
import {
  SESSION_GLOBAL,
  SESSION_VALUE_MAX_BYTES,
  sessionValueRefusal,
  utf8ByteLength,
} from "../sandbox/mod.ts";

export { SESSION_GLOBAL, SESSION_VALUE_MAX_BYTES };

/** Longest key, UTF-16 code units (characters for the keys people write). */
export const SESSION_KEY_MAX_CHARS = 128;

/** Most keys one session store holds: a `set` of a new key past it is refused. */
export const SESSION_MAX_KEYS = 10_000;

const MIB = 1024 * 1024;

/** Characters a key may not hold: C0 and C1 controls, DEL, line and paragraph separators. */
// deno-lint-ignore no-control-regex -- control characters are exactly what this refuses
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** One kept value: its JSON text and what it costs the store. */
interface Entry {
  json: string;
  /** UTF-8 bytes of `json`. */
  valueBytes: number;
  /** `valueBytes` plus the key's UTF-8 bytes: what the entry counts against the store's budget. */
  storeBytes: number;
}

/** A key and what it holds, for the `list_tools` index (never the value). */
export interface SessionKeySize {
  key: string;
  /** UTF-8 bytes of the value's JSON text. */
  bytes: number;
}

/** Options of {@link SessionStore}. */
export interface SessionStoreOptions {
  /**
   * The store's budget, UTF-8 bytes of every key and value JSON text together, read at each `set` (so a
   * changed `[mcp] session-store-mb` applies at once). @default 64 MiB
   */
  maxStoreBytes?: (() => number) | undefined;
}

/**
 * The values of one agent session, by key. A `set` measures the value's whole JSON text before it
 * replaces anything, so it is atomic: it applies whole or not at all, and an `execute` running beside it
 * sees the old value or the new one. Every refusal is a `RangeError` or `TypeError` whose message names
 * the key, the size and the limit, never the value.
 */
export class SessionStore {
  readonly #entries = new Map<string, Entry>();
  readonly #maxStoreBytes: () => number;
  #usedBytes = 0;
  #workspace: string | undefined;

  constructor(options: SessionStoreOptions = {}) {
    this.#maxStoreBytes = options.maxStoreBytes ?? (() => 64 * MIB);
  }

  /** UTF-8 bytes of every key and value held. */
  get usedBytes(): number {
    return this.#usedBytes;
  }

  /** The budget now in effect, bytes. */
  get maxStoreBytes(): number {
    return this.#maxStoreBytes();
  }

  /** How many keys are held. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Ties the store to a workspace: the first call records `workspace`; a later call with another one
   * drops every value first (the state belonged to the other workspace).
   *
   * @param workspace The workspace's identity (its root folder).
   * @returns How many keys were dropped (0 when the workspace is the same).
   */
  bindWorkspace(workspace: string): number {
    if (this.#workspace === workspace) return 0;
    const first = this.#workspace === undefined;
    this.#workspace = workspace;
    if (first) return 0;
    const dropped = this.#entries.size;
    this.clear();
    return dropped;
  }

  /** The value under `key` (a fresh copy), or `undefined` when it holds none. @throws {TypeError} bad key. */
  get(key: unknown): unknown {
    const entry = this.#entries.get(checkKey(key, "get"));
    return entry === undefined ? undefined : JSON.parse(entry.json);
  }

  /**
   * Keeps `value` under `key`, replacing what it held.
   *
   * @param value Any JSON value (`undefined` is refused: delete the key instead).
   * @throws {TypeError} a bad key or an `undefined` value.
   * @throws {RangeError} a value over {@link SESSION_VALUE_MAX_BYTES}, a store past its budget, or a new
   *   key past {@link SESSION_MAX_KEYS}; the key then keeps its previous value.
   */
  set(key: unknown, value: unknown): void {
    const name = checkKey(key, "set");
    if (value === undefined) {
      throw new TypeError(
        `Cannot set $session key ${JSON.stringify(name)}: the value is undefined, which has no JSON form; ` +
          `remove a key with $session.delete(${JSON.stringify(name)})`,
      );
    }
    const json = JSON.stringify(value);
    const valueBytes = utf8ByteLength(json);
    if (valueBytes > SESSION_VALUE_MAX_BYTES) {
      throw new RangeError(sessionValueRefusal(name, valueBytes, SESSION_VALUE_MAX_BYTES));
    }
    const old = this.#entries.get(name);
    if (old === undefined && this.#entries.size >= SESSION_MAX_KEYS) {
      throw new RangeError(
        `Cannot set $session key ${
          JSON.stringify(name)
        }: the session store holds ${SESSION_MAX_KEYS} keys, ` +
          "its most; delete keys you no longer need with $session.delete(key)",
      );
    }
    const storeBytes = valueBytes + utf8ByteLength(name);
    const maxStoreBytes = this.#maxStoreBytes();
    const after = this.#usedBytes - (old?.storeBytes ?? 0) + storeBytes;
    if (after > maxStoreBytes) {
      const others = this.#usedBytes - (old?.storeBytes ?? 0);
      throw new RangeError(
        sessionValueRefusal(
          name,
          valueBytes,
          Math.max(0, maxStoreBytes - others - utf8ByteLength(name)),
          `left in the session store (${count(others)} of its ${count(maxStoreBytes)} bytes are held by ` +
            `other keys, [mcp] session-store-mb = ${maxStoreBytes / MIB})`,
        ) + "; delete keys you no longer need with $session.delete(key) or raise session-store-mb",
      );
    }
    this.#entries.delete(name); // a replaced key moves to the end: keys() lists the latest set last
    this.#entries.set(name, { json, valueBytes, storeBytes });
    this.#usedBytes = after;
  }

  /** Removes `key`. @returns Whether it held a value. @throws {TypeError} bad key. */
  delete(key: unknown): boolean {
    const name = checkKey(key, "delete");
    const old = this.#entries.get(name);
    if (old === undefined) return false;
    this.#entries.delete(name);
    this.#usedBytes -= old.storeBytes;
    return true;
  }

  /** Every key, in the order they were last set. */
  keys(): string[] {
    return [...this.#entries.keys()];
  }

  /** Every key with its value's size, in the order they were last set (never a value). */
  sizes(): SessionKeySize[] {
    return [...this.#entries].map(([key, entry]) => ({ key, bytes: entry.valueBytes }));
  }

  /** Drops every value. */
  clear(): void {
    this.#entries.clear();
    this.#usedBytes = 0;
  }
}

/**
 * Answers one `$session` call from a script (`get`, `set`, `delete`, `keys`, arguments `{ key, value }` as
 * the prelude sends them), after tying the store to `workspace` (see {@link SessionStore.bindWorkspace}).
 *
 * @returns `get`: the value or `undefined`; `set`: `undefined`; `delete`: whether the key held a value;
 *   `keys`: the keys.
 * @throws {TypeError} an unknown method or a bad key; {@link SessionStore.set}'s errors.
 */
export function answerSessionCall(
  store: SessionStore,
  request: { key: string; args: unknown },
  workspace: string,
): unknown {
  store.bindWorkspace(workspace);
  const args = (typeof request.args === "object" && request.args !== null ? request.args : {}) as Record<
    string,
    unknown
  >;
  switch (request.key) {
    case "get":
      return store.get(args.key);
    case "set":
      store.set(args.key, args.value);
      return undefined;
    case "delete":
      return store.delete(args.key);
    case "keys":
      return store.keys();
  }
  throw new TypeError(
    `${SESSION_GLOBAL}.${request.key.slice(0, 40)} is not a method; ${SESSION_GLOBAL} offers get(key), ` +
      "set(key, value), delete(key) and keys()",
  );
}

/** `key` when it is a valid key, else the `TypeError` naming it, its length and the rule. */
function checkKey(key: unknown, method: string): string {
  const rule = `a key is a string of 1 to ${SESSION_KEY_MAX_CHARS} printable characters`;
  if (typeof key !== "string") {
    throw new TypeError(
      `Cannot ${method} a $session key: ${rule}, not ${key === null ? "null" : typeof key}`,
    );
  }
  const shown = JSON.stringify(key.slice(0, 40)) + (key.length > 40 ? "\u2026" : "");
  if (key.length === 0 || key.length > SESSION_KEY_MAX_CHARS) {
    throw new TypeError(`Cannot ${method} $session key ${shown}: ${rule}, this one has ${key.length}`);
  }
  if (UNPRINTABLE.test(key) || !key.isWellFormed()) {
    throw new TypeError(
      `Cannot ${method} $session key ${shown}: ${rule}, this one holds a control character or a lone surrogate`,
    );
  }
  return key;
}

function count(n: number): string {
  return n.toLocaleString("en-US");
}
