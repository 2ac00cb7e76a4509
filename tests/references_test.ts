// Comments, tests and the README name only files that are in this repository: every backticked `*.ts` or
// `*.md` name in README.md and in the TypeScript of lib/, tests/, bench/, conformance/ and main.ts is a
// path of the repository (from its root or from the naming file's folder) or the tail of one.
import { expect } from "expect";
import { dirname, join, normalize, relative } from "node:path";
import { REPO_ROOT } from "./_fakes_foundation.ts";

const SKIP = new Set([".git", "node_modules", "dist", "testdata"]);

async function repoFiles(dir = REPO_ROOT): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...await repoFiles(path));
    else out.push(relative(REPO_ROOT, path));
  }
  return out;
}

Deno.test("every backticked .ts or .md name in the code and the README is a file of this repository", async () => {
  const files = await repoFiles();
  // testdata/ is not read for names but holds files that may be named.
  const named = new Set([...files, ...(await repoFilesUnder("testdata"))]);
  const readers = files.filter((f) =>
    f === "README.md" || (f.endsWith(".ts") && /^(lib|tests|bench|conformance)\/|^main\.ts$/.test(f))
  );
  const missing: string[] = [];
  for (const file of readers) {
    const text = await Deno.readTextFile(join(REPO_ROOT, file));
    for (const match of text.matchAll(/`([\w./\\-]+\.(?:ts|md))(?::[\w#$.]+)?`/g)) {
      const ref = match[1]!;
      const fromFolder = normalize(join(dirname(file), ref));
      const tail = ref.replace(/^\.\//, "");
      if (
        named.has(ref) || named.has(fromFolder) ||
        [...named].some((f) => f === tail || f.endsWith(`/${tail}`))
      ) {
        continue;
      }
      missing.push(`${file}:${text.slice(0, match.index).split("\n").length}: ${ref}`);
    }
  }
  expect(missing).toEqual([]);
});

async function repoFilesUnder(folder: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path);
      else out.push(relative(REPO_ROOT, path));
    }
  };
  await walk(join(REPO_ROOT, folder));
  return out;
}

/**
 * Sections of documents and issues that are not in this repository: a section sign after `SPEC` or
 * `upstream`, the word issue followed by a number. The source of a rule is said by what is here (a README
 * section, a module) or by a public standard (`RFC 8707`, `JSON-RPC 2.0 \u00a75`, `MCP 2025-06-18`). A
 * `TODO(#12)` is the one form that names an issue of the tracker.
 */
const FOREIGN_REFERENCE = /\b(?:SPEC(?:\.md)?|upstream(?:'s)?) \u00a7|\bissues? #?\d+\b|\bissue-\d+\b/gi;

Deno.test("no comment, test name or README line cites a section or an issue that is not in this repository", async () => {
  const files = await repoFiles();
  const readers = files.filter((f) =>
    f === "README.md" || (f.endsWith(".ts") && /^(lib|tests|bench|conformance)\/|^main\.ts$/.test(f))
  );
  const found: string[] = [];
  for (const file of [...readers, ...(await repoFilesUnder("testdata")).filter((f) => f.endsWith(".ts"))]) {
    const text = await Deno.readTextFile(join(REPO_ROOT, file));
    for (const match of text.matchAll(FOREIGN_REFERENCE)) {
      found.push(`${file}:${text.slice(0, match.index).split("\n").length}: ${match[0]}`);
    }
  }
  expect(found).toEqual([]);
});
