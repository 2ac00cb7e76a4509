/**
 * The enabled-tools/disabled-tools and read-only filters: which tools of a server the agent sees,
 * and the error naming the filter when a script calls a hidden one.
 *
 * @module
 */
import { type McpConfig, namespaceKey, type ServerSpec, spawnKey } from "../plugins/mod.ts";
import { UserError } from "../diagnostics.ts";
import { type BindingTable, buildBindingTable, resolveToolKey } from "../declarations/tool_binding.ts";
import type { Tool } from "../backends/mod.ts";

/**
 * The tools of `spec` that its `enabled-tools`/`disabled-tools` and the `[mcp]` `read-only` setting
 * let through, in server order, and how many they hid.
 */
export function visibleTools(
  spec: ServerSpec,
  tools: Tool[],
  config: McpConfig,
): { tools: Tool[]; hiddenCount: number } {
  const visible = tools.filter((t) =>
    (spec.enabledTools === undefined || spec.enabledTools.includes(t.name)) &&
    !(spec.disabledTools ?? []).includes(t.name) &&
    (!config.readOnly || t.annotations?.readOnlyHint === true)
  );
  return { tools: visible, hiddenCount: tools.length - visible.length };
}

/**
 * When `key` names one of the server's tools that a filter hides, the error saying which filter
 * (`read-only`, `enabled-tools` or `disabled-tools`); `undefined` when no hidden tool matches.
 */
export function hiddenToolError(spec: ServerSpec, all: Tool[], key: string): UserError | undefined {
  const resolved = resolveToolKey(buildBindingTable(all.map((t) => t.name)), spec.name, key);
  if (!resolved.ok) return undefined;
  const tool = all.find((t) => t.name === resolved.value)!;
  const where = `\`${namespaceKey(spec.name)}.${tool.name}\``;
  if (spec.enabledTools !== undefined && !spec.enabledTools.includes(tool.name)) {
    return new UserError("TOOL_HIDDEN", `${where} is hidden by \`enabled-tools\` (it is not listed there)`, {
      hint: `add "${tool.name}" to enabled-tools of ${spec.name} in its plugin manifest`,
    });
  }
  if ((spec.disabledTools ?? []).includes(tool.name)) {
    return new UserError("TOOL_HIDDEN", `${where} is hidden by \`disabled-tools\``, {
      hint: `remove "${tool.name}" from disabled-tools of ${spec.name} in its plugin manifest`,
    });
  }
  return new UserError(
    "TOOL_HIDDEN",
    `${where} is hidden by \`read-only = true\` (the server does not mark it read-only)`,
    { hint: "set read-only = false under [mcp] in config.toml to call tools that may change things" },
  );
}

/**
 * {@link visibleTools} remembered per raw tool list and filter settings, so an unchanged listing
 * yields the same `tools` array on every call (the search index re-indexes a server only when
 * that array changes). Entries go with their raw list (a `WeakMap`).
 */
export class VisibleToolsMemo {
  readonly #memo = new WeakMap<
    Tool[],
    { key: string; spec: ServerSpec; readOnly: boolean; value: { tools: Tool[]; hiddenCount: number } }
  >();
  readonly #tables = new WeakMap<Tool[], BindingTable>();
  readonly #keys = new WeakMap<ServerSpec, string>();

  /** The binding table of a `tools` array from {@link of}, built once per array (every call needs it). */
  tableOf(tools: Tool[]): BindingTable {
    let table = this.#tables.get(tools);
    if (!table) this.#tables.set(tools, table = buildBindingTable(tools.map((t) => t.name)));
    return table;
  }

  /** `spawnKey(spec)`, computed once per spec (a spec never changes once made; every call asks). */
  keyOf(spec: ServerSpec): string {
    let key = this.#keys.get(spec);
    if (key === undefined) this.#keys.set(spec, key = spawnKey(spec));
    return key;
  }

  /** Same as {@link visibleTools}, the result reused while `tools` and the filters are unchanged. */
  of(spec: ServerSpec, tools: Tool[], config: McpConfig): { tools: Tool[]; hiddenCount: number } {
    const held = this.#memo.get(tools);
    // The same spec (never changed once made) and `read-only`: the same filters, without building the key.
    if (held && held.spec === spec && held.readOnly === config.readOnly) return held.value;
    const key = JSON.stringify([spec.enabledTools ?? null, spec.disabledTools ?? null, config.readOnly]);
    if (held && held.key === key) {
      held.spec = spec;
      held.readOnly = config.readOnly;
      return held.value;
    }
    const value = visibleTools(spec, tools, config);
    this.#memo.set(tools, { key, spec, readOnly: config.readOnly, value });
    return value;
  }
}
