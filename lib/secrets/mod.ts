/**
 * The one registry of secret values. Every value that came from a `${VAR}` expansion (header, URL,
 * `env`), every variable passed through to a server, every OAuth token, code and client secret is
 * registered when it is read; every path that prints or writes text (log lines, stderr, MCP
 * messages, `status`, `mcp tools`, error messages, stderr tails) masks those exact values, plus
 * the common credential shapes of `_shapes.ts`.
 *
 * The registry is process-wide on purpose ({@link processSecrets}): a sink that forgot to be handed
 * a registry would be a leak, and a value registered anywhere must be masked everywhere. It only
 * ever grows; registering is idempotent.
 *
 * @module
 */
import { MASK, maskShapes } from "./_shapes.ts";
export {
  createPrivateFileSync,
  ensurePrivateDir,
  inspectPrivateDir,
  listOwnFiles,
  PRIVATE_FILE_MODE,
  PrivateDirError,
  writePrivateFile,
} from "./private_dir.ts";

export { MASK, maskShapes };

/**
 * Shortest value registered, in UTF-16 code units: shorter ones (`0`, `true`, `dev`) would mask
 * ordinary words everywhere, and are no secret worth the name. Credential shapes still apply.
 */
export const MIN_SECRET_CHARS = 6;

/** Most listed names recorded by {@link SecretRegistry.registerNames} (200,000). */
export const MAX_LISTED_NAMES = 200_000;

/**
 * Deepest level {@link maskDeep} walks (1,024): a value deeper is replaced by {@link TOO_DEEP_VALUE}
 * rather than passed on unchecked (the sandbox lets a script return 1,000 levels).
 */
export const MAX_MASK_DEPTH = 1_024;

/** What replaces a value nested deeper than {@link MAX_MASK_DEPTH}. */
export const TOO_DEEP_VALUE = "[nested deeper than 1024 levels: not shown]";

/** How many nested JSON string escapings of a secret are masked too (a value inside JSON text inside JSON). */
const JSON_ESCAPE_LEVELS = 3;

/** Exact secret values, masked wherever they appear (also URL-encoded or JSON-escaped). */
export class SecretRegistry {
  readonly #values = new Set<string>();
  #pattern: RegExp | undefined;
  /** Tool and property names servers listed: never rewritten by a credential shape. */
  readonly #names = new Set<string>();
  /** Whether a registered value is all digits, so numbers are checked too. */
  #hasNumericValue = false;
  #longestChars = 0;

  /** How many distinct forms are registered. */
  get size(): number {
    return this.#values.size;
  }

  /** UTF-16 units of the longest registered form (0 when none): a text cut shorter may split one. */
  get longestChars(): number {
    return this.#longestChars;
  }

  /**
   * Registers a secret value (with its URL-encoded form and its JSON-escaped forms, nested up to 3 levels). Values shorter than
   * {@link MIN_SECRET_CHARS}, `undefined` and `null` are ignored.
   */
  register(value: string | undefined | null): void {
    if (typeof value !== "string" || value.length < MIN_SECRET_CHARS) return;
    const forms = [value, value.trim(), encodeURIComponent(value)];
    // A script may return `JSON.stringify()` of a value that holds the secret, and the result is
    // rendered as JSON text again: mask the value escaped once, twice and three times.
    for (let escaped = value, level = 0; level < JSON_ESCAPE_LEVELS; level++) {
      escaped = JSON.stringify(escaped).slice(1, -1);
      forms.push(escaped);
    }
    for (const form of forms) {
      if (form.length < MIN_SECRET_CHARS || this.#values.has(form)) continue;
      this.#values.add(form);
      this.#longestChars = Math.max(this.#longestChars, form.length);
      this.#pattern = undefined;
      if (/^-?\d[\d.eE+-]*$/.test(form)) this.#hasNumericValue = true;
    }
  }

  /**
   * Records names a backing server listed (tool names, property names of its schemas), so the
   * credential shapes never rewrite them (`npm_package_info` would otherwise read `npm_***`). Registered
   * secret values are still masked inside them. Names over 128 characters, and past
   * {@link MAX_LISTED_NAMES} in all, are not recorded.
   */
  registerNames(names: Iterable<string>): void {
    for (const name of names) {
      if (this.#names.size >= MAX_LISTED_NAMES) return;
      if (name.length >= MIN_SECRET_CHARS && name.length <= 128) this.#names.add(name);
    }
  }

  /** Whether `text` is a name recorded by {@link registerNames}. */
  isListedName(text: string): boolean {
    return this.#names.has(text);
  }

  /** Whether a number's digits hold a registered value (a numeric secret sent as a JSON number). */
  isLeakingNumber(value: number): boolean {
    return this.#hasNumericValue && this.isLeaking(String(value));
  }

  /**
   * Registers what is secret in a value a `${VAR}` reference put into a URL. A value that is a
   * whole URL registers its userinfo, its query values and the path segments that look like
   * credentials (a digit and 6+ characters, or 16+), not its scheme, host and port (a URL or host
   * kept in a variable is no secret, and masking it would break every message naming it). A bare
   * host (`api.example.com`, `127.0.0.1:8080`) registers nothing; any other value (a key in a
   * query, a token in a path) registers whole.
   *
   * @example
   * ```ts
   * import { SecretRegistry } from "./mod.ts";
   * const r = new SecretRegistry();
   * r.registerUrlValue("https://h.example/mcp?key=k3y-value");
   * r.mask("https://h.example/mcp?key=k3y-value"); // "https://h.example/mcp?key=***"
   * ```
   */
  registerUrlValue(value: string): void {
    if (/^[A-Za-z0-9.-]+(?::\d+)?$/.test(value) && /[.:]|^localhost$/.test(value)) return;
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value) || !URL.canParse(value)) return this.register(value);
    const url = new URL(value);
    this.register(decodeURIComponentSafe(url.password));
    if (url.password === "") this.register(decodeURIComponentSafe(url.username));
    for (const [, v] of url.searchParams) this.register(v);
    for (const segment of url.pathname.split("/")) {
      const decoded = decodeURIComponentSafe(segment);
      if (/^(?=.*\d).{6,}$|^.{16,}$/.test(decoded)) this.register(decoded);
    }
  }

