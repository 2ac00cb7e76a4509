/**
 * `[mcp] confirm-tools`: the user confirms a script's call to a tool that changes things before it is
 * sent, through an `elicitation/create` to the agent naming the server, the tool and a short summary of
 * the arguments (secret-looking values masked). Code mode would otherwise turn one approval of `execute`
 * into permission for every tool a script calls.
 *
 * @module
 */
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/server";
import { UserError } from "../diagnostics.ts";
import { type ConfirmToolsMode, namespaceKey, type ServerSpec, spawnKey } from "../plugins/mod.ts";
import type { Tool } from "../backends/mod.ts";
import { maskSecrets } from "../secrets/mod.ts";
import { buildBindingTable, resolveToolKey } from "../declarations/tool_binding.ts";

/** Most argument keys a confirmation shows (40): a call with more is not made (every key must be seen). */
export const MAX_CONFIRMED_ARGUMENT_KEYS = 40;
/** Longest key shown, in UTF-16 code units (longer ones are cut with `...`, escaped as JSON). */
export const MAX_SUMMARY_KEY_CHARS = 60;
/** Longest string value shown inside the summary, in UTF-16 code units (longer ones are cut with `...`). */
export const MAX_SUMMARY_VALUE_CHARS = 60;
/** Longest summary of one argument's value, in UTF-16 code units (nested values are cut with `...`). */
export const MAX_SUMMARY_LINE_CHARS = 200;
/** What replaces a value that looks secret. */
export const MASKED_VALUE = "***";

/** Argument names whose values are never shown. */
const SECRET_KEY =
  /pass(word|wd|phrase)?|secret|token|api[-_]?key|apikey|auth|credential|private[-_]?key|cookie|session/i;
/** Values that look like credentials whatever their name: well-known token prefixes, JWTs, key blocks. */
const SECRET_VALUE =
  /^(gh[pousr]_|github_pat_|glpat-|xox[abprs]-|sk-|pk_live_|sk_live_|AKIA|ASIA|AIza|ya29\.|eyJ[\w-]+\.[\w-]+\.)|-----BEGIN [A-Z ]*PRIVATE KEY-----/;
/** What JSON leaves raw but a confirmation must not show raw: DEL, C1 controls, line separators, bidi marks. */
const UNESCAPED_BY_JSON =
  /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\u27e6\u27e7]/g;

