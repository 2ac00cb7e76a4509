/**
 * `[mcp] direct-tools`: the `server.tool` patterns of the tools the agent sees beside `list_tools` and
 * `execute`. Read leniently: a bad pattern costs only itself (the others apply), with file:line:col.
 *
 * @module
 */
import { UserError } from "../diagnostics.ts";
import type { TomlDocument } from "../toml_position.ts";
import { tomlTypeName } from "../toml_position.ts";

/** Longest `direct-tools` pattern, in characters (code points). */
export const DIRECT_TOOL_PATTERN_MAX_CHARS = 200;
/** Most `direct-tools` patterns read; the ones past it are one problem. */
export const DIRECT_TOOL_PATTERNS_MAX = 256;

/** The server part: a server name (ASCII letters, digits, `_`, `-`) with `*` for any run of characters. */
const SERVER_PART = /^[A-Za-z0-9_*-]{1,64}$/;
/** The tool part: printable, no space nor control character (MCP tool names: letters, digits, `_-.`). */
const TOOL_PART = /^[^\s\p{C}]+$/u;

/** `"a string"`, `"an integer"`: a TOML type name with its article. */
const aType = (value: unknown) => {
  const name = tomlTypeName(value);
  return `${/^[aeiou]/.test(name) ? "an" : "a"} ${name}`;
};

/**
 * Why `pattern` is not a `direct-tools` pattern, or `undefined` when it is one: `server.tool`, split at
 * the first `.`; the server part is a server name with `*` globs, the tool part a tool name with `*` globs
 * (printable, no space), the whole at most {@link DIRECT_TOOL_PATTERN_MAX_CHARS} characters.
 */
export function directToolPatternProblem(pattern: string): string | undefined {
  if ([...pattern].length > DIRECT_TOOL_PATTERN_MAX_CHARS) {
    return `it is longer than ${DIRECT_TOOL_PATTERN_MAX_CHARS} characters`;
  }
  const dot = pattern.indexOf(".");
  if (dot < 0) return "it has no `.` between the server and the tool";
  const server = pattern.slice(0, dot);
  const tool = pattern.slice(dot + 1);
  if (!SERVER_PART.test(server)) {
    return `its server part ${
      JSON.stringify(server)
    } is not a server name (ASCII letters, digits, "_", "-") with "*" globs`;
  }
  if (!TOOL_PART.test(tool)) {
    return `its tool part ${JSON.stringify(tool)} is empty or holds a space or control character`;
  }
  return undefined;
}

/**
 * Reads the value of `[mcp] direct-tools`: an array of strings, each a pattern (see
 * {@link directToolPatternProblem}).
 *
 * @param value The TOML value of the key.
 * @param doc The parsed file (for the 1-based line and column of each item).
 * @param file The path shown in diagnostics.
 * @returns The valid patterns in file order (duplicates once), and one `CONFIG_BAD_VALUE` problem per bad
 *   item (or one for a value that is not an array), each with its location and how to fix it.
 */
export function readDirectToolPatterns(
  value: unknown,
  doc: TomlDocument,
  file: string,
): { patterns: string[]; problems: UserError[] } {
  const at = (path: (string | number)[]) => ({ file, ...doc.index.locate(path) });
  const example = 'write direct-tools = ["memory.read_graph", "github.*"]';
  if (!Array.isArray(value)) {
    const problem = new UserError(
      "CONFIG_BAD_VALUE",
      `Cannot apply [mcp] direct-tools: it must be an array of "server.tool" patterns, not ${
        aType(value)
      }; until it is fixed, no tool is direct`,
      { hint: example, location: at(["mcp", "direct-tools"]) },
    );
    return { patterns: [], problems: [problem] };
  }
  const patterns: string[] = [];
  const problems: UserError[] = [];
  for (const [index, item] of value.entries()) {
    if (index >= DIRECT_TOOL_PATTERNS_MAX) {
      problems.push(
        new UserError(
          "CONFIG_BAD_VALUE",
          `Cannot apply [mcp] direct-tools: it has ${value.length} patterns, more than ${DIRECT_TOOL_PATTERNS_MAX}; the ones past it are ignored`,
          {
            hint: 'use globs, e.g. "github.*", instead of one pattern per tool',
            location: at(["mcp", "direct-tools", index]),
          },
        ),
      );
      break;
    }
    const why = typeof item === "string"
      ? directToolPatternProblem(item)
      : `it is ${aType(item)}, not a string`;
    if (why === undefined) {
      if (!patterns.includes(item as string)) patterns.push(item as string);
      continue;
    }
    const shown = typeof item === "string" ? ` ${JSON.stringify(item.slice(0, 80))}` : "";
    problems.push(
      new UserError(
        "CONFIG_BAD_VALUE",
        `Cannot apply [mcp] direct-tools item ${
          index + 1
        }${shown}: ${why}; it is ignored (the other patterns apply)`,
        {
          hint:
            'write "server.tool" with the server\'s name and the tool\'s, "*" for any run of characters, e.g. "memory.read_graph" or "github.*"',
          location: at(["mcp", "direct-tools", index]),
        },
      ),
    );
  }
  return { patterns, problems };
}
