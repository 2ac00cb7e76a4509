/**
 * Credential shapes masked in every text we print or write, whether or not the value was
 * registered: authorization schemes, `key=value` pairs of credential-like keys, URL userinfo and
 * query credentials, well-known token prefixes. Private to `lib/secrets/`.
 *
 * @module
 */

/** What replaces a masked value. */
export const MASK = "***";

/**
 * A value that looks like a credential rather than a word: a run of token characters (RFC 6750
 * token68 plus `%`), at least 6 long, holding a digit or at least 16 long. `string`, `expired`,
 * `required` and TypeScript types stay readable; `abc123`, `hunter2` and long random runs do not.
 */
const TOKEN_LIKE = String.raw`(?=[A-Za-z0-9._~+/%=-]*\d)[A-Za-z0-9._~+/%=-]{6,}|[A-Za-z0-9._~+/%=-]{16,}`;

/** Keys whose value is a credential (`token=...`, `"client_secret": "..."`, `Password: ...`). */
const SECRET_KEYS = String
  .raw`access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|client[_-]?secret|api[_-]?key|apikey|secret[_-]?key|private[_-]?key|token|secret|password|passwd|pwd|authorization|x-api-key|session[_-]?token`;

/** One shape: the pattern, and how a match is rewritten. */
interface Shape {
  /** What it catches, for the docs and tests. */
  name: string;
  pattern: RegExp;
  replace: (match: string, ...groups: string[]) => string;
}

const keep = (head: string) => `${head}${MASK}`;

/**
 * Whether `value` after an authorization scheme is a credential: for `Basic`, base64 of
 * `user:password`; for the others, a {@link TOKEN_LIKE} run (so `Bearer authentication` stays).
 */
function isSchemeCredential(head: string, value: string): boolean {
  if (/^basic/i.test(head)) {
    try {
      return atob(value).includes(":");
    } catch {
      return new RegExp(`^(?:${TOKEN_LIKE})$`).test(value); // Not base64: judged as any token.
    }
  }
  return new RegExp(`^(?:${TOKEN_LIKE})$`).test(value);
}

/** The shapes, applied in this order (schemes before keys, so `Authorization: Basic X` keeps `Basic`). */
export const SHAPES: readonly Shape[] = [
  {
    name: "authorization scheme (Bearer X, Basic X, Token X)",
    // token68 not followed by `=` or `"`: `Bearer realm="x"` and `Bearer resource_metadata=...` are challenges.
    pattern: /\b((?:bearer|basic|token)\s+)([A-Za-z0-9._~+/-]{6,}=*)(?![A-Za-z0-9._~+/="-])/gi,
    replace: (match, head, value) => isSchemeCredential(head, value) ? keep(head) : match,
  },
  {
    name: "URL userinfo password (postgres://user:X@host)",
    // The scheme is bounded (RFC 3986 schemes are short): unbounded, every word of `a.a.a...` rescanned the
    // rest of the run, quadratic in a tool result's length.
    pattern: /\b([a-z][a-z0-9+.-]{0,31}:\/\/[^\s/:@?#]*:)([^\s@/?#]+)@/gi,
    replace: (_m, head) => `${head}${MASK}@`,
  },
  {
    name: "credential query parameter (?key=X, &sig=X, &code=X)",
    pattern:
      /([?&](?:key|sig|signature|auth|code|access_token|token|api_key|apikey|secret|password)=)([^&\s#"']+)/gi,
    replace: (_m, head) => keep(head),
  },
  {
    name: "well-known token prefix (ghp_, github_pat_, sk-, xox?-, glpat-, AKIA, npm_, hf_, AIza, sk_live_)",
    pattern:
      /\b(gh[pousr]_|github_pat_|sk-(?:ant-|proj-)?|xox[abposr]-|xapp-|glpat-|npm_|hf_|[sr]k_(?:live|test)_)[A-Za-z0-9_-]{10,}|\b(AKIA|ASIA)[0-9A-Z]{16}\b|\b(AIza)[0-9A-Za-z_-]{30,}/g,
    replace: (_m, a, b, c) => keep(a ?? b ?? c ?? ""),
  },
  {
    name: "JSON Web Token",
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
    replace: () => MASK,
  },
  {
    name: 'credential key and value (token=X, "client_secret": "X", Password: X)',
    pattern: new RegExp(
      // Bounded prefix words (`my_app_`): unbounded, `a-a-a...` made this quadratic in the text's length.
      String
        .raw`(["']?\b(?:[A-Za-z0-9]{1,32}[_-]){0,6}(?:${SECRET_KEYS})\b["']?\s*[:=]\s*["']?)(${TOKEN_LIKE})`,
      "gi",
    ),
    replace: (_m, head) => keep(head),
  },
  {
    name: "credential named in prose (using token X, PAT X, API key X)",
    pattern: new RegExp(
      String
        .raw`(\b(?:[Tt]oken|TOKEN|[Pp]assword|PASSWORD|[Ss]ecret|SECRET|PAT|[Aa][Pp][Ii][ _-][Kk]ey|API_KEY)\s+)(${TOKEN_LIKE})`,
      "g",
    ),
    replace: (_m, head) => keep(head),
  },
];

/** The shortest text a shape of {@link SHAPES} matches: `?key=x`. */
const MIN_SHAPE_CHARS = 6;

/**
 * What every shape of {@link SHAPES} needs somewhere in the text (whitespace after a scheme or in prose,
 * `:` or `=` after a key or in a URL, `_`/`-` of a token prefix, `.` of a JWT, or `AKIA`/`ASIA`/`AIza`):
 * a text without any (an object key, a number, a word) is left as it is without running the shapes.
 */
const MAY_HOLD_SHAPE = /[\s:=_.-]|AKIA|ASIA|AIza/;

/**
 * Masks every credential shape of {@link SHAPES} in `text`.
 *
 * @param isName Whether a match is a name (a tool or property name a server listed, e.g.
 *   `npm_package_info`), left as it is. Default: none is.
 * @example
 * ```ts
 * import { maskShapes } from "./_shapes.ts";
 * maskShapes("Authorization: Basic dXNlcjpwYXNz"); // "Authorization: Basic ***"
 * ```
 */
export function maskShapes(text: string, isName?: (match: string) => boolean): string {
  if (text.length < MIN_SHAPE_CHARS || !MAY_HOLD_SHAPE.test(text)) return text;
  let out = text;
  for (const shape of SHAPES) {
    shape.pattern.lastIndex = 0;
    const replace = shape.replace as (m: string, ...g: string[]) => string;
    out = out.replace(
      shape.pattern,
      isName ? (m: string, ...g: string[]) => isName(m) ? m : replace(m, ...g) : replace,
    );
  }
  return out;
}