  /** Registers every value of `values` (see {@link register}). */
  registerAll(values: Iterable<string | undefined | null>): void {
    for (const value of values) this.register(value);
  }

  /** Whether `text` contains a registered value. */
  isLeaking(text: string): boolean {
    const pattern = this.#compiled();
    if (pattern === undefined) return false;
    pattern.lastIndex = 0;
    return pattern.test(text);
  }

  /** Replaces every registered value in `text` with {@link MASK} (credential shapes untouched). */
  maskValues(text: string): string {
    const pattern = this.#compiled();
    if (pattern === undefined) return text;
    pattern.lastIndex = 0;
    return text.replace(pattern, MASK);
  }

  /** {@link maskValues}, then {@link maskShapes} (sparing listed names): what every sink applies. */
  mask(text: string): string {
    const values = this.maskValues(text);
    return maskShapes(values, this.#names.size > 0 ? (m) => this.#names.has(m) : undefined);
  }

  #compiled(): RegExp | undefined {
    if (this.#values.size === 0) return undefined;
    // Longest first, so a value that contains another is masked whole.
    this.#pattern ??= new RegExp(
      [...this.#values].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|"),
      "g",
    );
    return this.#pattern;
  }
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // A stray `%`: the text as written.
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

/** The process-wide registry every reader registers into and every sink masks with. */
export const processSecrets: SecretRegistry = new SecretRegistry();

/**
 * Masks registered values and credential shapes in `text`.
 *
 * @param registry @default processSecrets
 * @example
 * ```ts
 * import { maskSecrets, processSecrets } from "./mod.ts";
 * processSecrets.register("s3cr3t-value");
 * maskSecrets("sent s3cr3t-value with Bearer abc.def.123"); // "sent *** with Bearer ***"
 * ```
 */
export function maskSecrets(text: string, registry: SecretRegistry = processSecrets): string {
  return registry.mask(text);
}

/** Keys whose string value is binary payload (base64), never text: left as they are. */
const PAYLOAD_KEYS = new Set(["data", "blob"]);

/**
 * A copy of a JSON-like value with every string masked as {@link maskSecrets} does, for MCP messages,
 * at every depth: a number whose digits hold a registered secret becomes {@link MASK}, object keys lose
 * registered secret values (credential shapes do not apply to keys: they are names), and a value nested
 * deeper than {@link MAX_MASK_DEPTH} levels becomes {@link TOO_DEEP_VALUE}. The `data` of image/audio
 * content blocks and `blob` of resources are base64 payload and left untouched.
 *
 * @param registry @default processSecrets
 */
export function maskDeep<T>(value: T, registry: SecretRegistry = processSecrets): T {
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return registry.mask(v);
    if (typeof v === "number") return registry.isLeakingNumber(v) ? MASK : v;
    if (typeof v !== "object" || v === null) return v;
    if (depth >= MAX_MASK_DEPTH) return TOO_DEEP_VALUE;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const record = v as Record<string, unknown>;
    const isMedia = record.type === "image" || record.type === "audio" || typeof record.blob === "string";
    const out: Record<string, unknown> = {};
    for (const [key, x] of Object.entries(record)) {
      const masked = isMedia && PAYLOAD_KEYS.has(key) ? x : walk(x, depth + 1);
      // An own `__proto__` member (JSON.parse makes one) stays a member: assigned, it would set the prototype.
      if (key === "__proto__") {
        Object.defineProperty(out, key, {
          value: masked,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else out[registry.maskValues(key)] = masked;
    }
    return out;
  };
  return walk(value, 0) as T;
}
