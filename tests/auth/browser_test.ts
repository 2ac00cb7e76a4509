import assert from "node:assert/strict";
import { browserCommand, openBrowser } from "../../lib/auth/browser.ts";

const URL_ = "https://as.example/authorize?a=1&b=two%20words";

Deno.test("browserCommand() uses open, rundll32 or xdg-open with the URL as one argument", () => {
  assert.deepEqual(browserCommand(URL_, { os: "darwin", env: {} }), { command: "open", args: [URL_] });
  assert.deepEqual(browserCommand(URL_, { os: "windows", env: {} }), {
    command: "rundll32",
    args: ["url.dll,FileProtocolHandler", URL_],
  });
  assert.deepEqual(browserCommand(URL_, { os: "linux", env: {} }), { command: "xdg-open", args: [URL_] });
});

Deno.test("browserCommand() honours SYMPOSIUM_BROWSER, and none disables opening", () => {
  assert.deepEqual(browserCommand(URL_, { os: "linux", env: { SYMPOSIUM_BROWSER: "/opt/b" } }), {
    command: "/opt/b",
    args: [URL_],
  });
  assert.equal(browserCommand(URL_, { os: "linux", env: { SYMPOSIUM_BROWSER: "none" } }), undefined);
  assert.equal(browserCommand(URL_, { os: "linux", env: { SYMPOSIUM_BROWSER: "" } }), undefined);
});

Deno.test("browserCommand() refuses URLs that are not http or https", () => {
  for (const url of ["file:///etc/passwd", "javascript:alert(1)", "--help", "not a url"]) {
    assert.equal(browserCommand(url, { os: "linux", env: {} }), undefined, url);
  }
});

Deno.test("browserCommand() opens a file: URL only when the caller wrote the file (allowFile)", () => {
  const page = "file:///home/me/.symposium/reports/s.html";
  assert.deepEqual(browserCommand(page, { os: "linux", env: {}, allowFile: true }), {
    command: "xdg-open",
    args: [page],
  });
  assert.equal(browserCommand("javascript:alert(1)", { os: "linux", env: {}, allowFile: true }), undefined);
});

Deno.test("openBrowser() runs the program without a shell, passing the URL untouched", async () => {
  if (Deno.build.os === "windows") return;
  const dir = await Deno.makeTempDir();
  try {
    const script = `${dir}/browser.sh`;
    await Deno.writeTextFile(script, `#!/bin/sh\nprintf '%s\\n' "$#" "$1" > "${dir}/args"\n`);
    await Deno.chmod(script, 0o755);
    const tricky = "https://as.example/a?x=$(touch%20pwned)&y=`id`;z";
    // A script just written can be "text file busy" for a moment while another test of this process forks
    // (the fork holds the write descriptor until it execs): a spawn that failed is tried again, briefly.
    let opened = false;
    for (let i = 0; i < 20 && !opened; i++) {
      opened = openBrowser(tricky, { env: { SYMPOSIUM_BROWSER: script } });
      if (!opened) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(opened, true);
    let args = "";
    for (let i = 0; i < 100 && args === ""; i++) {
      await new Promise((r) => setTimeout(r, 20));
      args = await Deno.readTextFile(`${dir}/args`).catch(() => "");
    }
    assert.equal(args, `1\n${new URL(tricky).href}\n`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openBrowser() returns false instead of throwing when the program is missing", () => {
  assert.equal(openBrowser(URL_, { env: { SYMPOSIUM_BROWSER: "/nonexistent/browser" } }), false);
});
