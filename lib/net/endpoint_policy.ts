/**
 * Where a manifest may point the meta-server: the remote-endpoint policy (its test vectors are in
 * `testdata/endpoint_policy/`).
 * A URL is checked as text first (scheme, userinfo, backslash, canonical host), then every
 * address its host resolves to is classified (ipaddr.js plus the IANA special-purpose lists);
 * the caller connects only to the addresses returned in a {@link CheckedEndpoint}.
 *
 * @module
 */
import dns from "node:dns";
import ipaddr from "ipaddr.js";
import { UserError } from "../diagnostics.ts";
import { classifyAddress } from "./_address_class.ts";
import type { AddressClass } from "./_address_class.ts";

export { classifyAddress };
export type { AddressClass };

/** Looks a host name up. Declared here, where it is consumed; {@link SYSTEM_RESOLVER} is the real one. */
export interface Resolver {
  /**
   * @param host A DNS name (never an IP literal), lowercase, without brackets or trailing dot.
   * @returns Every address (IPv4 dotted or IPv6 text) the host has; an empty list counts as a failure.
   * @throws anything when the lookup fails (reported as `ENDPOINT_UNRESOLVED`).
   */
  resolve(host: string, options?: { signal?: AbortSignal | undefined }): Promise<string[]>;
}

/**
 * The operating system's resolver (`getaddrinfo` via `node:dns` `lookup`, all families): it honours
 * `/etc/hosts` and nsswitch, so `localhost` and names the user pinned locally resolve as every
 * other program on the machine sees them, and it needs no net permission to the nameserver
 * (unlike `Deno.resolveDns`, which also reads `/etc/hosts` but asks the nameserver directly).
 */
export const SYSTEM_RESOLVER: Resolver = {
  async resolve(host) {
    const answers = await dns.promises.lookup(host, { all: true, verbatim: true });
    return answers.map((a) => a.address);
  },
};

/**
 * Codes of {@link EndpointPolicyError}, one per rule:
 * - `ENDPOINT_INVALID_URL`: the text is not a URL a WHATWG parser accepts, or has no host;
 * - `ENDPOINT_UNSUPPORTED_SCHEME`: a scheme other than `http`/`https`;
 * - `ENDPOINT_USERINFO`: `user[:password]@` before the host;
 * - `ENDPOINT_BACKSLASH`: a `\` anywhere (parsers disagree on what it means);
 * - `ENDPOINT_HOST_NOT_CANONICAL`: trailing dot, non-ASCII or `xn--` (IDN), percent-encoding, zone id,
 *   control characters or spaces, or an IPv4 literal not written as four plain decimal numbers;
 * - `ENDPOINT_INSECURE_HTTP`: plain `http` to a host that is not an explicit loopback;
 * - `ENDPOINT_PRIVATE_ADDRESS`: an address (literal or resolved) that is not public;
 * - `ENDPOINT_NOT_LOOPBACK`: an explicit loopback host that resolves to something else;
 * - `ENDPOINT_UNRESOLVED`: the host name has no address;
 * - `ENDPOINT_REDIRECT`: the server answered 3xx (raised by `guarded_fetch.ts`; never followed).
 */
export type EndpointPolicyCode =
  | "ENDPOINT_INVALID_URL"
  | "ENDPOINT_UNSUPPORTED_SCHEME"
  | "ENDPOINT_USERINFO"
  | "ENDPOINT_BACKSLASH"
  | "ENDPOINT_HOST_NOT_CANONICAL"
  | "ENDPOINT_INSECURE_HTTP"
  | "ENDPOINT_PRIVATE_ADDRESS"
  | "ENDPOINT_NOT_LOOPBACK"
  | "ENDPOINT_UNRESOLVED"
  | "ENDPOINT_REDIRECT";

/** Facts an {@link EndpointPolicyError} is built from. */
export interface EndpointRefusal {
  /** Server name from the manifest, when the request belongs to one. */
  server?: string | undefined;
  /** The URL as shown to the user (userinfo masked, query and fragment dropped). */
  url: string;
  /** The address that broke the rule, when one did, e.g. `10.1.2.3`. */
  address?: string | undefined;
}

/**
 * A URL or address the endpoint policy refuses. The message names the rule, the address and the
 * server; the hint says what to change.
 *
 * @example
 * ```ts
 * import { checkEndpoint, EndpointPolicyError } from "./endpoint_policy.ts";
 * try {
 *   await checkEndpoint("https://10.0.0.1/mcp", { server: "internal" });
 * } catch (e) {
 *   if (e instanceof EndpointPolicyError) console.log(e.code); // "ENDPOINT_PRIVATE_ADDRESS"
 * }
 * ```
 */
