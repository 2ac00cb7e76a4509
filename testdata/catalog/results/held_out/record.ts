/**
 * Records the real part of the held-out corpus of observed result shapes: answers of real MCP servers
 * that the render rules of `lib/declarations/observed_shape.ts` were not fitted on (other arguments,
 * other sequences, other pages, another server), each server's `tools/list` and raw `tools/call`
 * results, into `<server>.json` beside this file. Run from the repository root after `deno install`,
 * with @playwright/mcp@0.0.83 and @modelcontextprotocol/server-sequential-thinking@2026.8.31 installed
 * by npm in the folder `HELD_OUT_NPM_DIR` names, and Debian's `/usr/bin/chromium`:
 *
 *   HELD_OUT_NPM_DIR=/tmp/ho deno run -A testdata/catalog/results/held_out/record.ts [server]…
 *
 * Playwright pages are served from a loopback HTTP server started here; nothing leaves 127.0.0.1.
 */
import { type Call, recordServer } from "../_recorder.ts";

const NM = Deno.env.get("MCP_NODE_MODULES") ??
  new URL("../../../../node_modules/@modelcontextprotocol", import.meta.url).pathname;
const NPM_DIR = Deno.env.get("HELD_OUT_NPM_DIR") ?? "";
const OUT = new URL(".", import.meta.url).pathname;
const extraEnv: Record<string, string> = {};

function record(name: string, command: string, args: string[], calls: Call[], source: string) {
  return recordServer({ name, command, args, calls, source, outDir: OUT, env: extraEnv, stamp: { heldOut: true } });
}

const wanted = new Set(
  Deno.args.length ? Deno.args : ["everything", "filesystem", "memory", "playwright", "sequentialthinking"],
);

if (wanted.has("everything")) {
  await record("everything", "node", [`${NM}/server-everything/dist/index.js`, "stdio"], [
    ["get-sum", { a: 123456789, b: 0.001 }],
    ["get-sum", { a: -7, b: 7 }],
    ["echo", { message: "" }],
    ["echo", { message: "ünïcødé ✓ and a much longer message than before, with punctuation!" }],
    ["get-resource-links", { count: 10 }],
    ["get-resource-links", { count: 4 }],
    ["get-resource-reference", { resourceType: "Blob", resourceId: 8 }],
    ["get-resource-reference", { resourceType: "Text", resourceId: 9 }],
    ["get-resource-reference", { resourceType: "Blob", resourceId: 10 }],
    ["get-annotated-message", { messageType: "debug", includeImage: true }],
    ["get-annotated-message", { messageType: "success", includeImage: true }],
    ["get-annotated-message", { messageType: "error", includeImage: false }],
    ["trigger-long-running-operation", { duration: 0.3, steps: 3 }],
    ["trigger-long-running-operation", { duration: 0.1, steps: 5 }],
    ["gzip-file-as-resource", { name: "e.gz", data: "data:text/plain;base64,ZQ==" }],
    ["gzip-file-as-resource", { name: "f.gz", data: "data:text/plain;base64,Zg==", outputType: "resource" }],
    ["gzip-file-as-resource", { name: "g.gz", data: "data:text/plain;base64,Zw==", outputType: "resourceLink" }],
    ["get-structured-content", { location: "Chicago" }],
    ["get-structured-content", { location: "New York" }],
    ["toggle-simulated-logging", {}],
    ["toggle-simulated-logging", {}],
    ["toggle-subscriber-updates", {}],
    ["get-tiny-image", {}],
    ["get-env", {}],
  ], "@modelcontextprotocol/server-everything 2026.8.31, run for real (stdio); held out");
}

