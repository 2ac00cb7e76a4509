import assert from "node:assert/strict";
import { DENO_RUN_FLAGS, sourceRunArgs } from "../lib/self_command.ts";

const REPO = new URL("../", import.meta.url).pathname;
const tasks =
  (JSON.parse(Deno.readTextFileSync(`${REPO}deno.json`)) as { tasks: Record<string, string> }).tasks;
const v8Flags = DENO_RUN_FLAGS.find((flag) => flag.startsWith("--v8-flags="))!;

Deno.test("the serve task runs main.ts with exactly the flags of lib/self_command.ts", () => {
  assert.ok(tasks.serve!.includes(`deno run ${DENO_RUN_FLAGS.join(" ")} --config`), tasks.serve);
});

Deno.test("the compile task bakes in the same permissions and V8 flags (no lazy imports: a binary has its graph)", () => {
  const compile = tasks.compile!;
  assert.ok(compile.includes(` -P ${v8Flags} `), compile);
  assert.ok(!compile.includes("--unstable-lazy-dynamic-imports"), compile);
});

Deno.test("the README's from-source mcp-serve line is sourceRunArgs() as a user types it", () => {
  const readme = Deno.readTextFileSync(`${REPO}README.md`);
  const line = ["deno", ...sourceRunArgs("/path/to/cargo-agents"), "mcp-serve"].join(" ");
  assert.ok(readme.includes(`\n${line}\n`), `README.md lacks the line:\n${line}`);
});

Deno.test("this Deno's V8 knows every V8 flag of DENO_RUN_FLAGS (an unknown one stops deno run at start)", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", v8Flags, "console.log('ok')"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "ok");
});

Deno.test("under DENO_RUN_FLAGS a sandbox Worker's isolate has gc(), so its HeapTrim collects (lib/sandbox/_heap_trim.ts)", async () => {
  const code = "const w = new Worker(URL.createObjectURL(new Blob(['postMessage(typeof gc)'], " +
    "{ type: 'text/javascript' })), { type: 'module' }); " +
    "w.onmessage = (e) => { console.log(e.data); w.terminate(); };";
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", v8Flags, code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "function");
});
