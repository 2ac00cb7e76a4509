import assert from "node:assert/strict";
import { printable, quotedText } from "../lib/diagnostics.ts";

Deno.test("printable() escapes every character that shows as nothing, tag characters and lone surrogates too", () => {
  const hidden = "run \u{e0074}\u{e0072}\u{e0075}\u{e0073}\u{e0074} now";
  assert.equal(printable(hidden), "run \\u{e0074}\\u{e0072}\\u{e0075}\\u{e0073}\\u{e0074} now");
  for (
    const c of [
      "\u00ad",
      "\u034f",
      "\u115f",
      "\u180e",
      "\u2060",
      "\u2064",
      "\u206a",
      "\u3164",
      "\ufe0f",
      "\ufff9",
    ]
  ) {
    assert.equal(printable(`a${c}b`), `a\\u${c.codePointAt(0)!.toString(16).padStart(4, "0")}b`, c);
  }
  assert.equal(printable("x\ud800y"), "x\\ud800y");
  assert.equal(quotedText("a\u{e0001}"), '"a\\u{e0001}"');
  // Visible text, a surrogate pair and tab are kept as they are.
  assert.equal(printable("naïve 😀\tdone — ok"), "naïve 😀\tdone — ok");
});
