// The observed-result-shape corpus (`testdata/catalog/results/*.json`: real answers of server-everything,
// server-filesystem, server-memory and @playwright/mcp, and GitHub-, Linear- and Sentry-shaped answers) and
// its measures: coverage after one call, soundness of later answers against the shape of the first N
// (judged by a real `deno check`), declaration bytes before/after, stored bytes per tool. Shared by
// `result_corpus_test.ts` and `bench/result_shapes.ts`.
import { join } from "node:path";
import type { Tool } from "../../lib/backends/connection.ts";
import { unwrapToolResult } from "../../lib/catalog/result_unwrap.ts";
import { boundShape, deriveShape, mergeShapes } from "../../lib/catalog/result_shape.ts";
import { renderObservedType, type Shape } from "../../lib/declarations/observed_shape.ts";
import { type ObservedLookup, renderDeclarations } from "../../lib/declarations/mod.ts";
import { REPO_ROOT } from "../_fakes_foundation.ts";

export const CORPUS_DIR = join(REPO_ROOT, "testdata/catalog/results");
/**
 * The held-out corpus: real and API-shaped answers recorded after the render rules were chosen, of
 * servers, APIs and arguments those rules were not fitted on (`held_out/record.ts`,
 * `held_out/api_shaped.ts`); measured apart from the fitted corpus.
 */
export const HELD_OUT_DIR = join(CORPUS_DIR, "held_out");

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

/** The servers of one corpus folder (the fitted corpus by default, or {@link HELD_OUT_DIR}), by name. */
export async function loadResultCorpus(dir = CORPUS_DIR): Promise<CorpusServer[]> {
  const out: CorpusServer[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".json")) {
      out.push(JSON.parse(await Deno.readTextFile(join(dir, entry.name))));
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

/** One type error of a strict `deno check`: where, and its message chain (outermost first). */
export interface CheckError {
  line: number;
  messages: string[];
}

/** Runs one strict `deno check` over `files` (name → text); returns the errors by 1-based line, per file. */
export async function denoCheck(
  files: Record<string, string>,
): Promise<Map<string, Map<number, CheckError>>> {
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
    const errors = new Map<string, Map<number, CheckError>>();
    // Each error: `TSnnnn [ERROR]: message`, indented elaborations, the code line, its `~~~`, then
    // `at file:///…/name.ts:line:col`.
    for (
      const m of text.matchAll(/TS\d+ \[ERROR\]: ([\s\S]*?)\n\s*at file:\/\/[^\s]*\/([^/\s]+\.ts):(\d+):\d+/g)
    ) {
      const [, body, file, line] = m;
      // Without the code line (shown only when short enough) and its `~~~` underline.
      const messages = body!.split("\n").map((l) => l.trim())
        .filter((l) => l !== "" && !/^~+$/.test(l) && !l.startsWith("export const t"));
      if (!errors.has(file!)) errors.set(file!, new Map());
      errors.get(file!)!.set(Number(line), { line: Number(line), messages });
    }
    if (!out.success && errors.size === 0) throw new Error(`deno check failed without positions:\n${text}`);
    return errors;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A later answer that does not type-check against the shape learned before it. */
export interface SoundnessFailure {
  /** `server.tool`. */
  tool: string;
  /** 1-based index of the answer among the tool's successful answers. */
  answer: number;
  /** The rendered shape it was checked against (one line). */
  shape: string;
  /** The innermost message of `deno check`, after the path of properties that led there. */
  error: string;
  /** The whole message chain. */
  messages: string[];
}

/** Soundness: every answer after the first `n` of each case, checked against the shape after `n`. */
export async function soundness(
  cases: readonly ToolCase[],
  n: number,
): Promise<{ checked: number; passed: number; failures: SoundnessFailure[] }> {
  const lines: string[] = ["// generated: later answers against the shape learned from the first answers"];
  const owners = new Map<number, Omit<SoundnessFailure, "error" | "messages">>();
  let i = 0;
  for (const c of cases) {
    // The type the declaration shows (`renderDeclarations` renders it so, with the tool's input schema).
    const shape = renderObservedType({ shape: shapeAfter(c, n) }, { tool: c.tool }).replaceAll("\n", " ")
      .replace(/ {2,}/g, " ");
    for (const [j, { value }] of c.values.entries()) {
      if (j < n) continue;
      lines.push(`declare const v${i}: ${exactType(value).replaceAll("\n", " ")};`);
      owners.set(lines.length + 1, { tool: `${c.server}.${c.tool.name}`, answer: j + 1, shape });
      lines.push(`export const t${i}: ${shape} = v${i};`);
      i++;
    }
  }
  if (i === 0) return { checked: 0, passed: 0, failures: [] };
  const errors = (await denoCheck({ "sound.ts": lines.join("\n") + "\n" })).get("sound.ts") ?? new Map();
  const failures = [...errors.values()].map((e): SoundnessFailure => {
    const owner = owners.get(e.line) ?? { tool: `line ${e.line}`, answer: 0, shape: "" };
    return { ...owner, error: innermostError(e.messages), messages: e.messages };
  });
  return { checked: i, passed: i - failures.filter((f) => f.answer > 0).length, failures };
}

/** The innermost message of a chain, after the path of properties it descended (`at fields.value: …`). */
function innermostError(messages: readonly string[]): string {
  const path = messages.flatMap((m) =>
    [...m.matchAll(/^(?:Types of property|The types of) '([^']+)' are incompatible/g)].map((x) => x[1])
  );
  const last = (messages.at(-1) ?? "").replace(/'(\{[^']{120})[^']*'/g, "'$1…'");
  return path.length > 0 ? `at ${path.join(".")}: ${last}` : last;
}

/** What kind of change in a later answer broke the shape learned before it. */
export type FailureKind =
  | "missing-later"
  | "null-later"
  | "number-vs-string"
  | "text-vs-media"
  | "block-kind"
  | "other";

/** Classifies a failure by its `deno check` messages and the shape it was checked against. */
export function classifyFailure(f: SoundnessFailure): FailureKind {
  const all = f.messages.join("\n");
  if (f.shape === "string" && /^Type '\[/.test(f.messages[0] ?? "")) return "text-vs-media";
  if (/type: "(?:text|image|audio|resource|resource_link)"/.test(f.shape) && /type: "/.test(all)) {
    if (/is missing the following properties|Types of property 'type' are incompatible/.test(all)) {
      return "block-kind";
    }
  }
  if (/Type 'null' is not assignable/.test(f.error)) return "null-later";
  if (/is missing (?:the following properties|in type)|Property '[^']+' is missing/.test(f.error)) {
    return "missing-later";
  }
  if (/Type '(?:number|string|"[^"]*")' is not assignable to type '(?:number|string)'/.test(f.error)) {
    return "number-vs-string";
  }
  return "other";
}

/** One line per failure: `[kind] server.tool answer N: innermost error`. */
export function describeFailure(f: SoundnessFailure): string {
  return `[${classifyFailure(f)}] ${f.tool} answer ${f.answer}: ${f.error}`;
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