export class EndpointPolicyError extends UserError {
  override name = "EndpointPolicyError";
  declare readonly code: EndpointPolicyCode;
  /** Server name, when known. */
  readonly server: string | undefined;
  /** The URL as shown in the message (userinfo masked, no query or fragment). */
  readonly url: string;
  /** The offending address, when the refusal is about one. */
  readonly address: string | undefined;
  /** The rule's verdict alone (the message after `Cannot connect to ...: `). */
  readonly reason: string;

  constructor(
    code: EndpointPolicyCode,
    refusal: EndpointRefusal,
    state: string,
    options: { hint?: string | undefined; cause?: unknown } = {},
  ) {
    const target = refusal.server === undefined
      ? refusal.url
      : `server "${refusal.server}" at ${refusal.url}`;
    super(code, `Cannot connect to ${target}: ${state}`, options);
    this.server = refusal.server;
    this.url = refusal.url;
    this.address = refusal.address;
    this.reason = state;
  }
}

/** A URL the policy accepted, with the only addresses a connection may go to. */
export interface CheckedEndpoint {
  /** The parsed URL (WHATWG). */
  url: URL;
  /** Host without brackets, lowercase, e.g. `example.com`, `127.0.0.1`, `::1`. */
  hostname: string;
  /** Effective port (the scheme default when the URL has none). */
  port: number;
  /** Checked addresses in resolver order; connect to these and nothing else. Never empty. */
  addresses: string[];
  /** `true` for `localhost`, a canonical 127/8 literal or `[::1]` (all addresses are loopback). */
  isExplicitLoopback: boolean;
}

/** The textual verdict of {@link checkEndpointUrl}: what is left to do needs DNS (or nothing). */
export interface ParsedEndpoint {
  url: URL;
  hostname: string;
  port: number;
  /** The literal address when the host is an IP literal; `undefined` for a name. */
  literal: string | undefined;
  isExplicitLoopback: boolean;
}

/** Options of {@link checkEndpointUrl} and {@link checkEndpoint}. */
export interface CheckOptions {
  /** Server name for messages. Default: none (messages name the URL only). */
  server?: string | undefined;
  /**
   * The URL as messages show it, e.g. the manifest's `${VAR}` template (the expanded URL may hold
   * a secret); shown through {@link displayUrl}. Default: the URL checked.
   */
  displayAs?: string | undefined;
  /** Looks names up. @default SYSTEM_RESOLVER */
  resolver?: Resolver | undefined;
  /** Aborts the lookup. */
  signal?: AbortSignal | undefined;
}

const HINT_PUBLIC =
  "a remote server must be reachable over https at public addresses; for a server on this machine use " +
  "http://127.0.0.1:<port>, http://[::1]:<port> or http://localhost:<port>";

/**
 * Renders a URL for messages without secrets: userinfo becomes `***@`, query and fragment are
 * dropped (they may carry tokens after `${VAR}` expansion).
 *
 * @example
 * ```ts
 * import { displayUrl } from "./endpoint_policy.ts";
 * displayUrl("https://u:p@example.com/mcp?key=1"); // "https://***@example.com/mcp"
 * ```
 */
export function displayUrl(raw: string): string {
  const cut = raw.search(/[?#]/);
  const head = cut === -1 ? raw : raw.slice(0, cut);
  return head.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/]*@/, "$1***@").slice(0, 300);
}

function isExplicitLoopbackHost(hostname: string, literal: string | undefined): boolean {
  if (literal === undefined) return hostname === "localhost";
  const addr = ipaddr.parse(literal);
  if (addr.kind() === "ipv4") return addr.match(ipaddr.parseCIDR("127.0.0.0/8"));
  return addr.toNormalizedString() === "0:0:0:0:0:0:0:1";
}

/**
 * Checks a URL as text, without any network access: scheme, userinfo, backslash, canonical host,
 * `http` only for explicit loopback, and a literal address's class.
 *
 * @param raw The URL exactly as configured or received (e.g. a `Location`).
 * @returns The parsed URL and whether its host is a literal; {@link checkEndpoint} finishes the job.
 * @throws {EndpointPolicyError} Any code but `ENDPOINT_UNRESOLVED`, `ENDPOINT_NOT_LOOPBACK` and
 *   `ENDPOINT_REDIRECT`.
 */
