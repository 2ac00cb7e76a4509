// The layout rules, checked on the real tree: imports point down the area
// order, private modules stay in their folder, no import circle, modules stay small.
import { expect } from "expect";
import { dirname, join, relative } from "node:path";
import { REPO_ROOT } from "./_fakes_foundation.ts";

const LIB = join(REPO_ROOT, "lib");

/**
 * Areas from the bottom up: a module may import its own area and areas listed before it. `top` is
 * `lib/*.ts`, used by every area; `lib/diagnostics.ts` is below everything (the error types), and
 * `lib/secrets/` below the rest of the top level (the log masks secrets).
 */
const AREA_ORDER: readonly string[][] = [
  ["diagnostics"],
  ["secrets"],
  ["top"],
  ["workspace", "jsonrpc"],
  ["plugins"],
  ["declarations", "net", "sync", "plugin_sources"],
  ["auth"],
  ["backends"],
  ["catalog", "sandbox"],
  ["meta_server"],
  ["commands"],
];

/** Parsers whose public face is small: allowed past the size limit. */
const LARGE_PARSERS = new Set(["lib/plugins/_manifest_checker.ts"]);
/**
 * A module is one concept, not a line count: past ~600 lines the test says so (a hint to look for a second
 * concept inside), and only past 900 does it fail (a module that size is no longer read as one).
 */
const WARN_MODULE_LINES = 600;
const MAX_MODULE_LINES = 900;
const MAX_TOP_LEVEL_FILES = 6;

function rankOf(area: string): number {
  const rank = AREA_ORDER.findIndex((tier) => tier.includes(area));
  if (rank < 0) throw new Error(`lib/${area}/ is not in AREA_ORDER of tests/layout_test.ts: add it`);
  return rank;
}

function areaOf(file: string): string {
  const parts = relative(LIB, file).split("/");
  if (parts.length > 1) return parts[0]!;
  return parts[0] === "diagnostics.ts" ? "diagnostics" : "top";
}

async function libFiles(dir = LIB): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...await libFiles(path));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out.sort();
}

/** Local import specifiers of a module (static and dynamic), comments skipped. */
function localImports(file: string, text: string): string[] {
  const found: string[] = [];
  for (const line of text.split("\n")) {
    if (/^\s*(\*|\/\/)/.test(line)) continue;
    for (const m of line.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+\.ts)"/g)) {
      found.push(join(dirname(file), m[1]!));
    }
  }
  return found;
}

const files = await libFiles();
const graph = new Map<string, string[]>();
for (const file of files) graph.set(file, localImports(file, await Deno.readTextFile(file)));

Deno.test("every import in lib/ points down the area order or stays in its area", () => {
  const wrong: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports) {
      const from = areaOf(file), to = areaOf(target);
      if (from !== to && rankOf(to) >= rankOf(from)) {
        wrong.push(`${relative(REPO_ROOT, file)} → ${relative(REPO_ROOT, target)}`);
      }
    }
  }
  expect(wrong).toEqual([]);
});

Deno.test("private modules (_name.ts) are imported only from their own folder", () => {
  const wrong: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports) {
      const base = target.split("/").at(-1)!;
      if (base.startsWith("_") && dirname(target) !== dirname(file)) {
        wrong.push(`${relative(REPO_ROOT, file)} → ${relative(REPO_ROOT, target)}`);
      }
    }
  }
  expect(wrong).toEqual([]);
});

Deno.test("no import circle between modules of lib/", () => {
  const state = new Map<string, "open" | "done">();
  const circles: string[] = [];
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "open") {
      circles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(LIB, f)).join(" → "));
      return;
    }
    state.set(file, "open");
    for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
    state.set(file, "done");
  };
  for (const file of graph.keys()) visit(file, []);
  expect(circles).toEqual([]);
});

Deno.test("lib/ keeps few loose files and no module over the size limit", async () => {
  const loose = files.filter((f) => !relative(LIB, f).includes("/")).map((f) => relative(LIB, f));
  expect(loose.length).toBeLessThanOrEqual(MAX_TOP_LEVEL_FILES);
  const large: string[] = [];
  for (const file of files) {
    const rel = relative(REPO_ROOT, file);
    const lines = (await Deno.readTextFile(file)).split("\n").length - 1;
    if (LARGE_PARSERS.has(rel)) continue;
    if (lines > MAX_MODULE_LINES) large.push(`${rel}: ${lines} lines`);
    else if (lines > WARN_MODULE_LINES) console.warn(`${rel} has ${lines} lines: does it hold two concepts?`);
  }
  expect(large).toEqual([]);
});
