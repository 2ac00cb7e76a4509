import assert from "node:assert/strict";
import {
  maskDeep,
  maskSecrets,
  MAX_MASK_DEPTH,
  MIN_SECRET_CHARS,
  SecretRegistry,
} from "../../lib/secrets/mod.ts";
import { maskShapes } from "../../lib/secrets/_shapes.ts";

Deno.test("SecretRegistry.mask() masks every registered value, also URL-encoded and JSON-escaped", () => {
  const registry = new SecretRegistry();
  registry.register('pa ss/wo+rd"x');
  registry.register("plain-secret-1");
  const text = `a pa ss/wo+rd"x b ${encodeURIComponent('pa ss/wo+rd"x')} c ${
    JSON.stringify('pa ss/wo+rd"x')
  } plain-secret-1`;
  const masked = registry.mask(text);
  assert.equal(masked, 'a *** b *** c "***" ***');
  assert.equal(registry.isLeaking(text), true);
  assert.equal(registry.isLeaking(masked), false);
});

Deno.test("SecretRegistry.mask() masks a value JSON-escaped twice (a script returning JSON.stringify of it)", () => {
  const registry = new SecretRegistry();
  const secret = 'p@ss/w"rd\\x+y=1&zz';
  registry.register(secret);
  const returned = JSON.stringify({ s: secret });
  const rendered = JSON.stringify(JSON.stringify(returned));
  assert.equal(registry.isLeaking(rendered), true);
  const masked = registry.mask(rendered);
  assert.equal(masked.includes("rd"), false);
  assert.equal(JSON.parse(JSON.parse(JSON.parse(masked))).s, "***");
});

Deno.test("SecretRegistry.register() ignores values shorter than MIN_SECRET_CHARS", () => {
  const registry = new SecretRegistry();
  registry.registerAll(["0", "true", "x".repeat(MIN_SECRET_CHARS - 1), undefined, null]);
  assert.equal(registry.size, 0);
  assert.equal(registry.mask("0 true xxxxx"), "0 true xxxxx");
});

Deno.test("SecretRegistry.mask() masks a longer value whole when it contains a shorter one", () => {
  const registry = new SecretRegistry();
  registry.register("abcdef");
  registry.register("abcdef-ghijkl");
  assert.equal(registry.mask("[abcdef-ghijkl] [abcdef]"), "[***] [***]");
});

Deno.test("maskShapes() masks the common credential shapes", () => {
  const cases: [string, string][] = [
    ["Authorization: Bearer abc.def.123", "Authorization: Bearer ***"],
    ["Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic ***"],
    ["connected using token abc123def456", "connected using token ***"],
    ["PAT 0123456789abcdef", "PAT ***"],
    ["postgres://user:hunter22@db.example.com/app", "postgres://user:***@db.example.com/app"],
    ["https://x/mcp?api_key=abcdef123&x=1", "https://x/mcp?api_key=***&x=1"],
    ["stderr: token=abc123", "stderr: token=***"],
    ["GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123", "GITHUB_TOKEN=ghp_***"],
    ["github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_***"],
    ["key sk-proj-abcdefghijklmnop1234", "key sk-proj-***"],
    ["xoxb-1234567890-abcdefghij", "xoxb-***"],
    ["AKIAIOSFODNN7EXAMPLE", "AKIA***"],
    ['{"client_secret": "s3cr3t-xyz"}', '{"client_secret": "***"}'],
    ["password: hunter2", "password: ***"],
    ["MY_API_KEY=abcd1234", "MY_API_KEY=***"],
    [
      '{"access_token":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijk"}',
      '{"access_token":"***"}',
    ],
  ];
  for (const [input, expected] of cases) assert.equal(maskShapes(input), expected, input);
});

Deno.test("maskShapes() leaves declarations, challenges and prose about tokens readable", () => {
  const unchanged = [
    "declare const gh: { create(params: { token: string; password?: string; apiKey: string }): Promise<unknown> }",
    'WWW-Authenticate: Bearer realm="x", resource_metadata="https://h/.well-known/oauth-protected-resource"',
    "the server uses Basic authentication and Bearer tokens",
    "its sign-in has expired; the token expired; refresh token (invalid_grant)",
    "secret: undefined",
    "Open https://as.example/authorize?response_type=code&code_challenge=abcDEF123&state=xyz",
  ];
  for (const text of unchanged) assert.equal(maskShapes(text), text);
});

