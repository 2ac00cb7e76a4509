// Comments, tests and the documentation name only files and sections that are in this repository: every
// backticked `*.ts` or `*.md` name in README.md, docs/*.md and the TypeScript of lib/, tests/, bench/,
// conformance/ and main.ts is a path of the repository (from its root or from the naming file's folder) or the
// tail of one; every section a comment cites (README, "Title") or (`docs/<page>.md`, "Title") is a heading of that
// document; every relative link of the documentation leads to a file and heading that exist.
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

/** Whether `file` (a path from the repository root) is read for references: the docs and the code. */
function isReader(file: string): boolean {
  return isDoc(file) || (file.endsWith(".ts") && /^(lib|tests|bench|conformance)\/|^main\.ts$/.test(file));
}

/** README.md and the pages of docs/. */
function isDoc(file: string): boolean {
  return file === "README.md" || /^docs\/[^/]+\.md$/.test(file);
}

Deno.test("every backticked .ts or .md name in the code and the docs is a file of this repository", async () => {
  const files = await repoFiles();
  // testdata/ is not read for names but holds files that may be named.
  const named = new Set([...files, ...(await repoFilesUnder("testdata"))]);
  const readers = files.filter(isReader);
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

Deno.test("no comment, test name or docs line cites a section or an issue that is not in this repository", async () => {
  const files = await repoFiles();
  const readers = files.filter(isReader);
  const found: string[] = [];
  for (const file of [...readers, ...(await repoFilesUnder("testdata")).filter((f) => f.endsWith(".ts"))]) {
    const text = await Deno.readTextFile(join(REPO_ROOT, file));
    for (const match of text.matchAll(FOREIGN_REFERENCE)) {
      found.push(`${file}:${text.slice(0, match.index).split("\n").length}: ${match[0]}`);
    }
  }
  expect(found).toEqual([]);
});

/** The headings of a Markdown document (fenced blocks skipped), as written after the `#`s. */
function headings(markdown: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const match = fenced ? null : /^#{1,6} (.+)$/.exec(line);
    if (match) out.push(match[1]!.trim());
  }
  return out;
}

/** GitHub's anchor of a heading: lowercase, punctuation but `-` and `_` dropped, spaces to `-`. */
function anchorOf(heading: string): string {
  return heading.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/ /g, "-");
}

Deno.test('every section a comment cites, (README, "Title") or (`docs/<page>.md`, "Title"), is a heading of that document', async () => {
  const files = await repoFiles();
  const cites = /\((?:README|`((?:docs\/)?[\w-]+\.md)`),? "([^"]+)"/g;
  const missing: string[] = [];
  let count = 0;
  // This file names the form itself.
  for (const file of files.filter((f) => isReader(f) && f !== "tests/references_test.ts")) {
    const text = await Deno.readTextFile(join(REPO_ROOT, file));
    for (const match of text.matchAll(cites)) {
      count++;
      const doc = match[1] ?? "README.md";
      let target: string;
      try {
        target = await Deno.readTextFile(join(REPO_ROOT, doc));
      } catch {
        missing.push(`${file}: ${doc} (no such document)`);
        continue;
      }
      if (!headings(target).includes(match[2]!)) missing.push(`${file}: ${doc}, "${match[2]}"`);
    }
  }
  expect(count).toBeGreaterThanOrEqual(10);
  expect(missing).toEqual([]);
});

Deno.test("every relative link of README.md and docs/*.md leads to a file of this repository and a heading of it", async () => {
  const files = await repoFiles();
  const docs = files.filter(isDoc);
  expect(docs.length).toBeGreaterThanOrEqual(10);
  const broken: string[] = [];
  for (const file of docs) {
    // Links inside code (fenced or inline) are not links.
    const text = (await Deno.readTextFile(join(REPO_ROOT, file))).replace(/```[\s\S]*?```/g, "").replace(
      /`[^`\n]*`/g,
      "",
    );
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const link = match[1]!;
      if (/^[a-z]+:/.test(link)) continue;
      const [path, anchor] = link.split("#") as [string, string | undefined];
      const target = path === "" ? file : normalize(join(dirname(file), path));
      let markdown: string;
      try {
        markdown = await Deno.readTextFile(join(REPO_ROOT, target));
      } catch {
        broken.push(`${file}: ${link}`);
        continue;
      }
      if (anchor !== undefined && !headings(markdown).map(anchorOf).includes(anchor)) {
        broken.push(`${file}: ${link} (no such heading)`);
      }
    }
  }
  expect(broken).toEqual([]);
});