export function checkEndpointUrl(raw: string, options: CheckOptions = {}): ParsedEndpoint {
  const refusal: EndpointRefusal = { server: options.server, url: displayUrl(options.displayAs ?? raw) };
  const refuse: Refuse = (code, state, hint, address) => {
    throw new EndpointPolicyError(code, { ...refusal, address }, state, { hint });
  };
  const { url, authority } = checkUrlText(raw, refuse);
  const rawHost = authority.startsWith("[")
    ? authority.slice(0, authority.indexOf("]") + 1)
    : authority.replace(/:[^:]*$/, "");
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (hostname === "") {
    return refuse("ENDPOINT_INVALID_URL", "the URL names no host", "write an absolute https:// URL");
  }
  const literal = canonicalLiteral(url, rawHost, hostname, refuse);
  const isExplicitLoopback = isExplicitLoopbackHost(hostname, literal);
  if (url.protocol === "http:" && !isExplicitLoopback) {
    refuse(
      "ENDPOINT_INSECURE_HTTP",
      `plain http is only allowed for this machine (localhost, 127.x.x.x or [::1]), not for "${hostname}"`,
      literal === undefined || classifyAddress(literal).isPublic
        ? `use https://${url.host}${url.pathname}`
        : HINT_PUBLIC,
    );
  }
  if (literal !== undefined) {
    const verdict = classifyAddress(literal);
    const acceptable = isExplicitLoopback ? verdict.isLoopback : verdict.isPublic;
    if (!acceptable) {
      refuse(
        "ENDPOINT_PRIVATE_ADDRESS",
        `${literal} is ${verdict.range}, not a public address`,
        HINT_PUBLIC,
        literal,
      );
    }
  }
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  return { url, hostname, port, literal, isExplicitLoopback };
}

/** Throws the {@link EndpointPolicyError} of one URL: its code, the state after "Cannot ...:", a hint. */
type Refuse = (code: EndpointPolicyCode, state: string, hint?: string, address?: string) => never;

/**
 * The rules on the URL's text before its host: no backslash, a valid absolute `http(s)` URL starting
 * with `scheme://`, no userinfo, no space or control character, an ASCII authority.
 *
 * @returns The parsed URL and its raw authority (`host[:port]`, as written).
 */
function checkUrlText(raw: string, refuse: Refuse): { url: URL; authority: string } {
  if (raw.includes("\\")) {
    refuse("ENDPOINT_BACKSLASH", "the URL contains a backslash", "write the URL with forward slashes only");
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse("ENDPOINT_INVALID_URL", "it is not a valid URL", "write an absolute https:// URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    refuse(
      "ENDPOINT_UNSUPPORTED_SCHEME",
      `scheme "${url.protocol.slice(0, -1)}" is not supported`,
      "use an https:// URL (http:// only for a server on this machine)",
    );
  }
  // The raw authority, as a reader (or an RFC 3986 parser) sees it.
  const match = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(raw);
  if (!match) {
    return refuse(
      "ENDPOINT_INVALID_URL",
      "it does not start with scheme://host",
      "write an absolute https:// URL",
    );
  }
  const authority = match[1]!;
  if (url.username !== "" || url.password !== "" || authority.includes("@")) {
    refuse(
      "ENDPOINT_USERINFO",
      "the URL carries credentials (user[:password]@) before the host",
      "remove the part before @; send credentials in `headers` instead",
    );
  }
  // deno-lint-ignore no-control-regex -- control characters are exactly what this rule looks for
  if (/[\x00-\x20\x7f]/.test(raw)) {
    refuse(
      "ENDPOINT_HOST_NOT_CANONICAL",
      "the URL contains spaces or control characters",
      "remove them (percent-encode a space in a path as %20)",
    );
  }
  if (/[^\x21-\x7e]/.test(authority)) {
    refuse(
      "ENDPOINT_HOST_NOT_CANONICAL",
      "the host contains non-ASCII text",
      "write the host in plain ASCII (internationalized names are not accepted)",
    );
  }
  return { url, authority };
}

/**
 * The rules on the host as written (`rawHost`) against the host a URL parser reads (`hostname`): not
 * percent-encoded, no final dot, no `xn--` label, an IPv4 address only in its dotted form, a name only in
 * lower case.
 *
 * @returns The address when the host is a literal (IPv6 in RFC 5952 form), else `undefined`.
 */
