// The observed-result-shape corpus (`testdata/catalog/results/`): coverage after one call, soundness of
// later answers (a real strict `deno check` of generated assertions), every rendered declaration
// type-checks, the stored shape stays within 4 KB per tool, and the golden declarations of the GitHub
// and Playwright servers (`UPDATE_GOLDEN=1` rewrites them).
import assert from "node:assert/strict";
import { join } from "node:path";
import { SHAPE_MAX_BYTES } from "../../lib/catalog/result_shape.ts";
import { renderDeclarations } from "../../lib/declarations/mod.ts";
import {
  CORPUS_DIR,
  declarationsBeforeAfter,
  denoCheck,
  describeFailure,
  HELD_OUT_DIR,
  isConcrete,
  loadResultCorpus,
  lookupAfterAll,
  shapeAfter,
  soundness,
  toolCases,
} from "./_result_corpus.ts";

const servers = await loadResultCorpus();
const cases = toolCases(servers);
const undeclared = cases.filter((c) => !c.declared);
// Answers the render rules were not fitted on (measured apart).
const heldOutServers = await loadResultCorpus(HELD_OUT_DIR);
const heldOut = toolCases(heldOutServers);
const heldOutUndeclared = heldOut.filter((c) => !c.declared);

Deno.test("the corpus holds real and API-shaped answers of tools without outputSchema", () => {
  assert.deepEqual(servers.map((s) => s.server), [
    "everything",
    "filesystem",
    "github",
    "linear",
    "memory",
    "playwright",
    "sentry",
  ]);
  assert.ok(undeclared.length >= 40, `${undeclared.length} tools called`);
  assert.ok(undeclared.filter((c) => c.kind !== "text").length >= 20);
});

Deno.test("observed shapes give a concrete return type after one call of each tool (coverage ≥ 95 %)", () => {
  const jsonOrMedia = undeclared.filter((c) => c.kind !== "text");
  const concrete = jsonOrMedia.filter((c) => isConcrete(shapeAfter(c, 1)));
  const all = undeclared.filter((c) => isConcrete(shapeAfter(c, 1)));
  console.log(
    `coverage after 1 call: ${concrete.length}/${jsonOrMedia.length} tools with JSON or media answers, ` +
      `${all.length}/${undeclared.length} of all tools called`,
  );
  assert.ok(concrete.length / jsonOrMedia.length >= 0.95);
});

Deno.test("later answers type-check against the shape learned from the first one, two and three (soundness ≥ 97 %)", async () => {
  const figures: string[] = [];
  for (const n of [1, 2, 3]) {
    const r = await soundness(undeclared, n);
    figures.push(`after ${n}: ${r.passed}/${r.checked} (${(100 * r.passed / r.checked).toFixed(1)} %)`);
    assert.ok(r.passed / r.checked >= 0.97, `after ${n}:\n${r.failures.map(describeFailure).join("\n")}`);
  }
  const declared = await soundness(cases.filter((c) => c.declared), 1);
  console.log(
    `soundness: ${figures.join(", ")}; tools with outputSchema observed as if undeclared, after 1: ` +
      `${declared.passed}/${declared.checked}`,
  );
  assert.equal(declared.passed, declared.checked, declared.failures.map(describeFailure).join("\n"));
});

Deno.test("the held-out corpus holds real and API-shaped answers of other servers, APIs and arguments", () => {
  assert.deepEqual(heldOutServers.map((s) => s.server), [
    "everything",
    "filesystem",
    "github",
    "jira",
    "memory",
    "notion",
    "playwright",
    "sequentialthinking",
    "slack",
    "stripe",
    "time",
  ]);
  assert.ok(heldOutServers.every((s) => (s as { heldOut?: boolean }).heldOut === true));
  assert.ok(heldOutUndeclared.filter((c) => c.kind !== "text").length >= 30);
});

