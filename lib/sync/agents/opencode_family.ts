/**
 * Agents that keep MCP servers under a top-level `mcp` key with a typed entry: OpenCode (V1
 * `mcp.<name>` or V2 `mcp.servers.<name>`), Kilo Code (built on OpenCode, V1 layout) and Crush.
 *
 * @module
 */
import { JSONC } from "../formats/mod.ts";
import { isPlainObject } from "../formats/mod.ts";
import { envPath, joinPath, xdgConfigHome } from "../platform_paths.ts";
import { ENTRY_NAME } from "./ids.ts";
import {
  type AgentDefinition,
  type EntryShape,
  fixed,
  hints,
  plainEntry,
  REMOTE_KEYS,
  type ServerCommand,
} from "./types.ts";
import { firstExisting } from "./_locations.ts";

/**
 * How long OpenCode and Kilo Code wait for the server's tool list, in milliseconds (the `timeout`
 * of a V1 local entry; OpenCode's default is 5000, which a first start from source can exceed).
 */
export const OPENCODE_TOOLS_TIMEOUT_MS = 30_000;

/** Crush's per-server `timeout`, in seconds (the value of its documented example). */
export const CRUSH_TIMEOUT_SECS = 120;

/**
 * Picks OpenCode's layout: V2 (`mcp.servers.<name>`) when the file already has a `mcp.servers`
 * object that is not itself a V1 server entry, else V1 (`mcp.<name>`), which is also the default.
 *
 * @param variant `"v1"` or `"v2"` forces the layout (`--agent opencode-v1` / `opencode-v2`).
 */
export function openCodeShape(doc: unknown, server: ServerCommand, variant?: string): EntryShape {
  const mcp = isPlainObject(doc) ? doc.mcp : undefined;
  const servers = isPlainObject(mcp) ? mcp.servers : undefined;
  const isV2 = variant === "v2" ||
    (variant !== "v1" && isPlainObject(servers) && typeof servers.type !== "string");
  const command = [server.command, ...server.args];
  const owned = ["type", "command", ...REMOTE_KEYS];
  return isV2
    ? {
      address: { containerPath: ["mcp", "servers"], name: ENTRY_NAME },
      value: { type: "local", command },
      owned,
    }
    : {
      address: { containerPath: ["mcp"], name: ENTRY_NAME },
      value: { type: "local", command, enabled: true, timeout: OPENCODE_TOOLS_TIMEOUT_MS },
      owned,
    };
}

/** The OpenCode-family agents, in {@link AGENT_IDS} order. */
export const OPENCODE_FAMILY_AGENTS: readonly AgentDefinition[] = [
  {
    id: "opencode",
    name: "OpenCode",
    aliases: [{ name: "opencode-v1", variant: "v1" }, { name: "opencode-v2", variant: "v2" }],
    hasProjectConfig: true,
    // V1: https://opencode.ai/docs/mcp-servers/; V2: https://opencode.ai/v2/docs/mcp-servers/
    docs: "https://opencode.ai/docs/mcp-servers/",
    detection: (p) =>
      hints([
        joinPath(p, xdgConfigHome(p), "opencode"),
        ...(envPath(p, "OPENCODE_CONFIG") ? [envPath(p, "OPENCODE_CONFIG")!] : []),
      ], ["opencode"]),
    targets: async (p, fs, o) => {
      let path: string;
      if (o.projectRoot !== undefined) {
        const root = o.projectRoot;
        const candidates = [
          joinPath(p, root, "opencode.jsonc"),
          joinPath(p, root, "opencode.json"),
          joinPath(p, root, ".opencode", "opencode.jsonc"),
          joinPath(p, root, ".opencode", "opencode.json"),
        ];
        path = (await firstExisting(fs, candidates)) ?? candidates[1]!;
      } else {
        const dir = joinPath(p, xdgConfigHome(p), "opencode");
        const candidates = [joinPath(p, dir, "opencode.jsonc"), joinPath(p, dir, "opencode.json")];
        path = envPath(p, "OPENCODE_CONFIG") ?? (await firstExisting(fs, candidates)) ?? candidates[1]!;
      }
      return [{ path, format: JSONC, shape: (doc, server) => openCodeShape(doc, server, o.variant) }];
    },
  },
  {
    id: "kilo-code",
    name: "Kilo Code",
    aliases: [{ name: "kilo" }, { name: "kilocode" }],
    hasProjectConfig: true,
    // mcp.<name> ({type: "local", command: [...]}) in ~/.config/kilo/kilo.jsonc (or kilo.json);
    // project: kilo.jsonc / kilo.json at the root, or .kilo/kilo.jsonc (Kilo-Org/kilocode
    // packages/kilo-docs/pages/automate/mcp/using-in-kilo-code.md).
    docs: "https://kilo.ai/docs/automate/mcp/using-in-kilo-code",
    detection: (p) => hints([joinPath(p, xdgConfigHome(p), "kilo")], ["kilo"]),
    targets: async (p, fs, o) => {
      const base = o.projectRoot === undefined ? joinPath(p, xdgConfigHome(p), "kilo") : o.projectRoot;
      const candidates = o.projectRoot === undefined
        ? [joinPath(p, base, "kilo.jsonc"), joinPath(p, base, "kilo.json")]
        : [
          joinPath(p, base, "kilo.jsonc"),
          joinPath(p, base, "kilo.json"),
          joinPath(p, base, ".kilo", "kilo.jsonc"),
          joinPath(p, base, ".kilo", "kilo.json"),
        ];
      const fallback = o.projectRoot === undefined ? candidates[0]! : candidates[2]!;
      const path = (await firstExisting(fs, candidates)) ?? fallback;
      return [{ path, format: JSONC, shape: (doc, server) => openCodeShape(doc, server, "v1") }];
    },
  },
  {
    id: "crush",
    name: "Crush",
    aliases: [],
    hasProjectConfig: true,
    // mcp.<name> ({type: "stdio", command, args, timeout}) in ~/.config/crush/crush.json, or
    // .crush.json / crush.json in the project. Newer Crush also reads a bash `crushrc`.
    docs: "https://mintlify.com/charmbracelet/crush/configuration/mcp",
    detection: (p) => hints([joinPath(p, xdgConfigHome(p), "crush")], ["crush"]),
    targets: async (p, fs, o) => {
      const candidates = o.projectRoot === undefined
        ? [joinPath(p, xdgConfigHome(p), "crush", "crush.json")]
        : [joinPath(p, o.projectRoot, ".crush.json"), joinPath(p, o.projectRoot, "crush.json")];
      const path = (await firstExisting(fs, candidates)) ?? candidates[0]!;
      const entry = (s: ServerCommand) => ({ type: "stdio", ...plainEntry(s), timeout: CRUSH_TIMEOUT_SECS });
      return [fixed(path, JSONC, ["mcp"], entry, ["type", "command", "args", ...REMOTE_KEYS])];
    },
  },
];