Deno.test("maskDeep() masks strings and keys of a JSON value but not image or audio data", () => {
  const registry = new SecretRegistry();
  registry.register("deep-secret-42");
  const value = {
    content: [
      { type: "text", text: "got deep-secret-42" },
      { type: "image", mimeType: "image/png", data: "ZGVlcC1zZWNyZXQtNDI=" },
    ],
    structuredContent: { "deep-secret-42": ["token=abc123"] },
  };
  assert.deepEqual(maskDeep(value, registry), {
    content: [
      { type: "text", text: "got ***" },
      { type: "image", mimeType: "image/png", data: "ZGVlcC1zZWNyZXQtNDI=" },
    ],
    structuredContent: { "***": ["token=***"] },
  });
});

Deno.test("maskSecrets() uses the process-wide registry by default", () => {
  const registry = new SecretRegistry();
  assert.equal(maskSecrets("Bearer abcdefgh12345678", registry), "Bearer ***");
});

Deno.test("SecretRegistry.registerUrlValue() registers keys and tokens of a URL, not its host", () => {
  const registry = new SecretRegistry();
  registry.registerUrlValue("https://mcp.example.com/s/ab12cd34ef/mcp?api_key=k3y-value-9");
  registry.registerUrlValue("https://user:pa55word@db.example.com/");
  registry.registerUrlValue("api.example.com");
  registry.registerUrlValue("127.0.0.1:8080");
  registry.registerUrlValue("zz-path-token-11");
  assert.equal(
    registry.mask(
      "https://mcp.example.com/s/ab12cd34ef/mcp?x=k3y-value-9 pa55word api.example.com 127.0.0.1:8080 zz-path-token-11",
    ),
    "https://mcp.example.com/s/***/mcp?x=*** *** api.example.com 127.0.0.1:8080 ***",
  );
});

Deno.test("maskSecrets() stays linear on long runs a backtracking shape would rescan per word", () => {
  const started = performance.now();
  for (
    const text of ["a.".repeat(50_000), "a-".repeat(50_000), "a_".repeat(50_000), "my_token_".repeat(10_000)]
  ) {
    maskSecrets(text);
  }
  // Quadratic before: "a.".repeat(50_000) alone took tens of seconds.
  assert.ok(performance.now() - started < 5_000, `${performance.now() - started} ms`);
});

Deno.test("maskDeep() masks at every depth and replaces what is deeper than MAX_MASK_DEPTH", () => {
  const registry = new SecretRegistry();
  registry.register("deep-secret-77");
  let value: unknown = { s: "deep-secret-77" };
  for (let i = 0; i < 70; i++) value = { d: value };
  assert.doesNotMatch(JSON.stringify(maskDeep(value, registry)), /deep-secret-77/);
  let deeper: unknown = { s: "deep-secret-77" };
  for (let i = 0; i < MAX_MASK_DEPTH + 5; i++) deeper = [deeper];
  const masked = JSON.stringify(maskDeep(deeper, registry));
  assert.doesNotMatch(masked, /deep-secret-77/);
  assert.match(masked, /nested deeper than 1024 levels/);
});

Deno.test("maskDeep() masks a numeric secret sent as a JSON number", () => {
  const registry = new SecretRegistry();
  registry.register("8675309123");
  assert.deepEqual(maskDeep({ pin: 8675309123, other: 42 }, registry), { pin: "***", other: 42 });
});

Deno.test("mask() spares listed names from the credential shapes but not registered values", () => {
  const registry = new SecretRegistry();
  assert.equal(registry.mask("npm_package_info({})"), "npm_***({})");
  registry.registerNames(["npm_package_info", "sk_live_mode_value"]);
  assert.equal(
    registry.mask("npm_package_info({ sk_live_mode_value: string })"),
    "npm_package_info({ sk_live_mode_value: string })",
  );
  assert.equal(registry.mask("npm_abcdefghij1234 leaked"), "npm_*** leaked");
});
