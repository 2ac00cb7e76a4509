// maskShapes() skips the shapes for a text none of them can match: it must mask exactly as running them all.
import assert from "node:assert/strict";
import fc from "fast-check";
import { maskShapes, SHAPES } from "../../lib/secrets/_shapes.ts";

/** Every shape applied in order, with no shortcut. */
function reference(text: string): string {
  let out = text;
  for (const shape of SHAPES) {
    shape.pattern.lastIndex = 0;
    out = out.replace(shape.pattern, shape.replace as (m: string, ...g: string[]) => string);
  }
  return out;
}

const PIECES = [
  "Bearer ",
  "basic ",
  "token ",
  "Token: ",
  "password=",
  "api_key",
  '"secret": "',
  "?key=",
  "&sig=",
  "https://",
  "u:",
  "@",
  "ghp_",
  "sk-",
  "xoxb-",
  "npm_",
  "hf_",
  "sk_live_",
  "AKIA",
  "ASIA",
  "AIza",
  "eyJ",
  ".",
  "-",
  "_",
  "=",
  ":",
  " ",
  "\n",
  "\t",
  "abc123",
  "0123456789abcdef",
  "QUJDREVGR0hJSktMTU5PUA",
  "dXNlcjpwYXNz",
  "x",
  "9",
  "PAT ",
  "API key ",
];

Deno.test("maskShapes() masks exactly as every shape run in order, for texts built of shape pieces", () => {
  const text = fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 4 })), { maxLength: 12 })
    .map((parts) => parts.join(""));
  fc.assert(fc.property(text, (t) => assert.equal(maskShapes(t), reference(t), JSON.stringify(t))), {
    numRuns: 5_000,
  });
});

Deno.test("maskShapes() leaves a text without a shape's characters as it is and still masks short shapes", () => {
  assert.equal(maskShapes("structuredContent"), "structuredContent");
  assert.equal(maskShapes("?key=x"), "?key=***");
  assert.equal(maskShapes("AKIAABCDEFGHIJKLMNOP"), "AKIA***");
  assert.equal(maskShapes("AIza" + "A".repeat(30)), "AIza***");
});
