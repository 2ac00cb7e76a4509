/**
 * How `list_tools` shows the session state: the index names the keys kept and their sizes (never a
 * value), and declarations declare the `$session` global, so the agent knows what it kept and how to read it.
 *
 * @module
 */
import { SESSION_KEY_MAX_CHARS, SESSION_VALUE_MAX_BYTES, type SessionStore } from "./session_store.ts";

/** Keys the index names; the others are counted (`$session.keys()` lists them all). */
export const SESSION_INDEX_MAX_KEYS = 16;

/** `512 B`, `1.2 KB`, `3.4 MB` (1 KB = 1,024 bytes). */
function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * The index line of the session state, e.g.
 * `$session (2 keys, 1.2 KB of 64.0 MB): "todo_files" 1.1 KB, "count" 1 B - read with await $session.get(key)`,
 * or `""` when no key is kept. The last {@link SESSION_INDEX_MAX_KEYS} keys set are named, the rest counted.
 *
 * @param store The session's store, tied to `workspace` first (a changed workspace empties it).
 * @param workspace The workspace's identity (its root folder).
 */
export function sessionIndexLine(store: SessionStore, workspace: string): string {
  store.bindWorkspace(workspace);
  const sizes = store.sizes();
  if (sizes.length === 0) return "";
  const shown = sizes.slice(-SESSION_INDEX_MAX_KEYS);
  const earlier = sizes.length - shown.length;
  const named = shown.map((s) => `${JSON.stringify(s.key)} ${sizeText(s.bytes)}`).join(", ");
  return `$session (${sizes.length} key${sizes.length === 1 ? "" : "s"}, ${sizeText(store.usedBytes)} of ${
    sizeText(store.maxStoreBytes)
  }): ${
    earlier > 0 ? `${earlier} earlier keys, then ` : ""
  }${named} \u2014 read with await $session.get(key)`;
}

/**
 * The TypeScript declaration of `$session` shown with unfiltered declarations, with what the store holds
 * now and its budgets.
 */
export function sessionDeclaration(store: SessionStore): string {
  const held = `${store.size} key${store.size === 1 ? "" : "s"}, ${sizeText(store.usedBytes)} of ${
    sizeText(store.maxStoreBytes)
  }`;
  return [
    `/** Session state: JSON values kept in memory across this agent session's executes (never on disk; ` +
    `gone when the session ends or its workspace changes). Now ${held}. A value is at most ` +
    `${
      sizeText(SESSION_VALUE_MAX_BYTES)
    } of JSON, a key 1 to ${SESSION_KEY_MAX_CHARS} printable characters; ` +
    `each call counts as a tool call. */`,
    "declare const $session: {",
    "  /** The value kept under `key` (a copy), or `undefined`. */",
    "  get(key: string): Promise<unknown>;",
    "  /** Keeps `value` under `key`, replacing what it held; past a budget it throws and keeps the old value. */",
    "  set(key: string, value: unknown): Promise<void>;",
    "  /** Removes `key`; `true` when it held a value. */",
    "  delete(key: string): Promise<boolean>;",
    "  /** Every key, in the order they were last set. */",
    "  keys(): Promise<string[]>;",
    "};",
  ].join("\n");
}
