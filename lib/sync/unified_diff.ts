/**
 * The unified diff `sync --dry-run` prints for each file it would change.
 *
 * @module
 */
import { createTwoFilesPatch } from "diff";

/** Lines of context around each change in {@link renderUnifiedDiff}. */
export const DIFF_CONTEXT_LINES = 3;

/**
 * Renders the change from `before` to `after` as a unified diff with `--- path` / `+++ path`
 * headers (`/dev/null` for a file that does not exist yet).
 *
 * @param path File name shown in the headers.
 * @param before Current content, or `null` when the file does not exist.
 * @returns The diff, ending with a newline; `""` when nothing changes.
 */
export function renderUnifiedDiff(path: string, before: string | null, after: string): string {
  if (before === after) return "";
  const patch = createTwoFilesPatch(
    before === null ? "/dev/null" : path,
    path,
    before ?? "",
    after,
    undefined,
    undefined,
    { context: DIFF_CONTEXT_LINES },
  );
  // Drop the "Index:" and "====" lines the library puts first.
  return patch.replace(/^(Index: [^\n]*\n)?=+\n/, "");
}
