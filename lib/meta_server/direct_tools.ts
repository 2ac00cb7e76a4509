/**
 * Chosen tools direct (`[mcp] direct-tools`): the backing tools the agent sees as its own tools beside
 * `list_tools` and `execute`, with their real schemas and annotations, under names every agent accepts.
 * They are listed from the tool cache (or a running server's listing), so listing them starts nothing;
 * a server never listed yet gets its direct tools once its first start lists it (`tools/list_changed`).
 *
 * Naming rule: `<server>__<tool>`, each part with every character outside `A-Z a-z 0-9 _ -` replaced by
 * `_`, at most {@link DIRECT_TOOL_NAME_MAX_CHARS} characters (a longer one is cut to 39 and ends with `_`
 * and 8 hex digits of a hash of `server.tool`); tools of two servers that would share a name each get
 * the hash ending, and a second tool of one server that would get a name already taken gets it (told
 * under Problems: see {@link nameDirectTools}). So every name matches {@link DIRECT_TOOL_NAME}: with the
 * longest prefix an agent adds (`mcp__symposium__`, 16 characters), the model sees at most 64 characters
 * of `[A-Za-z0-9_-]`, starting with a letter (`lib/sync/agents/tool_names.ts` has each agent's rule).
 *
 * @module
 */
import type { Catalog, ServerTools } from "../catalog/mod.ts";
import type { Tool } from "../backends/mod.ts";
import { compileGlob, type GlobMatcher } from "../glob.ts";
import { namespaceKey, type ServerSpec } from "../plugins/mod.ts";
import { printable } from "../diagnostics.ts";
import type { Logger } from "../log.ts";

/** Most direct tools listed; past it the first ones (by server, then tool name) are, and a Problem says so. */
export const DIRECT_TOOLS_MAX = 32;
/**
 * Largest definition of a direct tool, UTF-8 bytes of its JSON (32 KiB): a larger one (a schema of
 * megabytes) is not direct, and a Problem says so, so that the agent's `tools/list` stays within
 * {@link DIRECT_TOOLS_MAX} of these (1 MiB). The tool stays callable from a script.
 */
export const DIRECT_TOOL_DEFINITION_MAX_BYTES = 32 * 1024;
/** Longest direct tool name, in characters: 64 (the strictest model API) less `mcp__symposium__` (16). */
export const DIRECT_TOOL_NAME_MAX_CHARS = 48;
/** Every direct tool name matches this. */
export const DIRECT_TOOL_NAME: RegExp = /^[A-Za-z][A-Za-z0-9_-]{0,47}$/;

/** One direct tool: the name the agent calls and the backing tool it stands for. */
export interface DirectTool {
  /** The name in `tools/list` (see the module doc). */
  name: string;
  /** The backing server, as declared. */
  server: string;
  /** The definition as listed (its `name` is the server's own). */
  definition: Tool;
}

/** What the direct tools are now, and why some asked for are not there. */
export interface DirectListing {
  tools: DirectTool[];
  /** One line each: a pattern matching nothing, a cap passed, a renamed clash, a server not listed yet. */
  problems: string[];
}

