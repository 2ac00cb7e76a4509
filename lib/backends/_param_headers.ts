/**
 * `x-mcp-header` (MCP 2026-07-28, streamable HTTP "Custom Headers from Tool Parameters"): a tool's
 * `inputSchema` may mark primitive parameters to be mirrored into `Mcp-Param-{Name}` request headers.
 * {@link scanParamHeaders} checks a schema's marks by the spec's constraints (a tool with an invalid one is
 * excluded from the listing of an HTTP server); {@link paramHeaders} builds the headers of one call,
 * encoding a value that is not plain visible ASCII as `=?base64?...?=`.
 *
 * @module
 */

/** Most `x-mcp-header` marks one tool may carry (32); more make the tool invalid. */
export const MAX_PARAM_HEADERS = 32;
/** Longest encoded `Mcp-Param-*` value, bytes (4 KiB); a longer one fails the call before it is sent. */
export const MAX_PARAM_HEADER_BYTES = 4 * 1024;
/** Deepest `properties` chain followed when scanning for marks (8). */
const MAX_SCAN_DEPTH = 8;

/** One valid mark: the header name part and the property path holding the value. */
export interface ParamHeader {
  name: string;
  path: string[];
}

/** The outcome of {@link scanParamHeaders}. */
export type ParamHeaderScan = { valid: true; headers: ParamHeader[] } | { valid: false; reason: string };

/** RFC 9110 `tchar`. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Keywords under which a mark is not statically reachable (arrays, composition, conditionals, refs). */
const UNREACHABLE = [
  "items",
  "prefixItems",
  "additionalProperties",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$defs",
  "definitions",
  "patternProperties",
  "dependentSchemas",
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether `schema` holds an `x-mcp-header` anywhere (for marks outside the reachable chain). */
function hasMark(schema: unknown, depth = 0): boolean {
  if (depth > 32 || typeof schema !== "object" || schema === null) return false;
  if (!Array.isArray(schema) && "x-mcp-header" in schema) return true;
  return Object.values(schema).some((v) => hasMark(v, depth + 1));
}

/**
 * The `x-mcp-header` marks of `inputSchema` when every one meets the spec's constraints (non-empty token,
 * case-insensitively unique, on a `string`, `integer` or `boolean` property reachable from the root through
 * `properties` only), at most {@link MAX_PARAM_HEADERS}; else why not.
 */
export function scanParamHeaders(inputSchema: unknown): ParamHeaderScan {
  const headers: ParamHeader[] = [];
  const seen = new Set<string>();
  const walk = (schema: Record<string, unknown>, path: string[]): string | undefined => {
    for (const key of UNREACHABLE) {
      if (hasMark(schema[key])) return `x-mcp-header under \`${key}\` at /${path.join("/")} is not reachable`;
    }
    const properties = schema.properties;
    if (!isRecord(properties)) return undefined;
    for (const [key, property] of Object.entries(properties)) {
      if (!isRecord(property)) continue;
      const at = [...path, key];
      if ("x-mcp-header" in property) {
        const name = property["x-mcp-header"];
        if (typeof name !== "string" || !TOKEN.test(name)) {
          return `x-mcp-header of /${at.join("/")} is not a header token: ${JSON.stringify(name)}`;
        }
        if (!["string", "integer", "boolean"].includes(property.type as string)) {
          return `x-mcp-header ${name} is on a ${
            JSON.stringify(property.type)
          } property (string, integer, boolean only)`;
        }
        if (seen.has(name.toLowerCase())) return `x-mcp-header ${name} is used twice`;
        if (headers.length >= MAX_PARAM_HEADERS) return `more than ${MAX_PARAM_HEADERS} x-mcp-header marks`;
        seen.add(name.toLowerCase());
        headers.push({ name, path: at });
      }
      if (at.length >= MAX_SCAN_DEPTH) {
        if (hasMark(property.properties)) return `x-mcp-header deeper than ${MAX_SCAN_DEPTH} levels`;
        continue;
      }
      const inner = walk(property, at);
      if (inner !== undefined) return inner;
    }
    return undefined;
  };
  if (!isRecord(inputSchema)) return { valid: true, headers };
  const reason = walk(inputSchema, []);
  return reason === undefined ? { valid: true, headers } : { valid: false, reason };
}

/** `value` as the spec's header value: as-is when plain visible ASCII, else `=?base64?<UTF-8 base64>?=`. */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value) &&
    !(value.startsWith("=?base64?") && value.endsWith("?="));
  if (plain) return value;
  const bytes = new TextEncoder().encode(value);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return `=?base64?${btoa(binary)}?=`;
}

/**
 * The `Mcp-Param-*` headers of a call with `args` for the marks `headers` (a value absent or `null` is
 * omitted; integers in decimal, booleans `true`/`false`).
 *
 * @throws {Error} When an encoded value is longer than {@link MAX_PARAM_HEADER_BYTES}.
 */
export function paramHeaders(
  headers: readonly ParamHeader[],
  args: Record<string, unknown>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, path } of headers) {
    let value: unknown = args;
    for (const key of path) value = isRecord(value) ? value[key] : undefined;
    if (value === undefined || value === null) continue;
    const text = typeof value === "string"
      ? value
      : typeof value === "boolean" || typeof value === "number"
      ? String(value)
      : undefined;
    if (text === undefined) continue; // Not a primitive: the server validates the arguments.
    const encoded = encodeHeaderValue(text);
    if (encoded.length > MAX_PARAM_HEADER_BYTES) {
      throw new Error(
        `argument ${path.join(".")} is ${encoded.length} bytes as header Mcp-Param-${name}, more than ` +
          `${MAX_PARAM_HEADER_BYTES} (MAX_PARAM_HEADER_BYTES): pass a shorter value`,
      );
    }
    out[`Mcp-Param-${name}`] = encoded;
  }
  return out;
}
