/**
 * Test helpers for the declarations concept: loads the `tools/list` corpus in
 * `testdata/declarations/` (real servers under `corpus/`, hand-written edge
 * cases under `synthetic/`).
 *
 * @module
 */

import type { ToolInfo } from "../lib/declarations/mod.ts";

/** One server of the corpus. */
export interface CorpusServer {
  /** Server name = file name without `.json`, e.g. `"everything"`. */
  name: string;
  /** Its `tools/list` tools. */
  tools: ToolInfo[];
}

/** Root of the declarations fixtures. */
export const DECLARATIONS_TESTDATA = new URL("../testdata/declarations/", import.meta.url);

/** Every corpus server (real ones first, then synthetic), each group sorted by name. */
export function loadCorpus(): CorpusServer[] {
  const servers: CorpusServer[] = [];
  for (const group of ["corpus", "synthetic"]) {
    const dir = new URL(`${group}/`, DECLARATIONS_TESTDATA);
    const files = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".json")).sort();
    for (const file of files) {
      const data = JSON.parse(Deno.readTextFileSync(new URL(file, dir))) as { tools: ToolInfo[] };
      servers.push({ name: file.replace(/\.json$/, ""), tools: data.tools });
    }
  }
  return servers;
}