/** 8 hex digits of the 32-bit FNV-1a hash of `text`'s UTF-16 units: stable across runs and machines. */
function hash8(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

const clean = (part: string) => part.replace(/[^A-Za-z0-9_-]/g, "_");

/**
 * The name of backing tool `tool` of server `server` as a direct tool (before clashes): see the module
 * doc. `server` is a declared server name (a letter first), so the name starts with a letter.
 *
 * @example
 * ```ts
 * import { directToolName } from "./direct_tools.ts";
 * directToolName("memory", "read_graph"); // "memory__read_graph"
 * directToolName("fs", "files.read"); // "fs__files_read"
 * ```
 */
export function directToolName(server: string, tool: string): string {
  const whole = `${clean(server)}__${clean(tool)}`;
  const named = /^[A-Za-z]/.test(whole) ? whole : `t${whole}`;
  return named.length <= DIRECT_TOOL_NAME_MAX_CHARS ? named : hashedName(named, `${server}.${tool}`);
}

/** `name` cut to 39 characters with `_` and 8 hex digits of the hash of `key`: 48 characters. */
function hashedName(name: string, key: string): string {
  return `${name.slice(0, DIRECT_TOOL_NAME_MAX_CHARS - 9)}_${hash8(key)}`;
}

/**
 * Names `pairs` (in their order) with {@link directToolName}. A name two servers' tools would share is
 * neither's: each gets its hashed form, so that a server listing a new tool never takes over a name the
 * agent already calls another server's tool by (and a name still shared then, a crafted hash, is left out
 * for all of them). Within one server, a name already taken is replaced by its hashed form (then with a
 * counter in the hashed key until free). Each rename or omission is a line of `clashes`.
 */
export function nameDirectTools(
  pairs: readonly { server: string; definition: Tool }[],
): { tools: DirectTool[]; clashes: string[] } {
  const labelOf = (p: { server: string; definition: Tool }) => `${p.server}.${p.definition.name}`;
  const plain = pairs.map((p) => directToolName(p.server, p.definition.name));
  const serversOf = (names: string[]) => {
    const servers = new Map<string, Set<string>>();
    names.forEach((n, i) => servers.set(n, (servers.get(n) ?? new Set()).add(pairs[i]!.server)));
    return servers;
  };
  const plainServers = serversOf(plain);
  const clashes: string[] = [];
  const candidates = plain.map((name, i) => {
    if (plainServers.get(name)!.size === 1) return name;
    const hashed = hashedName(name, labelOf(pairs[i]!));
    clashes.push(
      `direct-tools: tools of ${
        [...plainServers.get(name)!].map((s) => `\`${s}\``).join(", ")
      } would all be ` +
        `named ${name}; ${JSON.stringify(labelOf(pairs[i]!))} is ${hashed}`,
    );
    return hashed;
  });
  const candidateServers = serversOf(candidates);
  const reserved = new Set(candidates);
  const taken = new Map<string, string>();
  const tools: DirectTool[] = [];
  pairs.forEach(({ server, definition }, i) => {
    const label = labelOf(pairs[i]!);
    const first = candidates[i]!;
    if (candidateServers.get(first)!.size > 1) {
      clashes.push(
        `direct-tools: ${JSON.stringify(label)} is left out: tools of two servers would be named ${first}`,
      );
      return;
    }
    let name = first;
    for (let n = 0; taken.has(name) || (name !== first && reserved.has(name)); n++) {
      name = hashedName(first, n === 0 ? label : `${label}\0${n}`);
    }
    if (name !== first) {
      clashes.push(
        `direct-tools: ${JSON.stringify(label)} and ${
          JSON.stringify(taken.get(first))
        } would both be named ` +
          `${first}; ${JSON.stringify(label)} is ${name}`,
      );
    }
    taken.set(name, label);
    tools.push({ name, server, definition });
  });
  return { tools, clashes };
}

/** One `direct-tools` pattern, compiled. */
interface Pattern {
  text: string;
  server: GlobMatcher;
  tool: GlobMatcher;
}

function compilePatterns(patterns: readonly string[]): Pattern[] {
  return patterns.map((text) => {
    const dot = text.indexOf(".");
    return {
      text,
      server: compileGlob(text.slice(0, dot), { question: false }),
      tool: compileGlob(text.slice(dot + 1), { question: false }),
    };
  });
}

/** Whether `pattern`'s server part names `spec` (its declared name or its script global). */
const namesServer = (pattern: Pattern, spec: ServerSpec) =>
  pattern.server.test(spec.name) || pattern.server.test(namespaceKey(spec.name));

/**
 * The direct tools of the session as the catalog knows them now, without starting anything: for each
 * server in scope that a pattern names, its visible tools from the running server or the fresh tool
 * cache (`Catalog.listServerTools` with `allowStart: false`). Ordered by server, then tool name; at
 * most {@link DIRECT_TOOLS_MAX}. Never throws for a server: what cannot be listed is a Problem line.
 */
export async function listDirectTools(catalog: Catalog, signal?: AbortSignal): Promise<DirectListing> {
  const patterns = compilePatterns(catalog.config.directTools);
  if (patterns.length === 0) return { tools: [], problems: [] };
  const problems: string[] = [];
  const named = catalog.servers.filter((spec) => patterns.some((p) => namesServer(p, spec)));
  const listings = await Promise.all(named.map(async (spec) => {
    try {
      return await catalog.listServerTools(spec, { allowStart: false, ...(signal ? { signal } : {}) });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      problems.push(
        /no cached tool list/.test(why)
          ? `direct-tools: \`${spec.name}\` has not been listed yet, so its direct tools are not either; ` +
            `they are listed once it starts (list_tools naming it, or the first execute that calls it), and the agent is told`
          : `direct-tools: \`${spec.name}\` cannot be listed: ${why}`,
      );
      return undefined;
    }
  }));
  const matched = withinSize(
    matchTools(patterns, listings.filter((l) => l !== undefined), problems),
    problems,
  );
  for (const pattern of patterns) {
    if (!catalog.servers.some((spec) => namesServer(pattern, spec))) {
      problems.push(
        `direct-tools: ${JSON.stringify(pattern.text)} names no server in scope (servers: ${
          catalog.servers.map((s) => s.name).join(", ") || "none"
        }); fix the pattern in config.toml`,
      );
    }
  }
  const { tools, clashes } = nameDirectTools(matched.slice(0, DIRECT_TOOLS_MAX));
  if (matched.length > DIRECT_TOOLS_MAX) {
    problems.push(
      `direct-tools: ${matched.length} tools match ${
        patterns.map((p) => JSON.stringify(p.text)).join(", ")
      }, more than ${DIRECT_TOOLS_MAX}; the first ${DIRECT_TOOLS_MAX} (by server, then tool name) are listed, ` +
        `up to ${tools.at(-1)?.server}.${tools.at(-1)?.definition.name}: narrow the patterns in config.toml`,
    );
  }
  return { tools, problems: [...problems, ...clashes].map((line) => printable(line)) };
}

