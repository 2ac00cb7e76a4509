/**
 * Area `backends/`: speaking MCP to backing servers (stdio child processes, streamable HTTP) and keeping
 * them alive. It never knows the agent, the sandbox or the catalog; it imports plugins/, net/, auth/.
 *
 * The face of the area: the pool (`pool.ts`), a live connection and its errors (`connection.ts`), the
 * stdio transport's roots (`stdio.ts`) and a stdio server's environment (`child_env.ts`).
 * Other faces, each loaded on its own so that a command or a start loads no more than it uses yet:
 * - `child_env.ts`: the environment a stdio server gets, which resolution and `status` read without
 *   loading the clients;
 * - `http.ts`: the streamable HTTP client, and with it `auth/` and `net/`; imported only once a session
 *   has an HTTP server (`lib/commands/_session.ts:lazyHttpConnector`).
 *
 * @module
 */
export { childEnvironment, envNamesByOrigin, type EnvOrigin, isBaseEnvName } from "./child_env.ts";
export {
  type BackendConnection,
  BackendError,
  type BackendPeer,
  type CallOptions,
  type CallToolResult,
  type ProtocolEra,
  type ReadResourceResult,
  type Resource,
  type Tool,
} from "./connection.ts";
export {
  type Clock,
  connectBySpec,
  type ConnectFn,
  type PoolLimits,
  ServerPool,
  SYSTEM_CLOCK,
} from "./pool.ts";
export { rootsForStdio } from "./stdio.ts";