if (wanted.has("filesystem")) {
  const root = await Deno.makeTempDir({ prefix: "shape-heldout-" });
  await Deno.mkdir(`${root}/empty`);
  await Deno.mkdir(`${root}/docs/a/b`, { recursive: true });
  await Deno.writeTextFile(`${root}/docs/a/b/deep.md`, "deep\n");
  await Deno.writeTextFile(`${root}/notes.txt`, "one\ntwo\nthree\n");
  await Deno.writeTextFile(`${root}/empty.txt`, "");
  const p = (rel: string) => `${root}/${rel}`;
  await record("filesystem", "node", [`${NM}/server-filesystem/dist/index.js`, root], [
    ["list_directory", { path: p("empty") }],
    ["list_directory", { path: root }],
    ["list_directory_with_sizes", { path: p("empty") }],
    ["list_directory_with_sizes", { path: root, sortBy: "name" }],
    ["directory_tree", { path: p("empty") }],
    ["directory_tree", { path: p("docs") }],
    ["search_files", { path: root, pattern: "*.nothing" }],
    ["search_files", { path: root, pattern: "**/*.md" }],
    ["read_text_file", { path: p("empty.txt") }],
    ["read_text_file", { path: p("notes.txt"), tail: 2 }],
    ["read_multiple_files", { paths: [p("notes.txt"), p("missing.txt")] }],
    ["read_multiple_files", { paths: [p("empty.txt")] }],
    ["get_file_info", { path: p("empty") }],
    ["get_file_info", { path: p("empty.txt") }],
    ["write_file", { path: p("w.txt"), content: "" }],
    ["edit_file", { path: p("notes.txt"), edits: [{ oldText: "two", newText: "2" }], dryRun: true }],
    ["edit_file", { path: p("notes.txt"), edits: [{ oldText: "one", newText: "1" }] }],
    ["create_directory", { path: p("docs/a") }],
    ["move_file", { source: p("w.txt"), destination: p("empty/w.txt") }],
    ["list_allowed_directories", {}],
  ], "@modelcontextprotocol/server-filesystem 2026.8.31, run for real (stdio) on a temporary folder; held out");
  await Deno.remove(root, { recursive: true });
}

if (wanted.has("memory")) {
  const dir = await Deno.makeTempDir({ prefix: "shape-heldout-memory-" });
  extraEnv.MEMORY_FILE_PATH = `${dir}/memory.jsonl`;
  await record("memory", "node", [`${NM}/server-memory/dist/index.js`], [
    ["read_graph", {}],
    ["search_nodes", { query: "anything" }],
    ["open_nodes", { names: ["Nobody"] }],
    ["create_entities", { entities: [] }],
    ["create_entities", {
      entities: [
        { name: "Lovelace", entityType: "person", observations: [] },
        { name: "Analytical Engine", entityType: "machine", observations: ["never built", "designed 1837"] },
        { name: "Babbage", entityType: "person", observations: ["mathematician"] },
      ],
    }],
    ["create_entities", { entities: [{ name: "Lovelace", entityType: "person", observations: [] }] }],
    ["create_relations", { relations: [] }],
    ["create_relations", { relations: [{ from: "Babbage", to: "Analytical Engine", relationType: "designed" }] }],
    ["add_observations", { observations: [{ entityName: "Lovelace", contents: [] }] }],
    ["read_graph", {}],
    ["search_nodes", { query: "machine" }],
    ["open_nodes", { names: ["Babbage", "Analytical Engine"] }],
    ["delete_relations", { relations: [] }],
    ["delete_observations", { deletions: [{ entityName: "Babbage", observations: ["not there"] }] }],
    ["delete_entities", { entityNames: ["Nobody"] }],
    ["delete_entities", { entityNames: ["Babbage", "Lovelace", "Analytical Engine"] }],
    ["read_graph", {}],
  ], "@modelcontextprotocol/server-memory 2026.8.31, run for real (stdio) on a temporary file; held out");
  await Deno.remove(dir, { recursive: true });
}

if (wanted.has("sequentialthinking")) {
  await record("sequentialthinking", "node", [
    `${NPM_DIR}/node_modules/@modelcontextprotocol/server-sequential-thinking/dist/index.js`,
  ], [
    ["sequentialthinking", { thought: "First", thoughtNumber: 1, totalThoughts: 3, nextThoughtNeeded: true }],
    ["sequentialthinking", { thought: "Second", thoughtNumber: 2, totalThoughts: 3, nextThoughtNeeded: true }],
    ["sequentialthinking", {
      thought: "Revise the first",
      thoughtNumber: 3,
      totalThoughts: 4,
      nextThoughtNeeded: true,
      isRevision: true,
      revisesThought: 1,
    }],
    ["sequentialthinking", {
      thought: "Branch",
      thoughtNumber: 4,
      totalThoughts: 5,
      nextThoughtNeeded: true,
      branchFromThought: 2,
      branchId: "alt",
    }],
    ["sequentialthinking", {
      thought: "Done",
      thoughtNumber: 5,
      totalThoughts: 5,
      nextThoughtNeeded: false,
      needsMoreThoughts: false,
    }],
  ], "@modelcontextprotocol/server-sequential-thinking 2026.8.31, run for real (stdio); held out");
}