/**
 * The tools of `listings` some pattern names, by server then tool name (code-point order); a pattern
 * whose servers were listed but that matches none of their tools is a line of `problems`.
 */
function matchTools(
  patterns: readonly Pattern[],
  listings: readonly ServerTools[],
  problems: string[],
): { server: string; definition: Tool }[] {
  const matched: { server: string; definition: Tool }[] = [];
  const used = new Set<Pattern>();
  for (const listing of [...listings].sort((a, b) => compare(a.spec.name, b.spec.name))) {
    const mine = patterns.filter((p) => namesServer(p, listing.spec));
    const tools = listing.tools.filter((tool) =>
      mine.some((p) => {
        const hit = p.tool.test(tool.name);
        if (hit) used.add(p);
        return hit;
      })
    );
    for (const definition of tools.sort((a, b) => compare(a.name, b.name))) {
      matched.push({ server: listing.spec.name, definition });
    }
  }
  for (const pattern of patterns) {
    const listed = listings.filter((l) => namesServer(pattern, l.spec));
    if (listed.length === 0 || used.has(pattern)) continue;
    const count = listed.reduce((n, l) => n + l.tools.length, 0);
    problems.push(
      `direct-tools: ${JSON.stringify(pattern.text)} matches none of the ${count} visible tools of ${
        listed.map((l) => `\`${l.spec.name}\``).join(", ")
      }; check the tool names with list_tools`,
    );
  }
  return matched;
}

/** `matched` without the definitions over {@link DIRECT_TOOL_DEFINITION_MAX_BYTES}, each a line of `problems`. */
function withinSize(
  matched: { server: string; definition: Tool }[],
  problems: string[],
): { server: string; definition: Tool }[] {
  const encoder = new TextEncoder();
  return matched.filter(({ server, definition }) => {
    const json = JSON.stringify(definition);
    // UTF-8 takes at most 3 bytes per UTF-16 unit: most definitions need no encoding to be measured.
    const bytes = json.length * 3 <= DIRECT_TOOL_DEFINITION_MAX_BYTES ? 0 : encoder.encode(json).length;
    if (bytes <= DIRECT_TOOL_DEFINITION_MAX_BYTES) return true;
    problems.push(
      `direct-tools: ${
        JSON.stringify(`${server}.${definition.name.slice(0, 200)}`)
      }'s definition is ${bytes} bytes, ` +
        `over the ${DIRECT_TOOL_DEFINITION_MAX_BYTES} a direct tool may be; it is not direct (call it from execute)`,
    );
    return false;
  });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A direct tool as `tools/list` shows it: the backing definition (description, title, input and output
 * schemas, annotations, icons, `_meta`) under its direct name.
 */
