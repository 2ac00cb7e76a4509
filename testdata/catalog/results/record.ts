/**
 * Records real answers of real MCP servers for the observed-result-shape corpus
 * (`tests/catalog/result_corpus_test.ts`): each server's `tools/list` and, per scripted call, the raw
 * `tools/call` result, into `testdata/catalog/results/<server>.json`. Run from the repository root
 * after `deno install` (and, for @playwright/mcp, `npm install @playwright/mcp@0.0.83` in a folder
 * named by `PLAYWRIGHT_MCP_DIR`, with Debian's `/usr/bin/chromium`):
 *
 *   deno run -A testdata/catalog/results/record.ts [everything|filesystem|memory|playwright]…
 *
 * Playwright pages are served from a loopback HTTP server started here; nothing leaves 127.0.0.1.
 */
import { type Call, recordServer } from "./_recorder.ts";

const NM = new URL("../../../node_modules/@modelcontextprotocol", import.meta.url).pathname;
const OUT = new URL(".", import.meta.url).pathname;
const extraEnv: Record<string, string> = {};

function record(name: string, command: string, args: string[], calls: Call[], source: string) {
  return recordServer({ name, command, args, calls, source, outDir: OUT, env: extraEnv, stamp: { recorded: new Date().toISOString().slice(0, 10) } });
}

const wanted = new Set(Deno.args.length ? Deno.args : ["everything", "filesystem", "memory", "playwright"]);

if (wanted.has("everything")) {
  await record("everything", "node", [`${NM}/server-everything/dist/index.js`, "stdio"], [
    ["echo", { message: "hello" }],
    ["echo", { message: "second" }],
    ["echo", { message: "third answer" }],
    ["get-sum", { a: 1, b: 2 }],
    ["get-sum", { a: 10, b: -3.5 }],
    ["get-sum", { a: 0, b: 0 }],
    ["get-tiny-image", {}],
    ["get-tiny-image", {}],
    ["get-annotated-message", { messageType: "error", includeImage: false }],
    ["get-annotated-message", { messageType: "success", includeImage: true }],
    ["get-annotated-message", { messageType: "debug", includeImage: false }],
    ["get-env", {}],
    ["get-env", {}],
    ["get-resource-links", { count: 2 }],
    ["get-resource-links", { count: 5 }],
    ["get-resource-reference", { resourceType: "Text", resourceId: 1 }],
    ["get-resource-reference", { resourceType: "Blob", resourceId: 2 }],
    ["get-resource-reference", { resourceType: "Text", resourceId: 3 }],
    ["get-structured-content", { location: "New York" }],
    ["get-structured-content", { location: "Chicago" }],
    ["get-structured-content", { location: "Los Angeles" }],
    ["trigger-long-running-operation", { duration: 0.2, steps: 2 }],
    ["trigger-long-running-operation", { duration: 0.1, steps: 1 }],
    ["toggle-simulated-logging", {}],
    ["toggle-simulated-logging", {}],
    ["toggle-subscriber-updates", {}],
    ["toggle-subscriber-updates", {}],
    ["gzip-file-as-resource", { name: "a.gz", data: "data:text/plain;base64,aGVsbG8=", outputType: "resourceLink" }],
    ["gzip-file-as-resource", { name: "b.gz", data: "data:text/plain;base64,d29ybGQ=", outputType: "resource" }],
    // Added later (held out: recorded after the rendering rules were chosen) — the same tools with
    // other arguments, as a script would call them.
    ["get-annotated-message", { messageType: "error", includeImage: true }],
    ["get-annotated-message", { messageType: "success", includeImage: false }],
    ["get-resource-links", { count: 1 }],
    ["get-resource-links", { count: 3 }],
    ["get-resource-reference", { resourceType: "Blob", resourceId: 4 }],
    ["get-resource-reference", { resourceType: "Text", resourceId: 6 }],
    ["gzip-file-as-resource", { name: "c.gz", data: "data:text/plain;base64,aGk=", outputType: "resourceLink" }],
    ["gzip-file-as-resource", { name: "d.gz", data: "data:text/plain;base64,eW8=", outputType: "resource" }],
    ["get-tiny-image", {}],
  ], "@modelcontextprotocol/server-everything 2026.8.31, run for real (stdio)");
}

