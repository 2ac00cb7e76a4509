// Time to declare the whole `cases/tools` corpus (15 real servers, 66 tools), as `list_tools` would:
//   deno bench -P bench/declarations_bench.ts
import { renderDeclarations, renderIndex, type ToolInfo } from "../lib/declarations/mod.ts";

const dir = new URL("../testdata/declarations/corpus/", import.meta.url);
const corpus: Array<{ name: string; tools: ToolInfo[] }> = [...Deno.readDirSync(dir)]
  .map((e) => e.name)
  .filter((n) => n.endsWith(".json"))
  .sort()
  .map((file) => ({
    name: file.replace(/\.json$/, ""),
    tools: (JSON.parse(Deno.readTextFileSync(new URL(file, dir))) as { tools: ToolInfo[] }).tools,
  }));

Deno.bench("renderDeclarations() whole corpus, full", { group: "corpus", baseline: true }, () => {
  for (const server of corpus) renderDeclarations(server.name, server.tools);
});

Deno.bench("renderDeclarations() whole corpus, signatures", { group: "corpus" }, () => {
  for (const server of corpus) renderDeclarations(server.name, server.tools, { detail: "signatures" });
});

Deno.bench("renderIndex() whole corpus", { group: "corpus" }, () => {
  for (const server of corpus) renderIndex(server.name, server.tools);
});

const largest = corpus.find((s) => s.name === "notion")!;
Deno.bench("renderDeclarations() notion (shared $defs in every tool), full", () => {
  renderDeclarations(largest.name, largest.tools);
});