export function listedDirectTool(tool: DirectTool): Tool {
  return { ...tool.definition, name: tool.name };
}

/**
 * The direct tools of one agent session: the last listing (what a `tools/call` finds a name in) and
 * whether a new look changed what the agent was shown (then it is told `tools/list_changed`).
 */
export class DirectToolSet {
  readonly #catalog: Catalog;
  #listing: DirectListing = { tools: [], problems: [] };
  #shown: string | undefined;
  #looking: Promise<DirectListing> | undefined;

  constructor(catalog: Catalog) {
    this.#catalog = catalog;
  }

  /** The listing as last looked at (nothing before the first look). */
  get listing(): DirectListing {
    return this.#listing;
  }

  /**
   * Looks again ({@link listDirectTools}); concurrent looks share one.
   * @param options.shown The agent is shown this listing (`tools/list`). @default false
   * @returns The listing, and whether its tools differ from the ones last shown to the agent.
   */
  async look(options: { shown?: boolean } = {}): Promise<{ listing: DirectListing; changed: boolean }> {
    this.#looking ??= listDirectTools(this.#catalog).finally(() => (this.#looking = undefined));
    const listing = this.#listing = await this.#looking;
    const signature = JSON.stringify(listing.tools.map(listedDirectTool));
    const changed = this.#shown !== undefined && signature !== this.#shown;
    if (options.shown) this.#shown = signature;
    return { listing, changed };
  }

  /** The direct tools as `tools/list` shows them now (a look; the agent is now shown these). */
  async shownTools(): Promise<Tool[]> {
    return (await this.look({ shown: true })).listing.tools.map(listedDirectTool);
  }

  /** The direct tools' Problems lines now (a look), for `list_tools`. */
  async problems(): Promise<string[]> {
    return (await this.look()).listing.problems;
  }

  /** The names of the direct tools as last looked at. */
  names(): string[] {
    return this.#listing.tools.map((t) => t.name);
  }

  /**
   * Calls `onChanged` when a server's live listing (its first start, or a new listing after its
   * `tools/list_changed`) changed the direct tools the agent was shown. Returns the stop.
   */
  watch(onChanged: () => void, logger: Logger): () => void {
    return this.#catalog.onToolsListed(() => {
      if (this.#catalog.config.directTools.length === 0) return;
      this.look().then(({ changed }) => changed && onChanged(), (error) => {
        logger.warn(`direct-tools: cannot list the direct tools again: ${String(error)}`);
      });
    });
  }

  /** The direct tool named `name`, looking again when the last listing has none of that name. */
  async find(name: string): Promise<DirectTool | undefined> {
    const known = this.#listing.tools.find((t) => t.name === name);
    if (known !== undefined || this.#catalog.config.directTools.length === 0) return known;
    return (await this.look()).listing.tools.find((t) => t.name === name);
  }
}
