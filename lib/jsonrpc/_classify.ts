/**
 * JSON-RPC 2.0 hygiene for what the agent sends us (one message per line): a line that is not
 * JSON gets `-32700 Parse error`, anything that is not a valid single message (a batch, a
 * wrong-typed `id`, a missing or non-string `method`, a wrong `jsonrpc`) gets `-32600 Invalid
 * Request`, with the request's `id` when it can be told and `null` otherwise (JSON-RPC 2.0 §5,
 * §5.1, §6). MCP sends no batches (removed in protocol 2025-06-18), so a batch is refused whole.
 *
 * @module
 */
import { parseJSONRPCMessage, specTypeSchemas } from "@modelcontextprotocol/server";
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import type { RequestId } from "./_sniff_id.ts";

/** JSON-RPC 2.0 error codes we answer with. */
export const PARSE_ERROR = -32700;
/** JSON-RPC 2.0: the message is not a valid Request object. */
export const INVALID_REQUEST = -32600;
/** JSON-RPC 2.0: the method's parameters are invalid. */
export const INVALID_PARAMS = -32602;

/**
 * The requests the meta-server serves itself whose `params` are checked here against the MCP
 * schema (so a bad one gets `-32602 Invalid params` with a one-line reason, not the SDK's
 * `-32603` with a raw schema dump). Other methods are left to the SDK.
 */
const CHECKED_PARAMS: Readonly<Record<string, keyof typeof specTypeSchemas>> = {
  "logging/setLevel": "SetLevelRequest",
  "tools/call": "CallToolRequest",
  "tools/list": "ListToolsRequest",
};

/** An error answer to send back. */
export interface ErrorReply {
  jsonrpc: "2.0";
  id: RequestId | null;
  error: { code: number; message: string };
}

/**
 * What to do with one line: hand `message` on, answer `reply`, or drop it (`ignore`: an invalid
 * response to one of our own requests, which must not be answered; `reason` says why, for the log).
 */
export type Classified =
  | { kind: "message"; message: JSONRPCMessage }
  | { kind: "reply"; reply: ErrorReply; reason: string }
  | { kind: "ignore"; reason: string };

/** Builds an error answer. */
export function errorReply(id: RequestId | null, code: number, message: string): ErrorReply {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

function isValidId(id: unknown): id is RequestId {
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));
}

/** Shortest readable description of a zod failure: `params: expected object` ... */
function describeSchemaError(error: unknown): string {
  const issues = (error as { issues?: { path?: unknown[]; message?: string }[] }).issues;
  if (!Array.isArray(issues) || issues.length === 0) {
    return error instanceof Error ? error.message : String(error);
  }
  const first = issues[0]!;
  const path = Array.isArray(first.path) && first.path.length > 0 ? `${first.path.join(".")}: ` : "";
  return `${path}${first.message ?? "invalid"}`.slice(0, 200);
}

/**
 * Classifies one line of the agent's stdin.
 *
 * @param line One line, without its newline (not empty).
 * @returns A message for the MCP server, an error reply, or `ignore` for a bad response.
 * @example
 * ```ts
 * import { classifyLine } from "./_classify.ts";
 * classifyLine("{oops").kind; // "reply" (-32700)
 * classifyLine('[{"jsonrpc":"2.0","id":1,"method":"ping"}]').kind; // "reply" (-32600, batches)
 * classifyLine('{"jsonrpc":"2.0","id":1,"method":"ping"}').kind; // "message"
 * ```
 */
export function classifyLine(line: string): Classified {
  let value: unknown;
  try {
    // A `"__proto__"` member is dropped (at any depth): later copies of the message (the SDK's
    // schemas, spreads, `Object.assign`) must not turn it into an object's prototype. A `\u` escape
    // can spell that key without its letters (`"\u005f_proto__"`), so such a line is revived too.
    value = line.includes('"__proto__"') || line.includes("\\u")
      ? JSON.parse(line, (key, v) => key === "__proto__" ? undefined : v)
      : JSON.parse(line);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return {
      kind: "reply",
      reply: errorReply(null, PARSE_ERROR, `Parse error: the line is not JSON (${why.slice(0, 120)})`),
      reason: "unparseable line",
    };
  }
  return classifyValue(value);
}

