// The walk of one `execute` (`docs/architecture.md`) names functions that exist: each `lib/…ts:Name` or `lib/…ts:Class.method`
// is a file of this repository that declares that function, class or method.
import { expect } from "expect";
import { join } from "node:path";
import { REPO_ROOT } from "./_fakes_foundation.ts";

const architecture = await Deno.readTextFile(join(REPO_ROOT, "docs", "architecture.md"));
const start = architecture.indexOf("## The walk of one `execute`");
const walk = architecture.slice(start, architecture.indexOf("\n## ", start + 1));

/** Whether `source` declares `name` (a function, class, const, method or private method). */
function declares(source: string, name: string): boolean {
  const n = name.replace(/[#$]/g, "\\$&");
  return new RegExp(
    `(function\\s+${n}\\b|class\\s+${n}\\b|const\\s+${n}\\b|^\\s*(?:async\\s+|static\\s+|get\\s+)*${n}\\s*[(<])`,
    "m",
  ).test(source);
}

Deno.test("docs/architecture.md walks one execute in at most 12 numbered steps", () => {
  expect(start).toBeGreaterThan(0);
  const steps = walk.match(/^\d+\. /gm) ?? [];
  expect(steps.length).toBeGreaterThanOrEqual(8);
  expect(steps.length).toBeLessThanOrEqual(12);
});

Deno.test("every file.ts:function the walk of docs/architecture.md names exists", async () => {
  const refs = [...walk.matchAll(/`(lib\/[\w/]+\.ts):([\w#$.]+)`/g)].map((m) => [m[1]!, m[2]!] as const);
  expect(refs.length).toBeGreaterThanOrEqual(20);
  const missing: string[] = [];
  for (const [file, path] of refs) {
    let source: string;
    try {
      source = await Deno.readTextFile(join(REPO_ROOT, file));
    } catch {
      missing.push(`${file} (no such file)`);
      continue;
    }
    for (const name of path.split(".")) {
      if (!declares(source, name)) missing.push(`${file}:${path} (${name})`);
    }
  }
  expect(missing).toEqual([]);
});

Deno.test("every bare Class.method the walk of docs/architecture.md names is declared in a file it named", async () => {
  const files = [...new Set([...walk.matchAll(/`(lib\/[\w/]+\.ts)[:`]/g)].map((m) => m[1]!))];
  const sources = await Promise.all(files.map((file) => Deno.readTextFile(join(REPO_ROOT, file))));
  const bare = [...walk.matchAll(/`([A-Z]\w+)\.(#?\w+)`/g)].map((m) => [m[1]!, m[2]!] as const);
  const missing = bare.filter(([cls, method]) =>
    !sources.some((source) => declares(source, cls) && declares(source, method))
  ).map(([cls, method]) => `${cls}.${method}`);
  expect(missing).toEqual([]);
});
