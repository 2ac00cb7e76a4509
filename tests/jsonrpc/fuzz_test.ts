// Property tests (fast-check, a bounded number of runs each) of the parsers that read untrusted text: the
// stdin line reader and JSON-RPC classifier, the id sniffer, the manifest parser and the glob matcher.
import assert from "node:assert/strict";
import fc from "fast-check";
import { classifyLine, LineReader, sniffMessage } from "../../lib/jsonrpc/mod.ts";
import { parseManifest } from "../../lib/plugins/manifest.ts";
import { UserError } from "../../lib/diagnostics.ts";
import { compileGlob } from "../../lib/glob.ts";

const RUNS = { numRuns: 300, seed: 11 };
const encoder = new TextEncoder();

Deno.test("LineReader yields the same lines however the bytes are chunked, and never more than its budget", () => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ maxLength: 40 }), { maxLength: 12 }),
      fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 8 }),
      fc.integer({ min: 1, max: 30 }),
      (lines, cuts, budget) => {
        const text = lines.map((line) => `${line}\n`).join("");
        const bytes = encoder.encode(text);
        const reader = new LineReader(budget);
        const events = [];
        for (let at = 0, i = 0; at < bytes.length; i++) {
          const size = cuts[i % cuts.length]!;
          events.push(...reader.push(bytes.subarray(at, at + size)));
          at += size;
        }
        events.push(...reader.end());
        assert.equal(events.length, lines.length);
        events.forEach((event, i) => {
          const expected = lines[i]!.replace(/\r$/, "");
          const size = encoder.encode(lines[i]!).length;
          if (size <= budget) {
            assert.equal(event.kind, "line");
            if (event.kind === "line") assert.equal(event.text, expected);
          } else {
            assert.equal(event.kind, "oversize");
            assert.equal(event.bytes, size);
          }
        });
      },
    ),
    RUNS,
  );
});

Deno.test("classifyLine() never throws and answers every non-message with a JSON-RPC error", () => {
  const jsonish = fc.oneof(
    fc.string(),
    fc.json(),
    fc.record({
      jsonrpc: fc.oneof(fc.constant("2.0"), fc.string()),
      id: fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.double(), fc.object()),
      method: fc.oneof(fc.string(), fc.integer()),
      params: fc.oneof(fc.object(), fc.array(fc.integer()), fc.string()),
    }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  );
  fc.assert(
    fc.property(jsonish, (line) => {
      const classified = classifyLine(line);
      if (classified.kind === "reply") {
        assert.ok([-32700, -32600].includes(classified.reply.error.code));
        const id = classified.reply.id;
        assert.ok(id === null || typeof id === "string" || Number.isSafeInteger(id));
      }
    }),
    RUNS,
  );
});

Deno.test("sniffMessage() never throws and finds the id of a request cut anywhere after its id", () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.integer({ min: -1e9, max: 1e9 }), fc.string({ maxLength: 20 })),
      fc.string({ maxLength: 200 }),
      fc.nat(),
      (id, pad, cutAt) => {
        const text = JSON.stringify({ jsonrpc: "2.0", id, method: "ping", params: { pad } });
        const head = text.slice(0, Math.max(text.indexOf('"method"'), cutAt % (text.length + 1)));
        assert.deepEqual(sniffMessage(head).id, id);
        sniffMessage(pad, pad); // any text: no throw
      },
    ),
    RUNS,
  );
});

Deno.test("parseManifest() either returns a manifest or throws a UserError, for any text", () => {
  const tomlish = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.array(
      fc.oneof(
        fc.constantFrom(
          'name = "p"',
          'depends-on = "*"',
          "[[mcp_servers]]",
          'name = "s"',
          'command = "x"',
          "args = [1]",
          'url = "https://e.example/mcp"',
          "enabled-tools = []",
          "[mcp_servers.env]",
          "x = 1",
          "= =",
        ),
        fc.string({ maxLength: 30 }),
      ),
      { maxLength: 12 },
    ).map((lines) => lines.join("\n")),
  );
  fc.assert(
    fc.property(tomlish, (text) => {
      try {
        parseManifest(text, "SYMPOSIUM.toml");
      } catch (error) {
        assert.ok(error instanceof UserError, `not a UserError: ${error}`);
      }
    }),
    RUNS,
  );
});

/** The glob as a RegExp, for small inputs only (the reference the linear matcher must agree with). */
function referenceGlob(glob: string): RegExp {
  const body = [...glob].map((c) =>
    c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")
  );
  return new RegExp(`^${body.join("")}$`, "su");
}

Deno.test("compileGlob() agrees with a RegExp reference on small inputs", () => {
  const alphabet = fc.constantFrom("a", "b", "*", "?", ".", "😀");
  fc.assert(
    fc.property(
      fc.array(alphabet, { maxLength: 8 }).map((c) => c.join("")),
      fc.array(fc.constantFrom("a", "b", ".", "😀"), { maxLength: 10 }).map((c) => c.join("")),
      (glob, text) => {
        assert.equal(compileGlob(glob).test(text), referenceGlob(glob).test(text), `${glob} vs ${text}`);
      },
    ),
    { numRuns: 500, seed: 11 },
  );
});

Deno.test("compileGlob() answers a backtracking-hostile glob at once", () => {
  const started = performance.now();
  const glob = compileGlob("*".repeat(200) + "!");
  for (let i = 0; i < 100; i++) assert.equal(glob.test("list_directory_with_sizes".repeat(4)), false);
  assert.ok(performance.now() - started < 5_000);
});