if (wanted.has("playwright")) {
  const pages: Record<string, string> = {
    "/": `<html><head><title>Form</title></head><body><h1>Sign up</h1>
      <form><label>Name <input name="name"></label><label><input type="checkbox" name="news"> News</label>
      <label>Plan <select name="plan"><option>Free</option><option>Pro</option></select></label>
      <textarea name="bio"></textarea><button type="button" onclick="alert('sent')">Send</button></form>
      <ul><li>one</li><li>two</li><li>three</li></ul>
      <script>console.error("boom"); console.warn("careful"); fetch("/api/data").then(r => r.json());</script>
      </body></html>`,
    "/api/data": `{"ok":true}`,
    "/table": `<html><head><title>Table</title></head><body><table><thead><tr><th>A</th><th>B</th></tr></thead>
      <tbody><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></tbody></table>
      <img src="/missing.png" alt="missing"><p id="late"></p>
      <script>setTimeout(() => { document.getElementById("late").textContent = "Loaded" }, 50)</script></body></html>`,
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    const body = pages[path];
    return new Response(body ?? "not found", {
      status: body ? 200 : 404,
      headers: { "content-type": path.startsWith("/api") ? "application/json" : "text/html" },
    });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  const cwd = Deno.cwd();
  Deno.chdir(await Deno.makeTempDir({ prefix: "shape-heldout-playwright-" }));
  await record("playwright", "node", [
    `${NPM_DIR}/node_modules/@playwright/mcp/cli.js`,
    "--headless",
    "--isolated",
    "--executable-path=/usr/bin/chromium",
    "--no-sandbox",
    "--caps=vision,pdf",
  ], [
    ["browser_navigate", { url: `${base}/table` }],
    ["browser_wait_for", { text: "Loaded" }],
    ["browser_evaluate", { function: "() => null" }],
    ["browser_evaluate", { function: "() => document.querySelectorAll('td').length" }],
    ["browser_evaluate", { function: "() => ({ rows: [...document.querySelectorAll('tr')].map(r => r.textContent) })" }],
    ["browser_take_screenshot", { type: "jpeg" }],
    ["browser_take_screenshot", { fullPage: true }],
    ["browser_network_requests", {}],
    ["browser_console_messages", { level: "error" }],
    ["browser_navigate", { url: `${base}/` }],
    ["browser_snapshot", {}],
    ["browser_console_messages", {}],
    ["browser_network_requests", { static: true }],
    ["browser_fill_form", {
      fields: [{ name: "Name", type: "textbox", target: "f1e5", value: "Ada" }],
    }],
    ["browser_click", { element: "News checkbox", target: "f1e7" }],
    ["browser_select_option", { element: "Plan", target: "f1e9", values: ["Pro"] }],
    ["browser_click", { element: "Send button", target: "f1e11" }],
    ["browser_handle_dialog", { accept: true }],
    ["browser_type", { element: "Bio", target: "f1e10", text: "hello", submit: false }],
    ["browser_hover", { element: "first item", target: "f1e14" }],
    ["browser_press_key", { key: "Escape" }],
    ["browser_find", { text: "two" }],
    ["browser_find", { text: "absent text" }],
    ["browser_tabs", { action: "new", url: `${base}/table` }],
    ["browser_tabs", { action: "list" }],
    ["browser_tabs", { action: "select", index: 0 }],
    ["browser_tabs", { action: "close", index: 1 }],
    ["browser_snapshot", { depth: 2 }],
    ["browser_mouse_wheel", { deltaX: 0, deltaY: 200 }],
    ["browser_mouse_click_xy", { x: 5, y: 5 }],
    ["browser_resize", { width: 400, height: 300 }],
    ["browser_emulate_media", { reducedMotion: "reduce" }],
    ["browser_navigate_back", {}],
    ["browser_pdf_save", {}],
    ["browser_close", {}],
  ], "@playwright/mcp 0.0.83 with Debian chromium (headless), run for real (stdio) on loopback pages; held out");
  Deno.chdir(cwd);
  await server.shutdown();
}
