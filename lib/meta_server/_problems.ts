/**
 * Problems lines shared by `list_tools` and `execute`: a refused or dormant server explained the
 * same way in both answers (and as `status` shows it). Every line is `printable()`: a path or reason
 * from a cloned repository cannot forge a line the agent reads.
 *
 * @module
 */
import type { Catalog } from "../catalog/mod.ts";
import { printable } from "../diagnostics.ts";
import type { Refusal } from "../plugins/mod.ts";

/** Why each declared server that does not apply here is out of scope, one indented line each. */
export function dormantLines(catalog: Catalog): string[] {
  return catalog.dormant.map((d) =>
    `  ${printable(`\`${d.server}\` does not apply in this workspace: ${d.reason}`)}`
  );
}

/** A refusal as one Problems line: what, where (file:line:col) and how to fix, as `status` shows it. */
export function describeRefusal(r: Refusal): string {
  const where = r.location ? ` (${r.location.file}:${r.location.line}:${r.location.column})` : "";
  const hint = r.hint ? `; hint: ${r.hint}` : "";
  return printable(`\`${r.server}\`${sourceTag(r.source)}: ${r.reason}${where}${hint}`);
}

/** ` [registry team]`, ` [workspace]`, ` [crate serde]` after a server's name; `""` for the user's own plugins. */
export function sourceTag(source: string | undefined): string {
  if (source === undefined) return "";
  return ` [${source === "workspace" || source.startsWith("crate ") ? source : `registry ${source}`}]`;
}

/**
 * Index lines for servers that would apply but whose plugin is not trusted: listed with the state and
 * the command that trusts it, never started (their tools are unknown until then).
 */
export function untrustedIndexLines(catalog: Catalog): string[] {
  return catalog.refused.filter((r) => r.code === "SERVER_UNTRUSTED").map((r) =>
    printable(
      `${r.server}: untrusted (never started; ${r.hint ?? "ask the user to run `cargo agents trust`"})`,
    )
  );
}

/**
 * `config.toml`'s problems (each costs only its key: the default applies there) and adjustments,
 * one line each with file:line:col and the hint: what `list_tools` shows under Problems and the
 * first `execute` of the session carries once.
 */
export function configProblemLines(catalog: Catalog): string[] {
  const { problems, warnings } = catalog.configNotes;
  return [
    ...problems.map((p) => {
      const where = p.location ? ` (${p.location.file}:${p.location.line}:${p.location.column})` : "";
      return printable(`config.toml: ${p.message}${where}${p.hint ? `; hint: ${p.hint}` : ""}`);
    }),
    ...warnings.map((w) => printable(`config.toml: ${w}`)),
  ];
}