Deno.test("held-out later answers type-check against the shape learned from the first one (soundness ≥ 97 %)", async () => {
  const jsonOrMedia = heldOutUndeclared.filter((c) => c.kind !== "text");
  assert.ok(jsonOrMedia.filter((c) => isConcrete(shapeAfter(c, 1))).length / jsonOrMedia.length >= 0.95);
  const figures: string[] = [];
  for (const n of [1, 2, 3]) {
    const r = await soundness(heldOutUndeclared, n);
    figures.push(`after ${n}: ${r.passed}/${r.checked} (${(100 * r.passed / r.checked).toFixed(1)} %)`);
    assert.ok(r.passed / r.checked >= 0.97, `after ${n}:\n${r.failures.map(describeFailure).join("\n")}`);
  }
  const declared = await soundness(heldOut.filter((c) => c.declared), 1);
  console.log(
    `held-out soundness: ${
      figures.join(", ")
    }; with outputSchema, after 1: ${declared.passed}/${declared.checked}`,
  );
  assert.equal(declared.passed, declared.checked, declared.failures.map(describeFailure).join("\n"));
});

Deno.test("every declaration rendered with observed shapes type-checks (strict deno check)", async () => {
  const files: Record<string, string> = {};
  for (const { server, after } of declarationsBeforeAfter(servers, cases)) {
    files[`${server}.ts`] = `${after}\nexport {};\n`;
  }
  for (const s of servers) {
    const full = renderDeclarations(s.server, s.tools, {
      detail: "full",
      observed: lookupAfterAll(cases, s.server),
    });
    files[`${s.server}_full.ts`] = `${full.text}\nexport {};\n`;
  }
  for (const { server, after } of declarationsBeforeAfter(heldOutServers, heldOut)) {
    files[`held_out_${server}.ts`] = `${after}\nexport {};\n`;
  }
  const errors = await denoCheck(files);
  assert.deepEqual([...errors.keys()], []);
});

Deno.test("an observed shape stays within 4 KB per tool; declarations grow by what they learned", () => {
  const sizes = undeclared.map((c) => JSON.stringify(shapeAfter(c, c.values.length)).length);
  assert.ok(Math.max(...sizes) <= SHAPE_MAX_BYTES);
  const decls = declarationsBeforeAfter(servers, cases);
  const before = decls.reduce((n, d) => n + d.before.length, 0);
  const after = decls.reduce((n, d) => n + d.after.length, 0);
  const sorted = [...sizes].sort((a, b) => a - b);
  console.log(
    `shape JSON per tool: median ${sorted[sorted.length >> 1]} B, max ${sorted.at(-1)} B; ` +
      `signatures of the corpus: ${before} B before, ${after} B after`,
  );
});

Deno.test("renderDeclarations() declares the learned return types of GitHub and Playwright tools (golden)", async () => {
  const pick = (server: string, tools: string[], n: number) => {
    const s = servers.find((x) => x.server === server)!;
    const chosen = s.tools.filter((t) => tools.includes(t.name));
    const lookup = (tool: { name: string }) => {
      const c = cases.find((x) => x.server === server && x.tool.name === tool.name);
      return c && { calls: Math.min(n, c.values.length), shape: shapeAfter(c, n) };
    };
    return [
      `// ${server}: before`,
      renderDeclarations(server, chosen, { detail: "signatures" }).text,
      `// ${server}: after ${n} call(s) of each`,
      renderDeclarations(server, chosen, { detail: "signatures", observed: lookup }).text,
    ].join("\n");
  };
  const text = [
    pick("github", ["list_issues", "get_me", "set_issue_fields"], 1),
    pick("github", ["list_issues"], 3),
    pick("playwright", ["browser_take_screenshot", "browser_navigate"], 1),
    "",
  ].join("\n\n");
  const golden = join(CORPUS_DIR, "golden", "declarations.ts.txt");
  if (Deno.env.get("UPDATE_GOLDEN") === "1") {
    await Deno.mkdir(join(CORPUS_DIR, "golden"), { recursive: true });
    await Deno.writeTextFile(golden, text);
  }
  assert.equal(text, await Deno.readTextFile(golden));
});
