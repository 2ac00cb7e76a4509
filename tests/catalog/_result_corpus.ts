// The observed-result-shape corpus (`testdata/catalog/results/*.json`: real answers of server-everything,
// server-filesystem, server-memory and @playwright/mcp, and GitHub-, Linear- and Sentry-shaped answers) and
// its measures: coverage after one call, soundness of later answers against the shape of the first N
// (judged by a real `deno check`), declaration bytes before/after, stored bytes per tool. Shared by
// `result_corpus_test.ts` and `bench/result_shapes.ts`.
import { join } from "node:path";
import type { Tool } from "../../lib/backends/connection.ts";
import { unwrapToolResult } from "../../lib/catalog/result_unwrap.ts";
import { boundShape, deriveShape, mergeShapes } from "../../lib/catalog/result_shape.ts";
import { renderShape, type Shape } from "../../lib/declarations/observed_shape.ts";
import { type ObservedLookup, renderDeclarations } from "../../lib/declarations/mod.ts";
import { REPO_ROOT } from "../_fakes_foundation.ts";

export const CORPUS_DIR = join(REPO_ROOT, "testdata/catalog/results");

/** One recorded server: its `tools/list` and its answers in the order they were recorded. */
export interface CorpusServer {
  server: string;
  source: string;
  tools: Tool[];
  answers: {
    tool: string;
    arguments: unknown;
    result: { content?: unknown[]; structuredContent?: unknown; isError?: boolean };
  }[];
}

export async function loadResultCorpus(): Promise<CorpusServer[]> {
  const out: CorpusServer[] = [];
  for await (const entry of Deno.readDir(CORPUS_DIR)) {
    if (entry.name.endsWith(".json")) {
      out.push(JSON.parse(await Deno.readTextFile(join(CORPUS_DIR, entry.name))));
    }
  }
  return out.sort((a, b) => a.server.localeCompare(b.server));
}

/** The successful answers of one tool as a script receives them. */
export interface ToolCase {
  server: string;
  tool: Tool;
  /** The tool declares an `outputSchema` (observed only in the "as if undeclared" measure). */
  declared: boolean;
  values: { value: unknown; contentBlocks: boolean }[];
  /** What its first answer is: parsed JSON, content blocks (media), or prose. */
  kind: "json" | "media" | "text";
}

export function toolCases(servers: readonly CorpusServer[]): ToolCase[] {
  const cases: ToolCase[] = [];
  for (const s of servers) {
    for (const tool of s.tools) {
      const values = s.answers.filter((a) => a.tool === tool.name).flatMap((a) => {
        const unwrapped = unwrapToolResult(a.result);
        return unwrapped.ok
          ? [{ value: unwrapped.value, contentBlocks: unwrapped.value === a.result.content }]
          : [];
      });
      if (values.length === 0) continue;
      const first = values[0]!;
      const kind = first.contentBlocks ? "media" : typeof first.value === "string" ? "text" : "json";
      cases.push({ server: s.server, tool, declared: tool.outputSchema !== undefined, values, kind });
    }
  }
  return cases;
}

/** The merged, bounded shape of the first `n` values of a case (what the store holds after `n` calls). */
export function shapeAfter(c: ToolCase, n: number): Shape {
  let shape: Shape | undefined;
  for (const { value, contentBlocks } of c.values.slice(0, n)) {
    const next = deriveShape(value, { contentBlocks });
    shape = boundShape(shape === undefined ? next : mergeShapes(shape, next)).shape;
  }
  return shape ?? "unknown";
}

/** A shape that says something: not `unknown` at its top. */
export function isConcrete(shape: Shape): boolean {
  return shape !== "unknown";
}

/** The exact type of a JSON value, written independently of the shape code (tuples, short string literals). */
export function exactType(v: unknown): string {
  if (v === null) return "null";
  if (typeof v === "string") return v.length <= 40 ? JSON.stringify(v) : "string";
  if (typeof v === "number") return "number";
  if (typeof v === "boolean") return "boolean";
  if (Array.isArray(v)) return `[${v.map(exactType).join(", ")}]`;
  if (typeof v === "object") {
    return `{ ${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${exactType(x)}`).join("; ")} }`;
  }
  return "unknown";
}

const STRICT = {
  compilerOptions: {
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    noFallthroughCasesInSwitch: true,
  },
};

/** Runs one strict `deno check` over `files` (name → text); returns the 1-based lines with errors, per file. */
export async function denoCheck(files: Record<string, string>): Promise<Map<string, Set<number>>> {
  const dir = await Deno.makeTempDir({ prefix: "shape-check-" });
  try {
    await Deno.writeTextFile(join(dir, "deno.json"), JSON.stringify(STRICT));
    for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), text);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "check",
        "--quiet",
        "--config",
        join(dir, "deno.json"),
        ...Object.keys(files).map((f) => join(dir, f)),
      ],
      env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
    const errors = new Map<string, Set<number>>();
    for (const m of text.matchAll(/at file:\/\/[^\s]*\/([^/\s]+\.ts):(\d+):\d+/g)) {
      if (!errors.has(m[1]!)) errors.set(m[1]!, new Set());
      errors.get(m[1]!)!.add(Number(m[2]));
    }
    if (!out.success && errors.size === 0) throw new Error(`deno check failed without positions:\n${text}`);
    return errors;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Soundness: every answer after the first `n` of each case, checked against the shape after `n`. */
export async function soundness(
  cases: readonly ToolCase[],
  n: number,
): Promise<{ checked: number; passed: number; failures: string[] }> {
  const lines: string[] = ["// generated: later answers against the shape learned from the first answers"];
  const owners = new Map<number, string>();
  let i = 0;
  for (const c of cases) {
    const shape = renderShape(shapeAfter(c, n));
    for (const [j, { value }] of c.values.entries()) {
      if (j < n) continue;
      lines.push(`declare const v${i}: ${exactType(value).replaceAll("\n", " ")};`);
      owners.set(
        lines.length + 1,
        `${c.server}.${c.tool.name} answer ${j + 1} against ${shape.replaceAll("\n", " ")}`,
      );
      lines.push(`export const t${i}: ${shape.replaceAll("\n", " ")} = v${i};`);
      i++;
    }
  }
  if (i === 0) return { checked: 0, passed: 0, failures: [] };
  const errors = (await denoCheck({ "sound.ts": lines.join("\n") + "\n" })).get("sound.ts") ?? new Set();
  const failures = [...errors].map((line) => owners.get(line) ?? `line ${line}`);
  return { checked: i, passed: i - new Set([...errors].filter((l) => owners.has(l))).size, failures };
}

/** The observed lookup of one server after all its answers (as the store would hold them). */
export function lookupAfterAll(cases: readonly ToolCase[], server: string): ObservedLookup {
  const byTool = new Map(
    cases.filter((c) => c.server === server).map((
      c,
    ) => [c.tool.name, { calls: c.values.length, shape: shapeAfter(c, c.values.length) }]),
  );
  return (tool) => byTool.get(tool.name);
}

/** Declarations of every corpus server, before (no observations) and after (all answers observed). */
export function declarationsBeforeAfter(
  servers: readonly CorpusServer[],
  cases: readonly ToolCase[],
): { server: string; before: string; after: string }[] {
  return servers.map((s) => ({
    server: s.server,
    before: renderDeclarations(s.server, s.tools, { detail: "signatures" }).text,
    after: renderDeclarations(s.server, s.tools, {
      detail: "signatures",
      observed: lookupAfterAll(cases, s.server),
    }).text,
  }));
}
