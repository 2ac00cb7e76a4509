import assert from "node:assert/strict";
import { cutAtWord, firstSentence, SUMMARY_MAX_CHARS } from "../../lib/declarations/summary.ts";
import { renderToolSignature } from "../../lib/declarations/mod.ts";
import { buildBindingTable } from "../../lib/declarations/tool_binding.ts";

Deno.test("firstSentence() keeps the first sentence of the first line", () => {
  assert.equal(firstSentence("Read a file. DEPRECATED: use read_text_file."), "Read a file.");
  assert.equal(firstSentence("  \n Echo a message back.\nSecond line."), "Echo a message back.");
  assert.equal(firstSentence("Notion | Search by title"), "Notion | Search by title");
  assert.equal(firstSentence(undefined), "");
});

Deno.test("firstSentence() does not end a sentence at e.g. or i.e.", () => {
  assert.equal(firstSentence("Sets a field, e.g. Sprint. Then more."), "Sets a field, e.g. Sprint.");
});

Deno.test("firstSentence() cuts a long sentence on a word boundary within the limit", () => {
  const text = `${"word ".repeat(60)}end.`;
  const summary = firstSentence(text);
  assert.ok(summary.length <= SUMMARY_MAX_CHARS, `${summary.length}`);
  assert.match(summary, /^word( word)*…$/);
});

Deno.test("cutAtWord() cuts a single long word mid-word", () => {
  assert.equal(cutAtWord("x".repeat(30), 10), `${"x".repeat(9)}…`);
});

Deno.test("renderToolSignature() gives the call through the server's global, with the identifier alias", () => {
  const tool = {
    name: "get-sum",
    inputSchema: { type: "object", properties: { a: { type: "number" } }, required: ["a"] },
  };
  const table = buildBindingTable(["get-sum"]);
  assert.equal(
    renderToolSignature("my-server", tool, { table }).text,
    "my_server.get_sum(params: {\n  a: number;\n}): Promise<unknown>",
  );
});

Deno.test("renderToolSignature() lists parameter names only past maxChars", () => {
  const tool = {
    name: "big",
    inputSchema: {
      type: "object",
      properties: {
        first: { type: "string", enum: ["a".repeat(80), "b".repeat(80)] },
        second: { type: "number" },
      },
      required: ["first"],
    },
  };
  const signature = renderToolSignature("s", tool, { maxChars: 100 });
  assert.equal(signature.cut, true);
  assert.equal(signature.text, "s.big(params: { first: …; second?: … }): Promise<unknown>");
});
