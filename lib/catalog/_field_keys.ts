/**
 * Which keys of an answer's objects are field names (kept in a result shape) and which are a map's
 * keys (ids, paths, emails, hashes, secrets: never kept), for `result_shape.ts`.
 *
 * @module
 */
import { maskShapes, processSecrets } from "../secrets/mod.ts";

/** A key that names a field, not an entry of a map: identifier-like, short, few digits. */
const FIELD_KEY = /^[@$]?[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*$/;

/**
 * Whether `key` looks like the name of a field (kept in a shape) rather than a map's key (an id,
 * path, email, hash, number, date or anything with a secret's shape: never kept). A field name
 * is identifier-like (`-` allowed inside, `@` or `$` in front), at most 32 characters, with at most
 * 3 digits, no run of 6 hex characters holding a digit, not a mix of cases typical of a random
 * token, and neither a registered secret nor of a credential's shape.
 *
 * @example
 * ```ts
 * import { isFieldKey } from "./_field_keys.ts";
 * isFieldKey("created_at"); // true
 * isFieldKey("user@example.com"); // false
 * ```
 */
export function isFieldKey(key: string): boolean {
  if (key.length === 0 || key.length > 32 || !FIELD_KEY.test(key)) return false;
  let digits = 0;
  let caseSwitches = 0;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
    else if (c >= 65 && c <= 90 && i > 0) {
      const p = key.charCodeAt(i - 1);
      if (p >= 97 && p <= 122) caseSwitches++;
    }
  }
  if (digits > 3 || caseSwitches > 4) return false;
  if (digits > 0 && /[0-9a-fA-F]{6,}/.test(key) && /[0-9][a-fA-F]|[a-fA-F][0-9]/.test(key)) return false;
  if (key.length >= 6 && (processSecrets.isLeaking(key) || maskShapes(key) !== key)) return false;
  return true;
}

/** Most keys a {@link FieldKeyMemo} holds before it starts again. */
const FIELD_KEY_MEMO_SIZE = 4_096;

/**
 * {@link isFieldKey} remembered for the field names seen (the same few names come back in every
 * answer, and the secret checks are the costly part). Only names that pass the cheap checks are
 * kept, at most 4,096, in memory only; all are forgotten when a secret was registered since.
 */
export class FieldKeyMemo {
  readonly #held = new Map<string, boolean>();
  #secrets = processSecrets.size;

  /** {@link isFieldKey} of `key`. */
  isFieldKey(key: string): boolean {
    if (key.length === 0 || key.length > 32 || !FIELD_KEY.test(key)) return false;
    if (this.#secrets !== processSecrets.size || this.#held.size >= FIELD_KEY_MEMO_SIZE) {
      this.#held.clear();
      this.#secrets = processSecrets.size;
    }
    let held = this.#held.get(key);
    if (held === undefined) this.#held.set(key, held = isFieldKey(key));
    return held;
  }
}
