/**
 * A backing server's resources as scripts reach them (`srv.$resources.list()` / `.read({ uri })`):
 * dispatched through the pool like tool calls (started on demand, one call slot each), refused with
 * a clear message for a server that declares no `resources`.
 *
 * @module
 */
import type { ServerSpec } from "../plugins/mod.ts";
import { BackendError, type ReadResourceResult, type Resource, type ServerPool } from "../backends/mod.ts";

/** The methods a script finds under `srv.$resources`. */
export const RESOURCE_METHODS: readonly string[] = Object.freeze(["list", "read"]);

/** Longest URI accepted from a script in `$resources.read`, in UTF-16 code units. */
export const MAX_RESOURCE_URI_CHARS = 8_192;

/**
 * Whether `spec`'s resources are hidden: `enabled-tools = []` exposes nothing of the server, its
 * resources included.
 */
export function hidesResources(spec: ServerSpec): boolean {
  return spec.enabledTools !== undefined && spec.enabledTools.length === 0;
}

function hiddenResources(spec: ServerSpec, what: string): BackendError {
  return new BackendError(
    "REQUEST_FAILED",
    spec.name,
    `\`${spec.name}.$resources.${what}\` is hidden by \`enabled-tools = []\`, which exposes nothing of ${spec.name}`,
    { hint: `list the tools to expose in enabled-tools of mcp server "${spec.name}"` },
  );
}

function noResources(spec: ServerSpec, what: string): BackendError {
  return new BackendError(
    "REQUEST_FAILED",
    spec.name,
    `${spec.name} declares no resources, so \`$resources.${what}\` is not available`,
    { hint: `call list_tools for what ${spec.name} offers` },
  );
}

/**
 * Every resource `spec` lists (`resources/list` walked to the end), under the server's call timeout.
 *
 * @throws {BackendError} `REQUEST_FAILED` when the server declares no `resources` or `enabled-tools = []`
 *   hides them; as `callTool`.
 */
export async function listServerResources(
  pool: ServerPool,
  spec: ServerSpec,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<Resource[]> {
  if (hidesResources(spec)) throw hiddenResources(spec, "list");
  return await pool.withCallSlot(spec, async () => {
    const connection = await pool.acquire(spec, { signal: options.signal, waitForRestart: true });
    if (!connection.serverCapabilities.resources) throw noResources(spec, "list");
    const { resources } = await connection.listResources({
      timeoutMs: spec.toolCallTimeoutMs,
      signal: options.signal,
    });
    return resources;
  }, { signal: options.signal });
}

/**
 * The contents of the resource `uri` of `spec` (`resources/read`): each `{ uri, mimeType?, text }`
 * or `{ uri, mimeType?, blob }` (base64), as the server sent them.
 *
 * @throws {TypeError} When `uri` is not a non-empty string of at most {@link MAX_RESOURCE_URI_CHARS}.
 * @throws {BackendError} `REQUEST_FAILED` when the server declares no `resources`, `enabled-tools = []`
 *   hides them, or the server refuses the read.
 */
export async function readServerResource(
  pool: ServerPool,
  spec: ServerSpec,
  uri: unknown,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<ReadResourceResult["contents"]> {
  if (hidesResources(spec)) throw hiddenResources(spec, "read");
  if (typeof uri !== "string" || uri === "" || uri.length > MAX_RESOURCE_URI_CHARS) {
    throw new TypeError(
      `\`${spec.name}.$resources.read\` needs { uri: "<resource URI>" } (a non-empty string of at most ${MAX_RESOURCE_URI_CHARS} characters)`,
    );
  }
  return await pool.withCallSlot(spec, async () => {
    const connection = await pool.acquire(spec, { signal: options.signal, waitForRestart: true });
    if (!connection.serverCapabilities.resources) throw noResources(spec, "read");
    const result = await connection.readResource(uri, {
      timeoutMs: spec.toolCallTimeoutMs,
      signal: options.signal,
    });
    return result.contents;
  }, { signal: options.signal });
}
