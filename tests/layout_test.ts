// The layout rules, checked on the real tree: imports point down the area order, code outside an area
// imports only its faces, private modules stay in their folder, no import circle, modules stay small.
import { expect } from "expect";
import { dirname, join, relative } from "node:path";
import { REPO_ROOT } from "./_fakes_foundation.ts";
import { functionLengths } from "./_function_lengths.ts";

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
/**
 * Loose modules of lib/ (what every area uses: diagnostics, file system, globs, logging, how we run
 * ourselves, TOML positions, time slices): a few; anything more is an area.
 */
const MAX_TOP_LEVEL_FILES = 7;
/**
 * A function on the request path reads top to bottom in one screen: past this many lines the test fails
 * for a module of the request path and warns for any other (state that lives across calls belongs in a
 * class's fields, steps in named functions).
 */
const MAX_FUNCTION_LINES = 80;
/**
 * The request path of one `execute`: every module the walk of `docs/architecture.md` names, and the modules each call
 * passes through without the walk naming them (the log every step writes to, the HTTP client of a remote
 * server and the guarded fetch under it).
 */
async function requestPathModules(): Promise<Set<string>> {
  const architecture = await Deno.readTextFile(join(REPO_ROOT, "docs", "architecture.md"));
  const start = architecture.indexOf("## The walk of one `execute`");
  if (start < 0) throw new Error('docs/architecture.md lacks its section "The walk of one `execute`"');
  const walk = architecture.slice(start, architecture.indexOf("\n## ", start + 1));
  const named = [...walk.matchAll(/`(lib\/[\w/]+\.ts):/g)].map((m) => m[1]!);
  return new Set([
    ...named,
    "lib/log.ts",
    "lib/backends/http.ts",
    "lib/net/guarded_fetch.ts",
    "lib/net/endpoint_policy.ts",
  ]);
}

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
const MAIN = join(REPO_ROOT, "main.ts");
const mainImports = localImports(MAIN, await Deno.readTextFile(MAIN));

/**
 * The faces of an area, as paths inside its folder: `mod.ts`, and the modules its header lists under
 * "Other faces" (one `- \`name.ts\`: why` item each, several names to an item allowed). Another face is
 * for loading in parts: a face re-exports at run time every module it names, so an area whose parts load
 * at different moments (a cold start answers `initialize` before the catalog loads, and resolves the
 * catalog before the sandbox loads) lets those parts be imported alone. Types are free: an `import type`
 * is erased, so type-only re-exports from `mod.ts` load nothing.
 */
function facesOf(area: string, modText: string): Set<string> {
  const faces = new Set(["mod.ts"]);
  const lines = modText.split("\n");
  let start = lines.findIndex((line) => /^ \* Other faces\b/.test(line));
  if (start < 0) return faces;
  while (!lines[start]!.endsWith(":")) start++; // the heading may run on to a second line
  for (const line of lines.slice(start + 1)) {
    if (/^ \* {3}/.test(line)) continue; // an item's continuation
    const item = line.match(/^ \* - (.*?):/);
    if (!item) break;
    for (const name of item[1]!.matchAll(/`([^`]+)`/g)) faces.add(name[1]!);
  }
  if (faces.size === 1) throw new Error(`lib/${area}/mod.ts says "Other faces" but lists none`);
  return faces;
}

const AREAS = AREA_ORDER.flat().filter((area) => area !== "top" && area !== "diagnostics");
const FACES = new Map<string, Set<string>>();
for (const area of AREAS) {
  const modPath = join(LIB, area, "mod.ts");
  FACES.set(area, facesOf(area, await Deno.readTextFile(modPath).catch(() => "")));
}

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

Deno.test("every folder of lib/ is an area in the order, with a face (mod.ts) and the other faces it lists", async () => {
  const folders: string[] = [];
  for await (const entry of Deno.readDir(LIB)) if (entry.isDirectory) folders.push(entry.name);
  expect(folders.sort()).toEqual([...AREAS].sort());
  const missing: string[] = [];
  for (const [area, faces] of FACES) {
    for (const face of faces) {
      if (!files.includes(join(LIB, area, face))) missing.push(`lib/${area}/${face}`);
    }
  }
  expect(missing).toEqual([]);
});

Deno.test("code outside an area imports only its faces (mod.ts, or another face its mod.ts lists)", () => {
  const wrong: string[] = [];
  const sources: [string, string[]][] = [...graph, [MAIN, mainImports]];
  for (const [file, imports] of sources) {
    for (const target of imports) {
      const to = areaOf(target);
      const faces = FACES.get(to);
      if (!faces || (file !== MAIN && areaOf(file) === to)) continue;
      if (!faces.has(relative(join(LIB, to), target))) {
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

Deno.test("no function on the request path of execute runs past ~80 lines (others are listed)", async () => {
  const requestPath = await requestPathModules();
  const long: string[] = [];
  for (const file of files) {
    const rel = relative(REPO_ROOT, file);
    for (const fn of functionLengths(await Deno.readTextFile(file))) {
      if (fn.lines <= MAX_FUNCTION_LINES) continue;
      const where = `${rel}:${fn.line} ${fn.name} (${fn.lines} lines)`;
      if (requestPath.has(rel)) long.push(where);
      else console.warn(`${where}: past ${MAX_FUNCTION_LINES} lines; named steps would read better`);
    }
  }
  expect(long).toEqual([]);
});
