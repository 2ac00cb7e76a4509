/**
 * The public shapes of the catalog (what a listing and a call produce, how it is opened), apart from
 * the `Catalog` class itself in `mod.ts`.
 *
 * @module
 */
import type { ServerSpec } from "../plugins/mod.ts";
import type { Logger } from "../log.ts";
import type { CallToolResult, Clock, ConnectFn, Tool } from "../backends/mod.ts";
import type { LoadedResolution } from "./resolve.ts";
import type { ObservedLookup } from "../declarations/observed_shape.ts";

/** One server's tools as the agent may see them. */
export interface ServerTools {
  spec: ServerSpec;
  /** Tools after the enabled/disabled and read-only filters, in server order. */
  tools: Tool[];
  /** How many tools the filters hid. */
  hiddenCount: number;
  /** `"live"` (asked the running server) or `"cache"` (from `<config>/cache/tools/`). */
  source: "live" | "cache";
  /** Listing problems, e.g. a cursor that never advanced. */
  warnings: string[];
  /** The server declares `resources` (scripts reach them as `srv.$resources`). */
  hasResources: boolean;
  /**
   * The observed result shapes of its tools, as they are when asked (tools without `outputSchema`
   * only; nothing when `observe-results` is off). @default none
   */
  observed?: ObservedLookup | undefined;
}

/** What a dispatched call produced. */
export interface CallOutcome {
  /** Server name as declared. */
  server: string;
  /** Wire name of the tool that was called. */
  tool: string;
  /** The tool's definition from the live listing (its `outputSchema` is checked by the caller). */
  definition: Tool;
  /** The raw `tools/call` result. */
  result: CallToolResult;
}

/** Options of {@link Catalog.open}. */
export interface CatalogOptions {
  cwd: string;
  env: Readonly<Record<string, string>>;
  homeDir: string;
  /** `--config-dir` (absolute), passed to the loader. */
  configDir?: string | undefined;
  /** @default SYSTEM_CLOCK */
  clock?: Clock | undefined;
  /** @default NULL_LOGGER */
  logger?: Logger | undefined;
  /** Connector for the pool (seam; `http.ts` plugs in here). @default stdio only */
  connect?: ConnectFn | undefined;
  /** Resolution loader (seam). @default loadResolution */
  load?:
    | ((
      o: {
        cwd: string;
        env: Readonly<Record<string, string>>;
        homeDir: string;
        configDir?: string | undefined;
      },
    ) => Promise<LoadedResolution>)
    | undefined;
  /** Write and read `<config>/cache/tools/`. @default true */
  useToolCache?: boolean | undefined;
}
