/**
 * Name lookups over one resolution: which server a script global reaches, and why a declared
 * server that is not in scope cannot be used (dormant or refused). Pure functions.
 *
 * @module
 */
import { UserError } from "../diagnostics.ts";
import { namespaceKey, type Resolution, type ServerSpec } from "../plugins/mod.ts";
import { BackendError } from "../backends/mod.ts";

/**
 * Why a declared server that is not in scope cannot be used, for a raw name or script global:
 * `` `filesystem` does not apply in this workspace: needs one of: serde>=1 `` (dormant) or
 * `` `x` is refused: <reason> ``. `undefined` when the name is in scope or never declared.
 */
export function unavailableReason(resolution: Resolution, name: string): string | undefined {
  if (resolution.servers.some((s) => s.name === name || namespaceKey(s.name) === name)) return undefined;
  const matches = (server: string) => server === name || namespaceKey(server) === name;
  const dormant = resolution.dormant.find((d) => matches(d.server));
  if (dormant) return `\`${dormant.server}\` does not apply in this workspace: ${dormant.reason}`;
  const refused = resolution.refused.find((r) => matches(r.server));
  if (refused) return `\`${refused.server}\` is refused: ${refused.reason}`;
  return undefined;
}

/** Script globals of the declared servers that are dormant or refused (none clashing with one in scope). */
export function unavailableNamespaces(resolution: Resolution): string[] {
  const inScope = new Set(resolution.servers.map((s) => namespaceKey(s.name)));
  const names = [...resolution.dormant.map((d) => d.server), ...resolution.refused.map((r) => r.server)];
  return [...new Set(names.map(namespaceKey))].filter((n) => !inScope.has(n));
}

/**
 * The server in scope a script reaches as `namespace`.
 *
 * @throws {UserError} `SERVER_DORMANT` / `SERVER_REFUSED` with the reason; {@link BackendError}
 *   `REQUEST_FAILED` for a name no plugin declares.
 */
export function specForNamespace(resolution: Resolution, namespace: string): ServerSpec {
  const spec = byNamespace(resolution.servers).get(namespace);
  if (spec) return spec;
  const unavailable = unavailableReason(resolution, namespace);
  if (unavailable) {
    const isDormant = resolution.dormant.some((d) => namespaceKey(d.server) === namespace);
    throw new UserError(isDormant ? "SERVER_DORMANT" : "SERVER_REFUSED", unavailable);
  }
  throw new BackendError("REQUEST_FAILED", namespace, `no server named \`${namespace}\` is in scope`);
}

/** The servers in scope by script global, built once per resolution (a call looks its server up here). */
const BY_NAMESPACE = new WeakMap<readonly ServerSpec[], Map<string, ServerSpec>>();

function byNamespace(servers: readonly ServerSpec[]): Map<string, ServerSpec> {
  let map = BY_NAMESPACE.get(servers);
  if (map === undefined) {
    map = new Map();
    // The first server of a namespace wins, as `find()` in name order did.
    for (const spec of servers) {
      const key = namespaceKey(spec.name);
      if (!map.has(key)) map.set(key, spec);
    }
    BY_NAMESPACE.set(servers, map);
  }
  return map;
}

/** The error of listing a server given up for the session (its restart budget spent). */
export function failedServerError(
  spec: ServerSpec,
  state: { failures: number; lastError?: string | undefined },
): BackendError {
  return new BackendError(
    "SERVER_FAILED",
    spec.name,
    `${spec.name} failed ${state.failures} times and is not restarted in this session: ${
      state.lastError ?? "unknown error"
    }`,
  );
}
