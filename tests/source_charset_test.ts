// The program's own modules keep to Latin-1 (U+0000-U+00FF). V8 holds the source text of every module it
// loaded for as long as the process lives, and from source Deno adds each TypeScript module's inline source
// map to that text; one character past U+00FF makes V8 store the whole text two bytes per character. Measured
// on `mcp-serve` after 1,000 executes (heap snapshot): the meta-server's modules held 5.0 MiB of source, half
// of it in the two-byte form, for 372 such characters in 128 files.
import { expect } from "expect";
import { join, relative } from "node:path";
import { REPO_ROOT } from "./_fakes_foundation.ts";

/** Every `.ts` file under `dir`, recursively. */
function typeScriptFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...typeScriptFiles(path));
    else if (entry.isFile && entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** `file:line:col` and the character of each one past U+00FF in `text`. */
function wideCharacters(file: string, text: string): string[] {
  const found: string[] = [];
  const lines = text.split("\n");
  lines.forEach((line, index) => {
    for (let col = 0; col < line.length; col++) {
      const code = line.charCodeAt(col);
      if (code > 0xff) {
        const hex = code.toString(16).padStart(4, "0");
        found.push(`${file}:${index + 1}:${col + 1}: ${JSON.stringify(line[col])} (U+${hex.toUpperCase()})`);
      }
    }
  });
  return found;
}

Deno.test("the program's modules are Latin-1, so V8 keeps their source one byte per character", () => {
  const files = [join(REPO_ROOT, "main.ts"), ...typeScriptFiles(join(REPO_ROOT, "lib"))];
  expect(files.length).toBeGreaterThan(100);
  const found = files.flatMap((path) =>
    wideCharacters(relative(REPO_ROOT, path), Deno.readTextFileSync(path))
  );
  // In a string or template literal write the escape (`"\u2026"`); in a comment, ASCII ("...", "->", "-").
  expect(found).toEqual([]);
});

Deno.test("the check finds a character past U+00FF and says where", () => {
  expect(wideCharacters("lib/x.ts", "const a = 1;\n// caf\u00e9 \u2192 b\n")).toEqual([
    'lib/x.ts:2:9: "\u2192" (U+2192)',
  ]);
});