/** As {@link classifyLine}, for a value already parsed. */
export function classifyValue(value: unknown): Classified {
  const invalid = (id: RequestId | null, why: string): Classified => ({
    kind: "reply",
    reply: errorReply(id, INVALID_REQUEST, `Invalid Request: ${why}`),
    reason: why,
  });
  if (Array.isArray(value)) {
    return invalid(null, "batches are not supported; send one JSON-RPC message per line");
  }
  if (typeof value !== "object" || value === null) {
    return invalid(null, "a JSON-RPC message must be a JSON object");
  }
  const record = value as Record<string, unknown>;
  const hasId = "id" in record;
  const id = isValidId(record.id) ? record.id : null;
  const isResponse = !("method" in record) && ("result" in record || "error" in record);
  if (isResponse) {
    try {
      return { kind: "message", message: parseJSONRPCMessage(record) };
    } catch (error) {
      // A broken answer to one of our requests: answering an answer would only confuse the client.
      return { kind: "ignore", reason: `invalid response: ${describeSchemaError(error)}` };
    }
  }
  if (record.jsonrpc !== "2.0") return invalid(id, '"jsonrpc" must be "2.0"');
  if (!("method" in record)) return invalid(id, 'the message has no "method" (nor "result"/"error")');
  if (typeof record.method !== "string") return invalid(id, '"method" must be a string');
  if (hasId && !isValidId(record.id)) {
    const shown = JSON.stringify(record.id)?.slice(0, 40) ?? String(record.id);
    return invalid(null, `"id" must be a string or an integer, not ${shown}`);
  }
  if ("params" in record && (typeof record.params !== "object" || record.params === null)) {
    return invalid(
      id,
      `"params" must be an object or an array (JSON-RPC 2.0 §4.2), not ${describeValue(record.params)}; ` +
        "omit it or send an object",
    );
  }
  // Extra top-level members are allowed and ignored: only the members of a request are handed on.
  const request: Record<string, unknown> = { jsonrpc: "2.0", method: record.method };
  if (hasId) request.id = record.id;
  if ("params" in record) request.params = record.params;
  // The common case (an `execute` call, a notification) skips the schemas: it is one they accept as it is.
  if (isPlainRequest(record.method, request.params)) {
    return { kind: "message", message: request as JSONRPCMessage };
  }
  if (
    hasId && Object.hasOwn(CHECKED_PARAMS, record.method) && !isModernRemoved(record.method, request.params)
  ) {
    const why = checkParams(record.method, request);
    if (why !== undefined) {
      return {
        kind: "reply",
        reply: errorReply(id, INVALID_PARAMS, `Invalid params for ${record.method}: ${why}`),
        reason: why,
      };
    }
  }
  try {
    return { kind: "message", message: parseJSONRPCMessage(request) };
  } catch (error) {
    return invalid(id, describeSchemaError(error));
  }
}

/** Methods the MCP 2026-07-28 revision removed: a modern request of one is the SDK's to refuse (`-32601`). */
const REMOVED_IN_MODERN: ReadonlySet<string> = new Set(["logging/setLevel"]);

/**
 * Whether a request of `method` with `params` is a modern one (its `_meta` names a protocol version) of a
 * method that revision removed: its params are not checked against the legacy schema.
 */
function isModernRemoved(method: string, params: unknown): boolean {
  if (!REMOVED_IN_MODERN.has(method) || !isPlainObject(params) || !isPlainObject(params._meta)) return false;
  return typeof params._meta["io.modelcontextprotocol/protocolVersion"] === "string";
}

/** A JSON object that is not an array (a `JSON.parse` object has the plain prototype). */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Whether `params` of a request or notification of `method` (whose `jsonrpc`, `method` and `id` are
 * checked already) is one the SDK's message schema and the {@link CHECKED_PARAMS} schema accept
 * unchanged: absent, or an object whose `_meta` is absent or holds only a string or safe-integer
 * `progressToken`; for `tools/call` also with a string `name` and `arguments` absent or an object.
 * Anything else is left to the schemas (and their error messages).
 */
function isPlainRequest(method: string, params: unknown): boolean {
  if (params === undefined) return !Object.hasOwn(CHECKED_PARAMS, method);
  if (!isPlainObject(params)) return false;
  const meta = params._meta;
  if (meta !== undefined) {
    if (!isPlainObject(meta)) return false;
    for (const key in meta) if (key !== "progressToken") return false;
    const token = meta.progressToken;
    if (typeof token !== "string" && !(typeof token === "number" && Number.isSafeInteger(token))) {
      return false;
    }
  }
  if (method === "tools/call") {
    if (typeof params.name !== "string" || params.task !== undefined) return false;
    return params.arguments === undefined || isPlainObject(params.arguments);
  }
  return !Object.hasOwn(CHECKED_PARAMS, method);
}

/** `a string ("bogus")`, `a number (3)`, `null`, cut to 60 characters. */
function describeValue(v: unknown): string {
  if (v === null) return "null";
  const shown = JSON.stringify(v) ?? String(v);
  return `${Array.isArray(v) ? "an array" : `a ${typeof v}`} (${
    shown.length > 60 ? `${shown.slice(0, 59)}\u2026` : shown
  })`;
}

/**
 * Checks a request's `params` against the MCP schema of its method ({@link CHECKED_PARAMS}).
 *
 * @returns `undefined` when valid, else one line: `params.level: expected one of "debug", ...; got a string ("bogus")`.
 */
function checkParams(method: string, request: Record<string, unknown>): string | undefined {
  const schema = specTypeSchemas[CHECKED_PARAMS[method]!] as unknown as {
    "~standard": {
      validate(
        v: unknown,
      ): {
        issues?: readonly {
          path?: readonly unknown[];
          message?: string;
          code?: string;
          values?: unknown[];
        }[];
      };
    };
  };
  const outcome = schema["~standard"].validate({ method, params: request.params });
  if (outcome instanceof Promise || !outcome.issues || outcome.issues.length === 0) return undefined;
  const issue = outcome.issues[0]!;
  const path = (issue.path ?? []).map((p) =>
    typeof p === "object" && p !== null && "key" in p ? String(p.key) : String(p)
  );
  let got: unknown = { params: request.params };
  for (const key of path) {
    got = typeof got === "object" && got !== null ? (got as Record<string, unknown>)[key] : undefined;
  }
  const where = path.join(".") || "params";
  if (issue.code === "invalid_value" && Array.isArray(issue.values)) {
    const levels = method === "logging/setLevel" ? " (the RFC 5424 severities, as in the MCP spec)" : "";
    return `${where}: expected one of ${
      issue.values.map((v) => JSON.stringify(v)).join(", ")
    }${levels}; got ${got === undefined ? "nothing" : describeValue(got)}`;
  }
  const message = (issue.message ?? "invalid").replace(/^Invalid input: /, "");
  return `${where}: ${message.split("\n")[0]!.slice(0, 160)}${
    got === undefined ? "" : `; got ${describeValue(got)}`
  }`;
}
