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
import type { ConfirmToolsMode } from "../plugins/config_types.ts";
import { namespaceKey, type ServerSpec, spawnKey } from "../plugins/server_spec.ts";
import type { Tool } from "../backends/connection.ts";
import { maskSecrets } from "../secrets/mod.ts";

/** Longest argument summary shown in a confirmation, in UTF-16 code units. */
export const MAX_ARGUMENT_SUMMARY_CHARS = 300;
/** Longest string value shown inside the summary, in UTF-16 code units (longer ones are cut with `…`). */
export const MAX_SUMMARY_VALUE_CHARS = 60;
/** What replaces a value that looks secret. */
export const MASKED_VALUE = "***";

/** Argument names whose values are never shown. */
const SECRET_KEY =
  /pass(word|wd|phrase)?|secret|token|api[-_]?key|apikey|auth|credential|private[-_]?key|cookie|session/i;
/** Values that look like credentials whatever their name: well-known token prefixes, JWTs, key blocks. */
const SECRET_VALUE =
  /^(gh[pousr]_|github_pat_|glpat-|xox[abprs]-|sk-|pk_live_|sk_live_|AKIA|ASIA|AIza|ya29\.|eyJ[\w-]+\.[\w-]+\.)|-----BEGIN [A-Z ]*PRIVATE KEY-----/;

/**
 * Whether a call to `tool` of `spec` needs the user's confirmation under `mode`: `"writes"` → every
 * tool not annotated `readOnlyHint: true`, and those the manifest lists in `confirm-tools`;
 * `"destructive"` → tools annotated `destructiveHint: true` (and not `readOnlyHint: true`, under which
 * the spec says `destructiveHint` means nothing), and those the manifest lists; `"never"` → none.
 */
export function needsConfirmation(mode: ConfirmToolsMode, spec: ServerSpec, tool: Tool): boolean {
  if (mode === "never") return false;
  if (spec.confirmTools?.includes(tool.name)) return true;
  const readOnly = tool.annotations?.readOnlyHint === true;
  if (mode === "writes") return !readOnly;
  return !readOnly && tool.annotations?.destructiveHint === true;
}

/**
 * A one-line summary of a call's arguments for the user: JSON-like, strings cut at
 * {@link MAX_SUMMARY_VALUE_CHARS}, values of secret-looking names or shapes shown as
 * {@link MASKED_VALUE}, registered secrets masked by `lib/secrets/`, the whole cut at {@link MAX_ARGUMENT_SUMMARY_CHARS}.
 *
 * @example
 * ```ts
 * import { summarizeArguments } from "./_confirm.ts";
 * summarizeArguments({ path: "/tmp/a", token: "abc" }); // '{path: "/tmp/a", token: ***}'
 * ```
 */
export function summarizeArguments(args: Record<string, unknown>): string {
  const show = (value: unknown, key: string | undefined, depth: number): string => {
    if (key !== undefined && SECRET_KEY.test(key)) return MASKED_VALUE;
    if (typeof value === "string") {
      if (SECRET_VALUE.test(value)) return MASKED_VALUE;
      const cut = value.length > MAX_SUMMARY_VALUE_CHARS
        ? `${value.slice(0, MAX_SUMMARY_VALUE_CHARS)}…`
        : value;
      return JSON.stringify(cut);
    }
    if (value === null || typeof value !== "object") return String(value);
    if (depth >= 2) return Array.isArray(value) ? `[${value.length} items]` : "{…}";
    if (Array.isArray(value)) {
      return `[${value.slice(0, 5).map((v) => show(v, undefined, depth + 1)).join(", ")}${
        value.length > 5 ? ", …" : ""
      }]`;
    }
    const entries = Object.entries(value as Record<string, unknown>);
    return `{${entries.map(([k, v]) => `${k}: ${show(v, k, depth + 1)}`).join(", ")}}`;
  };
  // Also masks every registered secret value (`${VAR}` expansions, tokens) and the common credential shapes.
  const text = maskSecrets(show(args, undefined, 0));
  return text.length > MAX_ARGUMENT_SUMMARY_CHARS ? `${text.slice(0, MAX_ARGUMENT_SUMMARY_CHARS)}…` : text;
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
   * @throws {UserError} `TOOL_CALL_DECLINED` (the user declined or cancelled; the tool was not
   *   called), `CONFIRMATION_UNAVAILABLE` (the agent cannot be asked: it declared no elicitation, or
   *   the question failed).
   */
  async confirm(
    mode: ConfirmToolsMode,
    spec: ServerSpec,
    tool: Tool,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal | undefined; onWait?: ((phase: "start" | "end") => void) | undefined } =
      {},
  ): Promise<void> {
    if (!needsConfirmation(mode, spec, tool)) return;
    const key = `${spawnKey(spec)}\u0000${tool.name}`;
    const label = `${namespaceKey(spec.name)}.${tool.name}`;
    for (let earlier = this.#asking.get(key); earlier; earlier = this.#asking.get(key)) {
      await earlier.catch(() => {}); // Its own caller reports its failure.
    }
    if (this.#allowed.has(key)) return;
    const channel = this.#channel;
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
    options: { signal?: AbortSignal | undefined; onWait?: ((phase: "start" | "end") => void) | undefined },
  ): Promise<boolean> {
    const effect = tool.annotations?.destructiveHint === true && tool.annotations?.readOnlyHint !== true
      ? "may delete or overwrite data"
      : "may change things";
    const params: ElicitRequestFormParams = {
      mode: "form",
      message: `A script wants to call ${tool.name} of the MCP server "${spec.name}", which ${effect}.\n` +
        `Arguments: ${summarizeArguments(args)}\nAllow this call?`,
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
