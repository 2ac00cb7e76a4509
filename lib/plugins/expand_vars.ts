/**
 * `${VAR}` expansion in remote-server URLs, header values, client secrets and stdio
 * servers' `env` values, so a manifest can reference a token without containing it.
 *
 * @module
 */
import type { Result } from "../diagnostics.ts";

/**
 * Replaces `${VAR}` with the variable's value and `${VAR:-default}` with the value when the
 * variable is set (even when set to the empty string, unlike the shell), else with `default`
 * (which may be empty). There is no `$VAR` form, no escaping and no nesting: the first `}` ends a
 * reference, and an unterminated `${` is left as it is.
 *
 * @param text The string from the manifest.
 * @param env The environment to read (the meta-server's own, inherited from the agent).
 * @param options.onVariable Called with every variable whose value was used (not for defaults),
 *   e.g. to register the value as a secret.
 * @returns The expanded text, or the first variable that is unset and has no default.
 * @example
 * ```ts
 * import { expandVars } from "./expand_vars.ts";
 * expandVars("Bearer ${TOKEN}", { TOKEN: "abc" }); // { ok: true, value: "Bearer abc" }
 * expandVars("${HOST:-localhost}", {}); // { ok: true, value: "localhost" }
 * expandVars("${TOKEN}", {}); // { ok: false, error: { variable: "TOKEN" } }
 * ```
 */
export function expandVars(
  text: string,
  env: Readonly<Record<string, string>>,
  options: { onVariable?: (variable: string, value: string) => void } = {},
): Result<string, { variable: string }> {
  let out = "";
  let from = 0;
  while (true) {
    const start = text.indexOf("${", from);
    if (start < 0) break;
    const end = text.indexOf("}", start + 2);
    if (end < 0) break;
    const body = text.slice(start + 2, end);
    const split = body.indexOf(":-");
    const variable = split < 0 ? body : body.slice(0, split);
    let value: string;
    if (Object.hasOwn(env, variable)) {
      value = env[variable]!;
      options.onVariable?.(variable, value);
    } else if (split >= 0) {
      value = body.slice(split + 2);
    } else {
      return { ok: false, error: { variable } };
    }
    out += text.slice(from, start) + value;
    from = end + 1;
  }
  return { ok: true, value: out + text.slice(from) };
}
