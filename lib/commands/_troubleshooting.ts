/**
 * `cargo-agents help CODE`: the entry of an error code in `docs/troubleshooting.md`, printed from the file
 * itself (a release binary carries it: the compile task includes it), so an error's `see:` line works
 * without the repository at hand.
 *
 * @module
 */
import { closestMatch, troubleshootingAnchor, UsageError } from "../diagnostics.ts";

/** Where the entries are: `docs/troubleshooting.md` of this checkout (or of the binary's embedded files). */
const TROUBLESHOOTING_URL = new URL("../../docs/troubleshooting.md", import.meta.url);

/** The `### CODE` headings of a troubleshooting text, in order, with the line each starts on (0-based). */
function headings(lines: string[]): { code: string; at: number }[] {
  return lines.flatMap((line, at) => line.startsWith("### ") ? [{ code: line.slice(4).trim(), at }] : []);
}

/**
 * The entry of `code` in a troubleshooting text: its heading and every line up to the next heading, trimmed.
 * The code matches exactly, else in any case (`manifest_unknown_key`), else as its anchor.
 *
 * @returns The entry, or `undefined` when the text has none for `code`.
 */
export function findTroubleshootingEntry(text: string, code: string): string | undefined {
  const lines = text.split("\n");
  const all = headings(lines);
  const found = all.find((h) => h.code === code) ??
    all.find((h) => h.code.toLowerCase() === code.toLowerCase()) ??
    all.find((h) => troubleshootingAnchor(h.code) === troubleshootingAnchor(code));
  if (found === undefined) return undefined;
  let end = found.at + 1;
  while (end < lines.length && !/^#{1,3} /.test(lines[end]!)) end++;
  return lines.slice(found.at, end).join("\n").trim();
}

/**
 * The entry `cargo-agents help CODE` prints (see {@link findTroubleshootingEntry}). When the file is not
 * there (a build without it), the line that says where the entry is online.
 *
 * @throws {UsageError} When the file has no entry for `code` (hint: the closest code).
 */
export async function troubleshootingEntry(code: string): Promise<string> {
  let text: string;
  try {
    text = await Deno.readTextFile(TROUBLESHOOTING_URL);
  } catch {
    // A build without the file: say where the entry is instead of failing the help.
    return `The entry of ${code} is docs/troubleshooting.md#${
      troubleshootingAnchor(code)
    } in the cargo-agents repository (this build does not carry the file).`;
  }
  const entry = findTroubleshootingEntry(text, code);
  if (entry !== undefined) return entry;
  const near = closestMatch(code, headings(text.split("\n")).map((h) => h.code));
  throw new UsageError(`Cannot show help for "${code}": it is neither a command nor an error code`, {
    hint: near
      ? `did you mean \`cargo-agents help ${near}\`? (\`cargo-agents --help\` lists the commands)`
      : "`cargo-agents --help` lists the commands; an error's code is the word in error[\u2026]",
  });
}