if (wanted.has("filesystem")) {
  const root = await Deno.makeTempDir({ prefix: "shape-corpus-" });
  await Deno.mkdir(`${root}/src/lib`, { recursive: true });
  await Deno.writeTextFile(`${root}/README.md`, "# demo\nTODO: write\n");
  await Deno.writeTextFile(`${root}/src/main.rs`, "fn main() {}\n");
  await Deno.writeTextFile(`${root}/src/lib/mod.rs`, "pub mod x;\n");
  await Deno.writeTextFile(`${root}/data.json`, '{"a":1}\n');
  const p = (rel: string) => `${root}/${rel}`;
  await record("filesystem", "node", [`${NM}/server-filesystem/dist/index.js`, root], [
    ["read_text_file", { path: p("README.md") }],
    ["read_text_file", { path: p("src/main.rs") }],
    ["read_text_file", { path: p("data.json"), head: 1 }],
    ["read_multiple_files", { paths: [p("README.md"), p("src/main.rs")] }],
    ["read_multiple_files", { paths: [p("data.json")] }],
    ["write_file", { path: p("new.txt"), content: "x" }],
    ["write_file", { path: p("src/new.rs"), content: "y" }],
    ["edit_file", { path: p("new.txt"), edits: [{ oldText: "x", newText: "z" }], dryRun: true }],
    ["edit_file", { path: p("new.txt"), edits: [{ oldText: "x", newText: "w" }] }],
    ["create_directory", { path: p("made") }],
    ["create_directory", { path: p("made/deeper") }],
    ["list_directory", { path: root }],
    ["list_directory", { path: p("src") }],
    ["list_directory", { path: p("src/lib") }],
    ["list_directory_with_sizes", { path: root }],
    ["list_directory_with_sizes", { path: p("src"), sortBy: "size" }],
    ["directory_tree", { path: p("src") }],
    ["directory_tree", { path: root }],
    ["move_file", { source: p("new.txt"), destination: p("moved.txt") }],
    ["move_file", { source: p("moved.txt"), destination: p("made/moved.txt") }],
    ["search_files", { path: root, pattern: "**/*.rs" }],
    ["search_files", { path: root, pattern: "*.md" }],
    ["get_file_info", { path: p("README.md") }],
    ["get_file_info", { path: p("src") }],
    ["list_allowed_directories", {}],
    ["list_allowed_directories", {}],
  ], "@modelcontextprotocol/server-filesystem 2026.8.31, run for real (stdio) on a temporary folder");
  await Deno.remove(root, { recursive: true });
}

if (wanted.has("memory")) {
  const dir = await Deno.makeTempDir({ prefix: "shape-memory-" });
  extraEnv.MEMORY_FILE_PATH = `${dir}/memory.jsonl`;
  await record("memory", "node", [`${NM}/server-memory/dist/index.js`], [
    ["create_entities", { entities: [{ name: "Ada", entityType: "person", observations: ["wrote notes"] }] }],
    ["create_entities", { entities: [{ name: "Engine", entityType: "machine", observations: [] }] }],
    ["create_relations", { relations: [{ from: "Ada", to: "Engine", relationType: "designed" }] }],
    ["add_observations", { observations: [{ entityName: "Ada", contents: ["met Babbage"] }] }],
    ["read_graph", {}],
    ["search_nodes", { query: "Ada" }],
    ["search_nodes", { query: "nothing" }],
    ["open_nodes", { names: ["Engine"] }],
    ["delete_observations", { deletions: [{ entityName: "Ada", observations: ["met Babbage"] }] }],
    ["delete_relations", { relations: [{ from: "Ada", to: "Engine", relationType: "designed" }] }],
    ["delete_entities", { entityNames: ["Engine"] }],
    ["read_graph", {}],
    // Added later (held out: recorded after the rendering rules were chosen).
    ["create_entities", {
      entities: [
        { name: "Grace", entityType: "person", observations: ["wrote a compiler", "found a moth"] },
        { name: "Mark I", entityType: "machine", observations: [] },
      ],
    }],
    ["create_relations", {
      relations: [
        { from: "Grace", to: "Mark I", relationType: "programmed" },
        { from: "Ada", to: "Grace", relationType: "inspired" },
      ],
    }],
    ["read_graph", {}],
    ["search_nodes", { query: "person" }],
    ["open_nodes", { names: ["Ada", "Grace", "Nobody"] }],
    ["add_observations", {
      observations: [{ entityName: "Grace", contents: ["admiral"] }, { entityName: "Mark I", contents: ["1944"] }],
    }],
    ["delete_entities", { entityNames: ["Mark I"] }],
    ["read_graph", {}],
  ], "@modelcontextprotocol/server-memory 2026.8.31, run for real (stdio) on a temporary file");
  await Deno.remove(dir, { recursive: true });
}