function canonicalLiteral(url: URL, rawHost: string, hostname: string, refuse: Refuse): string | undefined {
  const notCanonical = (what: string): never =>
    refuse(
      "ENDPOINT_HOST_NOT_CANONICAL",
      `host "${rawHost}" ${what}`,
      "write the host as a plain name or address",
    );
  if (rawHost.includes("%")) notCanonical("is percent-encoded");
  if (rawHost.endsWith(".")) notCanonical("ends with a dot");
  if (/(^|\.)xn--/i.test(rawHost)) notCanonical("is an internationalized (xn--) name");
  if (url.hostname.startsWith("[")) return ipaddr.IPv6.parse(hostname).toRFC5952String();
  if (/^[0-9.]+$/.test(hostname) && ipaddr.IPv4.isValidFourPartDecimal(hostname)) {
    // WHATWG decoded the host as IPv4: the raw text must already be its canonical dotted form.
    if (rawHost !== hostname) {
      refuse(
        "ENDPOINT_HOST_NOT_CANONICAL",
        `host "${rawHost}" is an unusual spelling of ${hostname} (decimal, octal, hex or short IPv4 forms are refused)`,
        `write the address as ${hostname}`,
      );
    }
    return hostname;
  }
  if (rawHost.toLowerCase() !== hostname) {
    notCanonical(`is not in canonical form (a URL parser reads it as "${hostname}")`);
  }
  return undefined;
}

/**
 * Checks a URL and resolves its host once: every address must be public (or, for an explicit
 * loopback host, loopback). Connect only to the returned `addresses`: a second lookup could
 * answer differently (DNS rebinding).
 *
 * @param raw The URL exactly as configured or received.
 * @returns The checked endpoint with its addresses.
 * @throws {EndpointPolicyError} Any code but `ENDPOINT_REDIRECT` (see {@link EndpointPolicyCode}).
 * @example Refuse a public-looking name that resolves to a private address
 * ```ts
 * import { checkEndpoint } from "./endpoint_policy.ts";
 * const resolver = { resolve: () => Promise.resolve(["10.1.2.3"]) };
 * await checkEndpoint("https://internal.example/", { resolver }).catch((e) => console.log(e.code));
 * // ENDPOINT_PRIVATE_ADDRESS
 * ```
 */
export async function checkEndpoint(raw: string, options: CheckOptions = {}): Promise<CheckedEndpoint> {
  const parsed = checkEndpointUrl(raw, options);
  const { url, hostname, port, literal, isExplicitLoopback } = parsed;
  if (literal !== undefined) return { url, hostname, port, addresses: [literal], isExplicitLoopback };
  const refusal: EndpointRefusal = { server: options.server, url: displayUrl(options.displayAs ?? raw) };
  const resolver = options.resolver ?? SYSTEM_RESOLVER;
  let answers: string[];
  try {
    answers = await resolver.resolve(hostname, { signal: options.signal });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new EndpointPolicyError(
      "ENDPOINT_UNRESOLVED",
      refusal,
      `${hostname} could not be resolved: ${why}`,
      {
        hint: "check the host name and your network",
        cause: error,
      },
    );
  }
  if (answers.length === 0) {
    throw new EndpointPolicyError("ENDPOINT_UNRESOLVED", refusal, `${hostname} has no address`, {
      hint: "check the host name and your network",
    });
  }
  const addresses: string[] = [];
  for (const answer of answers) {
    const address = answer.replace(/%.*$/, "");
    const valid = ipaddr.IPv4.isValidFourPartDecimal(address) || ipaddr.IPv6.isValid(address);
    const verdict = valid ? classifyAddress(address) : undefined;
    const ok = verdict !== undefined && (isExplicitLoopback ? verdict.isLoopback : verdict.isPublic);
    if (!ok) {
      const what = verdict === undefined ? "not an IP address" : verdict.range;
      const code = isExplicitLoopback ? "ENDPOINT_NOT_LOOPBACK" : "ENDPOINT_PRIVATE_ADDRESS";
      const state = isExplicitLoopback
        ? `${hostname} resolves to ${answer}, which is ${what}, not loopback`
        : `${hostname} resolves to ${answer}, which is ${what}, not a public address`;
      throw new EndpointPolicyError(code, { ...refusal, address: answer }, state, {
        hint: isExplicitLoopback ? "use http://127.0.0.1:<port> instead of localhost" : HINT_PUBLIC,
      });
    }
    if (!addresses.includes(address)) addresses.push(address);
  }
  return { url, hostname, port, addresses, isExplicitLoopback };
}