/** `text` as a JSON string: quoted, every control, line break, bidi and mark character escaped. */
function quoted(text: string): string {
  return JSON.stringify(text).replace(
    UNESCAPED_BY_JSON,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** A key as the user sees it: an identifier as it is, anything else quoted (newlines and all escaped). */
function shownKey(key: string): string {
  if (/^[A-Za-z_$][\w$]{0,59}$/.test(key)) return key;
  return key.length > MAX_SUMMARY_KEY_CHARS
    ? `${quoted(key.slice(0, MAX_SUMMARY_KEY_CHARS))}\u2026`
    : quoted(key);
}

/**
 * Whether a call to `tool` of `spec` needs the user's confirmation under `mode`: `"writes"` -> every
 * tool not annotated `readOnlyHint: true`, and those the manifest lists in `confirm-tools`;
 * `"destructive"` -> tools whose `destructiveHint` is not `false` (MCP's default for a missing hint is
 * `true`) and not `readOnlyHint: true` (under which `destructiveHint` means nothing), and those the
 * manifest lists; `"never"` -> none. Manifest entries are resolved as a script's call is (exact, then
 * tolerant spelling: `Writer`, `write-r`, `writer `, `fx.writer` all name `writer`).
 *
 * @param toolNames Every tool the server lists (to resolve manifest entries). @default [tool.name]
 * @throws {UserError} `CONFIRM_TOOLS_UNKNOWN` when a manifest entry names no tool of the server (it
 *   would protect nothing), or names several.
 */
export function needsConfirmation(
  mode: ConfirmToolsMode,
  spec: ServerSpec,
  tool: Tool,
  toolNames: readonly string[] = [tool.name],
): boolean {
  if (mode === "never") return false;
  if (listedInManifest(spec, tool, toolNames)) return true;
  const readOnly = tool.annotations?.readOnlyHint === true;
  if (mode === "writes") return !readOnly;
  return !readOnly && tool.annotations?.destructiveHint !== false;
}

/** Whether the manifest's `confirm-tools` names `tool` (see {@link needsConfirmation}). */
function listedInManifest(spec: ServerSpec, tool: Tool, toolNames: readonly string[]): boolean {
  if (!spec.confirmTools?.length) return false;
  const table = buildBindingTable(toolNames.includes(tool.name) ? toolNames : [...toolNames, tool.name]);
  let listed = false;
  for (const entry of spec.confirmTools) {
    let key = entry.trim();
    if (key.startsWith(`${spec.name}.`)) key = key.slice(spec.name.length + 1);
    else if (key.startsWith(`${namespaceKey(spec.name)}.`)) {
      key = key.slice(namespaceKey(spec.name).length + 1);
    }
    const resolved = resolveToolKey(table, spec.name, key);
    if (!resolved.ok) {
      throw new UserError(
        "CONFIRM_TOOLS_UNKNOWN",
        `Cannot call ${namespaceKey(spec.name)}.${tool.name}: the manifest's confirm-tools entry ${
          quoted(entry.slice(0, 80))
        } names no single tool of ${spec.name} (${resolved.error.message})`,
        {
          hint:
            `fix confirm-tools of mcp server "${spec.name}" in ${spec.location.file}:${spec.location.line}`,
        },
      );
    }
    if (resolved.value === tool.name) listed = true;
  }
  return listed;
}

/**
 * The arguments of a call for the user, one line per key (every key shown, quoted and escaped when it
 * is not an identifier, so no key can forge a line): values JSON-like, strings cut at
 * {@link MAX_SUMMARY_VALUE_CHARS}, nested objects and arrays summarized two levels deep, each line cut
 * at {@link MAX_SUMMARY_LINE_CHARS}, values of secret-looking names or shapes shown as
 * {@link MASKED_VALUE}, registered secrets masked by `lib/secrets/`.
 *
 * @returns `(no arguments)` for `{}`, else lines `  key: value` joined by `\n`.
 * @throws {UserError} `CONFIRMATION_TOO_LARGE` when the call has more than
 *   {@link MAX_CONFIRMED_ARGUMENT_KEYS} keys (they could not all be shown).
 * @example
 * ```ts
 * import { summarizeArguments } from "./_confirm.ts";
 * summarizeArguments({ path: "/tmp/a", token: "abc" }); // '  path: "/tmp/a"\n  token: ***'
 * ```
 */
export function summarizeArguments(args: Record<string, unknown>): string {
  const keys = Object.keys(args);
  if (keys.length === 0) return "(no arguments)";
  if (keys.length > MAX_CONFIRMED_ARGUMENT_KEYS) {
    throw new UserError(
      "CONFIRMATION_TOO_LARGE",
      `Cannot ask the user about this call: it has ${keys.length} arguments, more than the ${MAX_CONFIRMED_ARGUMENT_KEYS} one confirmation shows (MAX_CONFIRMED_ARGUMENT_KEYS); it was not made`,
      { hint: "send fewer top-level arguments (nest them in one object)" },
    );
  }
  const show = (value: unknown, key: string | undefined, depth: number): string => {
    if (key !== undefined && SECRET_KEY.test(key)) return MASKED_VALUE;
    if (typeof value === "string") {
      if (SECRET_VALUE.test(value)) return MASKED_VALUE;
      return value.length > MAX_SUMMARY_VALUE_CHARS
        ? `${quoted(value.slice(0, MAX_SUMMARY_VALUE_CHARS))}\u2026`
        : quoted(value);
    }
    if (value === null || typeof value !== "object") return String(value);
    if (Array.isArray(value)) {
      if (depth >= 2) return `[${value.length} items]`;
      return `[${value.slice(0, 5).map((v) => show(v, undefined, depth + 1)).join(", ")}${
        value.length > 5 ? `, \u2026 ${value.length - 5} more` : ""
      }]`;
    }
    const entries = Object.entries(value as Record<string, unknown>);
    if (depth >= 2) return `{${entries.length} keys}`;
    return `{${entries.slice(0, 8).map(([k, v]) => `${shownKey(k)}: ${show(v, k, depth + 1)}`).join(", ")}${
      entries.length > 8 ? `, \u2026 ${entries.length - 8} more keys` : ""
    }}`;
  };
  return keys.map((key) => {
    // Also masks every registered secret value (`${VAR}` expansions, tokens) and the common credential shapes.
    const value = maskSecrets(show(args[key], key, 0));
    const cut = value.length > MAX_SUMMARY_LINE_CHARS
      ? `${value.slice(0, MAX_SUMMARY_LINE_CHARS)}\u2026`
      : value;
    return `  ${shownKey(key)}: ${cut}`;
  }).join("\n");
}

/** What the confirmer needs from the agent relay. */
export interface ConfirmationChannel {
  canElicitForm(): boolean;
  elicit(params: ElicitRequestFormParams, signal?: AbortSignal): Promise<ElicitResult>;
}

/**
 * Asks the user before calls that `confirm-tools` covers, and remembers "allow for the rest of the
 * session" per server and tool. One confirmer per agent session.
 */
export class ToolConfirmer {
  readonly #channel: ConfirmationChannel | undefined;
  readonly #allowed = new Set<string>();
  /** Questions in flight per server and tool: a second call waits for the first answer. */
  readonly #asking = new Map<string, Promise<unknown>>();

  /** @param channel The agent relay; `undefined` (e.g. `mcp exec`): calls needing confirmation fail. */
  constructor(channel: ConfirmationChannel | undefined) {
    this.#channel = channel;
  }

  /**
   * Resolves when the call may go ahead: it needs no confirmation, the tool was allowed for the
   * session, or the user accepted.
   *
   * @param options.onWait Called around the wait for the user (`"start"`, then `"end"`), e.g. to
   *   hold the script's deadline.
   * @param options.toolNames Every tool the server lists, to resolve the manifest's `confirm-tools`.
   * @param options.channel Where this call's question goes instead of the session's channel (a run that
   *   waits for a modern agent across `execute` requests). @default the constructor's channel
   * @throws {UserError} `TOOL_CALL_DECLINED` (the user declined or cancelled; the tool was not
   *   called), `CONFIRMATION_UNAVAILABLE` (the agent cannot be asked: it declared no elicitation, or
   *   the question failed), `CONFIRM_TOOLS_UNKNOWN` (see {@link needsConfirmation}),
   *   `CONFIRMATION_TOO_LARGE` (see {@link summarizeArguments}).
   */
  async confirm(
    mode: ConfirmToolsMode,
    spec: ServerSpec,
    tool: Tool,
    args: Record<string, unknown>,
    options: {
      signal?: AbortSignal | undefined;
      onWait?: ((phase: "start" | "end") => void) | undefined;
      toolNames?: readonly string[] | undefined;
      channel?: ConfirmationChannel | undefined;
      /** Who makes the call, as the question names it. @default "A script" ("The agent" for a direct tool) */
      caller?: string | undefined;
    } = {},
  ): Promise<void> {
    if (!needsConfirmation(mode, spec, tool, options.toolNames)) return;
    const key = `${spawnKey(spec)}\u0000${tool.name}`;
    const label = `${namespaceKey(spec.name)}.${shownKey(tool.name)}`;
    for (let earlier = this.#asking.get(key); earlier; earlier = this.#asking.get(key)) {
      await earlier.catch(() => {}); // Its own caller reports its failure.
    }
    if (this.#allowed.has(key)) return;
    const channel = options.channel ?? this.#channel;
    if (!channel?.canElicitForm()) {
      throw new UserError(
        "CONFIRMATION_UNAVAILABLE",
        `Cannot call ${label}: \`confirm-tools = "${mode}"\` asks the user first, and the agent cannot be asked (it declared no elicitation)`,
        {
          hint:
            'use an agent that supports MCP elicitation, or set [mcp] confirm-tools = "never" in config.toml',
        },
      );
    }
    const asking = this.#ask(channel, spec, tool, args, label, options);
    this.#asking.set(key, asking);
    try {
      const remember = await asking;
      if (remember) this.#allowed.add(key);
    } finally {
      if (this.#asking.get(key) === asking) this.#asking.delete(key);
    }
  }

  async #ask(
    channel: ConfirmationChannel,
    spec: ServerSpec,
    tool: Tool,
    args: Record<string, unknown>,
    label: string,
    options: {
      signal?: AbortSignal | undefined;
      onWait?: ((phase: "start" | "end") => void) | undefined;
      caller?: string | undefined;
    },
  ): Promise<boolean> {
    const effect = tool.annotations?.destructiveHint !== false && tool.annotations?.readOnlyHint !== true
      ? "may delete or overwrite data"
      : "may change things";
    const count = Object.keys(args).length;
    const params: ElicitRequestFormParams = {
      mode: "form",
      message:
        `${options.caller ?? "A script"} wants to call ${
          shownKey(tool.name)
        } of the MCP server "${spec.name}", which ${effect}.\n` +
        `Arguments (${count}):\n${summarizeArguments(args)}\nAllow this call?`,
      requestedSchema: {
        type: "object",
        properties: {
          remember: {
            type: "boolean",
            title: `Allow ${label} for the rest of this session`,
            description: `Do not ask again for ${label} until the agent restarts`,
            default: false,
          },
        },
      },
    };
    let answer: ElicitResult;
    options.onWait?.("start");
    try {
      answer = await channel.elicit(params, options.signal);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new UserError(
        "CONFIRMATION_UNAVAILABLE",
        `Cannot call ${label}: asking the user to confirm it failed: ${
          error instanceof Error ? error.message : String(error)
        }`,
        { cause: error, hint: 'answer the confirmation in the agent, or set [mcp] confirm-tools = "never"' },
      );
    } finally {
      options.onWait?.("end");
    }
    if (answer.action !== "accept") {
      throw new UserError(
        "TOOL_CALL_DECLINED",
        `The user ${
          answer.action === "decline" ? "declined" : "cancelled"
        } the call to ${label}; it was not made`,
        { hint: "ask the user, or continue without this call" },
      );
    }
    return answer.content?.remember === true;
  }
}