if (wanted.has("playwright")) {
  const dir = Deno.env.get("PLAYWRIGHT_MCP_DIR");
  if (dir === undefined) throw new Error("set PLAYWRIGHT_MCP_DIR to a folder with @playwright/mcp@0.0.83 installed");
  const pages: Record<string, string> = {
    "/": `<html><head><title>Shop</title></head><body><h1>Shop</h1><a href="/cart">Cart</a>
      <form><label>Search <input name="q"></label><button type="button" onclick="document.title='Searched'">Go</button></form>
      <select name="size"><option>S</option><option>M</option></select><script>console.log("ready")</script></body></html>`,
    "/cart": `<html><head><title>Cart</title></head><body><h1>Cart</h1><table><tr><td>Pen</td><td>2</td></tr></table>
      <a href="/">Back</a></body></html>`,
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    return new Response(pages[path] ?? "not found", {
      status: pages[path] ? 200 : 404,
      headers: { "content-type": "text/html" },
    });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  const cwd = Deno.cwd();
  Deno.chdir(await Deno.makeTempDir({ prefix: "shape-playwright-" })); // its screenshots go there
  await record("playwright", "node", [
    `${dir}/node_modules/@playwright/mcp/cli.js`,
    "--headless",
    "--isolated",
    "--executable-path=/usr/bin/chromium",
    "--no-sandbox",
    "--caps=vision,pdf",
  ], [
    ["browser_navigate", { url: `${base}/` }],
    ["browser_snapshot", {}],
    ["browser_click", { element: "Go button", target: "e7" }],
    ["browser_type", { element: "Search box", target: "e6", text: "pens" }],
    ["browser_select_option", { element: "size", target: "e8", values: ["M"] }],
    ["browser_hover", { element: "Cart link", target: "e3" }],
    ["browser_console_messages", {}],
    ["browser_network_requests", {}],
    ["browser_evaluate", { function: "() => document.title" }],
    ["browser_evaluate", { function: "() => ({ links: document.links.length })" }],
    ["browser_take_screenshot", {}],
    ["browser_tabs", { action: "list" }],
    ["browser_navigate", { url: `${base}/cart` }],
    ["browser_snapshot", {}],
    ["browser_navigate_back", {}],
    ["browser_resize", { width: 800, height: 600 }],
    ["browser_press_key", { key: "Tab" }],
    ["browser_wait_for", { time: 0.1 }],
    ["browser_take_screenshot", { type: "png" }],
    ["browser_console_messages", {}],
    ["browser_network_requests", {}],
    ["browser_tabs", { action: "new" }],
    ["browser_tabs", { action: "list" }],
    ["browser_navigate", { url: `${base}/missing` }],
    ["browser_snapshot", {}],
    ["browser_evaluate", { function: "() => [1, 2, 3]" }],
    ["browser_mouse_click_xy", { element: "page", x: 10, y: 10 }],
    ["browser_pdf_save", {}],
    ["browser_find", { text: "Cart" }],
    ["browser_mouse_move_xy", { element: "page", x: 20, y: 20 }],
    ["browser_emulate_media", { colorScheme: "dark" }],
    ["browser_close", {}],
  ], "@playwright/mcp 0.0.83 with Debian chromium (headless), run for real (stdio) on loopback pages");
  Deno.chdir(cwd);
  await server.shutdown();
}
